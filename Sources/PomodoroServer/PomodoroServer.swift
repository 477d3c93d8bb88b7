import Dispatch
import Logging
import PomodoroCluster
import PomodoroCore
import PomodoroPostgres
import PomodoroNet
import PomodoroStore

/// The composition root: builds the whole server from a configuration, for the executable and the tests
/// alike.
public final class PomodoroServer: Sendable {
    private let transport: WebSocketServer
    private let hub: RoomHub
    /// Hands the server's events to the hub (the server holds its delegate weakly).
    private let delegate: HubDelegate
    /// This server's place in a cluster, if it is a node of one.
    private let cluster: ClusterNode?
    /// On a cluster node, the per-address limits counted in Redis.
    private let clusterLimits: ClusterAddressLimits?
    private let logger: Logger

    /// Why a cluster node cannot be built.
    public struct ClusterProblem: Error, CustomStringConvertible {
        public let description: String
    }

    /// Binds the port and prepares the rooms; call `start()` to serve.
    ///
    /// - Parameter store: where rooms and the journal are kept; nil opens `configuration.database`. Tests hand
    ///   in a store of their own here.
    public init(configuration: ServerConfiguration, clock: ServerClock = SystemClock(),
                logger: Logger = Logger(label: "pomodoro"), store given: (any RoomStore)? = nil) throws {
        self.logger = logger
        var options = WebSocketServerOptions(host: configuration.host, port: configuration.port,
                                             webRoot: configuration.webRoot)
        let limits = configuration.limits
        options.dynamicPaths = ["/healthz", RoomHub.readinessPath, "/r", "/api"] + (configuration.metricsEnabled ? [ServerMetrics.path] : [])
        options.maxMessageBytes = limits.maxMessageBytes
        options.maxQueuedFrames = limits.maxQueuedFrames
        options.maxQueuedBytes = limits.maxQueuedBytes
        options.pingAfterSeconds = UInt16(clamping: limits.pingAfterSeconds)
        options.hangUpAfterSeconds = UInt16(clamping: limits.hangUpAfterSeconds)
        options.handshakeTimeoutSeconds = limits.handshakeTimeoutSeconds
        // Connections per address are counted by the hub's `AddressLimits` (across the cluster on a node).
        // Behind a proxy every client has the proxy's address, and the admin turns per-address limits off
        // with the connection limit: this one follows it.
        if limits.maxConnectionsPerAddress == 0 { options.maxHTTPRequestsPerAddress = 0 }
        options.allowedOrigins = configuration.allowedOrigins
        options.trustedProxies = configuration.trustedProxies
        options.tlsCertificatePath = configuration.tlsCertificatePath
        options.tlsPrivateKeyPath = configuration.tlsPrivateKeyPath
        options.verboseLibraryLogs = logger.logLevel <= .debug
        // libwebsockets' own lines go through our logger too (and so into its JSON format).
        LibraryLog.route { level, line in
            let mapped: Logger.Level = switch level {
            case .error: .error
            case .warning: .warning
            case .notice: .notice
            case .other: .debug
            }
            logger.log(level: mapped, "\(line)", metadata: ["source": "libwebsockets"])
        }
        transport = try WebSocketServer(options: options)
        var writer: StoreWriter?
        var stored: [StoredRoom] = []
        var schedules: [RoomID: [Schedule]] = [:]
        var webhooks: [WebhookRecord] = []
        let opened = try given ?? configuration.database.open(retention: configuration.journalRetention)
        var store = opened
        if let settings = configuration.cluster {
            // A node runs a room only under its lease and writes only through the fence: it needs the shared
            // PostgreSQL store, and brings no room back at start (a room returns when someone joins it, taken
            // under its lease).
            guard let postgres = opened as? PostgresRoomStore else {
                throw ClusterProblem(description: "a cluster node needs a PostgreSQL database (--db postgres://...)")
            }
            let node = ClusterNode(configuration: settings, store: postgres, monotonic: { clock.now().monotonic })
            node.logger = logger
            cluster = node
            store = node.store
            let incarnation = settings.node + "#" + String(UInt64.random(in: 0...UInt64.max), radix: 16)
            clusterLimits = ClusterAddressLimits(
                local: LocalAddressLimits(limits, clock: clock),
                redis: RedisAddressCounts(address: settings.redis, incarnation: incarnation),
                logger: logger, post: { [transport] work in transport.post(work) })
        } else {
            cluster = nil
            clusterLimits = nil
        }
        if let store {
            if cluster == nil { stored = try store.loadRooms() }
            // A cluster node brings back no room at start, but knows every room's schedules: it keeps each
            // room with some run by some node (docs/CLUSTER.md, "Schedules on a cluster").
            schedules = try store.loadSchedules()
            webhooks = try (store as? any WebhookStore)?.webhooks(room: nil) ?? []
            // The writer prunes each room's journal as it writes to it; rooms that no longer write are pruned
            // here, once, off the service thread.
            let nowMs = clock.now().wallMs
            DispatchQueue.global(qos: .utility).async {
                do {
                    let deleted = try store.pruneJournal(nowMs: nowMs)
                    if deleted > 0 { logger.info("deleted old journal rows", metadata: ["rows": "\(deleted)"]) }
                } catch {
                    logger.error("could not delete old journal rows", metadata: ["error": "\(error)"])
                }
            }
            writer = StoreWriter(store: store, onError: { error in
                logger.error("could not write to the store", metadata: ["error": "\(error)"])
            })
        }
        hub = RoomHub(configuration: configuration, clock: clock, logger: logger, store: writer, transport: transport,
                      cluster: cluster, addressLimits: clusterLimits)
        delegate = HubDelegate(hub: hub)
        cluster?.whenLost { [hub, transport] room in transport.post { hub.leaseLost(room) } }
        cluster?.listen { [hub, transport] event in transport.post { hub.heard(event) } }
        cluster?.whenSchedulesHeard { [hub, transport] news in transport.post { hub.schedulesHeard(news) } }
        transport.delegate = delegate
        // Rooms come back on the service thread, on its first turn, before anyone has connected.
        let clustered = cluster != nil
        transport.post { [hub, stored, schedules] in
            if clustered { hub.keepScheduledRoomsRunning(schedules) } else { hub.restore(stored, schedules: schedules) }
        }
        if let webhookStore = store as? any WebhookStore {
            transport.post { [hub, webhooks] in hub.startWebhooks(webhooks, store: webhookStore) }
        }
        // `POST /api/admin/drain` stops the server as SIGTERM does (before `start`: nobody asks sooner).
        hub.onDrainRequested = { [weak self] in self?.shutdown() }
    }

