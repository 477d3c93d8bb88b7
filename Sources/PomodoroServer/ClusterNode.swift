import Dispatch
import Foundation
import PomodoroCluster
import PomodoroCore
import PomodoroPostgres
import PomodoroProtocol
import PomodoroStore

/// How a server joins a cluster (`--cluster`, `--node-id`; docs/CLUSTER.md).
public struct ClusterConfiguration: Sendable, Equatable {
    /// The Redis the nodes coordinate through.
    public var redis: RedisAddress
    /// This node's name, unique in the cluster.
    public var node: String

    public init(redis: RedisAddress, node: String) {
        self.redis = redis
        self.node = node
    }
}

/// What came of asking the cluster for a room.
package enum ClusterTake: Sendable {
    /// This node owns the room now; `stored` is the room as the store has it (nil when never stored).
    case owned(StoredRoom?)
    /// Another node owns it.
    case elsewhere(node: String)
    /// Redis or the store could not be reached.
    case failed(String)
}

/// What the hub needs of the cluster: taking a room's lease (off the service thread), whether it may act as a
/// room's owner at an instant, and giving a room up. Nil on a single server.
package protocol HubCluster: HubClusterSchedules, AnyObject, Sendable {
    var node: String { get }
    /// Takes `room` off the service thread: its lease, then its claim in the store. `completion` runs on
    /// another thread, once this node may act as the owner (or with why it may not).
    func take(_ room: RoomID, completion: @escaping @Sendable (ClusterTake) -> Void)
    /// Whether this node may tick, broadcast and write as `room`'s owner at `now` (monotonic).
    func owns(_ room: RoomID, at now: Instant) -> Bool
    /// Gives the room's lease back (the room left this node's memory).
    func release(_ room: RoomID)
    /// For `GET /api/cluster`, read off the service thread; `completion` runs on another thread.
    func report(completion: @escaping @Sendable (Result<ClusterPayload, ClusterReadError>) -> Void)
    /// For `GET /api/cluster/rooms/{room}`, likewise.
    func report(room: RoomID, completion: @escaping @Sendable (Result<ClusterRoomPayload, ClusterReadError>) -> Void)
}

/// Redis could not be read for a cluster report.
package struct ClusterReadError: Error, Sendable {
    package let reason: String
    package init(_ reason: String) { self.reason = reason }
}

