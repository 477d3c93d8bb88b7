import ArgumentParser

/// The command line. Every setting is read as text here and converted by `Setting.all`, the same way as
/// its environment variable and its config file line, so all three take the same values and give the same
/// errors. A value left out is nil: the environment, the file or the default may still give it.
public struct ServerOptions: ParsableArguments {
    @Option(name: .customLong("config"),
            help: ArgumentHelp("A config file of `name = value` lines, names as the long options (also POMODORO_CONFIG).",
                               valueName: "path"))
    public var config: String?

    @Flag(name: .customLong("print-config"),
          help: "Print the effective configuration, and where each value came from, then exit.")
    public var printConfig = false

    @OptionGroup(title: "Server") var server: ServerGroup
    @OptionGroup(title: "TLS (or terminate TLS in a reverse proxy: deploy/README.md)") var tls: TLSGroup
    @OptionGroup(title: "Logging") var logging: LoggingGroup
    @OptionGroup(title: "Rooms") var rooms: RoomGroup
    @OptionGroup(title: "Limits (docs/PROTOCOL.md, \"Limits\")") var limits: LimitGroup
    @OptionGroup(title: "Schedules (docs/PROTOCOL.md, \"Schedules\")") var schedules: ScheduleGroup
    @OptionGroup(title: "Webhooks (docs/PROTOCOL.md, \"Webhooks\")") var webhooks: WebhookGroup

    public init() {}

    /// What the command line gave, by setting name.
    var layer: Layer {
        let given: [(String, [String])] = [
            ("host", server.host.map { [$0] } ?? []),
            ("port", server.port.map { [$0] } ?? []),
            ("web-root", server.webRoot.map { [$0] } ?? []),
            ("db", server.db.map { [$0] } ?? []),
            ("cluster", server.cluster.map { [$0] } ?? []),
            ("node-id", server.nodeID.map { [$0] } ?? []),
            ("journal-retention-days", server.journalRetentionDays.map { [$0] } ?? []),
            ("journal-max-sessions-per-room", server.journalMaxSessionsPerRoom.map { [$0] } ?? []),
            ("allowed-origin", server.allowedOrigins),
            ("trusted-proxy", server.trustedProxies),
            ("metrics", server.metrics.map { [$0] } ?? []),
            ("tls-cert", tls.tlsCert.map { [$0] } ?? []),
            ("tls-key", tls.tlsKey.map { [$0] } ?? []),
            ("log-level", logging.logLevel.map { [$0] } ?? []),
            ("log-format", logging.logFormat.map { [$0] } ?? []),
            ("reconnect-grace", rooms.reconnectGrace.map { [$0] } ?? []),
            ("empty-room-lifetime", rooms.emptyRoomLifetime.map { [$0] } ?? []),
            ("max-members-per-room", rooms.maxMembersPerRoom.map { [$0] } ?? []),
            ("max-name-length", rooms.maxNameLength.map { [$0] } ?? []),
            ("max-task-length", rooms.maxTaskLength.map { [$0] } ?? []),
            ("min-focus", rooms.minFocus.map { [$0] } ?? []),
            ("max-message-bytes", limits.maxMessageBytes.map { [$0] } ?? []),
            ("messages-per-second", limits.messagesPerSecond.map { [$0] } ?? []),
            ("message-burst", limits.messageBurst.map { [$0] } ?? []),
            ("max-connections-per-address", limits.maxConnectionsPerAddress.map { [$0] } ?? []),
            ("rooms-per-address-per-minute", limits.roomsPerAddressPerMinute.map { [$0] } ?? []),
            ("max-rooms", limits.maxRooms.map { [$0] } ?? []),
            ("max-scheduled-rooms", limits.maxScheduledRooms.map { [$0] } ?? []),
            ("members-per-address-per-room", limits.membersPerAddressPerRoom.map { [$0] } ?? []),
            ("api-requests-per-second", limits.apiRequestsPerSecond.map { [$0] } ?? []),
            ("api-burst", limits.apiBurst.map { [$0] } ?? []),
            ("max-queued-frames", limits.maxQueuedFrames.map { [$0] } ?? []),
            ("max-queued-bytes", limits.maxQueuedBytes.map { [$0] } ?? []),
            ("handshake-timeout", limits.handshakeTimeout.map { [$0] } ?? []),
            ("ping-after", limits.pingAfter.map { [$0] } ?? []),
            ("hang-up-after", limits.hangUpAfter.map { [$0] } ?? []),
            ("max-schedules-per-room", schedules.maxSchedulesPerRoom.map { [$0] } ?? []),
            ("max-schedule-name-length", schedules.maxScheduleNameLength.map { [$0] } ?? []),
            ("late-start-grace", schedules.lateStartGrace.map { [$0] } ?? []),
        ] + webhooks.given
        var layer = Layer()
        for (name, values) in given where !values.isEmpty {
            layer[name] = values.map { ($0, .option("--" + name)) }
        }
        return layer
    }
}

