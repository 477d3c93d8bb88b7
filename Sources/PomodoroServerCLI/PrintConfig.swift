import PomodoroCore
extension ResolvedConfiguration {
    /// `--print-config`: every setting as a config file line, with where its value came from. The output is
    /// itself a valid config file; unset optional settings are shown commented out.
    public var printed: String {
        var lines = [
            "# pomodoro-server: the effective configuration (option > environment > config file > default).",
            "# Config file: " + (configFile ?? "none (--config or POMODORO_CONFIG names one)"),
        ]
        lines += warnings.map { "# warning: \($0)" }
        for group in Setting.Group.allCases {
            lines += ["", "# \(group.rawValue)"]
            for setting in Setting.all where setting.group == group {
                let source = sources[setting.name] ?? .defaultValue
                let line: String
                let note: String
                if let value = setting.value(in: settings) {
                    line = "\(setting.name) = \(Self.quotedIfNeeded(value))"
                    note = source == .defaultValue ? "default" : "from \(source)"
                } else {
                    line = "# \(setting.name) ="
                    note = "unset: \(setting.whenUnset ?? "none")"
                }
                lines.append(line.padding(to: 44) + "# " + note)
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    static func quotedIfNeeded(_ value: String) -> String {
        let needsQuotes = value.contains(" #") || value.contains("\t#") || value.hasPrefix("\"")
            || value.trimmingWhitespace() != value
        return needsQuotes && !value.dropFirst().contains("\"") ? "\"\(value)\"" : value
    }
}

extension String {
    func padding(to width: Int) -> String {
        count >= width ? self + " " : self + String(repeating: " ", count: width - count)
    }
}