    /// The port actually bound (useful with port 0).
    public var port: Int { transport.port }

    /// Starts the service thread.
    public func start() {
        cluster?.start()
        clusterLimits?.start()
        transport.start()
    }

    /// How long a draining cluster node waits for other nodes to take the rooms it handed off before it
    /// closes its connections and exits all the same.
    public static let handOffBound: Duration = .seconds(5)

    /// Stops, sending every client back at once (close 1012, "service restart"; docs/PROTOCOL.md §11). Safe
    /// from any thread, and more than once. `/readyz` answers 503 from the start, and no room timer is armed.
    ///
    /// A single server writes what it had to its store, then closes. A cluster node also takes no room from
    /// now on and hands each of its rooms to a live node (`ClusterNode.handOff`), which runs it at once; it
    /// closes its connections once another node holds every room, or after `handOffBound` (docs/CLUSTER.md,
    /// "Draining a node").
    public func shutdown() {
        transport.post { [self] in
            guard !hub.isHandingOff else { return }
            hub.beginDraining()
            hub.beginHandOff()
            // Connections closed by the shutdown are not members leaving: the store keeps them as they were.
            hub.stopTracking()
            DispatchQueue.global().async { [self] in
                hub.flushStore()
                let close: @Sendable () -> Void = { [transport] in
                    transport.post { transport.shutdown(code: RoomHub.restartCloseCode, reason: RoomHub.restartCloseReason) }
                }
                guard let cluster else { return close() }
                cluster.handOff(within: Self.handOffBound) { [logger] report in
                    if !report.notTaken.isEmpty {
                        logger.warning("draining: rooms not taken by another node in time; they return when someone joins",
                                       metadata: ["rooms": "\(report.notTaken.map(\.rawValue))"])
                    }
                    close()
                }
            }
        }
    }

    /// From now on `/readyz` answers 503 while everything else goes on: a shutdown is coming. Safe from any
    /// thread.
    public func beginDraining() {
        transport.post { [hub] in hub.beginDraining() }
    }

    /// Blocks until the server has stopped and everything it wrote to its store is durable.
    public func waitUntilFinished() {
        transport.waitUntilFinished()
        hub.stopWebhooks()
        hub.flushStore()
        clusterLimits?.stop()
        cluster?.stop()
    }

    /// Counts read on the service thread: rooms, connections, frames sent, slow clients dropped.
    public struct Counts: Sendable, Equatable {
        public var rooms: Int
        public var connections: Int
        public var framesSent: Int
        public var droppedSlowClients: Int
    }

    /// Reads the counts on the service thread and hands them to `body` there.
    public func counts(_ body: @escaping @Sendable (Counts) -> Void) {
        transport.post { [transport, hub] in
            body(Counts(rooms: hub.roomCount, connections: transport.connectionCount,
                        framesSent: hub.framesSent, droppedSlowClients: transport.droppedSlowClients))
        }
    }
}
