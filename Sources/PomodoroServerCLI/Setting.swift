import PomodoroCluster
import PomodoroCore
import PomodoroNet
import PomodoroServer
import Logging

/// One setting an admin can make, under one name in three places: the long option (`--max-rooms`), the
/// environment variable (`POMODORO_MAX_ROOMS`) and the config file key (`max-rooms`). The table `Setting.all`
/// is the single list the options, the environment, the file, `--print-config` and the docs all follow.
public struct Setting: Sendable {
    public enum Group: String, Sendable, CaseIterable {
        case server = "Server"
        case tls = "TLS"
        case logging = "Logging"
        case rooms = "Rooms"
        case limits = "Limits"
    }

    /// The long option without its dashes, which is also the config file key.
    public let name: String
    public let group: Group
    /// What the value is, as shown in docs: `port`, `seconds`, `path` ...
    public let valueName: String
    public let summary: String
    /// Taken more than once (`--allowed-origin a --allowed-origin b`, or `a,b` in one value).
    public let repeatable: Bool
    /// What leaving an optional setting unset means, e.g. "every interface"; nil for settings with a value.
    public let whenUnset: String?
    let apply: @Sendable ([String], inout ServerSettings) throws -> Void
    let render: @Sendable (ServerSettings) -> String?

    public var option: String { "--" + name }
    public var environmentVariable: String { Setting.environmentPrefix + Setting.upperSnake(name) }

    static let environmentPrefix = "POMODORO_"

    static func upperSnake(_ name: String) -> String {
        String(name.map { $0 == "-" ? "_" : Character($0.uppercased()) })
    }

    /// The value as `--print-config` and the file show it; nil when an optional setting is unset.
    public func value(in settings: ServerSettings) -> String? { render(settings) }

    /// The default as `--help` and the docs show it.
    public var defaultDescription: String {
        if name == "web-root" { return "./web if it exists, else <prefix>/share/pomodoro/web beside the executable" }
        return render(ServerSettings()) ?? "none, \(whenUnset ?? "unset")"
    }

    public static func named(_ name: String) -> Setting? { all.first { $0.name == name } }
}

/// Why a value was refused; the caller adds where it came from.
struct ValueProblem: Error {
    let reason: String
}

