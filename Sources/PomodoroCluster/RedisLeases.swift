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

/// Rooms' leases in Redis: one key per room, `pomodoro:lease:ROOM`, holding `EPOCH|NODE`, that expires
/// unless its holder renews it; and one counter per room, `pomodoro:epoch:ROOM`, that rises with each new
/// holder and expires a day after the room's last take (`epochTimeToLive`; the store's fence covers a
/// counter that is gone).
///
/// Each operation is one Lua script, so that checking and changing a key happen at once in Redis: taking a
/// lease is "set if absent" and "count up the epoch" together (a node can never hold a lease with an epoch
/// it did not count), renewing and releasing touch the key only while it still names the caller's epoch.
///
/// Blocking: for the cluster's own thread, never the service thread. Not for sharing between threads.
public final class RedisLeases {
    public let address: RedisAddress
    /// How long a request may wait for Redis, in seconds.
    public let timeout: Double
    private var connection: RedisConnection?

    public init(address: RedisAddress, timeout: Double = 0.5) {
        self.address = address
        self.timeout = timeout
    }

    static func leaseKey(_ room: String) -> String { "pomodoro:lease:\(room)" }
    static func epochKey(_ room: String) -> String { "pomodoro:epoch:\(room)" }

    /// How long a room's epoch counter outlives the last take of the room (docs/CLUSTER.md, "Epochs expire").
    /// Any span is safe: a counter that is gone counts from 1 again, the store's fence refuses a claim that is
    /// not above every earlier one, and `RoomTakeover` raises the counter above the fence and waits a time to
    /// live, as after a Redis that forgot. A day keeps that slower take to rooms nobody took for a day (and
    /// rooms held longer than that without a move), and one key per room name ever used to a day's worth.
    public static let epochTimeToLive: Duration = .seconds(86_400)

