import Synchronization

/// The node holding a room's lease, and the epoch it took it with.
public struct LeaseHolder: Equatable, Sendable, CustomStringConvertible {
    public var node: String
    public var epoch: Int64

    public init(node: String, epoch: Int64) {
        self.node = node
        self.epoch = epoch
    }

    /// As stored in the lease key: `EPOCH|NODE` (read back up to the first `|`, so a node id may hold one).
    var stored: String { "\(epoch)|\(node)" }

    init?(stored: String) {
        guard let bar = stored.firstIndex(of: "|"), let epoch = Int64(stored[..<bar]) else { return nil }
        self.init(node: String(stored[stored.index(after: bar)...]), epoch: epoch)
    }

    public var description: String { "\(node)@\(epoch)" }
}

/// The answer to a request for a room's lease.
public enum LeaseAttempt: Equatable, Sendable {
    /// This node holds the lease now, with a new epoch, higher than every earlier owner's.
    case granted(epoch: Int64)
    /// Another node (or this one, under an earlier epoch) holds it.
    case held(by: LeaseHolder)
}

/// Which lease layout this node writes (docs/CLUSTER.md, "Leases" and "Upgrading"), shared by the node's
/// lease clients, and the generation of its liveness key.
///
/// - Per room (`perRoom`, the layout of earlier builds): each room's key holds `EPOCH|NODE` with its own
///   expiry, renewed room by room. Written while any node of an earlier build is listed in the registry
///   (`NodeRegistry`), since those nodes read nothing else; and until this node has first read the registry.
/// - By liveness (otherwise): each room's key holds `@GENERATION|EPOCH|NODE` and no expiry, and is held while
///   the node's liveness key `pomodoro:alive:NODE` holds that generation; a round renews that one key, so its
///   cost does not grow with the rooms held. A key that lapsed never comes back under the same generation
///   (`lapsed`): the rooms it kept are free for good, even if their keys still name this node.
public final class LeaseLayout: Sendable {
    private struct State {
        var perRoom: Bool
        var generation: String
    }
    private let state: Mutex<State>

    public init(perRoom: Bool = true) {
        state = Mutex(State(perRoom: perRoom, generation: Self.newGeneration()))
    }

    /// Whether leases are written one key per room with its own expiry (see above).
    public var perRoom: Bool {
        get { state.withLock { $0.perRoom } }
        set { state.withLock { $0.perRoom = newValue } }
    }

    /// The generation the liveness key must hold now.
    public var generation: String { state.withLock { $0.generation } }

    var now: (perRoom: Bool, generation: String) { state.withLock { ($0.perRoom, $0.generation) } }

    /// Redis no longer holds `generation` in the liveness key (it lapsed: this node stalled or could not
    /// reach Redis for a time to live, or Redis forgot it): a new one, once per lapsed generation.
    func lapsed(_ generation: String) -> String {
        state.withLock { state in
            if state.generation == generation { state.generation = Self.newGeneration() }
            return state.generation
        }
    }

    private static func newGeneration() -> String {
        String(UInt64.random(in: 1...UInt64.max), radix: 36)
    }
}

/// Rooms' leases in Redis: one key per room, `pomodoro:lease:ROOM`, that names the room's holder and its
/// epoch; one counter per room, `pomodoro:epoch:ROOM`, that rises with each new holder and expires a day
/// after the room's last take (`epochTimeToLive`; the store's fence covers a counter that is gone); and one
/// liveness key per node, `pomodoro:alive:NODE`. How a lease stays held depends on the writer's
/// `LeaseLayout`: by the room key's own expiry (`EPOCH|NODE`, renewed room by room, the layout earlier builds
/// read) or by the holder's liveness key (`@GENERATION|EPOCH|NODE`, no expiry of its own). Every reader here
/// understands both; a node of an earlier build reads only the first (it refuses the second as unexpected,
/// and so never takes such a room).
///
/// Each operation is one Lua script, so that checking and changing a key happen at once in Redis: taking a
/// lease is "set if absent or its holder's liveness lapsed" and "count up the epoch" together (a node can
/// never hold a lease with an epoch it did not count), renewing and releasing touch the key only while it
/// still names the caller's epoch.
///
/// Blocking: for the cluster's own thread, never the service thread. Not for sharing between threads.
public final class RedisLeases {
    public let address: RedisAddress
    /// How long a request may wait for Redis, in seconds.
    public let timeout: Double
    /// How this client writes leases (shared by a node's clients).
    public let layout: LeaseLayout
    private var connection: RedisConnection?