extension Setting {
    /// Every setting, in the order of `--help`, `--print-config` and the docs.
    public static let all: [Setting] = [
        .optionalText("host", group: .server, valueName: "address", whenUnset: "every interface",
                      summary: "Address to listen on, e.g. 127.0.0.1 or ::1.", \.host),
        .integer("port", group: .server, valueName: "port", in: 0...65535,
                 summary: "TCP port to listen on (0 picks a free port and prints it).", \.port),
        .text("web-root", group: .server, valueName: "path",
              summary: "Folder of the web page's static files, served at /.",
              \.webRoot),
        .database("db", group: .server,
                  summary: "Where rooms, members, stats and the focus journal are kept: an SQLite file (a path or sqlite:PATH; its folder is created), PostgreSQL (postgres://USER[:PASSWORD]@HOST[:PORT]/DBNAME, ?sslmode= and ?host=SOCKET-FOLDER passed to libpq; the password is never shown), or none (memory only, lost at exit)."),
        .cluster("cluster", group: .server,
                 summary: "Run as a node of a cluster coordinated through this Redis (redis://[[USER]:PASSWORD@]HOST[:PORT][/DB], or redis-sentinel://HOST[:PORT][,HOST[:PORT]…]/MASTER_NAME[/DB] to follow the master Redis Sentinel names; the password is never shown): rooms are run under leases in Redis and written through a fence in the database, which must then be PostgreSQL (docs/CLUSTER.md)."),
        .optionalText("node-id", group: .server, valueName: "name", whenUnset: "the host name and the port",
                      summary: "This node's name in the cluster (with --cluster), unique among its nodes.", \.nodeID),
        .integer("journal-retention-days", group: .server, valueName: "days", in: 0...Int(Int32.max),
                 summary: "Days the focus journal keeps each session and interruption for history and CSV (0: for ever); stats keep counting what is deleted.",
                 \.journalRetentionDays),
        .integer("journal-max-sessions-per-room", group: .server, valueName: "count", in: 0...Int(Int32.max),
                 summary: "Sessions (and interruptions) the journal keeps per room at most, the oldest deleted first (0: no cap); stats keep counting them.",
                 \.journalMaxSessionsPerRoom),
        .origins("allowed-origin", group: .server,
                 summary: "An origin (e.g. https://focus.example.com) whose pages may connect. Once any is given, only the listed ones may (list the server's own public origin too), which also keeps out DNS rebinding. Repeatable; commas separate several in one value."),
        .addressRanges("trusted-proxy", group: .server,
                       summary: "A reverse proxy's address or block (e.g. 127.0.0.1/32, ::1, 10.0.0.0/8): connections from it are counted and logged under the client address its X-Forwarded-For (or Forwarded) header names. Repeatable; commas separate several in one value."),
        .choice("metrics", group: .server, ["on", "off"],
                summary: "Serve GET /metrics (Prometheus text format); off answers 404. Keep it off the public internet.",
                get: { $0.metricsEnabled ? "on" : "off" }, set: { $0.metricsEnabled = $1 == "on" }),
        .optionalText("tls-cert", group: .tls, valueName: "path", whenUnset: "plain HTTP",
                      summary: "PEM certificate (chain): with --tls-key the server speaks https/wss itself.",
                      \.tlsCertificatePath),
        .optionalText("tls-key", group: .tls, valueName: "path", whenUnset: "plain HTTP",
                      summary: "PEM private key of --tls-cert.", \.tlsPrivateKeyPath),
        .choice("log-level", group: .logging, Logger.Level.allCases.map(\.rawValue),
                summary: "Log level.", get: { $0.logLevel.rawValue },
                set: { $0.logLevel = Logger.Level(rawValue: $1)! }),
        .choice("log-format", group: .logging, LogFormat.allCases.map(\.rawValue),
                summary: "text for people, json for one JSON object per line (journald, log shippers).",
                get: { $0.logFormat.rawValue }, set: { $0.logFormat = LogFormat(rawValue: $1)! }),
        .integer("reconnect-grace", group: .rooms, valueName: "seconds", in: 0...Int(Int32.max),
                 summary: "Seconds a disconnected member keeps their place and may resume with their token.",
                 \.reconnectGrace),
        .integer("empty-room-lifetime", group: .rooms, valueName: "seconds", in: 0...Int(Int32.max),
                 summary: "Seconds a room with nobody connected and no running timer lives on before it is dropped.",
                 \.emptyRoomLifetime),
        .integer("max-members-per-room", group: .rooms, valueName: "count", in: 1...Int(Int32.max),
                 summary: "Members a room holds at most, connected or within their grace period.",
                 \.maxMembersPerRoom),
        .integer("max-name-length", group: .rooms, valueName: "characters", in: 1...200,
                 summary: "Longest member name, in characters.", \.maxNameLength),
        .integer("max-task-length", group: .rooms, valueName: "characters", in: 0...10_000,
                 summary: "Longest task text, in characters.", \.maxTaskLength),
        .integer("min-focus", group: .rooms, valueName: "seconds", in: RoomSettings.durationRange,
                 summary: "Shortest focus a room may be configured with, in seconds: each completed focus writes a journal row.",
                 \.minFocus),
        .integer("max-schedules-per-room", group: .rooms, valueName: "count", in: 0...1000,
                 summary: "Schedules a room holds at most.", \.maxSchedulesPerRoom),
        .integer("max-schedule-name-length", group: .rooms, valueName: "characters", in: 1...200,
                 summary: "Longest schedule name, in characters.", \.maxScheduleNameLength),
        .integer("late-start-grace", group: .rooms, valueName: "seconds", in: 0...86_400,
                 summary: "Seconds late a scheduled session may still start (the server was down); later ones count as missed.",
                 \.lateStartGrace),
        .integer("max-message-bytes", group: .limits, valueName: "bytes", in: 256...(1 << 20),
                 summary: "Largest message a client may send, in bytes; larger ones get too_large.",
                 \.limits.maxMessageBytes),
        .integer("messages-per-second", group: .limits, valueName: "count", in: 1...Int(Int32.max),
                 summary: "Messages per second a connection may send, sustained; more get rate_limited.",
                 \.limits.messagesPerSecond),
        .integer("message-burst", group: .limits, valueName: "count", in: 1...Int(Int32.max),
                 summary: "Messages a connection may send at once after a quiet spell.", \.limits.messageBurst),
        .integer("max-connections-per-address", group: .limits, valueName: "count", in: 0...Int(Int32.max),
                 summary: "WebSocket connections one address may hold at once (0: no limit).",
                 \.limits.maxConnectionsPerAddress),
        .integer("rooms-per-address-per-minute", group: .limits, valueName: "count", in: 0...Int(Int32.max),
                 summary: "Rooms one address may create per minute (0: no limit).",
                 \.limits.roomsCreatedPerAddressPerMinute),
        .integer("max-rooms", group: .limits, valueName: "count", in: 1...Int(Int32.max),
                 summary: "Rooms the server holds at most.", \.limits.maxRooms),
        .integer("max-scheduled-rooms", group: .limits, valueName: "count", in: 1...Int(Int32.max),
                 summary: "Rooms holding schedules the server keeps at most.", \.limits.maxScheduledRooms),
        .integer("members-per-address-per-room", group: .limits, valueName: "count", in: 0...Int(Int32.max),
                 summary: "Members of one room one address may hold, connected or within their grace (0: no limit).",
                 \.limits.membersPerAddressPerRoom),
        .integer("api-requests-per-second", group: .limits, valueName: "count", in: 0...Int(Int32.max),
                 summary: "HTTP /api requests per second one address may make, sustained (0: no limit); more get 429.",
                 \.limits.apiRequestsPerSecond),
        .integer("api-burst", group: .limits, valueName: "count", in: 1...Int(Int32.max),
                 summary: "HTTP /api requests one address may make at once after a quiet spell.", \.limits.apiBurst),
        .integer("max-queued-frames", group: .limits, valueName: "count", in: 1...Int(Int32.max),
                 summary: "Frames queued for one slow reader before it is dropped.", \.limits.maxQueuedFrames),
        .integer("max-queued-bytes", group: .limits, valueName: "bytes", in: 4096...Int(Int32.max),
                 summary: "Bytes queued for one slow reader before it is dropped.", \.limits.maxQueuedBytes),
        .integer("handshake-timeout", group: .limits, valueName: "seconds", in: 1...300,
                 summary: "Seconds a connection may take to finish its request or WebSocket handshake.",
                 \.limits.handshakeTimeoutSeconds),
        .integer("ping-after", group: .limits, valueName: "seconds", in: 1...3600,
                 summary: "Seconds of silence before the server pings a WebSocket peer (a proxy's read timeout must be longer).",
                 \.limits.pingAfterSeconds),
        .integer("hang-up-after", group: .limits, valueName: "seconds", in: 2...7200,
                 summary: "Seconds without a pong before a silent peer is dropped (more than --ping-after).",
                 \.limits.hangUpAfterSeconds),
    ] + webhookSettings

