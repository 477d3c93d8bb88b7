import Foundation
import Logging
import PomodoroCluster
import PomodoroCore
import PomodoroNet
import PomodoroServer
import PomodoroStore

/// How log lines are written: for a person at a terminal, or one JSON object per line for a log shipper.
public enum LogFormat: String, Sendable, CaseIterable {
    case text
    case json
}

/// The effective configuration of `pomodoro-server`: every setting an admin can make, flat, with its default.
/// `Setting.all` says how each one is named and read; `serverConfiguration` hands it to the composition root.
public struct ServerSettings: Sendable, Equatable {
    public var host: String?
    public var port = WebSocketServerOptions.Defaults.port
    public var webRoot = ServerConfiguration.defaultWebRoot
    public var database = DatabaseLocation.sqlite(path: "./data/pomodoro.sqlite")
    /// The Redis of the cluster this server is a node of (docs/CLUSTER.md); nil: a single server.
    public var cluster: RedisAddress?
    /// This node's name in the cluster; nil: the host name and the port.
    public var nodeID: String?
    /// The cluster this server is a node of, from `cluster` and `nodeID`; nil: a single server.
    public var clusterConfiguration: ClusterConfiguration? {
        cluster.map { ClusterConfiguration(redis: $0, node: nodeID ?? Self.defaultNodeID(port: port)) }
    }
    /// 0 keeps journal rows for ever.
    public var journalRetentionDays = 0
    /// 0: no cap.
    public var journalMaxSessionsPerRoom = JournalRetention.defaultMaxRowsPerRoom
    public var allowedOrigins: [String] = []
    public var trustedProxies: [AddressRange] = []
    public var metricsEnabled = true
    public var tlsCertificatePath: String?
    public var tlsPrivateKeyPath: String?
    public var logLevel: Logger.Level = .info
    public var logFormat: LogFormat = .text
    public var reconnectGrace = Int(RoomPolicy.standard.reconnectGrace.components.seconds)
    public var emptyRoomLifetime = Int(RoomPolicy.standard.emptyRoomLifetime.components.seconds)
    public var maxMembersPerRoom = RoomPolicy.standard.maxMembers
    public var maxNameLength = RoomPolicy.standard.maxNameLength
    public var maxTaskLength = RoomPolicy.standard.maxTaskLength
    public var minFocus = RoomPolicy.standard.minFocusSeconds
    public var maxSchedulesPerRoom = SchedulePolicy.standard.maxSchedules
    public var maxScheduleNameLength = SchedulePolicy.standard.maxNameLength
    public var lateStartGrace = Int(SchedulePolicy.standard.lateStartGrace)
    public var limits = ServerLimits.standard
    public var webhooks = WebhookSettings()

    public init() {}

    /// What the server is built from.
    public var serverConfiguration: ServerConfiguration {
        var policy = RoomPolicy.standard
        policy.reconnectGrace = .seconds(reconnectGrace)
        policy.emptyRoomLifetime = .seconds(emptyRoomLifetime)
        policy.maxMembers = maxMembersPerRoom
        policy.maxNameLength = maxNameLength
        policy.maxTaskLength = maxTaskLength
        policy.minFocusSeconds = minFocus
        var configuration = ServerConfiguration(host: host, port: port, webRoot: webRoot, roomPolicy: policy, limits: limits,
                                   allowedOrigins: allowedOrigins, tlsCertificatePath: tlsCertificatePath,
                                   tlsPrivateKeyPath: tlsPrivateKeyPath,
                                   metricsEnabled: metricsEnabled, trustedProxies: TrustedProxies(trustedProxies))
        configuration.database = database
        // The composition root wires the cluster's router in (PomodoroCluster's `ClusterConfiguration`).
        configuration.routing = clusterConfiguration
        configuration.schedulePolicy = SchedulePolicy(maxSchedules: maxSchedulesPerRoom,
                                                      maxNameLength: maxScheduleNameLength,
                                                      lateStartGrace: Int64(lateStartGrace))
        configuration.journalRetention = JournalRetention(
            maxAgeDays: journalRetentionDays > 0 ? journalRetentionDays : nil,
            maxRowsPerRoom: journalMaxSessionsPerRoom > 0 ? journalMaxSessionsPerRoom : nil)
        configuration.webhooks = webhooks
        return configuration
    }

    /// A node's name when none is given: the host name and the port, unique on one machine.
    public static func defaultNodeID(port: Int) -> String {
        "\(ProcessInfo.processInfo.hostName):\(port)"
    }

    /// The web root used when none is configured: `web` in the working directory (a checkout), else the web
    /// files `make install` put beside the executable (`<prefix>/bin/..` → `<prefix>/share/pomodoro/web`),
    /// else `web` again, so that the warning about a missing folder names what was looked for.
    public static func defaultWebRoot(executablePath: String, isDirectory: (String) -> Bool) -> String {
        let checkout = ServerConfiguration.defaultWebRoot
        if isDirectory(checkout) { return checkout }
        var parts = executablePath.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        guard parts.count >= 3 else { return checkout }
        parts.removeLast(2)  // the executable, and bin/
        let installed = (parts + ["share", "pomodoro", "web"]).joined(separator: "/")
        return isDirectory(installed) ? installed : checkout
    }
}