    private static let acquireScript = """
        local held = redis.call('GET', KEYS[1])
        if held then return {0, held} end
        local epoch = redis.call('INCR', KEYS[2])
        redis.call('PEXPIRE', KEYS[2], ARGV[3])
        redis.call('SET', KEYS[1], epoch .. '|' .. ARGV[1], 'PX', ARGV[2])
        return {1, tostring(epoch)}
        """
    private static let renewScript = """
        if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
        return 0
        """
    private static let releaseScript = """
        if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
        return 0
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
        let reply = try command(["EVAL", Self.acquireScript, "2", Self.leaseKey(room), Self.epochKey(room), node,
                                 String(timeToLive.milliseconds), String(Self.epochTimeToLive.milliseconds)])
        guard case .array(let parts) = reply, parts.count == 2 else { throw unexpected(reply, "taking a lease") }
        switch (parts[0], parts[1].text) {
        case (.integer(1), let text?):
            guard let epoch = Int64(text) else { throw unexpected(reply, "taking a lease") }
            return .granted(epoch: epoch)
        case (.integer(0), let text?):
            guard let holder = LeaseHolder(stored: text) else { throw unexpected(reply, "taking a lease") }
            return .held(by: holder)
        default:
            throw unexpected(reply, "taking a lease")
        }
    }

    /// Takes the leases of `rooms` nobody holds for `node`, in one script (one round trip: a node taking the
    /// rooms a draining node handed it, docs/CLUSTER.md "Draining a node"); answers, in order, as `acquire`
    /// does for each: each lease taken counts its room's epoch up, as one `acquire` would.
    public func acquire(rooms: [String], node: String,
                        timeToLive: Duration = LeaseTerm.timeToLive) throws(RedisError) -> [LeaseAttempt] {
        guard !rooms.isEmpty else { return [] }
        let keys = rooms.flatMap { [Self.leaseKey($0), Self.epochKey($0)] }
        let reply = try command(["EVAL", Self.acquireAllScript, String(keys.count)] + keys
                                + [node, String(timeToLive.milliseconds), String(Self.epochTimeToLive.milliseconds)])
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

    private static let acquireAllScript = """
        local node, ttl, epochTtl = ARGV[1], ARGV[2], ARGV[3]
        local result = {}
        for i = 1, #KEYS, 2 do
            local held = redis.call('GET', KEYS[i])
            if held then
                result[#result + 1] = 0
                result[#result + 1] = held
            else
                local epoch = redis.call('INCR', KEYS[i + 1])
                redis.call('PEXPIRE', KEYS[i + 1], epochTtl)
                redis.call('SET', KEYS[i], epoch .. '|' .. node, 'PX', ttl)
                result[#result + 1] = 1
                result[#result + 1] = tostring(epoch)
            end
        end
        return result
        """

    /// Extends the lease `holder` has on the room to `timeToLive` from now; false when it is no longer
    /// theirs (it expired, and perhaps another node took it).
    public func renew(room: String, holder: LeaseHolder,
                      timeToLive: Duration = LeaseTerm.timeToLive) throws(RedisError) -> Bool {
        let reply = try command(["EVAL", Self.renewScript, "1", Self.leaseKey(room), holder.stored,
                                 String(timeToLive.milliseconds)])
        guard case .integer(let done) = reply else { throw unexpected(reply, "renewing a lease") }
        return done == 1
    }

    /// Renews several leases in one script (one round trip, one script run in Redis: see docs/CLUSTER.md,
    /// the capacity estimate); answers, in order, whether each was still its holder's and is renewed.
    public func renew(_ held: [(room: String, holder: LeaseHolder)],
                      timeToLive: Duration = LeaseTerm.timeToLive) throws(RedisError) -> [Bool] {
        guard !held.isEmpty else { return [] }
        let keys = held.map { Self.leaseKey($0.room) }
        let values = held.map(\.holder.stored)
        let reply = try command(["EVAL", Self.renewAllScript, String(held.count)] + keys + values
                                + [String(timeToLive.milliseconds)])
        guard case .array(let items) = reply, items.count == held.count else {
            throw unexpected(reply, "renewing leases")
        }
        var renewed: [Bool] = []
        for item in items {
            guard case .integer(let done) = item else { throw unexpected(reply, "renewing leases") }
            renewed.append(done == 1)
        }
        return renewed
    }

    /// Reads the keys in one `MGET` per thousand (Lua's `unpack` is bounded), then extends those still
    /// naming their holder: Redis counts each call inside a script as a command, so a round costs one call per
    /// room and one per thousand rooms instead of two per room.
    private static let renewAllScript = """
        local ttl = ARGV[#KEYS + 1]
        local result = {}
        for first = 1, #KEYS, 1000 do
            local last = math.min(first + 999, #KEYS)
            local held = redis.call('MGET', unpack(KEYS, first, last))
            for i = first, last do
                if held[i - first + 1] == ARGV[i] then result[i] = redis.call('PEXPIRE', KEYS[i], ttl) else result[i] = 0 end
            end
        end
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
        guard !held.isEmpty else { return [] }
        let keys = held.flatMap { [Self.leaseKey($0.room), Self.epochKey($0.room)] }
        let values = held.flatMap { [$0.holder.stored, String($0.holder.epoch)] }
        let reply = try command(["EVAL", Self.restoreScript, String(keys.count)] + keys + values
                                + [String(timeToLive.milliseconds), String(Self.epochTimeToLive.milliseconds)])
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

    private static let restoreScript = """
        local ttl = ARGV[#KEYS + 1]
        local epochTtl = ARGV[#KEYS + 2]
        local result = {}
        for i = 1, #KEYS, 2 do
            local held = redis.call('GET', KEYS[i])
            local done = 0
            if held == ARGV[i] then
                done = redis.call('PEXPIRE', KEYS[i], ttl)
            elseif not held or (tonumber(string.match(held, '^(%d+)|')) or 0) <= tonumber(ARGV[i + 1]) then
                redis.call('SET', KEYS[i], ARGV[i], 'PX', ttl)
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
        let reply = try command(["EVAL", Self.releaseScript, "1", Self.leaseKey(room), holder.stored])
        guard case .integer(let done) = reply else { throw unexpected(reply, "releasing a lease") }
        return done == 1
    }

    /// Gives several leases up in one script (a node draining), each only if it is still its holder's;
    /// answers, in order, whether each was.
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

    private static let releaseAllScript = """
        local result = {}
        for i, key in ipairs(KEYS) do
            if redis.call('GET', key) == ARGV[i] then result[i] = redis.call('DEL', key) else result[i] = 0 end
        end
        return result
        """

    /// Who holds the room's lease now, if anyone.
    public func holder(room: String) throws(RedisError) -> LeaseHolder? {
        let reply = try command(["GET", Self.leaseKey(room)])
        switch reply {
        case .null: return nil
        case .string(let text):
            guard let holder = LeaseHolder(stored: text) else { throw unexpected(reply, "reading a lease") }
            return holder
        default: throw unexpected(reply, "reading a lease")
        }
    }

    /// Who holds each of `rooms`' leases now (nil for a room nobody holds), in their order: one `MGET` per
    /// `batch` rooms, for a node looking for rooms that must run and have no owner.
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
            for value in values {
                switch value {
                case .null: holders.append(nil)
                case .string(let text):
                    guard let holder = LeaseHolder(stored: text) else { throw unexpected(value, "reading a lease") }
                    holders.append(holder)
                default: throw unexpected(value, "reading a lease")
                }
            }
            start += batch
        }
        return holders
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