    static func integer(_ name: String, group: Group, valueName: String, in range: ClosedRange<Int>,
                        summary: String, _ field: WritableKeyPath<ServerSettings, Int> & Sendable) -> Setting {
        Setting(name: name, group: group, valueName: valueName, summary: summary, repeatable: false, whenUnset: nil,
                apply: { values, settings in
                    let text = values.last ?? ""
                    guard let number = Int(text) else { throw ValueProblem(reason: "'\(text)' is not a whole number") }
                    guard range.contains(number) else {
                        throw ValueProblem(reason: "\(number) is out of range: \(describe(range))")
                    }
                    settings[keyPath: field] = number
                },
                render: { String($0[keyPath: field]) })
    }

    static func text(_ name: String, group: Group, valueName: String, summary: String,
                     _ field: WritableKeyPath<ServerSettings, String> & Sendable) -> Setting {
        Setting(name: name, group: group, valueName: valueName, summary: summary, repeatable: false, whenUnset: nil,
                apply: { values, settings in settings[keyPath: field] = values.last ?? "" },
                render: { $0[keyPath: field] })
    }

    static func optionalText(_ name: String, group: Group, valueName: String, whenUnset: String, summary: String,
                             _ field: WritableKeyPath<ServerSettings, String?> & Sendable) -> Setting {
        Setting(name: name, group: group, valueName: valueName, summary: summary, repeatable: false,
                whenUnset: whenUnset,
                apply: { values, settings in settings[keyPath: field] = values.last },
                render: { $0[keyPath: field] })
    }