    public init(address: RedisAddress, timeout: Double = 0.5, layout: LeaseLayout = LeaseLayout()) {
        self.address = address
        self.timeout = timeout
        self.layout = layout
    }

    static func leaseKey(_ room: String) -> String { "pomodoro:lease:\(room)" }
    static func epochKey(_ room: String) -> String { "pomodoro:epoch:\(room)" }
    static func aliveKey(_ node: String) -> String { "pomodoro:alive:\(node)" }

    /// How long a room's epoch counter outlives the last take of the room (docs/CLUSTER.md, "Epochs expire").
    /// Any span is safe: a counter that is gone counts from 1 again, the store's fence refuses a claim that is
    /// not above every earlier one, and `RoomTakeover` raises the counter above the fence and waits a time to
    /// live, as after a Redis that forgot. A day keeps that slower take to rooms nobody took for a day (and
    /// rooms held longer than that without a move), and one key per room name ever used to a day's worth.
    public static let epochTimeToLive: Duration = .seconds(86_400)

    /// Shared by the scripts: a stored lease as its `EPOCH|NODE`, its node and its generation (nil for a key
    /// that keeps itself by its own expiry). Keys are named inside the scripts (the liveness keys are only
    /// known once the leases are read): for one Redis, not a Redis Cluster, like the rest of the cluster.
    static let parseLua = """
        local function alivekey(node) return 'pomodoro:alive:' .. node end
        local function parse(v)
            local gen, lease = nil, v
            if string.byte(v, 1) == 64 then
                gen, lease = string.match(v, '^@([^|]*)|(.*)$')
                if not gen then return v, '', nil end
            end
            local bar = string.find(lease, '|', 1, true)
            if not bar then return lease, '', gen end
            return lease, string.sub(lease, bar + 1), gen
        end

        """

    /// For `ClusterRooms.liveOwner`: the lease (`EPOCH|NODE`) of `KEYS[1]` if it is held, with the number of
    /// listeners on its holder's channel (`ARGV[1]` followed by the node id); false when nobody holds it.
    public static let liveOwnerScript = parseLua + """
        local held = redis.call('GET', KEYS[1])
        if not held then return false end
        local lease, node, gen = parse(held)
        if node == '' then return false end
        if gen and redis.call('GET', alivekey(node)) ~= gen then return false end
        return {lease, redis.call('PUBSUB', 'NUMSUB', ARGV[1] .. node)[2]}
        """

    /// Raises the room's epoch counter to at least `floor`, so that the next owner's epoch is above it: for
    /// a Redis that lost its counters (restarted without persistence) while the store's fence remembers a
    /// higher epoch. Never lowers it.
    public func raiseEpoch(room: String, to floor: Int64) throws(RedisError) {
        try command(["EVAL", Self.raiseScript, "1", Self.epochKey(room), String(floor),
                     String(Self.epochTimeToLive.milliseconds)])
    }

    private static let raiseScript = """
        local epoch = tonumber(redis.call('GET', KEYS[1]) or '0')
        if epoch < tonumber(ARGV[1]) then redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2]) end
        return 0
        """

    /// Takes the room's lease for `node` for `timeToLive` if nobody holds it.
    public func acquire(room: String, node: String,
                        timeToLive: Duration = LeaseTerm.timeToLive) throws(RedisError) -> LeaseAttempt {
        try acquire(rooms: [room], node: node, timeToLive: timeToLive)[0]
    }

