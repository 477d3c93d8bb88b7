import Foundation
import Logging
import PomodoroCore
import PomodoroNet
import PomodoroProtocol
import PomodoroServer
import PomodoroStore
import Synchronization

/// The hub's `RoomRouter` on a node of a cluster (docs/CLUSTER.md): a room runs on the node that holds its
/// lease; a joiner of a room another live node runs is relayed there (`ClusterRooms+Relay.swift`); rooms
/// with schedules are kept run by some node (`ClusterRooms+Schedules.swift`). It speaks to Redis only through
/// its `HubCluster` (`ClusterNode`, or a test's), and to the hub only on the service thread.
package final class ClusterRooms: RoomRouter {
    let cluster: any HubCluster
    /// The hub's transport: what the hub sends to another node's connection goes over the bus.
    private(set) var relaying: RelayingTransport!
    /// Set by `attach`; the hub owns this router.
    private(set) unowned var hub: RoomHub!
    /// This node's lines of `/metrics`, in the hub's registry; set by `attach`.
    private(set) var metrics: ClusterMetrics!

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
        /// The join in flight is this node's, carrying the member over (see `quietJoins`).
        var quiet = false
        /// The member sent `leave`: once the owner's `ok` is back the connection is this node's again.
        var leaving = false
        /// This node asked the owner to close the connection (it kept flooding): nothing more of it is relayed.
        var closing = false
        /// The owner sent it the room (a welcome, `observing` or `state`): it is in the room, and hears the
        /// ticks this node computes for it (`ClusterRooms+RelayedTicks.swift`).
        var hearsTicks = false
        /// The running timer it was last shown (`ShownTimer`): only a tick of that timer is computed for it here.
        var shown: ShownTimer?
        /// Its node drains: it is sent back through the proxy (1012) right after the next tick of its room
        /// (`ClusterRooms+HandOff.swift`).
        var sendBackAfterTick = false
        /// Closed with 1012 on its owner's word (the owner drains): its close is told as a restart's.
        var sentBackForRestart = false
    }

    /// This node's connections whose frames go to the node that owns their room.
    var relays: [ConnectionID: Relay] = [:]
    /// The `join` (or `observe`) frame of each connection as it came, until it is answered: it may go to the
    /// room's owner exactly as sent.
    var joinFrames: [ConnectionID: [UInt8]] = [:]
    /// Joins this node made for a member, to carry it over to its room's new owner: the welcome goes to the
    /// member as a `state` (the member is in the room already).
    var quietJoins: Set<ConnectionID> = []
    /// This node's connections relayed to other nodes, by room.
    var relayedByRoom: [RoomID: Set<ConnectionID>] = [:]
    /// The running timers of the rooms in `relayedByRoom`, as their owners replicated them, each with the
    /// timer that ticks it here (`ClusterRooms+RelayedTicks.swift`).
    var relayedTimers: [RoomID: RelayedRoomTimer] = [:]
    /// Set once the server stops its timers (`stopRelayedTicks`): no relayed tick is armed again.
    var relayedTicksStopped = false
    /// Reads the timer of the `state`s owners send (their rooms' last frames kept, per room).
    var stateReader = StateTimerReader()
    /// When each node with connections in this node's rooms was last heard of (`ClusterEvent.nodesAlive`).
    var nodesLastSeen: [String: Instant] = [:]
    /// This node's relayed members joined again to their owner after the bus lost Redis, with when that join
    /// was sent (`ClusterRooms+Resync.swift`).
    var resyncing: [ConnectionID: Instant] = [:]
    /// Other nodes' connections in this node's rooms from before the bus lost Redis, not opened again by their
    /// node yet, and when the bus came back (`ClusterRooms+Resync.swift`).
    var unconfirmedRemotes: (connections: Set<ConnectionID>, since: Instant)?
    /// Members' sessions from before the outage whose node opened their connection again, kept aside for the
    /// join with the member's token that takes them over (`ClusterRooms+Resync.swift`).
    var keptAside: Set<ConnectionID> = []
    /// When the node last read the registry of live nodes (`ClusterEvent.nodesAlive`).
    var nodesReadAt: Instant?
    /// Every room with schedules, kept run by some node.
    let scheduledRooms: ScheduledRooms
    /// Rooms handed to this node by a draining one, being taken.
    var handedOffTaking: Set<RoomID> = []
    /// Control-API requests waiting for a room's owner (`ClusterRooms+ControlAPI.swift`).
    var controlAPI = ControlAPIRequests()
    /// Event streams relayed between this node and others (`ClusterRooms+EventStreams.swift`).
    var eventStreams = RelayedEventStreams()
    /// How the cluster's threads reach this router, in work they post to the service thread.
    package let handle = Handle()

    /// This router for work posted to the service thread from other threads: reached there only
    /// (`LoopBound`), once the hub has attached it.
    package final class Handle: Sendable {
        private let bound = Mutex<LoopBound<ClusterRooms>?>(nil)
        fileprivate func set(_ rooms: LoopBound<ClusterRooms>) { bound.withLock { $0 = rooms } }
        /// The router; on the service thread only, nil before the hub has attached it.
        package var rooms: ClusterRooms? { bound.withLock { $0 }?.value }
    }

    /// The bus's publishing connection on the service loop (nil: `cluster.publish`).
    private let publisher: LoopBound<RedisLoopClient>?

    package convenience init(cluster: any HubCluster, scheduledReturnLeadSeconds: Int64) {
        self.init(cluster: cluster, scheduledReturnLeadSeconds: scheduledReturnLeadSeconds, publisher: nil)
    }

    init(cluster: any HubCluster, scheduledReturnLeadSeconds: Int64, publisher: LoopBound<RedisLoopClient>?) {
        self.cluster = cluster
        self.publisher = publisher
        scheduledRooms = ScheduledRooms(lead: scheduledReturnLeadSeconds)
    }

    package func transport(over base: any HubTransport) -> any HubTransport {
        let relaying = RelayingTransport(base: base, cluster: cluster, publisher: publisher)
        self.relaying = relaying
        return relaying
    }

    package func attach(to hub: RoomHub) {
        self.hub = hub
        let metrics = ClusterMetrics(hub.metrics)
        self.metrics = metrics
        hub.metrics.whenScraped { metrics.read($0) }
        handle.set(LoopBound(self, loop: hub.transport.loop))
    }

    /// Subscribes to this node's bus channel on the service loop: each message is decoded once and heard
    /// here without a hand-off; the subscription's own events (subscribed, lost) go to `changed`, the node's,
    /// which says whether the bus is back after losing Redis. That is heard here at once, before the new
    /// subscription's first message: posted, it came after the first joins other nodes sent again, and the
    /// owner took those connections for ones from before the outage (`resynchronise`) and closed them.
    func listen(on subscriber: RedisLoopClient, changed: @escaping (ClusterBus.Event) -> Bool) {
        subscriber.subscribe([BusMessage.nodeChannel(cluster.node)]) { [weak self] event in
            guard case .message(_, let payload) = event else {
                if changed(event) { self?.heard(.resubscribed) }
                return
            }
            guard let self, let message = try? BusMessage(decoding: payload) else { return }
            heard(.heard(message))
        }
    }

    /// Runs `body` with this router on the service thread, from any thread: for the answers of the
    /// cluster's threads.
    var back: @Sendable (_ body: @escaping @Sendable (ClusterRooms) -> Void) -> Void {
        let this = LoopBound(self, loop: hub.transport.loop), transport = hub.transport
        return { body in transport.post { body(this.value) } }
    }
    package var indexesScheduledReturns: Bool { false }
    /// A room taken here was run by another node until its lease was given back or lapsed.
    package var takesRoomsFromOtherNodes: Bool { true }

    // MARK: Rooms

    /// A node reads a room only by taking it: its lease, then its claim in the store.
    package func find(_ id: RoomID) { take(id) }

    /// Takes the room's lease (and its claim in the store) for the joins waiting for it, or for this node's
    /// relayed members of it when its owner has gone (`ownerMoved`). A room another live node runs is
    /// joined through that node: the local joiners' frames are relayed to it.
    func take(_ id: RoomID) {
        if hub.handingOff, relayedByRoom[id] != nil {
            _ = hub.refuseTakeWhileHandingOff(id)
            return followWhileHandingOff(id)
        }
        if hub.refuseTakeWhileHandingOff(id) { return }
        let back = back
        // A room a live node runs (a relayed join's) is known in one read on the service loop; any other
        // is taken off it (the lease, then the store's claim).
        liveOwner(of: id) { [self] owner in
            if let owner { return took(id, .elsewhere(node: owner)) }
            cluster.take(id) { taken in back { $0.took(id, taken) } }
        }
    }

    /// The live node other than this one that holds `id`'s lease, read on the service loop without a hand-off
    /// in one script (`RedisLeases.liveOwnerScript`: the lease, and whether any node listens on its holder's
    /// channel, since one killed leaves its lease behind for up to a time to live), over `publisher`; nil when there is none (free, this node's, a node nobody hears), when Redis could not
    /// answer, or without a loop connection: the caller then asks the cluster's threads, as before.
    func liveOwner(of id: RoomID, _ answer: @escaping (String?) -> Void) {
        guard let publisher else { return answer(nil) }
        let prefix = BusMessage.nodeChannel("")
        publisher.value.send(["EVAL", RedisLeases.liveOwnerScript, "1", RedisLeases.leaseKey(id.rawValue), prefix]) { [node = cluster.node] reply in
            guard case .success(.array(let parts)) = reply, parts.count == 2, let stored = parts[0].text,
                  case .integer(let listeners) = parts[1], listeners > 0,
                  let holder = LeaseHolder(stored: stored), holder.node != node else { return answer(nil) }
            answer(holder.node)
        }
    }

    /// The answer to `take`, on the service thread.
    private func took(_ id: RoomID, _ taken: ClusterTake) {
        let found: RoomFound
        switch taken {
        case .owned(let stored):
            metrics.leasesTaken.increment()
            found = .stored(.success(stored))
            // Taken for members of this node who were relayed to a node that has gone: the room
            // comes back here for them.
            if let stored, hub.rooms[id] == nil, relayedByRoom[id] != nil { hub.bringBack(stored, at: hub.clock.now()) }
        case .elsewhere(let node):
            found = .elsewhere(node: node)
        case .failed(let reason):
            hub.logger.error("could not take a room", metadata: ["room": "\(id)", "error": "\(reason)"])
            // Redis away (the bus lost it too): the join says that takes wait for it.
            found = cluster.busIsDown ? .coordinatorAway : .stored(.failure(StoreError(reason)))
        }
        hub.logger.trace("room taken", metadata: ["room": "\(id)", "taken": "\("\(taken)".prefix(60))"])
        hub.lookedUp(id, found) { connection in
            guard case .elsewhere(let node) = taken, node != cluster.node, relayable(connection) else { return false }
            hub.settleRoomPlace(of: connection, kept: false)
            relayJoin(of: connection, room: id, to: node)
            return true
        }
        rehome(id, after: taken)
        hub.letGoIfUnused(id)
    }

    package func owns(_ id: RoomID, at now: ClockReading) -> Bool { cluster.owns(id, at: now.monotonic) }
    package func letGo(_ id: RoomID) { cluster.release(id) }

    /// The room's lease ended (Redis gave it to another node, or its term ran out unrenewed), and the hub
    /// dropped the room. A node handing its rooms off (draining) gave the lease back itself.
    package func lost(_ id: RoomID) {
        if !hub.handingOff {
            metrics.leasesLost.increment()
            hub.logger.warning("lost a room's lease; its members reconnect to its new owner", metadata: ["room": "\(id)"])
        }
        cluster.release(id)
    }

    // MARK: Connections

    package func ignores(_ connection: ConnectionID) -> Bool { relays[connection]?.closing == true }

    package func joinSent(_ text: [UInt8], by connection: ConnectionID) {
        if !connection.isRemote { joinFrames[connection] = text }
    }

    package func carries(_ text: [UInt8], from connection: ConnectionID) -> Bool {
        guard let relay = relays[connection] else { return false }
        forward(text, from: connection, to: relay)
        return true
    }

    package func outgoing(_ message: ServerMessage, to connection: ConnectionID) -> ServerMessage? {
        // A session kept aside after Redis returned (`keepAside`) reaches nobody: not even counted as sent.
        if keptAside.contains(connection) { return nil }
        var message = message
        if quietJoins.remove(connection) != nil {
            switch message {
            case .welcome(_, let room, _, _, _), .observing(let room, _, _): message = .state(room)
            default:
                // Not taken back: it resumes by itself (4005).
                hub.transport.close(connection, code: 4005, reason: "room moved")
                return nil
            }
        }
        // A refusal of a frame of a relayed connection (the only answer this node gives one itself) goes
        // round through the owner, after the frames before it.
        if case .error(let code, _, _, _, _) = message, let relay = relays[connection] {
            hub.metrics.errorSent(code)
            answerThroughOwner(OutboundFrame(WireCodec.encode(message)), to: connection, relay)
            return nil
        }
        return message
    }

    package func closesFlooding(_ connection: ConnectionID, code: UInt16, reason: String) -> Bool {
        guard let relay = relays[connection] else { return false }
        closeThroughOwner(connection, relay, code: code, reason: reason)
        return true
    }

    package func closed(_ connection: ConnectionID, ended: ConnectionEnd) {
        joinFrames[connection] = nil
        quietJoins.remove(connection)
        if let relay = relays[connection] {
            endRelay(of: connection, relay, telling: true, ended: relay.sentBackForRestart ? .restart : ended)
        }
        if connection.isRemote { relaying.remotes.forget(connection) }
    }

    /// The room may be open on another node: the observer is relayed there.
    package func observesElsewhere(_ id: RoomID, connection: ConnectionID, ref: Ref?) -> Bool {
        guard relayable(connection) else { return false }
        hub.suspend(connection)
        otherOwner(of: id) { [self] owner in found(id, owner: owner, for: connection, ref: ref) }
        return true
    }

    /// The live node other than this one that runs `id`, answered on the service thread: `liveOwner`, or
    /// without a loop connection the cluster's threads (`HubCluster.owner`). Nothing is taken.
    func otherOwner(of id: RoomID, _ answer: @escaping (String?) -> Void) {
        guard publisher != nil else {
            let bound = LoopBound(answer, loop: hub.transport.loop), back = back
            cluster.owner(of: id) { owner in back { _ in bound.value(owner) } }
            return
        }
        liveOwner(of: id, answer)
    }

    /// The answer to an observer's look for the room's owner, on the service thread.
    private func found(_ id: RoomID, owner: String?, for connection: ConnectionID, ref: Ref?) {
        guard hub.isOpen(connection) else { return }
        guard let owner else {
            joinFrames[connection] = nil
            let refusal = RoomHub.noOpenRoom
            hub.reply(.error(code: refusal.code, message: refusal.message, field: refusal.field, ref: ref),
                      to: connection)
            return hub.resume(connection)
        }
        relayJoin(of: connection, room: id, to: owner)
    }

    // MARK: HTTP and state

    /// `GET /api/cluster` (this node, its rooms, the nodes seen) and `GET /api/cluster/rooms/{room}` (who
    /// holds the room's lease, under which epoch): Redis is read off the service thread. Operators'
    /// endpoints, answered only to a client on this host's loopback (the client address a `--trusted-proxy`
    /// forwards, when one does) and only while `/metrics` is served: they name every room the node runs and
    /// which node runs any room, more than a joiner learns (docs/SECURITY.md, "Redis"). Both are read: another
    /// method is answered 405, as on every path the server knows.
    package func answers(_ http: HTTPRequest, responder: any HTTPAnswering) -> Bool {
        let path = http.path
        guard path == "/api/cluster" || path.hasPrefix("/api/cluster/") else { return false }
        func fail(_ refusal: Refusal) { responder.respond(HTTPAPI.errorResponse(refusal)) }
        guard hub.configuration.metricsEnabled, HTTPAPI.isLoopback(http.peer) else {
            fail(Refusal(code: .notFound, message: "no such path; try /api/rooms/{room}"))
            return true
        }
        let prefix = "/api/cluster/rooms/"
        let room = path.hasPrefix(prefix) ? String(path.dropFirst(prefix.count)).removingPercentEncoding
            .flatMap { try? RoomID(validating: $0) } : nil
        guard path == "/api/cluster" || room != nil else {
            fail(Refusal(code: .notFound, message: "no such path: use /api/cluster or /api/cluster/rooms/{room}"))
            return true
        }
        guard HTTPAPI.readMethods.contains(http.method) else {
            responder.respond(HTTPAPI.methodNotAllowed(allow: HTTPAPI.readMethods, as: .api))
            return true
        }
        guard let room else {
            cluster.report { result in
                switch result {
                case .success(let payload):
                    responder.respond(HTTPResponse(status: 200, contentType: "application/json",
                                                   body: WireCodec.encodeClusterBody(payload)))
                case .failure(let error): responder.respond(Self.unavailable(error))
                }
            }
            return true
        }
        cluster.report(room: room) { result in
            switch result {
            case .success(let payload):
                responder.respond(HTTPResponse(status: 200, contentType: "application/json",
                                               body: WireCodec.encodeClusterRoomBody(payload)))
            case .failure(let error): responder.respond(Self.unavailable(error))
            }
        }
        return true
    }

    private static func unavailable(_ error: ClusterReadError) -> HTTPResponse {
        HTTPAPI.errorResponse(Refusal(code: .unavailable, message: "the cluster's Redis could not be read: \(error.reason)"))
    }

    package var unhealthy: String? {
        cluster.credentialsRefused.map { "the cluster's Redis refuses this node's credentials: \($0)" }
    }

    /// Ready while the nodes' registry can be read from Redis, over the connection its leases use.
    package var readinessCheck: @Sendable (_ answer: @escaping @Sendable (String?) -> Void) -> Void {
        { [cluster] answer in
            cluster.report { result in
                switch result {
                case .success: answer(nil)
                case .failure(let error): answer("Redis unavailable: \(error.reason)")
                }
            }
        }
    }

    package var levels: RouterLevels {
        RouterLevels(relayedMembers: relayedByRoom.values.reduce(0) { $0 + $1.count },
                     remoteMembers: relaying.remotes.count, busPublished: relaying.published)
    }

    // MARK: Lifetime

    /// A node brings back no room at start (a room returns when someone joins it, taken under its lease),
    /// but keeps every room with schedules run by some node.
    package func begin(stored: [StoredRoom], schedules: [RoomID: [Schedule]]) {
        keepScheduledRoomsRunning(schedules)
    }

    /// The schedules' sweep stops at once; relayed members' ticks stop with the hub's room timers (on a
    /// draining node, when it closes its connections: its members of rooms other nodes run hear their
    /// ticks until they are sent back; `RoomHub.drainForHandOff`).
    package func stopTracking() {
        scheduledRooms.timer?.cancel()
        if hub.roomTimersStopped { stopRelayedTicks() }
    }
}