    static func choice(_ name: String, group: Group, _ choices: [String], summary: String,
                       get: @escaping @Sendable (ServerSettings) -> String,
                       set: @escaping @Sendable (inout ServerSettings, String) -> Void) -> Setting {
        Setting(name: name, group: group, valueName: choices.joined(separator: "|"),
                summary: summary, repeatable: false, whenUnset: nil,
                apply: { values, settings in
                    let text = values.last ?? ""
                    guard choices.contains(text) else {
                        throw ValueProblem(reason: "'\(text)' is not one of \(choices.joined(separator: ", "))")
                    }
                    set(&settings, text)
                },
                render: get)
    }

    /// A database location; shown with any password masked.
    static func database(_ name: String, group: Group, summary: String) -> Setting {
        Setting(name: name, group: group, valueName: "path|url", summary: summary, repeatable: false, whenUnset: nil,
                apply: { values, settings in
                    do {
                        settings.database = try DatabaseLocation(parsing: values.last ?? "")
                    } catch let problem as DatabaseLocation.Problem {
                        throw ValueProblem(reason: problem.reason)
                    }
                },
                render: { $0.database.description })
    }

    /// A Redis address; shown with any password masked.
    static func cluster(_ name: String, group: Group, summary: String) -> Setting {
        Setting(name: name, group: group, valueName: "url", summary: summary, repeatable: false,
                whenUnset: "a single server",
                apply: { values, settings in
                    do {
                        settings.cluster = try RedisAddress(parsing: values.last ?? "")
                    } catch let problem as RedisAddress.Invalid {
                        throw ValueProblem(reason: problem.description)
                    }
                },
                render: { $0.cluster?.description })
    }

    /// Origins are compared with the browser's Origin header exactly: scheme, host and port, no path.
    static func origins(_ name: String, group: Group, summary: String) -> Setting {
        Setting(name: name, group: group, valueName: "origin", summary: summary, repeatable: true,
                whenUnset: "only the server's own origin",
                apply: { values, settings in
                    let origins = values.flatMap { $0.split(separator: ",").map { $0.trimmingWhitespace() } }
                        .filter { !$0.isEmpty }
                    for origin in origins {
                        guard let scheme = ["http://", "https://"].first(where: origin.hasPrefix) else {
                            throw ValueProblem(reason: "'\(origin)' is not an origin such as https://focus.example.com")
                        }
                        let rest = origin.dropFirst(scheme.count)
                        guard !rest.isEmpty, !rest.contains("/") else {
                            throw ValueProblem(reason: "'\(origin)' is not an origin: scheme://host[:port], with no path or trailing slash")
                        }
                    }
                    settings.allowedOrigins = origins
                },
                render: { $0.allowedOrigins.isEmpty ? nil : $0.allowedOrigins.joined(separator: ", ") })
    }

    /// Addresses or CIDR blocks, IPv4 or IPv6; shown in their canonical form.
    static func addressRanges(_ name: String, group: Group, summary: String) -> Setting {
        Setting(name: name, group: group, valueName: "cidr", summary: summary, repeatable: true,
                whenUnset: "forwarded-address headers are ignored",
                apply: { values, settings in
                    let texts = values.flatMap { $0.split(separator: ",").map { $0.trimmingWhitespace() } }
                        .filter { !$0.isEmpty }
                    settings.trustedProxies = try texts.map { text in
                        guard let range = AddressRange(text) else {
                            throw ValueProblem(reason: "'\(text)' is not an address or CIDR block such as 127.0.0.1/32 or ::1/128")
                        }
                        return range
                    }
                },
                render: { $0.trustedProxies.isEmpty ? nil : $0.trustedProxies.map(\.description).joined(separator: ", ") })
    }

    static func describe(_ range: ClosedRange<Int>) -> String {
        if range.upperBound >= Int(Int32.max) { return "at least \(range.lowerBound)" }
        return "\(range.lowerBound)–\(range.upperBound)"
    }
}

