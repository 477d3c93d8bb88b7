import Dispatch
import Logging
import PomodoroCore
import PomodoroNet
import PomodoroProtocol
import PomodoroStore

/// The composition root: builds the whole server from a configuration, for the executable and the tests
/// alike.
public final class PomodoroServer: Sendable {
    private let transport: WebSocketServer
    /// The hub, reached on the service thread only.
    private let hub: LoopBound<RoomHub>
    /// What is stopped and flushed once the service thread has ended.
    private let writer: StoreWriter?
    private let deliverer = LockedState<WebhookDeliverer?>(nil)
    /// Hands the server's events to the hub (the server holds its delegate weakly).
    private let delegate: HubDelegate
    /// What runs beside the service thread for the router (nothing for `LocalRooms`).
    private let routerStart: @Sendable () -> Void
    private let routerHandOff: @Sendable (Duration, @escaping @Sendable () -> Void) -> Void
    private let routerStop: @Sendable () -> Void
    /// Whether its router hands its rooms to other servers at shutdown (`RouterParts.handOff`).
    private let clustered: Bool
    private let logger: Logger

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
        options.dynamicPaths = ["/healthz", HTTPAPI.readinessPath, "/r", "/api"] + (configuration.metricsEnabled ? [ServerMetrics.path] : [])
        options.maxMessageBytes = limits.maxMessageBytes
        options.maxQueuedFrames = limits.maxQueuedFrames
        options.maxQueuedBytes = limits.maxQueuedBytes
        options.pingAfterSeconds = UInt16(clamping: limits.pingAfterSeconds)
        options.hangUpAfterSeconds = UInt16(clamping: limits.hangUpAfterSeconds)
        options.handshakeTimeoutSeconds = limits.handshakeTimeoutSeconds
        // An API request not answered in time (a store or a passcode gate far behind) is told so, as the API's
        // other errors are (docs/PROTOCOL.md §12).
        var tooLate = HTTPAPI.errorResponse(Refusal(code: .unavailable, message: "the server could not answer in time; try again"))
        tooLate.headers.append((name: "Retry-After", value: "5"))
        options.httpTooLateResponse = tooLate
        // Connections per address are counted by the hub's `AddressLimits` (across servers, when the router's are).
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
        // Where rooms run: in this process, or where the configuration's `RoomRouting` says, whose router
        // may write through a store of its own around the one opened here.
        var store = opened
        var router: (any RoomRouter)?
        var addressLimits: (any AddressLimits)?
        var restoresRooms = true
        clustered = configuration.routing != nil
        if let routing = configuration.routing {
            let parts = try routing.makeRouter(RouterContext(configuration: configuration, clock: clock, logger: logger,
                                                             store: opened, loop: transport,
                                                             post: { [transport] work in transport.post(work) }))
            router = parts.router
            store = parts.store
            addressLimits = parts.addressLimits
            restoresRooms = parts.restoresRooms
            routerStart = parts.start
            routerHandOff = parts.handOff
            routerStop = parts.stop
        } else {
            routerStart = {}
            routerHandOff = { _, done in done() }
            routerStop = {}
        }
        if let store {
            if restoresRooms { stored = try store.loadRooms() }
            // A router may bring back no room at start (`RouterParts.restoresRooms`), but gets every room's
            // schedules (`RoomRouter.begin`).
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
        let made = RoomHub(configuration: configuration, clock: clock, logger: logger, store: writer,
                           transport: transport, router: router, addressLimits: addressLimits)
        let hub = LoopBound(made, loop: transport)
        self.hub = hub
        self.writer = writer
        delegate = HubDelegate(hub: hub)
        transport.delegate = delegate
        // `POST /api/admin/drain` stops the server as SIGTERM does (before `start`: nobody asks sooner).
        made.onDrainRequested = { [weak self] in self?.shutdown() }
        // Rooms come back on the service thread, on its first turn, before anyone has connected.
        transport.post { [stored, schedules] in hub.value.router.begin(stored: stored, schedules: schedules) }
        if let webhookStore = store as? any WebhookStore {
            transport.post { [webhooks, deliverer] in
                let started = hub.value.startWebhooks(webhooks, store: webhookStore)
                deliverer.withLock { $0 = started }
            }
        }
    }

    /// The port actually bound (useful with port 0).
    public var port: Int { transport.port }

