import PomodoroCore
/// The effective configuration and where each value came from.
public struct ResolvedConfiguration: Sendable {
    public var settings: ServerSettings
    /// By setting name, for every setting.
    public var sources: [String: SettingSource]
    /// The config file that was read, if any.
    public var configFile: String?
    /// Things worth telling the admin that do not stop the server (e.g. an unknown POMODORO_ variable).
    public var warnings: [String]
}

/// Merges the command line, the environment and the config file: for each setting the first of them that
/// gives it a value wins (option > environment > file > default). Pure: the environment is a dictionary and
/// the file is read through `readFile`. Why this is ours rather than `apple/swift-configuration`'s: README.md,
/// "Configuring and deploying the server".
public enum ConfigurationResolver {
    /// The config file's path comes from `--config`, else from this variable.
    public static let configEnvironmentVariable = Setting.environmentPrefix + "CONFIG"

    /// The same from raw arguments (without the program name): an unknown option or a missing value is an
    /// ArgumentParser error, anything else a `ConfigurationError`.
    public static func resolve(arguments: [String], environment: [String: String],
                               readFile: (String) throws(ConfigurationError) -> String,
                               defaults: ServerSettings = ServerSettings()) throws -> ResolvedConfiguration {
        try resolve(commandLine: ServerOptions.parse(arguments), environment: environment, readFile: readFile,
                    defaults: defaults)
    }

    public static func resolve(commandLine: ServerOptions, environment: [String: String],
                               readFile: (String) throws(ConfigurationError) -> String,
                               defaults: ServerSettings = ServerSettings()) throws(ConfigurationError)
        -> ResolvedConfiguration {
        let options = commandLine.layer
        let (variables, warnings) = environmentLayer(environment)
        var file = Layer()
        let configPath = commandLine.config ?? environment[configEnvironmentVariable].flatMap { $0.isEmpty ? nil : $0 }
        if let configPath {
            file = try ConfigFile.parse(readFile(configPath), path: configPath)
        }

        var settings = defaults
        var sources: [String: SettingSource] = [:]
        for setting in Setting.all {
            guard let entries = options[setting.name] ?? variables[setting.name] ?? file[setting.name] else {
                sources[setting.name] = .defaultValue
                continue
            }
            // Each value alone first, so that a refusal names the line or option it came from.
            for entry in entries {
                var scratch = settings
                do { try setting.apply([entry.value], &scratch) } catch let problem as ValueProblem {
                    throw ConfigurationError("\(place(setting, entry.source)): \(problem.reason)")
                } catch { throw ConfigurationError("\(place(setting, entry.source)): \(error)") }
            }
            do { try setting.apply(entries.map(\.value), &settings) } catch {
                throw ConfigurationError("\(place(setting, entries[0].source)): \(error)")
            }
            sources[setting.name] = entries[0].source
        }
        let resolved = ResolvedConfiguration(settings: settings, sources: sources, configFile: configPath,
                                             warnings: warnings)
        try checkTogether(resolved)
        return resolved
    }

    /// `POMODORO_<NAME>` for every setting, without outer spaces; an empty variable counts as unset (as
    /// `NAME=` in an EnvironmentFile often is). Other `POMODORO_` variables are probably typos: they are reported, not fatal.
    static func environmentLayer(_ environment: [String: String]) -> (Layer, [String]) {
        var layer = Layer()
        for setting in Setting.all {
            guard let value = environment[setting.environmentVariable]?.trimmingWhitespace(), !value.isEmpty else {
                continue
            }
            let source = SettingSource.environment(setting.environmentVariable)
            layer[setting.name] = [(value, source)]
        }
        let known = Set(Setting.all.map(\.environmentVariable) + [configEnvironmentVariable])
        let warnings = environment.keys.filter { $0.hasPrefix(Setting.environmentPrefix) && !known.contains($0) }
            .sorted()
            .map { name in
                let hint = Setting.suggestion(for: name).map { " (did you mean \($0.environmentVariable)?)" } ?? ""
                return "\(name) is not a setting\(hint); it is ignored"
            }
        return (layer, warnings)
    }

    /// Settings that are only valid in combination.
    static func checkTogether(_ resolved: ResolvedConfiguration) throws(ConfigurationError) {
        let settings = resolved.settings
        func from(_ name: String) -> String {
            let source = resolved.sources[name] ?? .defaultValue
            return source == .defaultValue ? "the default" : "\(source)"
        }
        switch (settings.tlsCertificatePath, settings.tlsPrivateKeyPath) {
        case (.some, nil):
            throw ConfigurationError("tls-cert (from \(from("tls-cert"))) needs tls-key as well: give both or neither")
        case (nil, .some):
            throw ConfigurationError("tls-key (from \(from("tls-key"))) needs tls-cert as well: give both or neither")
        default: break
        }
        if settings.cluster != nil {
            switch settings.database {
            case .postgres: break
            case .sqlite, .memory:
                throw ConfigurationError("""
                    cluster (from \(from("cluster"))) needs a database the nodes share: db (\(settings.database), \
                    from \(from("db"))) must be postgres://USER@HOST/DBNAME
                    """)
            }
        }
        let limits = settings.limits
        if limits.hangUpAfterSeconds <= limits.pingAfterSeconds {
            throw ConfigurationError("""
                hang-up-after (\(limits.hangUpAfterSeconds), from \(from("hang-up-after"))) must be more than \
                ping-after (\(limits.pingAfterSeconds), from \(from("ping-after")))
                """)
        }
    }

    /// "--port", "POMODORO_PORT" or "/etc/pomodoro/pomodoro.conf:3: port".
    static func place(_ setting: Setting, _ source: SettingSource) -> String {
        switch source {
        case .file: "\(source): \(setting.name)"
        default: "\(source)"
        }
    }
}