    /// Takes the leases of `rooms` nobody holds for `node`, in one script (one round trip: a node taking the
    /// rooms a draining node handed it, docs/CLUSTER.md "Draining a node"); answers, in order, as `acquire`
    /// does for each: each lease taken counts its room's epoch up, as one `acquire` would. By liveness, the
    /// script first checks that this node's liveness key still holds its generation (one that lapsed is
    /// replaced, `establish`, and the script run again) and extends it: the term of a lease taken here is
    /// counted from the request's sending, so it ends before the liveness key can lapse.
    public func acquire(rooms: [String], node: String,
                        timeToLive: Duration = LeaseTerm.timeToLive) throws(RedisError) -> [LeaseAttempt] {
        guard !rooms.isEmpty else { return [] }
        let keys = rooms.flatMap { [Self.leaseKey($0), Self.epochKey($0)] }
        var reply = RedisValue.null
        for _ in 0..<2 {
            let (perRoom, generation) = layout.now
            reply = try command(["EVAL", Self.acquireScript, String(keys.count)] + keys
                                + [node, String(timeToLive.milliseconds), String(Self.epochTimeToLive.milliseconds),
                                   generation, perRoom ? "1" : "0"])
            guard reply.text == Self.lapsedReply else { break }
            try establish(node: node, lapsed: generation, timeToLive: timeToLive)
        }
        guard case .array(let parts) = reply, parts.count == rooms.count * 2 else {
            throw unexpected(reply, "taking leases")
        }
        var attempts: [LeaseAttempt] = []
        attempts.reserveCapacity(rooms.count)
        for index in stride(from: 0, to: parts.count, by: 2) {
            switch (parts[index], parts[index + 1].text) {
            case (.integer(1), let text?):
                guard let epoch = Int64(text) else { throw unexpected(reply, "taking leases") }
                attempts.append(.granted(epoch: epoch))
            case (.integer(0), let text?):
                guard let holder = LeaseHolder(stored: text) else { throw unexpected(reply, "taking leases") }
                attempts.append(.held(by: holder))
            default:
                throw unexpected(reply, "taking leases")
            }
        }
        return attempts
    }

    /// `lapsed` alone: this node's liveness key no longer holds its generation (by liveness only).
    private static let acquireScript = parseLua + """
        local node, ttl, epochTtl, gen, perRoom = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5] == '1'
        local mine = alivekey(node)
        if not perRoom then
            if redis.call('GET', mine) ~= gen then return 'lapsed' end
            redis.call('PEXPIRE', mine, ttl)
        end
        local result = {}
        for i = 1, #KEYS, 2 do
            local held = redis.call('GET', KEYS[i])
            local lease, holder, g
            if held then
                lease, holder, g = parse(held)
                if g and redis.call('GET', alivekey(holder)) ~= g then held = false end
            end
            if held then
                result[#result + 1] = 0
                result[#result + 1] = lease
            else
                local epoch = redis.call('INCR', KEYS[i + 1])
                redis.call('PEXPIRE', KEYS[i + 1], epochTtl)
                if perRoom then
                    redis.call('SET', KEYS[i], epoch .. '|' .. node, 'PX', ttl)
                else
                    redis.call('SET', KEYS[i], '@' .. gen .. '|' .. epoch .. '|' .. node)
                end
                result[#result + 1] = 1
                result[#result + 1] = tostring(epoch)
            end
        end
        return result
        """

    private static let lapsedReply = "lapsed"

    /// This node's liveness key no longer holds `lapsed`: the node's next generation is set in it (a new one
    /// unless another of the node's clients set one already). The rooms kept under the old one stay free.
    /// Set whatever the key holds: one that holds another generation is a predecessor's under the same node
    /// id (a node restarted at once after it was stopped or killed), whose rooms are given up or its own to
    /// free. Node ids are unique in a cluster (two live processes under one id would free each other's rooms).
    private func establish(node: String, lapsed: String, timeToLive: Duration) throws(RedisError) {
        let generation = layout.lapsed(lapsed)
        try command(["SET", Self.aliveKey(node), generation, "PX", String(timeToLive.milliseconds)])
    }

    /// Extends the lease `holder` has on the room to `timeToLive` from now; false when it is no longer
    /// theirs (it expired, and perhaps another node took it).
    public func renew(room: String, holder: LeaseHolder,
                      timeToLive: Duration = LeaseTerm.timeToLive) throws(RedisError) -> Bool {
        try renew([(room: room, holder: holder)], timeToLive: timeToLive)[0]
    }