/// `--name <value>` with the table's summary and default.
private func help(_ name: String) -> ArgumentHelp {
    guard let setting = Setting.named(name) else { preconditionFailure("no setting \(name)") }
    return ArgumentHelp("\(setting.summary) (default: \(setting.defaultDescription))", valueName: setting.valueName)
}

struct ServerGroup: ParsableArguments {
    @Option(name: .customLong("host"), help: help("host")) var host: String?
    @Option(name: .customLong("port"), help: help("port")) var port: String?
    @Option(name: .customLong("web-root"), help: help("web-root")) var webRoot: String?
    @Option(name: .customLong("db"), help: help("db")) var db: String?
    @Option(name: .customLong("cluster"), help: help("cluster")) var cluster: String?
    @Option(name: .customLong("node-id"), help: help("node-id")) var nodeID: String?
    @Option(name: .customLong("journal-retention-days"), help: help("journal-retention-days"))
    var journalRetentionDays: String?
    @Option(name: .customLong("journal-max-sessions-per-room"), help: help("journal-max-sessions-per-room"))
    var journalMaxSessionsPerRoom: String?
    @Option(name: .customLong("allowed-origin"), help: help("allowed-origin")) var allowedOrigins: [String] = []
    @Option(name: .customLong("trusted-proxy"), help: help("trusted-proxy")) var trustedProxies: [String] = []
    @Option(name: .customLong("metrics"), help: help("metrics")) var metrics: String?
}

struct TLSGroup: ParsableArguments {
    @Option(name: .customLong("tls-cert"), help: help("tls-cert")) var tlsCert: String?
    @Option(name: .customLong("tls-key"), help: help("tls-key")) var tlsKey: String?
}

struct LoggingGroup: ParsableArguments {
    @Option(name: .customLong("log-level"), help: help("log-level")) var logLevel: String?
    @Option(name: .customLong("log-format"), help: help("log-format")) var logFormat: String?
}

struct RoomGroup: ParsableArguments {
    @Option(name: .customLong("reconnect-grace"), help: help("reconnect-grace")) var reconnectGrace: String?
    @Option(name: .customLong("empty-room-lifetime"), help: help("empty-room-lifetime")) var emptyRoomLifetime: String?
    @Option(name: .customLong("max-members-per-room"), help: help("max-members-per-room")) var maxMembersPerRoom: String?
    @Option(name: .customLong("max-name-length"), help: help("max-name-length")) var maxNameLength: String?
    @Option(name: .customLong("max-task-length"), help: help("max-task-length")) var maxTaskLength: String?
    @Option(name: .customLong("min-focus"), help: help("min-focus")) var minFocus: String?
}

struct LimitGroup: ParsableArguments {
    @Option(name: .customLong("max-message-bytes"), help: help("max-message-bytes")) var maxMessageBytes: String?
    @Option(name: .customLong("messages-per-second"), help: help("messages-per-second")) var messagesPerSecond: String?
    @Option(name: .customLong("message-burst"), help: help("message-burst")) var messageBurst: String?
    @Option(name: .customLong("max-connections-per-address"), help: help("max-connections-per-address"))
    var maxConnectionsPerAddress: String?
    @Option(name: .customLong("rooms-per-address-per-minute"), help: help("rooms-per-address-per-minute"))
    var roomsPerAddressPerMinute: String?
    @Option(name: .customLong("max-rooms"), help: help("max-rooms")) var maxRooms: String?
    @Option(name: .customLong("max-scheduled-rooms"), help: help("max-scheduled-rooms")) var maxScheduledRooms: String?
    @Option(name: .customLong("members-per-address-per-room"), help: help("members-per-address-per-room"))
    var membersPerAddressPerRoom: String?
    @Option(name: .customLong("api-requests-per-second"), help: help("api-requests-per-second"))
    var apiRequestsPerSecond: String?
    @Option(name: .customLong("api-burst"), help: help("api-burst")) var apiBurst: String?
    @Option(name: .customLong("max-queued-frames"), help: help("max-queued-frames")) var maxQueuedFrames: String?
    @Option(name: .customLong("max-queued-bytes"), help: help("max-queued-bytes")) var maxQueuedBytes: String?
    @Option(name: .customLong("handshake-timeout"), help: help("handshake-timeout")) var handshakeTimeout: String?
    @Option(name: .customLong("ping-after"), help: help("ping-after")) var pingAfter: String?
    @Option(name: .customLong("hang-up-after"), help: help("hang-up-after")) var hangUpAfter: String?
}

struct ScheduleGroup: ParsableArguments {
    @Option(name: .customLong("max-schedules-per-room"), help: help("max-schedules-per-room"))
    var maxSchedulesPerRoom: String?
    @Option(name: .customLong("max-schedule-name-length"), help: help("max-schedule-name-length"))
    var maxScheduleNameLength: String?
    @Option(name: .customLong("late-start-grace"), help: help("late-start-grace")) var lateStartGrace: String?
}
