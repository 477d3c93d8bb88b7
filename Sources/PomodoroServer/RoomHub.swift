import Foundation
import Logging
import PomodoroCore
import PomodoroNet
import PomodoroProtocol
import PomodoroStore

/// The application on the service thread: connections, rooms, and the broadcasts between them.
///
/// It turns decoded messages into calls on `Room`, and a room's `Outcome` into frames: each broadcast is
/// encoded once and the same bytes go to every member. It owns no socket: it speaks to the network through
/// the `HubTransport` it is given and reads time only from its `ServerClock`, so tests drive it by hand.
/// It is confined to the service thread; nothing here locks.
///
/// Where the rest lives: the connections' table in `Sessions.swift`, each frame taken in its turn and
/// dispatched in `RoomHub+Frames.swift`, the join workflow in `RoomHub+Join.swift` (its steps in `JoinFlow`), passcode
/// checks in `RoomHub+Passcodes.swift`, the HTTP API in its owner `HTTPAPI`, journal reads and `stats` in
/// `RoomHub+Journal.swift`, a live room's outcomes, timers, commits and expiry in `RoomHub+Publish.swift`, and
/// each message encoded once and written to whoever should hear it in `FanOut`.
/// Which rooms are in memory, and the one rule for when one may leave, is `RoomRegistry`'s; rooms with
/// schedules out of memory come back for their starts in `RoomHub+ScheduledReturns.swift`.
///
/// Not `Sendable`: work posted from other threads reaches it through a `LoopBound` (`bound`), which checks in
/// debug builds that it is back on the service thread.
package final class RoomHub {
    package let configuration: ServerConfiguration
    package let clock: any ServerClock
    /// Where frames, closes, posted work and timers go (through the router's transport).
    package let transport: any HubTransport
    /// Where rooms and the focus journal are written, off the service thread; nil keeps them in memory.
    package let store: (any HubStore)?
    /// Where passcodes are hashed and checked, never on the service thread.
    let hashing: any BackgroundWork
    /// Where rooms run and how connections reach them (`RoomRouter`).
    package let router: any RoomRouter
    let tokens = TokenSource()
    package var logger: Logger

    /// In a room above `RoomPolicy.memberListLimit`, a `state` caused only by member changes goes out at
    /// most this often: a join storm of n members then costs each member about one list-capped `state` a
    /// second instead of n full ones.
    static let crowdStateInterval: Duration = .seconds(1)
    static let passcodeFailuresPerMinute = 5

    /// The connections, and where each sits (`Sessions.swift`).
    var sessions = SessionTable()
    /// The rooms in memory: the one place they enter and leave it (`RoomRegistry`).
    package let rooms: RoomRegistry
    /// Wakes the hub shortly before a scheduled start of a room not in memory (`RoomHub+ScheduledReturns`).
    var returnTimer: (any HubTimer)?
    /// Rooms being read back from the store for a scheduled start.
    var returning: Set<RoomID> = []
    /// The serial the next room made or brought back gets (`RoomEntry.serial`).
    var nextRoomSerial: UInt64 = 1
    /// Connections, rooms made and wrong passcodes per address: counted there and nowhere else, in this
    /// process or across servers (`AddressLimits`).
    let addressLimits: any AddressLimits
    /// Each joining connection's place in its address's rooms-per-minute limit, from before its join looks at
    /// a room not in memory until the join ends (`RoomHub+Join.swift`).
    var roomPlaces: [ConnectionID: RoomPlace] = [:]
    /// When each address's passcode checks take their turn on this node (at once, waiting).
    var passcodeGate = PasscodeGate()
    /// Checks the gate holds back or that wait for their place in the limit, with what to do when each
    /// starts or is refused.
    var passcodeWaiters: [PasscodeGate.Ticket: (start: () -> Void, refuse: () -> Void)] = [:]
    /// Who may see a room: decisions that wait off the service thread, told of lock changes meanwhile.
    var access = RoomAccess()
    /// The places of each address's checks running on this node, settled as they end (`RoomHub+Passcodes.swift`).
    var passcodePlaces: [String: [LimitReservation]] = [:]
    /// Tries again the checks of addresses whose limit was full of other servers' checks.
    var passcodeRetry: (any HubTimer)?
    var passcodeRetrying: Set<String> = []
    package let metrics = ServerMetrics()
    /// Encodes each message once and writes it to the connections and streams that should hear it.
    let fanOut: FanOut
    /// Frames queued for connections (the router counts its own here too).
    package var framesSent: Int {
        get { fanOut.framesSent }
        set { fanOut.framesSent = newValue }
    }

    /// When a refused change last asked the database whether it is back.
    var lastProbe: Instant?

    /// Joins waiting off the service thread, by connection (a connection's frames wait behind its join, so
    /// it has at most one).
    var joins: [ConnectionID: JoinFlow] = [:]
    /// Rooms being looked up in the store for a join, with the connections whose joins wait for the answer.
    var lookups: [RoomID: [ConnectionID]] = [:]

    /// Whether a join or a look-up here waits for `id`.
    package func awaits(_ id: RoomID) -> Bool {
        lookups[id] != nil || joins.values.contains { $0.room == id }
    }

    /// Set at shutdown: closing connections then changes no room.
    package internal(set) var stopped = false
    /// Set at shutdown (on a server handing its rooms off, once its store has written what was queued): no room
    /// timer is armed any more (`stopRoomTimers`).
    package internal(set) var roomTimersStopped = false
    /// Set at the start of a shutdown: `/readyz` answers 503 (`HTTPAPI+Readiness.swift`).
    var draining = false
    /// Set when a draining server hands its rooms off: it takes no room (`RoomHub+Drain.swift`).
    package internal(set) var handingOff = false
    /// Rooms taken by other nodes whose members here wait for the room's next second to be sent back
    /// (`RoomHub+Drain.swift`): the drain's end waits for them.
    package internal(set) var sendingBack: [RoomID: any HubTimer] = [:]
    /// A draining node's rooms ticking without their timers, until each is taken (`RoomHub+Drain.swift`).
    var drainTickers: [RoomID: (timer: any HubTimer, due: TickPayload)] = [:]
    /// What `POST /api/admin/drain` calls: the server's `shutdown` (set by `PomodoroServer`).
    package var onDrainRequested: (@Sendable () -> Void)?

    /// The rooms' webhooks and their delivery (RoomHub+Webhooks.swift).
    let webhookBook = WebhookBook()
    /// The HTTP API: each request the hub is handed goes there (`receivedHTTP`).
    package private(set) lazy var api = HTTPAPI(hub: self)

    /// - Parameters:
    ///   - transport: set once here; the hub never reaches the network any other way.
    ///   - hashing: where passcode hashes run; threads of their own unless a test runs them by hand.
    package init(configuration: ServerConfiguration, clock: any ServerClock, logger: Logger,
                 store: (any HubStore)?, transport: any HubTransport,
                 hashing: any BackgroundWork = HashingThreads(name: "pomodoro-hash"),
                 router: (any RoomRouter)? = nil, addressLimits: (any AddressLimits)? = nil) {
        self.configuration = configuration
        self.addressLimits = addressLimits ?? LocalAddressLimits(configuration.limits, clock: clock)
        self.clock = clock
        self.logger = logger
        self.store = store
        let router = router ?? LocalRooms()
        self.router = router
        self.transport = router.transport(over: transport)
        fanOut = FanOut(transport: self.transport, metrics: metrics, clock: clock)
        self.hashing = hashing
        rooms = RoomRegistry(capacity: configuration.limits.maxRooms, keepsStored: store != nil,
                             leadSeconds: configuration.scheduledReturnLeadSeconds,
                             index: router.indexesScheduledReturns)
        router.attach(to: self)
    }

    /// Work for the service thread that another thread finishes: the closure returned may be called on any
    /// thread and posts `work`, with what it is given, back here (`LoopBound`, checked in debug builds).
    func back<T: Sendable>(_ work: @escaping (T) -> Void) -> @Sendable (T) -> Void {
        let work = LoopBound(work, loop: transport.loop), transport = transport
        return { value in transport.post { work.value(value) } }
    }

    // MARK: Restoring

    /// Brings back the rooms a store kept (on the service thread, before anyone connects): their timers go
    /// on from their stored end times, and a phase that ended meanwhile completes now and is journaled.
    /// At most `--max-rooms` come back, rooms brought back for their schedules included: the rest stay
    /// stored and return when someone joins them (or, for a scheduled start, when there is room).
    package func restore(_ stored: [StoredRoom], schedules: [RoomID: [Schedule]] = [:]) {
        let now = clock.now()
        // A room in the middle of a scheduled set comes back with nobody in it: the set runs by itself.
        let occupied = stored.filter { !$0.members.isEmpty || $0.record.scheduledRun != nil }
        if occupied.count > configuration.limits.maxRooms {
            logger.warning("more stored rooms have members than the server may hold; the rest come back when joined",
                           metadata: ["stored": "\(occupied.count)", "maxRooms": "\(configuration.limits.maxRooms)"])
        }
        for var room in occupied.prefix(configuration.limits.maxRooms) {
            // Whole: with its schedules, whoever read it.
            if let list = schedules[room.record.id] { room.schedules = list }
            let entry = bringBack(room, at: now)
            logger.info("room restored", metadata: ["room": "\(entry.room.id)", "members": "\(entry.room.memberCount)",
                                                    "status": "\(entry.room.status.rawValue)"])
        }
        restoreSchedules(schedules, rooms: stored)
    }

    package var roomCount: Int { rooms.count }

    /// From now on, connections that close leave their members as they were, and rooms arm no timers (the
    /// server is stopping).
    ///
    /// The timers are cancelled here (`stopRoomTimers`), on the service thread before its library context is
    /// destroyed: a timer still armed then stays linked into the context's lists, and cancelling it later
    /// (when its room is freed) would write into freed memory.
    package func stopTracking() {
        stopTracking(keepingRoomsTicking: false)
    }

    /// As `stopTracking()`; with `keepingRoomsTicking`, the rooms of a server handing them off go on ticking
    /// (a tick writes nothing) until `stopRoomTimers`, called before the router gives them up
    /// (`drainForHandOff`). Their scheduled starts stop now all the same.
    package func stopTracking(keepingRoomsTicking: Bool) {
        stopped = true
        if keepingRoomsTicking {
            for entry in rooms.values { entry.scheduleTimer?.cancel() }
        } else {
            stopRoomTimers()
        }
        api.stop()
        router.stopTracking()
        returnTimer?.cancel()
    }

    // MARK: Connections

    package func opened(_ connection: ConnectionID, peer: String) {
        let limits = configuration.limits
        let address = AddressKey.of(peer)
        sessions[connection] = Session(peer: peer, address: address,
                                       bucket: TokenBucket(ratePerSecond: limits.messagesPerSecond,
                                                           burst: limits.messageBurst))
        logger.trace("connection opened", metadata: ["connection": "\(connection)", "peer": "\(peer)"])
        // Another node's connection was counted by its own node.
        guard !connection.isRemote else { return }
        // Its frames wait until the address's count has answered (at once on a single server).
        suspend(connection)
        addressLimits.admitConnection(connection, from: address) { [self] admitted in
            guard sessions[connection] != nil else { return }
            guard admitted else {
                logger.notice("too many connections from one address", metadata: ["peer": "\(peer)"])
                return transport.close(connection, code: 1008, reason: "too many connections from one address")
            }
            resume(connection)
        }
    }

    /// The connection ended, closed by its client or lost (`ended`): its member, if it has one, is away and
    /// keeps their place for the grace period; the others hear which it was.
    package func closed(_ connection: ConnectionID, ended: ConnectionEnd) {
        // A join still waiting is forgotten; its answers find no session and do nothing.
        joins[connection] = nil
        settleRoomPlace(of: connection, kept: false)
        if !connection.isRemote { addressLimits.connectionClosed(connection) }
        router.closed(connection, ended: ended)
        guard let session = sessions.removeValue(forKey: connection), !stopped else { return }
        if let watched = session.observing { rooms[watched]?.observers.remove(connection) }
        guard let roomID = session.room, let member = session.member, let entry = rooms[roomID],
              entry.connections[member] == connection else { return }
        entry.connections[member] = nil
        let now = clock.now()
        let outcome = entry.room.disconnect(member, now: now.monotonic, silent: session.silentNewMember, ended: ended)
        logger.debug("member disconnected", metadata: ["room": "\(roomID)", "member": "\(member)",
                                                       "connection.end": "\(ended.rawValue)"])
        publish(outcome, in: entry, at: now)
    }

    package func rejected(_ problem: ReceiveProblem, from connection: ConnectionID) {
        switch problem {
        case .tooLarge(let limit):
            reply(.error(code: .tooLarge, message: "messages are limited to \(limit) bytes", field: nil, ref: nil),
                  to: connection)
        case .binary:
            reply(.error(code: .binaryUnsupported, message: "send JSON text frames, not binary frames",
                         field: nil, ref: nil), to: connection)
        }
    }

    /// A request to one of the dynamic paths, for the HTTP API; answered through `responder`, now or once a
    /// read is done.
    package func receivedHTTP(_ request: HTTPRequest, responder: any HTTPAnswering) {
        api.received(request, responder: responder)
    }

    // MARK: Replies

    func refuse(_ error: RoomError, ref: Ref?, to connection: ConnectionID) {
        reply(.error(ProtocolError(error, ref: ref)), to: connection)
    }

    package func reply(_ message: ServerMessage, to connection: ConnectionID) {
        // The router may send it its own way (through the node that runs the connection's room).
        guard let message = router.outgoing(message, to: connection) else { return }
        fanOut.send(message, to: connection)
    }
}