    /// Renews several leases of one node in one script (one round trip, one script run in Redis: see
    /// docs/CLUSTER.md, the capacity estimate); answers, in order, whether each was still its holder's and is
    /// renewed. By liveness, that is the liveness key's `PEXPIRE` and one `MGET` per thousand rooms (the
    /// keys checked, none written); per room, a `PEXPIRE` per room as well. A key in the other layout is
    /// rewritten in this one (once, when the layout changes).
    public func renew(_ held: [(room: String, holder: LeaseHolder)],
                      timeToLive: Duration = LeaseTerm.timeToLive) throws(RedisError) -> [Bool] {
        guard let node = held.first?.holder.node else { return [] }
        let keys = held.map { Self.leaseKey($0.room) }
        let values = held.map(\.holder.stored)
        let (perRoom, generation) = layout.now
        let reply = try command(["EVAL", Self.renewAllScript, String(held.count)] + keys + values
                                + [String(timeToLive.milliseconds), node, generation, perRoom ? "1" : "0"])
        guard case .array(let items) = reply, items.count == held.count + 1 else {
            throw unexpected(reply, "renewing leases")
        }
        var renewed: [Bool] = []
        for item in items {
            guard case .integer(let done) = item else { throw unexpected(reply, "renewing leases") }
            renewed.append(done == 1)
        }
        if renewed.removeLast() == false { try establish(node: node, lapsed: generation, timeToLive: timeToLive) }
        return renewed
    }

    /// Answers each key, then whether the liveness key held the generation (1) or lapsed (0). Each key is
    /// compared whole with what this node would have written in either layout (no parsing per room). By
    /// liveness, a key still in the per-room layout is this node's by its own expiry whatever the liveness key
    /// holds: renewed per room when the liveness key lapsed (or was never set: a node that held its rooms per
    /// room until it first read the registry), and moved once `establish` set it. Counting it lost would drop a
    /// room whose key still names this node for up to a time to live: nobody runs it, nobody may take it.
    private static let renewAllScript = """
        local n = #KEYS
        local ttl, node, gen, perRoom = ARGV[n + 1], ARGV[n + 2], ARGV[n + 3], ARGV[n + 4] == '1'
        local mine = 'pomodoro:alive:' .. node
        local live = redis.call('GET', mine) == gen
        if live then redis.call('PEXPIRE', mine, ttl) end
        local prefix = '@' .. gen .. '|'
        local result = {}
        for first = 1, n, 1000 do
            local last = math.min(first + 999, n)
            local held = redis.call('MGET', unpack(KEYS, first, last))
            for i = first, last do
                local v, done = held[i - first + 1], 0
                if perRoom then
                    if v == ARGV[i] then done = redis.call('PEXPIRE', KEYS[i], ttl)
                    elseif v == prefix .. ARGV[i] then redis.call('SET', KEYS[i], ARGV[i], 'PX', ttl); done = 1 end
                elseif live then
                    if v == prefix .. ARGV[i] then done = 1
                    elseif v == ARGV[i] then redis.call('SET', KEYS[i], prefix .. ARGV[i]); done = 1 end
                elseif v == ARGV[i] then
                    -- A key of the per-room layout is held by its own expiry, not by the liveness key (which a
                    -- node that only wrote per-room keys never set): renewed as such, moved next round.
                    done = redis.call('PEXPIRE', KEYS[i], ttl)
                end
                result[i] = done
            end
        end
        result[n + 1] = live and 1 or 0
        return result
        """

