/// Per-address counts shared by every node of a cluster, in Redis: wrong passcodes and rooms made over a
/// sliding window, and WebSocket connections held (docs/CLUSTER.md, "Limits across the cluster").
///
/// - `pomodoro:limit:<kind>:<ADDRESS>`: a sorted set per address and kind (`passcode`, `room`) of the
///   window's entries scored by Redis's clock in ms: `d|ID` for what happened (a wrong passcode, a room
///   made), `p|ID` for a place reserved and not yet settled (a check running, a join on its way to a room).
///   It expires one window after its last write.
/// - `pomodoro:limit:connections:<ADDRESS>`: a hash of each node's connections from the address, by the
///   node's incarnation (`NODE#RANDOM`, new at each start). A node always writes its own count whole (never
///   adds to it), so a lost write is corrected by the next; an incarnation whose beat is older than
///   `staleAfterMs` is left out and removed.
/// - `pomodoro:limit:nodes`: a hash of each incarnation's last beat (Redis's clock, ms), written every
///   second; entries silent for ten minutes are removed.
///
/// Each operation is one Lua script (check and change at once, by one clock: Redis's); `run` sends a batch
/// of them in one round trip. Blocking: for a thread of its own, never the service thread (which sends the
/// same commands, `arguments`, through its `RedisLoopClient`). Not for sharing between threads.
public final class RedisAddressCounts {
    public let address: RedisAddress
    public let incarnation: String
    public let timeout: Double
    private var connection: RedisConnection?

    /// An incarnation is left out of the connection counts once its beat is this old.
    public static let staleAfterMs = 5_000

    public init(address: RedisAddress, incarnation: String, timeout: Double = 0.5) {
        self.address = address
        self.incarnation = incarnation
        self.timeout = timeout
    }

    /// One operation.
    public enum Operation: Sendable, Equatable {
        /// Reserves a place in `address`'s window of `kind` when fewer than `limit` entries of the last
        /// `spanMs` are there: answers `.window`. `id` names it among this node's (see `settle`).
        case reserve(kind: String, address: String, id: String, limit: Int, spanMs: Int)
        /// Settles a reserved place: `counts` makes it an entry at Redis's now, else it is handed back.
        case settle(kind: String, address: String, id: String, counts: Bool, spanMs: Int)
        /// Writes this node's `held` connections from `address` after admitting one more when `limit` (> 0)
        /// allows it (`held` counts the new one); with `limit` 0 only writes `held`. Answers `.connections`.
        case connections(address: String, held: Int, limit: Int)
        /// This node is alive. Answers `.beat` with how long since the last beat (nil: none known).
        case beat
    }

    /// What an operation answered.
    public enum Answer: Sendable, Equatable {
        /// `granted`; else `happened` fills the limit (`limited`) or together with `reserved` does (busy).
        case window(granted: Bool, happened: Int, reserved: Int)
        /// Whether the connection was admitted, and the address's connections in the cluster after it.
        case connections(admitted: Bool, total: Int)
        case settled
        case beat(sinceLastMs: Int?)
    }

    static func windowKey(_ kind: String, _ address: String) -> String { "pomodoro:limit:\(kind):\(address)" }
    static func connectionsKey(_ address: String) -> String { "pomodoro:limit:connections:\(address)" }
    static let nodesKey = "pomodoro:limit:nodes"

    private static let now = """
        local clock = redis.call('TIME')
        local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
        """

    private static let reserveScript = now + """
        redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - tonumber(ARGV[2]))
        local happened, reserved = 0, 0
        for _, entry in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
          if string.sub(entry, 1, 2) == 'p|' then reserved = reserved + 1 else happened = happened + 1 end
        end
        if happened + reserved >= tonumber(ARGV[1]) then return {0, happened, reserved} end
        redis.call('ZADD', KEYS[1], now, 'p|' .. ARGV[3])
        redis.call('PEXPIRE', KEYS[1], ARGV[2])
        return {1, happened, reserved + 1}
        """

    private static let settleScript = now + """
        redis.call('ZREM', KEYS[1], 'p|' .. ARGV[1])
        if ARGV[2] == '1' then
          redis.call('ZADD', KEYS[1], now, 'd|' .. ARGV[1])
          redis.call('PEXPIRE', KEYS[1], ARGV[3])
        end
        return 1
        """

