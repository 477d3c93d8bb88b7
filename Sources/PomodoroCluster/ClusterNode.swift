import Dispatch
import Foundation
import Logging
import PomodoroCore
import PomodoroNet
import PomodoroProtocol
import PomodoroStore
import Synchronization

/// A server's place in a cluster: takes rooms (`RoomTakeover`) on a thread of its own, keeps their leases
/// (`LeaseKeeper`), and writes through the fence (`FencedRoomStore`). The moment a lease is lost the store
/// refuses the room's writes and `lost` is called, so the hub drops the room.
// Each Redis connection is bound to the one queue that uses it (`LoopBound` to a `SerialQueue`, checked in
// debug builds), so are the takes waiting to act; what other threads share is in mutexes.
package final class ClusterNode: HubCluster, Sendable {
    package let node: String
    package let store: FencedRoomStore
    let takeover: RoomTakeover
    /// Takes rooms, beats, reports: `leases` and `waitingToAct` are used on it only.
    private let taking = SerialQueue(label: "pomodoro.cluster.takeover")
    var queue: DispatchQueue { taking.queue }
    let leases: LoopBound<RedisLeases>
    /// Publishes on the bus, in order, over `publisher`.
    private let publishing = SerialQueue(label: "pomodoro.cluster.publish")
    private let publisher: LoopBound<RedisLeases>
    /// Watches the leases of rooms this node relays members of, over `watcher`.
    private let watching = SerialQueue(label: "pomodoro.cluster.watch")
    private let watcher: LoopBound<RedisLeases>
    private let watchTimer = Mutex<DispatchSourceTimer?>(nil)
    private let bus = Mutex<ClusterBus?>(nil)
    let keeper: LeaseKeeper
    /// Takes that own their room but wait before acting (Redis forgot its epochs), with the later takes of
    /// the same room on this node, answered right after them.
    let waitingToAct: LoopBoundBox<[RoomID: [@Sendable (ClusterTake) -> Void]]>
    /// Rooms this node found without a lease in Redis but with a fence above the epoch Redis gave (Redis
    /// forgot), with that fence and when it was first found so: on `taking` only (`attempt`).
    let fencesSeen: LoopBoundBox<[RoomID: (fence: Int64, since: Instant)]>
    /// When this node's heartbeat last failed to reach Redis; on `taking` only.
    let redisAwayAt: LoopBoundBox<Instant?>
    /// Keeps every room with schedules run somewhere (`ClusterNode+Schedules.swift`).
    let scheduleWatch: ScheduleWatch
    let monotonic: @Sendable () -> Instant
    /// What the node's threads share.
    private struct Shared {
        var onLost: (@Sendable (RoomID) -> Void)?
        var onEvent: (@Sendable (ClusterEvent) -> Void)?
        var followed: [RoomID: String] = [:]
        /// The epoch under which each followed room's owner held its lease when first read after `follow`.
        var followedEpochs: [RoomID: Int64] = [:]
        var busDown = false
        /// When the bus last subscribed (monotonic): after Redis was away, whether it did so on a new connection.
        var busSubscribedAt: Instant?
        var refusal: String?
        /// Set by a router that subscribes to this node's channel on its service loop (`subscribesOnLoop`).
        var loopBus: (@Sendable (String) -> Void)?
    }
    private let shared = Mutex(Shared())
    private let redis: RedisAddress
    package let logger: Logger

    package init(configuration: ClusterConfiguration, store base: any FenceableRoomStore,
                 monotonic: @escaping @Sendable () -> Instant, logger: Logger = Logger(label: "pomodoro.cluster")) {
        node = configuration.node
        self.logger = logger
        store = FencedRoomStore(base: base)
        takeover = RoomTakeover(node: configuration.node)
        let layout = LeaseLayout()
        self.layout = layout
        leases = LoopBound(RedisLeases(address: configuration.redis, layout: layout), loop: taking)
        waitingToAct = LoopBoundBox([:], loop: taking)
        fencesSeen = LoopBoundBox([:], loop: taking)
        redisAwayAt = LoopBoundBox(nil, loop: taking)
        heartbeatFailingSince = LoopBoundBox(nil, loop: taking)
        watchFailedAt = LoopBoundBox(nil, loop: watching)
        // A publish waits for Redis longer than a lease operation: one lost is a member's answer lost.
        publisher = LoopBound(RedisLeases(address: configuration.redis, timeout: 2), loop: publishing)
        watcher = LoopBound(RedisLeases(address: configuration.redis), loop: watching)
        redis = configuration.redis
        scheduleWatch = ScheduleWatch(address: configuration.redis)
        self.monotonic = monotonic
        let fenced = store
        let box = LostBox()
        keeper = LeaseKeeper(leases: RedisLeases(address: configuration.redis, layout: layout), fences: base,
                             node: configuration.node, clock: monotonic, lost: { room, _, _ in
                                 // Writes stop here, on the keeper's thread, before the hub hears of it.
                                 fenced.disown(room)
                                 box.call(room)
                             })
        box.set(self)
        keeper.renewedBy = { renewal in box.renewed(by: renewal) }
    }

    /// The keeper renews its terms through the store's fences while Redis is away, and through Redis again
    /// once it is back: said once in the log each time.
    fileprivate func renewed(by renewal: LeaseKeeper.Renewal) {
        switch renewal {
        case .fence:
            logger.warning("Redis is unreachable: this node keeps its rooms while the store's fences confirm them; takes, relays and new cross-node joins wait for Redis",
                           metadata: ["redis": "\(redis.redacted)"])
        case .redis:
            logger.notice("Redis renews this node's leases again", metadata: ["redis": "\(redis.redacted)"])
        }
    }

    /// Hands the keeper's losses to `body` (called on the keeper's thread).
    package func whenLost(_ body: @escaping @Sendable (RoomID) -> Void) {
        shared.withLock { $0.onLost = body }
    }

    func lost(_ room: RoomID) {
        let body = shared.withLock { $0.onLost }
        body?(room)
    }

    /// Hands what the node hears (bus messages, owners moving, the bus back, the nodes alive) to `body`, on
    /// the threads that hear them: the hub posts each to its service thread.
    package func listen(_ body: @escaping @Sendable (ClusterEvent) -> Void) {
        shared.withLock { $0.onEvent = body }
    }

    private func tell(_ event: ClusterEvent) {
        let body = shared.withLock { $0.onEvent }
        body?(event)
    }

    /// How often the leases of followed rooms are read: an owner that died is noticed this long after its
    /// lease lapsed, at most.
    static let watchInterval = DispatchTimeInterval.milliseconds(200)

    package func publish(_ message: BusMessage, to node: String) {
        send(message.encoded, on: BusMessage.nodeChannel(node))
    }

    private func send(_ text: String, on channel: String) {
        publishing.queue.async { [self] in
            // At most once, like the bus itself: a message that cannot be published is lost, and the nodes
            // bring their members up to date when their bus comes back (`.resubscribed`).
            _ = try? publisher.value.command(["PUBLISH", channel, text])
        }
    }

    package func follow(_ room: RoomID, owner: String?) {
        shared.withLock {
            $0.followed[room] = owner
            $0.followedEpochs[room] = nil
        }
    }

    /// Reads the followed rooms' lease holders, all in one `MGET` (`RedisLeases.holders`); a room no longer
    /// held by the node its members are relayed to is reported (again on every turn until the hub follows the
    /// new owner or stops).
    private func watch() {
        let followed = shared.withLock { $0.followed }.sorted { $0.key.rawValue < $1.key.rawValue }
        guard !followed.isEmpty else { return }
        let holders: [LeaseHolder?]
        do {
            holders = try watcher.value.holders(rooms: followed.map(\.key.rawValue))
        } catch {
            watchFailedAt.value = monotonic()
            return   // Redis away: the leases cannot be read, and nobody can take the rooms meanwhile
        }
        // Just after Redis was away, a lease nobody holds is most likely one its owner kept on the store's
        // fence and is about to put back (its next round, within half a second): not taken from it unless it
        // stays free (LeaseKeeper, "Without Redis" in docs/CLUSTER.md).
        let justBack = watchFailedAt.value.map { monotonic() - $0 < Self.afterRedisGrace } ?? false
        for ((room, owner), holder) in zip(followed, holders) {
            if holder == nil, justBack { continue }
            guard let holder, holder.node == owner else {
                tell(.ownerMoved(room))
                continue
            }
            // The same node under a new epoch: it took the room again (restarted under the same id).
            let seen = shared.withLock { shared -> Int64? in
                let seen = shared.followedEpochs[room]
                if shared.followed[room] == owner { shared.followedEpochs[room] = holder.epoch }
                return seen
            }
            if let seen, seen != holder.epoch { tell(.ownerRetook(room, node: owner)) }
        }
    }

    /// When a read of the watch last failed (Redis away); on `watching` only.
    private let watchFailedAt: LoopBoundBox<Instant?>
    /// How long after Redis came back a free lease is left to its owner to put back.
    static let afterRedisGrace = Duration.milliseconds(1_500)

    package func owner(of room: RoomID, completion: @escaping @Sendable (String?) -> Void) {
        watching.queue.async { [self] in
            guard let holder = try? watcher.value.holder(room: room.rawValue), holder.node != node,
                  listening(holder.node, on: watcher.value) else { return completion(nil) }
            completion(holder.node)
        }
    }

    /// Whether any node listens on `node`'s channel: a node killed (`kill -9`) has nobody subscribed there,
    /// though its leases live on for up to a time to live.
    func listening(_ node: String, on redis: RedisLeases? = nil) -> Bool {
        guard case .array(let parts)? = try? (redis ?? leases.value).command(["PUBSUB", "NUMSUB", BusMessage.nodeChannel(node)]),
              parts.count == 2, case .integer(let count) = parts[1] else { return false }
        return count > 0
    }

    let registry = NodeRegistry()
    /// How this node's leases are written: one key per room while a node of an earlier build is listed (or
    /// before the registry was first read), by liveness key otherwise (`LeaseLayout`).
    package let layout: LeaseLayout
    /// Since when the heartbeat could not reach Redis (nil: it reached it last time); on `queue` only.
    private let heartbeatFailingSince: LoopBoundBox<Instant?>
    let heartbeat = Mutex<DispatchSourceTimer?>(nil)

    /// Starts renewing leases, and says every second in Redis that this node is alive and how many rooms it
    /// runs (`NodeRegistry`, for `GET /api/cluster`).
    package func start() {
        keeper.start()
        scheduleWatch.start()
        heartbeat.withLock { [self] heartbeat in
            let timer = DispatchSource.makeTimerSource(queue: queue)
            timer.schedule(deadline: .now(), repeating: .seconds(1))
            timer.setEventHandler { [self] in
                do throws(RedisError) {
                    try registry.heartbeat(node: node, roomsOwned: keeper.held.count, on: leases.value)
                    noteCredentials(refused: nil)
                    // Redis was away: the bus may still listen on one that was only paused and, with sentinels,
                    // is no longer the master. It subscribes again on a new connection, unless it lost Redis
                    // itself and subscribes (or subscribed) again on its own (`busLost`).
                    if let since = heartbeatFailingSince.value, !busLost(since: since) {
                        self.bus.withLock { $0 }?.reconnect(because: "Redis was away")
                        shared.withLock { $0.loopBus }?("Redis was away")
                    }
                    heartbeatFailingSince.value = nil
                } catch {
                    if heartbeatFailingSince.value == nil { heartbeatFailingSince.value = monotonic() }
                    redisAwayAt.value = monotonic()
                    if error.isAuthenticationRefused { noteCredentials(refused: error.message) }
                }
                if let seen = try? registry.nodes(on: leases.value) {
                    layout.perRoom = seen.contains { !$0.readsLiveness }
                    tell(.nodesAlive(Set(seen.filter { $0.silentForMs < 2_000 }.map(\.node)).union([node])))
                }
            }
            timer.resume()
            heartbeat = timer
        }
        if shared.withLock({ $0.loopBus == nil }) {
            let box = LostBox()
            box.set(self)
            let bus = ClusterBus(address: redis, channels: [BusMessage.nodeChannel(node)]) { event in
                box.node?.busEvent(event)
            }
            self.bus.withLock { $0 = bus }
            bus.start()
        }
        watchTimer.withLock { [self] watchTimer in
            let watch = DispatchSource.makeTimerSource(queue: watching.queue)
            watch.schedule(deadline: .now(), repeating: Self.watchInterval)
            watch.setEventHandler { [weak self] in self?.watch() }
            watch.resume()
            watchTimer = watch
        }
    }

    package var credentialsRefused: String? { shared.withLock { $0.refusal } }

    package var busIsDown: Bool { shared.withLock { $0.busDown } }

    /// Whether the bus noticed Redis gone by itself since `since`: it is down (and subscribes again on a new
    /// connection by itself), or it subscribed on a new connection since. Made to subscribe once more (a
    /// Redis restarted), every node would bring its members up to date a second time, each at its own
    /// moment, and an owner whose bus came back last would take the connections that other nodes had opened
    /// again before it for lost (`ClusterRooms.resyncLimit`) and close them.
    private func busLost(since: Instant) -> Bool {
        shared.withLock { $0.busDown || ($0.busSubscribedAt.map { $0 >= since } ?? false) }
    }

    /// Redis refused this node's credentials on a new connection (`refused`), or took them again (nil): said
    /// once in the log each time it changes. Meanwhile the node can take, keep and relay nothing: its rooms
    /// stop at the end of their terms, as when Redis is away, and `/healthz` answers 503.
    private func noteCredentials(refused reason: String?) {
        let before = shared.withLock { shared in
            defer { shared.refusal = reason }
            return shared.refusal
        }
        switch (before, reason) {
        case (nil, let reason?):
            logger.error("the cluster's Redis refuses this node's credentials; the node runs no room until they are fixed",
                         metadata: ["redis": "\(redis.redacted)", "reason": "\(reason)"])
        case (_?, nil):
            logger.notice("the cluster's Redis takes this node's credentials again", metadata: ["redis": "\(redis.redacted)"])
        default:
            break
        }
    }

    /// Called before `start` by a router that subscribes to this node's channel itself, on its service loop:
    /// the node starts no bus thread, and hands `reconnect` the reason to subscribe again on a new connection.
    /// The router reports its bus's events through `busEvent(_:telling: false)`.
    package func subscribesOnLoop(reconnect: @escaping @Sendable (String) -> Void) {
        shared.withLock { $0.loopBus = reconnect }
    }

    /// On the bus's thread (or the loop's, `subscribesOnLoop`). Returns whether the bus subscribed again after
    /// losing Redis, which is told (`.resubscribed`) only when `telling`: a router that hears the bus on its
    /// loop acts on it there, before the new subscription's first message (told, it would come after them).
    @discardableResult
    func busEvent(_ event: ClusterBus.Event, telling: Bool = true) -> Bool {
        switch event {
        case .message(_, let payload):
            guard let message = try? BusMessage(decoding: payload) else { return false }
            tell(.heard(message))
        case .subscribed:
            let now = monotonic()
            let wasDown = shared.withLock { shared in
                defer { shared.busDown = false; shared.busSubscribedAt = now }
                return shared.busDown
            }
            if wasDown, telling { tell(.resubscribed) }
            return wasDown
        case .disconnected:
            shared.withLock { $0.busDown = true }
        }
        return false
    }

    package func report(completion: @escaping @Sendable (Result<ClusterPayload, ClusterReadError>) -> Void) {
        queue.async { [self] in
            do {
                let seen = try registry.nodes(on: leases.value).map {
                    ClusterPayload.Node(node: $0.node, roomsOwned: $0.roomsOwned, silentForMs: $0.silentForMs)
                }
                completion(.success(ClusterPayload(node: node, rooms: keeper.held.keys.map(\.rawValue).sorted(),
                                                   nodes: seen)))
            } catch {
                completion(.failure(ClusterReadError("\(error)")))
            }
        }
    }

    package func report(room: RoomID, completion: @escaping @Sendable (Result<ClusterRoomPayload, ClusterReadError>) -> Void) {
        queue.async { [self] in
            do {
                let holder = try leases.value.holder(room: room.rawValue)
                completion(.success(ClusterRoomPayload(room: room.rawValue, owner: holder?.node, epoch: holder?.epoch)))
            } catch {
                completion(.failure(ClusterReadError("\(error)")))
            }
        }
    }

    /// Gives every lease back and stops renewing (at shutdown, once the store has written what it had).
    package func stop() {
        let held = keeper.held
        watching.queue.sync { watchTimer.withLock { $0?.cancel() } }
        bus.withLock { $0 }?.stop()
        publishing.queue.sync {}
        scheduleWatch.stop()
        keeper.stop()
        queue.sync {
            heartbeat.withLock { $0?.cancel() }
            for (room, epoch) in held {
                store.disown(room)
                _ = try? leases.value.release(room: room.rawValue, holder: LeaseHolder(node: node, epoch: epoch))
            }
        }
    }

    package func owns(_ room: RoomID, at now: Instant) -> Bool { keeper.isValid(room, at: now) }

    package func release(_ room: RoomID) { keeper.release(room) }
}

/// Lets the keeper's and the bus's callbacks reach the node (weakly: the node owns them both).
private final class LostBox: Sendable {
    private struct Weak { weak var node: ClusterNode? }
    private let weak = Mutex(Weak())
    func set(_ node: ClusterNode) { weak.withLock { $0.node = node } }
    func call(_ room: RoomID) { node?.lost(room) }
    func renewed(by renewal: LeaseKeeper.Renewal) { node?.renewed(by: renewal) }
    var node: ClusterNode? { weak.withLock { $0.node } }
}
