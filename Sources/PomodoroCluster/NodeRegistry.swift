/// The nodes of a cluster as Redis sees them, for `GET /api/cluster`: each node says every second that it is
/// alive and how many rooms it owns; a node not heard from for `window` is no longer listed.
///
/// Times are Redis's own clock (`TIME` inside the scripts), so the nodes' clocks do not need to agree.
/// Keys: `pomodoro:nodes`, a sorted set of node ids by last heartbeat; `pomodoro:node-rooms`, a hash of
/// rooms owned by node id; `pomodoro:nodes-alive-keys`, the same heartbeats of the nodes that hold leases by
/// liveness key (`LeaseLayout`): a node whose last heartbeat is in the first and not, at the same instant, in
/// the second is of an earlier build (its heartbeat script writes only the first two), and while one is
/// listed every node writes leases one key per room (docs/CLUSTER.md, "Upgrading").
///
/// Blocking: for the cluster's own thread.
public struct NodeRegistry: Sendable {
    /// A node as last heard from.
    public struct Seen: Equatable, Sendable {
        public var node: String
        public var roomsOwned: Int
        /// Milliseconds since its last heartbeat, by Redis's clock.
        public var silentForMs: Int64
        /// Whether the node holds leases by liveness key (false: an earlier build, per room only).
        public var readsLiveness: Bool = true
    }

    /// How often a node sends its heartbeat.
    public static let heartbeatInterval = Duration.seconds(1)
    /// A node not heard from for this long is gone from the list.
    public let window: Duration

    public init(window: Duration = .seconds(5)) { self.window = window }

    static let nodesKey = "pomodoro:nodes"
    static let roomsKey = "pomodoro:node-rooms"
    static let layoutKey = "pomodoro:nodes-alive-keys"

    private static let heartbeatScript = """
        local t = redis.call('TIME')
        local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
        redis.call('ZADD', KEYS[1], now, ARGV[1])
        redis.call('ZADD', KEYS[3], now, ARGV[1])
        redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
        local gone = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now - tonumber(ARGV[3]))
        for _, node in ipairs(gone) do
            redis.call('ZREM', KEYS[1], node)
            redis.call('HDEL', KEYS[2], node)
        end
        redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now - tonumber(ARGV[3]))
        return now
        """

    /// The room counts in one `HMGET` and the layouts in one `ZMSCORE` (Redis counts each call inside a script as a command: one per listing,
    /// not one per node listed).
    private static let listScript = """
        local t = redis.call('TIME')
        local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
        local seen = redis.call('ZRANGEBYSCORE', KEYS[1], now - tonumber(ARGV[1]), '+inf', 'WITHSCORES')
        local result = {}
        if #seen == 0 then return result end
        local names = {}
        for i = 1, #seen, 2 do names[#names + 1] = seen[i] end
        local rooms = redis.call('HMGET', KEYS[2], unpack(names))
        local layouts = redis.call('ZMSCORE', KEYS[3], unpack(names))
        for i = 1, #seen, 2 do
            local j = (i + 1) / 2
            local alive = (layouts[j] and tonumber(layouts[j]) == tonumber(seen[i + 1])) and 1 or 0
            table.insert(result, {seen[i], tonumber(rooms[j] or '0'), now - tonumber(seen[i + 1]), alive})
        end
        return result
        """

    /// Says that `node` is alive and owns `roomsOwned` rooms; forgets nodes silent for longer than `window`.
    public func heartbeat(node: String, roomsOwned: Int, on leases: RedisLeases) throws(RedisError) {
        try leases.command(["EVAL", Self.heartbeatScript, "3", Self.nodesKey, Self.roomsKey, Self.layoutKey, node, String(roomsOwned),
                            String(window.milliseconds)])
    }

    /// Takes `node` off the list at once (a node draining: other nodes draining then hand it no room).
    public func leave(node: String, on leases: RedisLeases) throws(RedisError) {
        try leases.command(["ZREM", Self.nodesKey, node])
        try leases.command(["HDEL", Self.roomsKey, node])
        try leases.command(["ZREM", Self.layoutKey, node])
    }

    /// The nodes heard from within `window`, in node id order.
    public func nodes(on leases: RedisLeases) throws(RedisError) -> [Seen] {
        let reply = try leases.command(["EVAL", Self.listScript, "3", Self.nodesKey, Self.roomsKey, Self.layoutKey,
                                        String(window.milliseconds)])
        guard case .array(let rows) = reply else { throw RedisError(.unexpected, "unexpected node list: \(reply)") }
        var seen: [Seen] = []
        for row in rows {
            guard case .array(let fields) = row, fields.count == 4, let node = fields[0].text,
                  case .integer(let rooms) = fields[1], case .integer(let silent) = fields[2],
                  case .integer(let alive) = fields[3] else {
                throw RedisError(.unexpected, "unexpected node list row: \(row)")
            }
            seen.append(Seen(node: node, roomsOwned: Int(rooms), silentForMs: silent, readsLiveness: alive == 1))
        }
        return seen.sorted { $0.node < $1.node }
    }
}