    /// Starts the service thread.
    public func start() {
        routerStart()
        transport.start()
    }

    /// How long a draining server waits for others to take the rooms it handed off (`RouterParts.handOff`)
    /// before it closes its connections and exits all the same.
    public static let handOffBound: Duration = .seconds(5)
    /// How long a draining server waits for its store to write what was queued before it hands its rooms off
    /// all the same: with `handOffBound`, the whole drain is bounded (20 s), well within Kubernetes'
    /// `terminationGracePeriodSeconds` (30 s, of which `preStop` takes 5; deploy/kubernetes).
    public static let flushBound: Duration = .seconds(15)

    /// Stops, sending every client back at once (close 1012, "service restart"; docs/PROTOCOL.md §11). Safe
    /// from any thread, and more than once. `/readyz` answers 503 from the start.
    ///
    /// It writes what it had to its store, takes no room from now on, and lets its router hand its rooms to
    /// other servers (`RouterParts.handOff`; nothing to hand on a single server); it closes its connections
    /// once they hold every room, or after `handOffBound` (a node draining: `RouterParts.handOff`). The flush
    /// waits `flushBound` at most. A single server arms no room timer from the start; the rooms of a server
    /// handing them off go on ticking until the flush is done, just before the router gives them up
    /// (`RoomHub.drainForHandOff`).
    public func shutdown() {
        transport.post { [self] in
            let hub = self.hub.value
            guard !hub.isHandingOff else { return }
            let close: @Sendable () -> Void = { [transport, hub = self.hub] in
                // No timer may outlive the library's context (`RoomHub.stopTracking`): the ticks of members
                // of rooms other servers run, which went on through the hand-off, stop here.
                transport.post {
                    hub.value.stopTracking()
                    transport.shutdown(code: RoomHub.restartCloseCode, reason: RoomHub.restartCloseReason)
                }
            }
            let deadline = DispatchTime.now() + Self.dispatchInterval(Self.flushBound)
            let flush: @Sendable (@escaping @Sendable () -> Void) -> Void = { [writer, logger = hub.logger] done in
                DispatchQueue.global().async {
                    let started = DispatchTime.now()
                    Self.flush(writer, until: deadline, logger: logger)
                    let ms = (DispatchTime.now().uptimeNanoseconds - started.uptimeNanoseconds) / 1_000_000
                    logger.info("draining: the store wrote what was queued", metadata: ["ms": "\(ms)"])
                    done()
                }
            }
            let handOff: @Sendable () -> Void = { [routerHandOff] in routerHandOff(Self.handOffBound, close) }
            guard clustered else {
                hub.beginDraining()
                hub.beginHandOff()
                // Connections closed by the shutdown are not members leaving: the store keeps them as they were.
                hub.stopTracking()
                return flush(handOff)
            }
            hub.drainForHandOff(flush: flush, handOff: handOff)
        }
    }

    /// Waits until `writer` has written what was queued, or until `deadline`: a store that cannot write
    /// (PostgreSQL starved or unreachable) does not hold the drain; what is still queued then is written, or
    /// refused by the fence, after the hand-off.
    private static func flush(_ writer: StoreWriter?, until deadline: DispatchTime, logger: Logger) {
        let flushed = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            writer?.flush()
            flushed.signal()
        }
        if flushed.wait(timeout: deadline) == .timedOut {
            logger.warning("draining: the store did not write what was queued in time; handing the rooms off all the same",
                           metadata: ["bound": "\(flushBound)"])
        }
    }

    private static func dispatchInterval(_ duration: Duration) -> DispatchTimeInterval {
        let (seconds, attoseconds) = duration.components
        return .milliseconds(Int(seconds) * 1_000 + Int(attoseconds / 1_000_000_000_000_000))
    }

    /// From now on `/readyz` answers 503 while everything else goes on: a shutdown is coming. Safe from any
    /// thread.
    public func beginDraining() {
        transport.post { [hub] in hub.value.beginDraining() }
    }

    /// Blocks until the server has stopped and everything it wrote to its store is durable.
    public func waitUntilFinished() {
        transport.waitUntilFinished()
        deliverer.withLock { $0 }?.stop()
        writer?.flush()
        routerStop()
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
            body(Counts(rooms: hub.value.roomCount, connections: transport.connectionCount,
                        framesSent: hub.value.framesSent, droppedSlowClients: transport.droppedSlowClients))
        }
    }
}
