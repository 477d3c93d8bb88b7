import PomodoroCore
/// Where a setting's value came from, for `--print-config` and for error messages.
public enum SettingSource: Sendable, Equatable, CustomStringConvertible {
    case option(String)
    case environment(String)
    case file(path: String, line: Int)
    case defaultValue

    public var description: String {
        switch self {
        case .option(let name): name
        case .environment(let name): name
        case .file(let path, let line): "\(path):\(line)"
        case .defaultValue: "default"
        }
    }
}

/// A configuration that cannot be used, with a message that names the setting and where its value came from.
public struct ConfigurationError: Error, Equatable, CustomStringConvertible {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// The values one source (options, environment, file) gives, by setting name, each with where it came from.
typealias Layer = [String: [(value: String, source: SettingSource)]]

/// The config file: `name = value` lines, where `name` is a long option without its dashes. Blank lines and
/// lines starting with `#` are skipped, and ` #` starts a comment after a value. A value may be put in double
/// quotes (to keep a ` #` or outer spaces). Only the repeatable settings (`allowed-origin`, `trusted-proxy`) may appear more than once;
/// their lines add up.
enum ConfigFile {
    static func parse(_ text: String, path: String) throws(ConfigurationError) -> Layer {
        var layer = Layer()
        var firstLine: [String: Int] = [:]
        // Character-wise, "\r\n" is one character, and a newline.
        for (index, rawLine) in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).enumerated() {
            let number = index + 1
            let line = rawLine.trimmingWhitespace()
            if line.isEmpty || line.hasPrefix("#") { continue }
            let here = "\(path):\(number)"
            guard let equals = line.firstIndex(of: "=") else {
                throw ConfigurationError("\(here): expected `name = value`, found '\(line)'")
            }
            let name = line[..<equals].trimmingWhitespace()
            guard let setting = Setting.named(name) else {
                let hint = Setting.suggestion(for: name).map { " (did you mean '\($0.name)'?)" } ?? ""
                throw ConfigurationError("\(here): unknown setting '\(name)'\(hint)")
            }
            let value = try Self.value(line[line.index(after: equals)...], at: here, name: name)
            if let first = firstLine[name], !setting.repeatable {
                throw ConfigurationError("\(here): \(name) is already set on line \(first)")
            }
            firstLine[name] = firstLine[name] ?? number
            layer[name, default: []].append((value, .file(path: path, line: number)))
        }
        return layer
    }

    /// The text after `=`: unquoted up to a ` #` comment, or in double quotes.
    private static func value(_ raw: Substring, at here: String, name: String) throws(ConfigurationError) -> String {
        let text = raw.trimmingWhitespace()
        if text.hasPrefix("\"") {
            let body = text.dropFirst()
            guard let close = body.firstIndex(of: "\"") else {
                throw ConfigurationError("\(here): the value of \(name) has no closing quote")
            }
            let rest = body[body.index(after: close)...].trimmingWhitespace()
            guard rest.isEmpty || rest.hasPrefix("#") else {
                throw ConfigurationError("\(here): unexpected '\(rest)' after the quoted value of \(name)")
            }
            return String(body[..<close])
        }
        var value = text.hasPrefix("#") ? "" : text
        for marker in [" #", "\t#"] {
            if let comment = value.range(of: marker) { value = value[..<comment.lowerBound].trimmingWhitespace() }
        }
        guard !value.isEmpty else {
            throw ConfigurationError("\(here): \(name) has no value (leave the line out for the default)")
        }
        return value
    }
}

extension Setting {
    /// The setting someone probably meant by a name that is not one: same letters with `_` or in capitals,
    /// the environment variable's or the option's spelling, or one or two typos away.
    static func suggestion(for name: String) -> Setting? {
        var key = name.lowercased().replacingAll("_", with: "-")
        if key.hasPrefix("--") { key.removeFirst(2) }
        let prefix = environmentPrefix.lowercased().replacingAll("_", with: "-")
        if key.hasPrefix(prefix) { key.removeFirst(prefix.count) }
        if let exact = named(key) { return exact }
        let (best, distance) = all.map { ($0, editDistance($0.name, key)) }.min { $0.1 < $1.1 }!
        return distance <= 2 ? best : nil
    }

    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        var previous = Array(0...b.count)
        for i in 1...max(a.count, 1) where !a.isEmpty {
            var current = [i] + Array(repeating: 0, count: b.count)
            for j in stride(from: 1, through: b.count, by: 1) {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            previous = current
        }
        return a.isEmpty ? b.count : previous[b.count]
    }
}

extension String {
    func replacingAll(_ target: Character, with replacement: Character) -> String {
        String(map { $0 == target ? replacement : $0 })
    }
}
