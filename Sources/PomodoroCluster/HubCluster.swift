import Logging
import PomodoroNet
import PomodoroCore
import PomodoroProtocol
import PomodoroServer
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

/// What a cluster node hears that its hub must act on (`HubCluster.listen`).
package enum ClusterEvent: Sendable {
    /// A message on this node's bus channel.
    case heard(BusMessage)
    /// The lease of a room this node relays members of is no longer held by the node they are relayed to.
    case ownerMoved(RoomID)
    /// The node they are relayed to holds the room's lease under a new epoch: it took the room again (a process
    /// restarted under the same node id after a crash, which knows nothing of the connections relayed to the
    /// one before it).
    case ownerRetook(RoomID, node: String)
    /// The bus subscribed again after losing Redis: messages published meanwhile are lost.
    case resubscribed
    /// The nodes heard from in the last few seconds (this one included).
    case nodesAlive(Set<String>)
}

/// What the hub needs of the cluster: taking a room's lease (off the service thread), whether it may act as a
/// room's owner at an instant, giving a room up, and the bus to the other nodes. Nil on a single server.
package protocol HubCluster: HubClusterSchedules, AnyObject, Sendable {
    var node: String { get }
    /// Publishes `message` on `node`'s bus channel, in the order of the calls, off the service thread
    /// (docs/CLUSTER.md, members on any node).
    func publish(_ message: BusMessage, to node: String)
    /// The live node other than this one that runs `room`, if any (for an `observe` of a room not open here);
    /// `completion` runs on another thread.
    func owner(of room: RoomID, completion: @escaping @Sendable (String?) -> Void)
    /// Watches `room`'s lease while this node relays members of it to `owner`, and reports
    /// `.ownerMoved` once another node (or none) holds it; nil stops watching.
    func follow(_ room: RoomID, owner: String?)
    /// Takes `room` off the service thread: its lease, then its claim in the store. `completion` runs on
    /// another thread, once this node may act as the owner (or with why it may not).
    func take(_ room: RoomID, completion: @escaping @Sendable (ClusterTake) -> Void)
    /// Takes the rooms a draining node handed this one, together where it can (one lease script, one claim
    /// transaction); `completion` runs on another thread, with the answers of some rooms each time.
    func takeHandedOff(_ rooms: [RoomID], completion: @escaping @Sendable ([(RoomID, ClusterTake)]) -> Void)
    /// Whether this node may tick, broadcast and write as `room`'s owner at `now` (monotonic).
    func owns(_ room: RoomID, at now: Instant) -> Bool
    /// Gives the room's lease back (the room left this node's memory).
    func release(_ room: RoomID)
    /// For `GET /api/cluster`, read off the service thread; `completion` runs on another thread.
    func report(completion: @escaping @Sendable (Result<ClusterPayload, ClusterReadError>) -> Void)
    /// For `GET /api/cluster/rooms/{room}`, likewise.
    func report(room: RoomID, completion: @escaping @Sendable (Result<ClusterRoomPayload, ClusterReadError>) -> Void)
    /// Why Redis refuses this node's credentials (its password or user changed since the node started), or nil
    /// while it takes them: `/healthz` answers 503 meanwhile.
    var credentialsRefused: String? { get }
    /// Whether the bus has lost Redis (until it subscribes again): frames of members relayed from here cannot
    /// reach their owner meanwhile, and are answered `unavailable`.
    var busIsDown: Bool { get }
}

extension HubCluster {
    /// One take after another, each answered alone.
    package func takeHandedOff(_ rooms: [RoomID], completion: @escaping @Sendable ([(RoomID, ClusterTake)]) -> Void) {
        for room in rooms { take(room) { completion([(room, $0)]) } }
    }
    package var credentialsRefused: String? { nil }
    package var busIsDown: Bool { false }
}

/// Redis could not be read for a cluster report.
package struct ClusterReadError: Error, Sendable {
    package let reason: String
    package init(_ reason: String) { self.reason = reason }
}


/// Why a cluster node cannot be built.
public struct ClusterProblem: Error, CustomStringConvertible {
    public let description: String
}

extension ClusterConfiguration: RoomRouting {
    /// A node of the cluster: its lease keeper, bus and fence (`ClusterNode`), its per-address limits counted in
    /// Redis, and the hub's router (`ClusterRooms`). What the node hears on its threads reaches the router on
    /// the service thread.
    public func makeRouter(_ context: RouterContext) throws -> RouterParts {
        // A node runs a room only under its lease and writes only through the fence: it needs the shared
        // PostgreSQL store, and brings no room back at start (a room returns when someone joins it, taken
        // under its lease).
        guard let fenceable = context.store as? any FenceableRoomStore else {
            throw ClusterProblem(description: "a cluster node needs a PostgreSQL database (--db postgres://...)")
        }
        let clock = context.clock
        let node = ClusterNode(configuration: self, store: fenceable, monotonic: { clock.now().monotonic },
                               logger: context.logger)
        let incarnation = self.node + "#" + String(UInt64.random(in: 0...UInt64.max), radix: 16)
        let limits = ClusterAddressLimits(
            local: LocalAddressLimits(context.configuration.limits, clock: clock),
            redis: RedisAddressCounts(address: redis, incarnation: incarnation),
            logger: context.logger, loop: context.loop, post: context.post)
        // The bus is read and written on the service loop itself, as are the leases of rooms other nodes run
        // (`ClusterRooms.liveOwner`): a relayed member's frames change no thread on their way out or in. (A
        // test's loop that watches no descriptors: the node's threads, as before.)
        let watching = context.loop as? any DescriptorWatching
        let publisher = watching.map {
            LoopBound(RedisLoopClient(address: redis, timeout: 2, loop: $0, post: context.post), loop: context.loop)
        }
        let subscriber = watching.map {
            LoopBound(RedisLoopClient(address: redis, timeout: 2, loop: $0, post: context.post), loop: context.loop)
        }
        if let subscriber {
            node.subscribesOnLoop { [post = context.post] reason in post { subscriber.value.reconnect(because: reason) } }
        }
        let rooms = ClusterRooms(cluster: node, scheduledReturnLeadSeconds: context.configuration.scheduledReturnLeadSeconds,
                                 publisher: publisher)
        let post = context.post
        // What the node hears on its threads reaches the router on the service thread.
        let handle = rooms.handle
        node.whenLost { room in post { handle.rooms?.hub.lostRoom(room) } }
        node.listen { event in post { handle.rooms?.heard(event) } }
        node.whenSchedulesHeard { news in post { handle.rooms?.schedulesHeard(news) } }
        return RouterParts(
            router: rooms, store: node.store, addressLimits: limits, restoresRooms: false,
            start: {
                node.start()
                limits.start()
                if let subscriber {
                    post { handle.rooms?.listen(on: subscriber.value) { node.busEvent($0, telling: false) } }
                }
            },
            handOff: { [logger = context.logger] bound, done in
                node.handOff(within: bound) { report in
                    if !report.notTaken.isEmpty {
                        logger.warning("draining: rooms not taken by another node in time; they return when someone joins",
                                       metadata: ["rooms": "\(report.notTaken.map(\.rawValue))"])
                    }
                    // The node's members of rooms other nodes run go last, without a gap.
                    post {
                        guard let rooms = handle.rooms else { return done() }
                        rooms.sendRelayedMembersBack(done: done)
                    }
                }
            },
            stop: {
                limits.stop()
                node.stop()
            })
    }
}
