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
/// Where the rest lives: the join workflow in `RoomHub+Join.swift` (its steps in `JoinFlow`), passcode
/// checks in `RoomHub+Passcodes.swift`, the HTTP API in `RoomHub+HTTP.swift`, journal reads and `stats` in
/// `RoomHub+Journal.swift`, and a live room's broadcasts, timers, commits and expiry in `RoomHub+Fanout.swift`.
/// Which rooms are in memory, and the one rule for when one may leave, is `RoomRegistry`'s; rooms with
/// schedules out of memory come back for their starts in `RoomHub+ScheduledReturns.swift`.
///
/// `@unchecked Sendable` only so the composition root can hand it to the service thread, which alone uses it.
package final class RoomHub: @unchecked Sendable {
    let configuration: ServerConfiguration
    let clock: any ServerClock
    /// Where frames, closes, posted work and timers go.
    let transport: any HubTransport
    /// On a cluster node, `transport` itself: it carries what is sent to other nodes' connections over the bus.
    let relaying: RelayingTransport?
    /// Where rooms and the focus journal are written, off the service thread; nil keeps them in memory.
    let store: (any HubStore)?
    /// Where passcodes are hashed and checked, never on the service thread.
    let hashing: any BackgroundWork
    /// The cluster this server is a node of (docs/CLUSTER.md); nil on a single server.
    let cluster: (any HubCluster)?
    let tokens = TokenSource()
    var logger: Logger

    /// A connection and, once it has joined, where it sits.
    struct Session {
        let peer: String
        /// What its per-address limits count it under (`AddressKey`).
        let address: String
        var room: RoomID?
        var member: MemberID?
        /// The room this connection watches without being a member (`RoomHub+Observers.swift`).
        var observing: RoomID?
        /// Why it may watch that room (`RoomAccess`): weighed again when the room's lock changes or a member
        /// is removed.
        var watchGrant: RoomAccess.Grant?
        var bucket: TokenBucket
        /// The time zone named on `join`, for stats requests that name none.
        var timeZone: String?
        /// Messages refused in a row for going too fast.
        var strikes = 0
        /// Requests of this connection still at work off the service thread (a join's store look-up or
        /// passcode check, a `stats` read). While any is, its later frames wait in `pending`: frames of one
        /// connection take effect in the order they were sent.
        var suspended = 0
        var pending: [Inbound] = []
        /// A new member who has sent nothing since joining: lost, they get the room's short grace.
        var silentNewMember = false
        /// The `join` (or `observe`) frame as it came, until it is answered: on a cluster node it may go to
        /// the room's owner exactly as sent.
        var joinFrame: [UInt8]?
        /// Set while this connection's frames go to the node that owns its room (`RoomHub+Relay.swift`).
        var relay: Relay?
        /// A join this node made for the member, to carry it over to its room's new owner: its welcome goes
        /// to the member as a `state` (the member is in the room already; `RoomHub+Relay.swift`).
        var quietJoin = false
    }

    /// What reaches the hub for a connection, taken in the order it came: a client's frame, or, for another
    /// node's connection, the answer that node already gave a frame it refused (`BusMessage.refused`), sent
    /// back in that frame's turn.
    enum Inbound {
        case frame([UInt8])
        case answered([UInt8])
        /// That node closes the connection (it kept flooding), once the answers before this are out.
        case close(code: UInt16, reason: String)
    }

    /// A connection of this node whose room another node runs.
    struct Relay {
        var room: RoomID
        var owner: String
        /// Whether the owner has answered it yet (its join's welcome or refusal).
        var answered = false
        /// Its `join`, to send again to a new owner while unanswered.
        var join: [UInt8]
        /// The member it speaks for, from its welcome: to carry it over to a new owner without a reconnect.
        var member: (name: String, token: String)?
        /// The join in flight is this node's, carrying the member over (see `Session.quietJoin`).
        var quiet = false
        /// The member sent `leave`: once the owner's `ok` is back the connection is this node's again.
        var leaving = false
        /// This node asked the owner to close the connection (it kept flooding): nothing more of it is relayed.
        var closing = false
    }

    /// This node's connections relayed to other nodes, by room (`RoomHub+Relay.swift`).
    var relayedByRoom: [RoomID: Set<ConnectionID>] = [:]
    /// When each node with connections in this node's rooms was last heard of (`ClusterEvent.nodesAlive`).
    var nodesLastSeen: [String: Instant] = [:]

    /// In a room above `RoomPolicy.memberListLimit`, a `state` caused only by member changes goes out at
    /// most this often: a join storm of n members then costs each member about one list-capped `state` a
    /// second instead of n full ones.
    static let crowdStateInterval: Duration = .seconds(1)
    static let passcodeFailuresPerMinute = 5

    var sessions: [ConnectionID: Session] = [:]
    /// The rooms in memory: the one place they enter and leave it (`RoomRegistry`).
    let rooms: RoomRegistry
    /// Wakes the hub shortly before a scheduled start of a room not in memory (`RoomHub+ScheduledReturns`).
    var returnTimer: (any HubTimer)?
    /// Rooms being read back from the store for a scheduled start.
    var returning: Set<RoomID> = []
    /// On a cluster node, every room with schedules, kept run by some node (`RoomHub+ClusterSchedules.swift`).
    let scheduledRooms: ScheduledRooms
    /// The serial the next room made or brought back gets (`RoomEntry.serial`).
    var nextRoomSerial: UInt64 = 1
    /// Connections, rooms made and wrong passcodes per address: counted there and nowhere else, in this
    /// process or across the cluster (`AddressLimits`).
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
    /// Tries again the checks of addresses whose limit was busy with other nodes' checks.
    var passcodeRetry: (any HubTimer)?
    var passcodeRetrying: Set<String> = []
    /// `/api` requests per address: a bucket of `apiBurst`, refilled at `apiRequestsPerSecond`.
    var apiBuckets: [String: (bucket: TokenBucket, used: Instant)] = [:]
    package internal(set) var framesSent = 0
    let metrics = ServerMetrics()

    /// When a refused change last asked the database whether it is back.
    var lastProbe: Instant?

    /// Joins waiting off the service thread, by connection (a connection's frames wait behind its join, so
    /// it has at most one).
    var joins: [ConnectionID: JoinFlow] = [:]
    /// Rooms being looked up in the store for a join, with the connections whose joins wait for the answer.
    var lookups: [RoomID: [ConnectionID]] = [:]

    /// Set at shutdown: closing connections then changes no room, and no room timer is armed.
    var stopped = false
    /// Set at the start of a shutdown: `/readyz` answers 503 (`RoomHub+Readiness.swift`).
    var draining = false
    /// Set when a draining cluster node hands its rooms off: it takes no room (`RoomHub+Drain.swift`).
    var handingOff = false
    /// What `POST /api/admin/drain` calls: the server's `shutdown` (set by `PomodoroServer`).
    package var onDrainRequested: (@Sendable () -> Void)?
    /// Rooms handed to this node by a draining one, being taken.
    var handedOffTaking: Set<RoomID> = []

    /// Keeps event streams alive with a comment (`RoomHub+Events.swift`); armed while any stream is open.
    var heartbeat: (any HubTimer)?
    /// The rooms' webhooks and their delivery (RoomHub+Webhooks.swift).
    let webhookBook = WebhookBook()
    var heartbeatArmed = false

    /// - Parameters:
    ///   - transport: set once here; the hub never reaches the network any other way.
    ///   - hashing: where passcode hashes run; a concurrent queue unless a test runs them by hand.
    package init(configuration: ServerConfiguration, clock: any ServerClock, logger: Logger,
                 store: (any HubStore)?, transport: any HubTransport,
                 hashing: any BackgroundWork = DispatchBackgroundWork(label: "pomodoro.passcodes"),
                 cluster: (any HubCluster)? = nil, addressLimits: (any AddressLimits)? = nil) {
        self.configuration = configuration
        self.addressLimits = addressLimits ?? LocalAddressLimits(configuration.limits, clock: clock)
        self.clock = clock
        self.logger = logger
        self.store = store
        if let cluster {
            let relaying = RelayingTransport(base: transport, cluster: cluster)
            self.transport = relaying
            self.relaying = relaying
        } else {
            self.transport = transport
            self.relaying = nil
        }
        self.hashing = hashing
        self.cluster = cluster
        scheduledRooms = ScheduledRooms(lead: configuration.scheduledReturnLeadSeconds)
        rooms = RoomRegistry(capacity: configuration.limits.maxRooms, keepsStored: store != nil,
                             leadSeconds: configuration.scheduledReturnLeadSeconds, index: cluster == nil)
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

    /// Writes everything still queued for the store and waits until it is durable (at shutdown).
    package func flushStore() { store?.flush() }

    package var roomCount: Int { rooms.count }

    /// From now on, connections that close leave their members as they were, and rooms arm no timers (the
    /// server is stopping).
    ///
    /// The timers are cancelled here, on the service thread before its library context is destroyed: a timer
    /// still armed then stays linked into the context's lists, and cancelling it later (when its room is
    /// freed) would write into freed memory.
    package func stopTracking() {
        stopped = true
        for entry in rooms.values { entry.cancelTimers() }
        heartbeat?.cancel()
        scheduledRooms.timer?.cancel()
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
        // Another node's connection relayed here was counted by its own node.
        guard !connection.isRelayed else { return }
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

    package func closed(_ connection: ConnectionID) {
        // A join still waiting is forgotten; its answers find no session and do nothing.
        joins[connection] = nil
        settleRoomPlace(of: connection, kept: false)
        if !connection.isRelayed { addressLimits.connectionClosed(connection) }
        if let relay = sessions[connection]?.relay { endRelay(of: connection, relay, telling: true) }
        if connection.isRelayed { relaying?.remotes.forget(connection) }
        guard let session = sessions.removeValue(forKey: connection), !stopped else { return }
        if let watched = session.observing { rooms[watched]?.observers.remove(connection) }
        guard let roomID = session.room, let member = session.member, let entry = rooms[roomID],
              entry.connections[member] == connection else { return }
        entry.connections[member] = nil
        let now = clock.now()
        let outcome = entry.room.disconnect(member, now: now.monotonic, silent: session.silentNewMember)
        logger.debug("member disconnected", metadata: ["room": "\(roomID)", "member": "\(member)"])
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

    // MARK: Messages

    package func received(_ text: [UInt8], from connection: ConnectionID) {
        receive(.frame(text), from: connection)
    }

    /// A frame (or another node's answer to one) for `connection`: counted against the connection's rate, held
    /// while an earlier request is at work, else taken now. A frame of a connection relayed to its room's
    /// owner is counted here like any other, before it goes anywhere (`RoomHub+Relay.swift`); another node's
    /// connection is not counted again here, since its node did (the bus may bunch its frames).
    func receive(_ inbound: Inbound, from connection: ConnectionID) {
        guard var session = sessions[connection] else { return }
        // Being closed (it flooded): nothing more of it is taken, as once a local connection is closed.
        if session.relay?.closing == true { return }
        let now = clock.now()
        if !connection.isRelayed, !session.bucket.take(at: now.monotonic) {
            sessions[connection] = session
            return strike(connection, "too many messages; at most \(configuration.limits.messagesPerSecond) a second")
        }
        if session.suspended > 0 {
            // An earlier request is still at work: this frame takes effect after it, in order.
            guard session.pending.count < ServerLimits.framesWaitingBehindARequest else {
                sessions[connection] = session
                return strike(connection, "too many messages waiting for an earlier request; wait for its answer")
            }
            session.strikes = 0
            session.pending.append(inbound)
            sessions[connection] = session
            return
        }
        session.strikes = 0
        sessions[connection] = session
        take(inbound, from: connection, at: now)
    }

    private func take(_ inbound: Inbound, from connection: ConnectionID, at now: ClockReading) {
        switch inbound {
        case .frame(let text): handle(text, from: connection, at: now)
        case .answered(let frame): sendAnswered(frame, to: connection)
        case .close(let code, let reason): transport.close(connection, code: code, reason: reason)
        }
    }

    /// Refuses a frame with `rate_limited`, or closes the connection (1008) once it has gone on too long.
    private func strike(_ connection: ConnectionID, _ message: String) {
        guard let session = sessions[connection] else { return }
        sessions[connection]?.strikes += 1
        if session.strikes + 1 >= configuration.limits.rateLimitStrikes {
            logger.notice("closing a flooding connection", metadata: ["peer": "\(session.peer)"])
            // Relayed: closed by the owner, after the answers to its earlier frames (`RoomHub+Relay.swift`).
            if let relay = session.relay { return closeThroughOwner(connection, relay, code: 1008, reason: "rate limit") }
            transport.close(connection, code: 1008, reason: "rate limit")
        } else {
            reply(.error(code: .rateLimited, message: message, field: nil, ref: nil), to: connection)
        }
    }

    /// Holds the connection's later frames until a matching `resume`: for a request that goes off the
    /// service thread and answers later.
    func suspend(_ connection: ConnectionID) {
        sessions[connection]?.suspended += 1
    }

    /// A request at work is over: once none is, the frames that waited behind it are handled, in order, until
    /// one of them suspends the connection again.
    func resume(_ connection: ConnectionID) {
        guard sessions[connection] != nil else { return }
        sessions[connection]!.suspended -= 1
        while let session = sessions[connection], session.suspended == 0, !session.pending.isEmpty {
            let next = sessions[connection]!.pending.removeFirst()
            take(next, from: connection, at: clock.now())
        }
    }

    /// One frame, in its turn.
    func handle(_ text: [UInt8], from connection: ConnectionID, at now: ClockReading) {
        if let relay = sessions[connection]?.relay { return forward(text, from: connection, to: relay) }
        let frame: ClientFrame
        do {
            frame = try WireCodec.decodeClientFrame(text)
        } catch {
            reply(.error(code: error.code, message: error.message, field: error.field, ref: error.ref), to: connection)
            return
        }
        if case .join = frame.message {} else { sessions[connection]?.silentNewMember = false }
        if observerFrame(frame, from: connection, at: now) { return }
        if refusedDuringOutage(frame, from: connection, at: now) { return }
        switch frame.message {
        case .ping:
            reply(.pong(serverTime: now.wallMs, ref: frame.ref), to: connection)
        case let .join(room, name, token, passcode, control, tz):
            if cluster != nil, !connection.isRelayed { sessions[connection]?.joinFrame = text }
            if let tz {
                guard FocusReport.timeZone(named: tz) != nil else {
                    reply(.error(code: .badRequest, message: Self.badTimeZone, field: "tz", ref: frame.ref),
                          to: connection)
                    return
                }
                sessions[connection]?.timeZone = tz
            }
            join(JoinFlow.Request(room: room, name: name, token: token, passcode: passcode, control: control,
                                  ref: frame.ref),
                 connection: connection, at: now)
        case let .observe(room, token, passcode):
            if cluster != nil, !connection.isRelayed { sessions[connection]?.joinFrame = text }
            observe(room: room, token: token, passcode: passcode, ref: frame.ref, connection: connection, at: now)
        case let .stats(room, days, tz, passcode):
            stats(room: room, days: days, tz: tz, passcode: passcode, ref: frame.ref, connection: connection, at: now)
        case let .schedule(request):
            guard let (entry, member) = membership(of: connection, ref: frame.ref) else { return }
            catchUp(entry, at: now)
            scheduleRequest(request, ref: frame.ref, entry: entry, member: member, connection: connection, at: now)
        case .leave:
            guard let (entry, member) = membership(of: connection, ref: frame.ref) else { return }
            entry.connections[member] = nil
            sessions[connection]?.room = nil
            sessions[connection]?.member = nil
            let outcome = entry.room.leave(member, now: now.monotonic)
            reply(.ok(command: "leave", appliesFrom: nil, ref: frame.ref), to: connection)
            publish(outcome, in: entry, at: now)
        case .passcode, .kick:
            handleHosting(frame.message, ref: frame.ref, from: connection, at: now)
        case let .webhook(request):
            guard let (entry, member) = membership(of: connection, ref: frame.ref) else { return }
            webhookRequest(request, ref: frame.ref, entry: entry, member: member, connection: connection, at: now)
        default:
            guard let command = Self.roomCommand(frame.message) else { return }
            guard let (entry, member) = membership(of: connection, ref: frame.ref) else { return }
            do {
                catchUp(entry, at: now)
                entry.room.wallOffsetNanoseconds = now.wallOffsetNanoseconds
                let outcome = try entry.room.handle(command, from: member, now: now.monotonic)
                reply(.ok(command: frame.message.type, appliesFrom: outcome.appliesFrom, ref: frame.ref), to: connection)
                publish(outcome, in: entry, at: now)
            } catch {
                refuse(error, ref: frame.ref, to: connection)
            }
        }
    }

    /// While the database cannot be reached nothing that must be saved is taken on, so nobody is told of a
    /// change that could not be kept: such a frame is refused with `store_unavailable`. Leaving is let
    /// through: its save waits for the database.
    private func refusedDuringOutage(_ frame: ClientFrame, from connection: ConnectionID, at now: ClockReading) -> Bool {
        switch frame.message {
        case .ping, .stats, .leave, .observe, .schedule(.list): return false
        default: break
        }
        guard let store, store.outage != nil else { return false }
        // Nothing is written while changes are refused: ask the database again, at most once a second, so the
        // refusals end as soon as it is back.
        if lastProbe.map({ now.monotonic - $0 >= .seconds(1) }) ?? true {
            lastProbe = now.monotonic
            store.probe { _ in }
        }
        reply(.error(code: .storeUnavailable, message: "the server cannot save changes just now; try again in a moment",
                     field: nil, ref: frame.ref), to: connection)
        return true
    }

    private static func roomCommand(_ message: ClientMessage) -> Room.Command? {
        switch message {
        case .start: .start
        case .pause: .pause
        case .resume: .resume
        case .skip: .skip
        case .reset: .reset
        case .extend(let seconds): .extend(seconds: seconds)
        case .configure(let settings): .configure(settings)
        case .task(let text): .setTask(text)
        case .presence(let away): .setAway(away)
        case .control(let mode): .setControlMode(mode)
        case .handOff(let member): .handOff(to: MemberID(member))
        case .join, .leave, .ping, .stats, .observe, .schedule, .passcode, .kick, .webhook: nil
        }
    }

    func membership(of connection: ConnectionID, ref: Ref?) -> (RoomEntry, MemberID)? {
        guard let session = sessions[connection], let roomID = session.room, let member = session.member,
              let entry = rooms[roomID] else {
            reply(.error(code: .notJoined, message: "join a room first", field: nil, ref: ref), to: connection)
            return nil
        }
        return (entry, member)
    }

    static let badTimeZone = "tz must be an IANA time zone name such as Europe/Berlin"

    // MARK: Replies

    func refuse(_ error: RoomError, ref: Ref?, to connection: ConnectionID) {
        reply(.error(ProtocolError(error, ref: ref)), to: connection)
    }

    func reply(_ message: ServerMessage, to connection: ConnectionID) {
        var message = message
        if sessions[connection]?.quietJoin == true {
            sessions[connection]?.quietJoin = false
            guard case .welcome(_, let room, _, _, _) = message else {
                // Not taken back: it resumes by itself (4005).
                return transport.close(connection, code: 4005, reason: "room moved")
            }
            message = .state(room)
        }
        if case .error(let code, _, _, _) = message { metrics.errorSent(code) }
        let frame = OutboundFrame(WireCodec.encode(message))
        // A refusal of a frame of a connection relayed to its room's owner (the only answer this node gives
        // one itself) goes round through the owner, after the frames before it.
        if case .error = message, let relay = sessions[connection]?.relay {
            return answerThroughOwner(frame, to: connection, relay)
        }
        if transport.send(frame, to: connection) {
            framesSent += 1
            metrics.sent(frames: 1, bytes: frame.count)
        }
    }
}