    /// Puts back leases Redis no longer has (it restarted and forgot, or the node could not renew them while
    /// Redis was away) for holders whose epochs the store's fences have just confirmed (`FenceConfirming`):
    /// each key still naming its holder is renewed, an absent one is set again (and the room's epoch counter
    /// raised to the holder's epoch, so that the next owner's is above it), and so is one another node took
    /// under an epoch no higher (granted by a Redis that forgot: that node's claim, which needs an epoch above
    /// the fence, fails); a key taken under a higher epoch is left alone. Answers, in order, whether each lease is its
    /// holder's now.
    public func restore(_ held: [(room: String, holder: LeaseHolder)],
                        timeToLive: Duration = LeaseTerm.timeToLive) throws(RedisError) -> [Bool] {
        guard let node = held.first?.holder.node else { return [] }
        let keys = held.flatMap { [Self.leaseKey($0.room), Self.epochKey($0.room)] }
        let values = held.flatMap { [$0.holder.stored, String($0.holder.epoch)] }
        var reply = RedisValue.null
        for _ in 0..<2 {
            let (perRoom, generation) = layout.now
            reply = try command(["EVAL", Self.restoreScript, String(keys.count)] + keys + values
                                + [String(timeToLive.milliseconds), String(Self.epochTimeToLive.milliseconds),
                                   node, generation, perRoom ? "1" : "0"])
            guard reply.text == Self.lapsedReply else { break }
            try establish(node: node, lapsed: generation, timeToLive: timeToLive)
        }
        guard case .array(let items) = reply, items.count == held.count else {
            throw unexpected(reply, "restoring leases")
        }
        var restored: [Bool] = []
        for item in items {
            guard case .integer(let done) = item else { throw unexpected(reply, "restoring leases") }
            restored.append(done == 1)
        }
        return restored
    }

    /// `lapsed` alone: this node's liveness key no longer holds its generation (by liveness only).
    private static let restoreScript = parseLua + """
        local n = #KEYS
        local ttl, epochTtl, node, gen, perRoom = ARGV[n + 1], ARGV[n + 2], ARGV[n + 3], ARGV[n + 4], ARGV[n + 5] == '1'
        if not perRoom then
            local mine = alivekey(node)
            if redis.call('GET', mine) ~= gen then return 'lapsed' end
            redis.call('PEXPIRE', mine, ttl)
        end
        local result = {}
        for i = 1, n, 2 do
            local held = redis.call('GET', KEYS[i])
            local done = 0
            local lease = held and parse(held)
            if not held or lease == ARGV[i] or (tonumber(string.match(lease, '^(%d+)|')) or 0) <= tonumber(ARGV[i + 1]) then
                if perRoom then
                    redis.call('SET', KEYS[i], ARGV[i], 'PX', ttl)
                else
                    redis.call('SET', KEYS[i], '@' .. gen .. '|' .. ARGV[i])
                end
                local epoch = tonumber(redis.call('GET', KEYS[i + 1]) or '0')
                if epoch < tonumber(ARGV[i + 1]) then redis.call('SET', KEYS[i + 1], ARGV[i + 1], 'PX', epochTtl) end
                done = 1
            end
            result[#result + 1] = done
        end
        return result
        """

    /// Gives the lease up at once (a node shutting down, a room with no members left here), if it is still
    /// `holder`'s; true when it was.
    @discardableResult
    public func release(room: String, holder: LeaseHolder) throws(RedisError) -> Bool {
        try release([(room: room, holder: holder)])[0]
    }

    /// Gives several leases up in one script (a node draining), each only if it is still its holder's (in
    /// either layout); answers, in order, whether each was.
    @discardableResult
    public func release(_ held: [(room: String, holder: LeaseHolder)]) throws(RedisError) -> [Bool] {
        guard !held.isEmpty else { return [] }
        let reply = try command(["EVAL", Self.releaseAllScript, String(held.count)] + held.map { Self.leaseKey($0.room) }
                                + held.map(\.holder.stored))
        guard case .array(let items) = reply, items.count == held.count else {
            throw unexpected(reply, "releasing leases")
        }
        var released: [Bool] = []
        for item in items {
            guard case .integer(let done) = item else { throw unexpected(reply, "releasing leases") }
            released.append(done == 1)
        }
        return released
    }

    private static let releaseAllScript = parseLua + """
        local result = {}
        for i, key in ipairs(KEYS) do
            local held = redis.call('GET', key)
            if held and parse(held) == ARGV[i] then result[i] = redis.call('DEL', key) else result[i] = 0 end
        end
        return result
        """

    /// Who holds the room's lease now, if anyone.
    public func holder(room: String) throws(RedisError) -> LeaseHolder? {
        try holders(rooms: [room])[0]
    }