/// A server's place in a cluster: takes rooms (`RoomTakeover`) on a thread of its own, keeps their leases
/// (`LeaseKeeper`), and writes through the fence (`FencedRoomStore`). The moment a lease is lost the store
/// refuses the room's writes and `lost` is called, so the hub drops the room.
package final class ClusterNode: HubCluster, @unchecked Sendable {
    package let node: String
    package let store: FencedRoomStore
    private let takeover: RoomTakeover
    /// Used on `queue` only.
    private let leases: RedisLeases
    private let queue = DispatchQueue(label: "pomodoro.cluster.takeover")
    private let keeper: LeaseKeeper
    /// Takes that own their room but wait before acting (Redis forgot its epochs), with the later takes of
    /// the same room on this node, answered right after them. Used on `queue` only.
    private var waitingToAct: [RoomID: [@Sendable (ClusterTake) -> Void]] = [:]
    /// Keeps every room with schedules run somewhere (`ClusterNode+Schedules.swift`).
    let scheduleWatch: ScheduleWatch
    private let monotonic: @Sendable () -> Instant
    /// Guards `onLost`.
    private let lock = NSLock()
    private var onLost: (@Sendable (RoomID) -> Void)?

    package init(configuration: ClusterConfiguration, store base: PostgresRoomStore,
                 monotonic: @escaping @Sendable () -> Instant) {
        node = configuration.node
        store = FencedRoomStore(base: base)
        takeover = RoomTakeover(node: configuration.node)
        leases = RedisLeases(address: configuration.redis)
        scheduleWatch = ScheduleWatch(address: configuration.redis)
        self.monotonic = monotonic
        let fenced = store
        let box = LostBox()
        keeper = LeaseKeeper(leases: RedisLeases(address: configuration.redis), node: configuration.node,
                             clock: monotonic, lost: { room, _, _ in
                                 // Writes stop here, on the keeper's thread, before the hub hears of it.
                                 fenced.disown(room)
                                 box.call(room)
                             })
        box.node = self
    }

    /// Hands the keeper's losses to `body` (called on the keeper's thread).
    package func whenLost(_ body: @escaping @Sendable (RoomID) -> Void) {
        lock.withLock { onLost = body }
    }

    fileprivate func lost(_ room: RoomID) {
        let body = lock.withLock { onLost }
        body?(room)
    }

    private let registry = NodeRegistry()
    private var heartbeat: DispatchSourceTimer?

    /// Starts renewing leases, and says every second in Redis that this node is alive and how many rooms it
    /// runs (`NodeRegistry`, for `GET /api/cluster`).
    package func start() {
        keeper.start()
        scheduleWatch.start()
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now(), repeating: .seconds(1))
        timer.setEventHandler { [self] in
            _ = try? registry.heartbeat(node: node, roomsOwned: keeper.held.count, on: leases)
        }
        timer.resume()
        heartbeat = timer
    }

    package func report(completion: @escaping @Sendable (Result<ClusterPayload, ClusterReadError>) -> Void) {
        queue.async { [self] in
            do {
                let seen = try registry.nodes(on: leases).map {
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
                let holder = try leases.holder(room: room.rawValue)
                completion(.success(ClusterRoomPayload(room: room.rawValue, owner: holder?.node, epoch: holder?.epoch)))
            } catch {
                completion(.failure(ClusterReadError("\(error)")))
            }
        }
    }

    /// Gives every lease back and stops renewing (at shutdown, once the store has written what it had).
    package func stop() {
        let held = keeper.held
        scheduleWatch.stop()
        keeper.stop()
        queue.sync {
            heartbeat?.cancel()
            for (room, epoch) in held {
                store.disown(room)
                _ = try? leases.release(room: room.rawValue, holder: LeaseHolder(node: node, epoch: epoch))
            }
        }
    }

    /// How often a take tries again while another node holds the lease.
    static let retryInterval = Duration.milliseconds(100)

    /// A lease held elsewhere is tried again for one time to live (and a try): a node that died (`kill -9`)
    /// leaves its lease to lapse, and its members, reconnecting here, take the room once it has.
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
    private func attempt(_ room: RoomID, giveUpAt: Instant, completion: @escaping @Sendable (ClusterTake) -> Void) {
        do {
            switch try takeover.take(room, leases: leases, store: store, now: monotonic) {
            case .owned(let term, var stored, let startsAt):
                if stored != nil { stored!.schedules = try store.loadSchedules(room: room) }
                keeper.hold(room, term: term)
                // After Redis forgot its epochs: an earlier owner's term may still run until then.
                let wait = startsAt - monotonic(), taken = stored
                guard wait > .zero else { return completion(.owned(taken)) }
                waitingToAct[room] = []
                queue.asyncAfter(deadline: .now() + .nanoseconds(Int(wait.nanoseconds))) { [self] in
                    completion(.owned(taken))
                    for later in waitingToAct.removeValue(forKey: room) ?? [] { later(.elsewhere(node: node)) }
                }
            case .ownedElsewhere(let holder):
                // This node took it meanwhile (for its schedules, or another join): nothing to wait for.
                // (Its answer comes after the take's own, so the room is in the hub's memory by then.)
                if holder.node == node && keeper.held[room] == holder.epoch {
                    if waitingToAct[room] != nil { return waitingToAct[room]!.append(completion) }
                    return completion(.elsewhere(node: node))
                }
                guard monotonic() < giveUpAt else { return completion(.elsewhere(node: holder.node)) }
                queue.asyncAfter(deadline: .now() + .nanoseconds(Int(Self.retryInterval.nanoseconds))) { [self] in
                    attempt(room, giveUpAt: giveUpAt, completion: completion)
                }
            }
        } catch {
            completion(.failed("\(error)"))
        }
    }

    package func owns(_ room: RoomID, at now: Instant) -> Bool { keeper.isValid(room, at: now) }

    package func release(_ room: RoomID) { keeper.release(room) }
}

/// Lets the keeper's callback, made before the node exists, reach it.
private final class LostBox: @unchecked Sendable {
    weak var node: ClusterNode?
    func call(_ room: RoomID) { node?.lost(room) }
}
