import PomodoroServerCLI

/// Resolves a configuration from arguments, an environment and config files held in memory.
func resolve(_ arguments: [String] = [], environment: [String: String] = [:],
             files: [String: String] = [:]) throws -> ResolvedConfiguration {
    try ConfigurationResolver.resolve(arguments: arguments, environment: environment, readFile: { path throws(ConfigurationError) in
        guard let text = files[path] else {
            throw ConfigurationError("cannot read the config file \(path): No such file or directory")
        }
        return text
    })
}

/// The message of the configuration error that resolving throws, or nil when it succeeds.
func configurationError(_ arguments: [String] = [], environment: [String: String] = [:],
                        files: [String: String] = [:]) -> String? {
    do {
        _ = try resolve(arguments, environment: environment, files: files)
        return nil
    } catch let error as ConfigurationError {
        return error.message
    } catch {
        return "not a ConfigurationError: \(error)"
    }
}

/// A valid value for each setting that is not its default.
let samples: [String: String] = [
    "host": "127.0.0.1", "port": "9123", "web-root": "/srv/pomodoro/web", "db": "postgres://focus@db.example/pomodoro",
    "cluster": "redis://redis.example:6380", "node-id": "node-2",
    "journal-retention-days": "365", "journal-max-sessions-per-room": "5000",
    "allowed-origin": "https://focus.example.com", "trusted-proxy": "10.0.0.0/8", "metrics": "off", "tls-cert": "/etc/ssl/focus.pem", "tls-key": "/etc/ssl/focus.key",
    "log-level": "debug", "log-format": "json", "reconnect-grace": "30", "empty-room-lifetime": "60",
    "max-members-per-room": "12", "max-name-length": "20", "max-task-length": "100", "min-focus": "300",
    "max-schedules-per-room": "5", "max-schedule-name-length": "30", "late-start-grace": "60",
    "max-message-bytes": "4096",
    "messages-per-second": "5", "message-burst": "10", "max-connections-per-address": "8",
    "rooms-per-address-per-minute": "3", "max-rooms": "50", "max-scheduled-rooms": "40", "members-per-address-per-room": "4",
    "api-requests-per-second": "2", "api-burst": "5", "max-queued-frames": "32", "max-queued-bytes": "65536",
    "handshake-timeout": "10", "ping-after": "20", "hang-up-after": "50",
    "webhook-allow-private": "on", "webhooks-per-room": "3", "webhook-max-payload-bytes": "4096",
    "webhook-deliveries-per-minute": "30", "webhook-first-retry": "2",
]

/// Settings that are only valid together.
let partners = ["tls-cert": "tls-key", "tls-key": "tls-cert", "cluster": "db"]