    /// Who holds each of `rooms`' leases now (nil for a room nobody holds), in their order, for a node
    /// looking for rooms that must run and have no owner, or following the owners of rooms: per `batch` rooms
    /// one `MGET` of the leases, and one more of their holders' liveness keys when any is of that layout (no
    /// script: Redis does no work per room beyond the reads). The two reads are not one instant: a lease
    /// given back between them is reported as still held, as by a read a moment earlier.
    public func holders(rooms: [String], batch: Int = 1000) throws(RedisError) -> [LeaseHolder?] {
        var holders: [LeaseHolder?] = []
        holders.reserveCapacity(rooms.count)
        var start = 0
        while start < rooms.count {
            let part = rooms[start..<min(start + batch, rooms.count)]
            let reply = try command(["MGET"] + part.map(Self.leaseKey))
            guard case .array(let values) = reply, values.count == part.count else {
                throw unexpected(reply, "reading leases")
            }
            var found: [(holder: LeaseHolder, generation: String?)?] = []
            for value in values {
                switch value {
                case .null: found.append(nil)
                case .string(let text):
                    guard let lease = Self.parse(text) else { throw unexpected(value, "reading a lease") }
                    found.append(lease)
                default: throw unexpected(value, "reading a lease")
                }
            }
            let nodes = Array(Set(found.compactMap { $0?.generation == nil ? nil : $0?.holder.node }))
            var alive: [String: String] = [:]
            if !nodes.isEmpty {
                let reply = try command(["MGET"] + nodes.map(Self.aliveKey))
                guard case .array(let generations) = reply, generations.count == nodes.count else {
                    throw unexpected(reply, "reading liveness keys")
                }
                for (node, generation) in zip(nodes, generations) { alive[node] = generation.text }
            }
            for lease in found {
                guard let lease else { holders.append(nil); continue }
                if let generation = lease.generation, alive[lease.holder.node] != generation {
                    holders.append(nil)
                } else {
                    holders.append(lease.holder)
                }
            }
            start += batch
        }
        return holders
    }

    /// A stored lease in either layout (`@GENERATION|EPOCH|NODE` or `EPOCH|NODE`), as `parse` in the scripts.
    static func parse(_ stored: String) -> (holder: LeaseHolder, generation: String?)? {
        guard stored.hasPrefix("@") else { return LeaseHolder(stored: stored).map { ($0, nil) } }
        let rest = stored.dropFirst()
        guard let bar = rest.firstIndex(of: "|"),
              let holder = LeaseHolder(stored: String(rest[rest.index(after: bar)...])) else { return nil }
        return (holder, String(rest[..<bar]))
    }

    /// The highest epoch the room has had (0 when it never had an owner).
    public func epoch(room: String) throws(RedisError) -> Int64 {
        let reply = try command(["GET", Self.epochKey(room)])
        switch reply {
        case .null: return 0
        case .string(let text):
            guard let epoch = Int64(text) else { throw unexpected(reply, "reading an epoch") }
            return epoch
        default: throw unexpected(reply, "reading an epoch")
        }
    }

    /// Runs one command, connecting first when there is no good connection. A connection that breaks is
    /// dropped and the error thrown: the caller decides whether to try again (a lost `EVAL` may or may not
    /// have run). One exception: a kept connection that Redis had already closed (it restarted, or dropped
    /// an idle client) fails before the command reaches any server, so the command is sent once more on a
    /// new connection.
    @discardableResult
    public func command(_ arguments: [String]) throws(RedisError) -> RedisValue {
        let reused = connection?.isBroken == false
        if !reused { connection = nil; connection = try RedisConnection(address, timeout: timeout) }
        do {
            return try connection!.command(arguments)
        } catch where error.isConnectionLost {
            connection = nil
            guard reused, error.message.hasSuffix(RedisConnection.closedByServer) else { throw error }
            connection = try RedisConnection(address, timeout: timeout)
            do {
                return try connection!.command(arguments)
            } catch {
                if error.isConnectionLost { connection = nil }
                throw error
            }
        }
    }

    private func unexpected(_ reply: RedisValue, _ what: String) -> RedisError {
        RedisError(.unexpected, "unexpected reply from Redis \(what): \(reply)")
    }
}