    private static let connectionsScript = now + """
        local others = 0
        local fields = redis.call('HGETALL', KEYS[1])
        for i = 1, #fields, 2 do
          if fields[i] ~= ARGV[1] then
            local beat = tonumber(redis.call('HGET', KEYS[2], fields[i]) or '0')
            if now - beat > tonumber(ARGV[4]) then
              redis.call('HDEL', KEYS[1], fields[i])
            else
              others = others + tonumber(fields[i + 1])
            end
          end
        end
        local held, limit, admitted = tonumber(ARGV[2]), tonumber(ARGV[3]), 1
        if limit > 0 and others + held > limit then
          admitted = 0
          held = held - 1
        end
        if held > 0 then redis.call('HSET', KEYS[1], ARGV[1], held) else redis.call('HDEL', KEYS[1], ARGV[1]) end
        redis.call('PEXPIRE', KEYS[1], 86400000)
        return {admitted, others + held}
        """

    private static let beatScript = now + """
        local last = redis.call('HGET', KEYS[1], ARGV[1])
        redis.call('HSET', KEYS[1], ARGV[1], now)
        local fields = redis.call('HGETALL', KEYS[1])
        for i = 1, #fields, 2 do
          if now - tonumber(fields[i + 1]) > 600000 then redis.call('HDEL', KEYS[1], fields[i]) end
        end
        if last then return now - tonumber(last) end
        return -1
        """

    /// The command that runs `operation` for the node `incarnation`.
    static func arguments(_ operation: Operation, incarnation: String) -> [String] {
        switch operation {
        // An entry is named by this node's incarnation and the caller's id: ids need only be unique per node.
        case let .reserve(kind, address, id, limit, spanMs):
            ["EVAL", Self.reserveScript, "1", Self.windowKey(kind, address), String(limit), String(spanMs),
             incarnation + "/" + id]
        case let .settle(kind, address, id, counts, spanMs):
            ["EVAL", Self.settleScript, "1", Self.windowKey(kind, address), incarnation + "/" + id,
             counts ? "1" : "0", String(spanMs)]
        case let .connections(address, held, limit):
            ["EVAL", Self.connectionsScript, "2", Self.connectionsKey(address), Self.nodesKey, incarnation,
             String(held), String(limit), String(Self.staleAfterMs)]
        case .beat:
            ["EVAL", Self.beatScript, "1", Self.nodesKey, incarnation]
        }
    }

    /// What Redis's `reply` to `operation` says.
    static func answer(_ operation: Operation, _ reply: RedisValue) throws(RedisError) -> Answer {
        func integers() -> [Int]? {
            guard case .array(let items) = reply else { return nil }
            let numbers = items.compactMap { if case .integer(let n) = $0 { Int(n) } else { nil } }
            return numbers.count == items.count ? numbers : nil
        }
        switch operation {
        case .reserve:
            guard let n = integers(), n.count == 3 else { break }
            return .window(granted: n[0] == 1, happened: n[1], reserved: n[2])
        case .connections:
            guard let n = integers(), n.count == 2 else { break }
            return .connections(admitted: n[0] == 1, total: n[1])
        case .settle:
            return .settled
        case .beat:
            guard case .integer(let since) = reply else { break }
            return .beat(sinceLastMs: since < 0 ? nil : Int(since))
        }
        throw RedisError(.unexpected, "unexpected reply from Redis to a limit's script: \(reply)")
    }

    /// Runs `operations` in one round trip (pipelined), in order. An operation Redis refuses gets its error
    /// in its place; a connection that breaks throws for the whole batch (some may have run).
    public func run(_ operations: [Operation]) throws(RedisError) -> [Result<Answer, RedisError>] {
        guard !operations.isEmpty else { return [] }
        let reused = connection?.isBroken == false
        do {
            return try send(operations)
        } catch where error.isConnectionLost && reused && error.message.hasSuffix(RedisConnection.closedByServer) {
            // Redis had closed the kept connection (it restarted): nothing reached it; once more, anew.
            return try send(operations)
        }
    }

    private func send(_ operations: [Operation]) throws(RedisError) -> [Result<Answer, RedisError>] {
        if connection?.isBroken != false { connection = nil; connection = try RedisConnection(address, timeout: timeout) }
        let redis = connection!
        do {
            for operation in operations { try redis.send(Self.arguments(operation, incarnation: incarnation)) }
            try redis.flush()
            var answers: [Result<Answer, RedisError>] = []
            for operation in operations {
                do {
                    answers.append(.success(try Self.answer(operation, try redis.nextReply())))
                } catch where !error.isConnectionLost {
                    answers.append(.failure(error))
                }
            }
            return answers
        } catch {
            connection = nil
            throw error
        }
    }
}
