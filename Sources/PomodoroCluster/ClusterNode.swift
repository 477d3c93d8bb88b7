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
        var busDown = false
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
        leases = LoopBound(RedisLeases(address: configuration.redis), loop: taking)
        waitingToAct = LoopBoundBox([:], loop: taking)
        fencesSeen = LoopBoundBox([:], loop: taking)
        redisAwayAt = LoopBoundBox(nil, loop: taking)
        heartbeatFailed = LoopBoundBox(false, loop: taking)
        watchFailedAt = LoopBoundBox(nil, loop: watching)
        // A publish waits for Redis longer than a lease operation: one lost is a member's answer lost.
        publisher = LoopBound(RedisLeases(address: configuration.redis, timeout: 2), loop: publishing)
        watcher = LoopBound(RedisLeases(address: configuration.redis), loop: watching)
        redis = configuration.redis
        scheduleWatch = ScheduleWatch(address: configuration.redis)
        self.monotonic = monotonic
        let fenced = store
        let box = LostBox()
        keeper = LeaseKeeper(leases: RedisLeases(address: configuration.redis), fences: base,
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
        shared.withLock { $0.followed[room] = owner }
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
            if holder?.node != owner { tell(.ownerMoved(room)) }
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
    /// Whether the last heartbeat could not reach Redis; on `queue` only.
    private let heartbeatFailed: LoopBoundBox<Bool>
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
                    // is no longer the master. It subscribes again on a new connection.
                    if heartbeatFailed.value {
                        self.bus.withLock { $0 }?.reconnect(because: "Redis was away")
                        shared.withLock { $0.loopBus }?("Redis was away")
                    }
                    heartbeatFailed.value = false
                } catch {
                    heartbeatFailed.value = true
                    redisAwayAt.value = monotonic()
                    if error.isAuthenticationRefused { noteCredentials(refused: error.message) }
                }
                if let seen = try? registry.nodes(on: leases.value) {
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
    /// The router reports its bus's events through `busEvent`.
    package func subscribesOnLoop(reconnect: @escaping @Sendable (String) -> Void) {
        shared.withLock { $0.loopBus = reconnect }
    }

    /// On the bus's thread (or the loop's, `subscribesOnLoop`).
    func busEvent(_ event: ClusterBus.Event) {
        switch event {
        case .message(_, let payload):
            guard let message = try? BusMessage(decoding: payload) else { return }
            tell(.heard(message))
        case .subscribed:
            let wasDown = shared.withLock { shared in
                defer { shared.busDown = false }
                return shared.busDown
            }
            if wasDown { tell(.resubscribed) }
        case .disconnected:
            shared.withLock { $0.busDown = true }
        }
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

    /// How often a take tries again while another node holds the lease.
    static let retryInterval = Duration.milliseconds(100)

    /// A lease held by a node that listens on the bus is answered at once (`.elsewhere`: the joiner's frames
    /// are relayed to it). One held by a node nobody hears is tried again for one time to live (and a try): a
    /// node that died (`kill -9`) leaves its lease to lapse, and its members, reconnecting here, take the room
    /// once it has.
    package func take(_ room: RoomID, completion: @escaping @Sendable (ClusterTake) -> Void) {
        take(room, patience: LeaseTerm.timeToLive + Self.retryInterval, completion: completion)
    }

    /// Takes `room`, trying again while another node holds it until `patience` has passed (`.zero`: once).
    /// The room comes with its schedules, read after the claim, so they are the ones the last owner wrote.
    func take(_ room: RoomID, patience: Duration, completion: @escaping @Sendable (ClusterTake) -> Void) {
        queue.async { [self] in attempt(room, giveUpAt: monotonic() + patience, completion: completion) }
    }

    /// One try at taking `room`, on `queue`. Waits (for a held lease to lapse, for an earlier owner's term
    /// after Redis forgot) are timers, not sleeps: the node's other takes go on meanwhile, which matters
    /// after a Redis restart, when every room is taken again at once.
    func attempt(_ room: RoomID, giveUpAt: Instant, completion: @escaping @Sendable (ClusterTake) -> Void) {
        do {
            // A fence left to its owner (`mayPass`): its lease is only read, never taken (each try would count
            // the room's epoch up past the fence), until the owner put it back or the grace is over.
            if let seen = fencesSeen.value[room], monotonic() - seen.since < Self.fenceGrace,
               try leases.value.holder(room: room.rawValue) == nil {
                return retry(room, giveUpAt: giveUpAt, completion: completion)
            }
            let outcome = try takeover.take(room, leases: leases.value, store: store, now: monotonic,
                                            mayPass: { fence in mayPass(fence, of: room) })
            if case .fenceHeld = outcome {} else { fencesSeen.value[room] = nil }
            switch outcome {
            case .owned(let term, var stored, let startsAt):
                if stored != nil { stored!.schedules = try store.loadSchedules(room: room) }
                keeper.hold(room, term: term)
                // After Redis forgot its epochs: an earlier owner's term may still run until then.
                let wait = startsAt - monotonic(), taken = stored
                guard wait > .zero else { return completion(.owned(taken)) }
                waitingToAct.value[room] = []
                queue.asyncAfter(deadline: .now() + .nanoseconds(Int(wait.nanoseconds))) { [self] in
                    completion(.owned(taken))
                    for later in waitingToAct.value.removeValue(forKey: room) ?? [] { later(.elsewhere(node: node)) }
                }
            case .ownedElsewhere(let holder):
                // This node took it meanwhile (for its schedules, or another join): nothing to wait for.
                // (Its answer comes after the take's own, so the room is in the hub's memory by then.)
                if holder.node == node && keeper.held[room] == holder.epoch {
                    if waitingToAct.value[room] != nil { return waitingToAct.value[room]!.append(completion) }
                    return completion(.elsewhere(node: node))
                }
                // A live owner runs the room for this node's members too (relayed over the bus).
                if holder.node != node, listening(holder.node) { return completion(.elsewhere(node: holder.node)) }
                guard monotonic() < giveUpAt else { return completion(.elsewhere(node: holder.node)) }
                retry(room, giveUpAt: giveUpAt, completion: completion)
            case .fenceHeld:
                // Its owner may be putting its lease back (its next round): tried again until it has, or
                // until `fenceGrace` has passed (`mayPass`), whatever the patience (a schedule sweep's too).
                retry(room, giveUpAt: giveUpAt, completion: completion)
            }
        } catch {
            fencesSeen.value[room] = nil
            completion(.failed("\(error)"))
        }
    }

    private func retry(_ room: RoomID, giveUpAt: Instant, completion: @escaping @Sendable (ClusterTake) -> Void) {
        queue.asyncAfter(deadline: .now() + .nanoseconds(Int(Self.retryInterval.nanoseconds))) { [self] in
            attempt(room, giveUpAt: giveUpAt, completion: completion)
        }
    }

    /// Whether a take may pass `room`'s fence at `fence` (Redis forgot the lease of the room's owner under
    /// it): not while that owner may still keep the room on the fence without Redis. Such an owner puts its
    /// lease back on the first round it reaches Redis again (`LeaseKeeper.renew`, at most one renewal interval
    /// away), and one that reached no database renewed nothing and saw its term end one time to live after its
    /// last confirmation; so a fence whose lease is still missing `fenceGrace` after this node first found it
    /// so has no owner left. Until then the take is tried again (and finds the owner's lease once it is back).
    /// Only in the `fenceWindow` after this node last found Redis away: otherwise a fence above Redis's epoch
    /// is a room left idle longer than the epoch counter lives (`RedisLeases.epochTimeToLive`), or one whose
    /// owner is cut from Redis alone, and it is passed at once as before.
    private func mayPass(_ fence: Int64, of room: RoomID) -> Bool {
        let now = monotonic()
        guard let away = redisAwayAt.value, now - away < Self.fenceWindow else { return true }
        guard let seen = fencesSeen.value[room], seen.fence == fence else {
            fencesSeen.value[room] = (fence, now)
            return false
        }
        return now - seen.since >= Self.fenceGrace
    }

    /// How long a fence whose lease Redis forgot is left to its owner (`mayPass`).
    static let fenceGrace = LeaseTerm.timeToLive
    /// How long after this node last found Redis away a take leaves fences to their owners (`mayPass`).
    static let fenceWindow = Duration.seconds(10)

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
