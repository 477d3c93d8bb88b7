import CHiredis
import Glibc

/// A Redis error: the connection failed or broke (`isConnectionLost`, the same request may succeed on a new
/// connection), or Redis answered with an error reply (`-ERR …`, `-NOSCRIPT …`).
public struct RedisError: Error, Equatable, Sendable, CustomStringConvertible {
    public enum Kind: Equatable, Sendable {
        /// Could not connect, or the connection broke or timed out: make a new one.
        case connection
        /// Redis refused the command; the connection is still good.
        case reply
        /// The reply was not what the caller expected (a bug or a foreign key in our key space).
        case unexpected
    }
    public var kind: Kind
    public var message: String

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    public var isConnectionLost: Bool { kind == .connection }
    public var description: String { message }

    /// Whether Redis refused this connection's credentials: a wrong password or user (`AUTH` refused), or a
    /// command without the password Redis asks for (`NOAUTH`). Trying again will not help until the
    /// configuration changes.
    public var isAuthenticationRefused: Bool {
        kind == .reply && (message.hasPrefix(Self.refusedCredentials) || message.hasPrefix("NOAUTH"))
    }

    /// How `RedisConnection` begins the message of an `AUTH` Redis refused.
    static let refusedCredentials = "Redis refused the credentials"
}

/// One reply from Redis, as RESP2 gives it. An error reply is thrown as a `RedisError` instead.
public enum RedisValue: Equatable, Sendable {
    case string(String)
    case integer(Int64)
    case status(String)
    case null
    case array([RedisValue])

    /// The text of a bulk string or status reply.
    public var text: String? {
        switch self {
        case .string(let text), .status(let text): text
        default: nil
        }
    }
}

/// One blocking connection to Redis through hiredis. This file is the only Swift code that touches hiredis,
/// and `check` the one place its results become Swift errors.
///
/// Not for sharing between threads: one owner at a time (the cluster's Redis thread). Every read and write
/// waits at most `timeout`; a connection that timed out or broke stays broken (`isBroken`): make a new one.
public final class RedisConnection {
    private let context: UnsafeMutablePointer<redisContext>

    /// Connects to `address`, then authenticates and selects its database when it names them. An address
    /// with sentinels is the master they name now (`RedisSentinel`): asked on every new connection, so a
    /// caller that drops a broken connection and makes a new one follows a failover.
    /// - Throws: `RedisError` of kind `.connection` when Redis cannot be reached within `timeout` seconds
    ///   (or no sentinel names a master that says it is one), `.reply` when it refuses the password or the
    ///   database.
    public convenience init(_ address: RedisAddress, timeout: Double) throws(RedisError) {
        var address = address
        if !address.sentinels.isEmpty {
            let master = try RedisSentinel.master(of: address, timeout: timeout)
            address.host = master.host
            address.port = master.port
        }
        try self.init(connectingTo: address, timeout: timeout)
        if let name = address.masterName {
            // A sentinel may still name a master that has just been demoted: only a master is used.
            guard case .array(let role) = try command(["ROLE"]), role.first?.text == "master" else {
                throw RedisError(.connection, "the Redis at \(address.host):\(address.port) that the sentinels name as \(name) is not a master (yet)")
            }
        }
    }

    private init(connectingTo address: RedisAddress, timeout: Double) throws(RedisError) {
        let limit = Self.timeval(seconds: timeout)
        guard let pointer = redisConnectWithTimeout(address.host, Int32(address.port), limit) else {
            throw RedisError(.connection, "hiredis is out of memory")
        }
        if let message = pomodoro_redis_error(pointer) {
            let text = String(cString: message)
            redisFree(pointer)
            throw RedisError(.connection, "could not connect to Redis at \(address.redacted): \(text)")
        }
        context = pointer
        _ = redisSetTimeout(pointer, limit)
        _ = redisEnableKeepAlive(pointer)
        if let password = address.password {
            do {
                _ = try command(address.user.map { ["AUTH", $0, password] } ?? ["AUTH", password])
            } catch where error.kind == .reply {
                throw RedisError(.reply, "\(RedisError.refusedCredentials) of \(address.redacted): \(error.message)")
            }
        }
        if address.database != 0 { _ = try command(["SELECT", String(address.database)]) }
    }

    deinit { redisFree(context) }

    /// Whether the connection has failed (timed out, closed by Redis, broken): every later call fails too.
    public var isBroken: Bool { context.pointee.err != 0 }

    /// Sends one command, its arguments as binary-safe strings, and waits for its reply.
    @discardableResult
    public func command(_ arguments: [String]) throws(RedisError) -> RedisValue {
        try send(arguments)
        return try nextReply()
    }

    /// Sends one command whose arguments are bytes (each exactly as given, NUL bytes included), and waits for
    /// its reply.
    @discardableResult
    public func command(bytes arguments: [[UInt8]]) throws(RedisError) -> RedisValue {
        try send(bytes: arguments)
        return try nextReply()
    }

    /// Queues one command without waiting for its reply (pipelining; `SUBSCRIBE`); `nextReply` reads replies
    /// in order. Each argument goes to Redis as its UTF-8 bytes, all of them: a NUL inside is sent too.
    public func send(_ arguments: [String]) throws(RedisError) {
        try send(bytes: arguments.map { Array($0.utf8) })
    }

    /// Queues one command whose arguments are bytes with a length: hiredis copies exactly `count` bytes of
    /// each (never a C string, which would end at a NUL while the length said more).
    public func send(bytes arguments: [[UInt8]]) throws(RedisError) {
        // A copy of each argument of exactly its length (one byte for an empty one, never read), freed once
        // hiredis has formatted the command into its own buffer.
        let copies = arguments.map { argument -> UnsafeMutablePointer<CChar> in
            let copy = UnsafeMutablePointer<CChar>.allocate(capacity: max(argument.count, 1))
            argument.withUnsafeBytes { bytes in
                UnsafeMutableRawPointer(copy).copyMemory(from: bytes.baseAddress ?? UnsafeRawPointer(copy), byteCount: bytes.count)
            }
            return copy
        }
        defer { copies.forEach { $0.deallocate() } }
        var values: [UnsafePointer<CChar>?] = copies.map { UnsafePointer($0) }
        let lengths = arguments.map(\.count)
        let status = values.withUnsafeMutableBufferPointer { values in
            lengths.withUnsafeBufferPointer { sizes in
                redisAppendCommandArgv(context, Int32(arguments.count), values.baseAddress, sizes.baseAddress)
            }
        }
        if status != REDIS_OK { throw lost() }
    }

    /// The next reply (of a command sent before, or a message on a subscribed channel), waiting at most the
    /// connection's timeout.
    public func nextReply() throws(RedisError) -> RedisValue {
        var raw: UnsafeMutableRawPointer?
        guard redisGetReply(context, &raw) == REDIS_OK, let raw else { throw lost() }
        let reply = raw.assumingMemoryBound(to: redisReply.self)
        defer { freeReplyObject(raw) }
        return try check(reply)
    }

    /// Writes out every command queued with `send`, waiting at most the connection's timeout.
    public func flush() throws(RedisError) {
        var done: Int32 = 0
        while done == 0 {
            if redisBufferWrite(context, &done) != REDIS_OK { throw lost() }
        }
    }

    /// The next reply if one arrives within `seconds`, else nil; the connection stays good either way (a
    /// subscriber waits in turns, to look up between them). Call `flush` first if commands were sent.
    public func nextReply(within seconds: Double) throws(RedisError) -> RedisValue? {
        var raw: UnsafeMutableRawPointer?
        if redisGetReplyFromReader(context, &raw) != REDIS_OK { throw lost() }
        if raw == nil {
            var ready = pollfd(fd: context.pointee.fd, events: Int16(POLLIN), revents: 0)
            let count = poll(&ready, 1, Int32(max(seconds, 0) * 1000))
            if count == 0 || (count < 0 && errno == EINTR) { return nil }
            if count < 0 { throw RedisError(.connection, "Redis connection lost: poll failed (errno \(errno))") }
            if redisBufferRead(context) != REDIS_OK { throw lost() }
            if redisGetReplyFromReader(context, &raw) != REDIS_OK { throw lost() }
            guard raw != nil else { return nil }
        }
        let reply = raw!.assumingMemoryBound(to: redisReply.self)
        defer { freeReplyObject(raw) }
        return try check(reply)
    }

    // MARK: Without blocking (`RedisLoopClient`, on the service loop)

    /// The socket, for a loop to watch.
    var descriptor: Int32 { context.pointee.fd }

    /// From now on nothing waits: writes and reads do what the socket allows at once (for a loop that watches
    /// `descriptor`); `send` still queues.
    func stopBlocking() {
        let fd = context.pointee.fd
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        context.pointee.flags &= ~Int32(REDIS_BLOCK)
    }

    /// Writes what the socket takes of the commands queued; true once all are out.
    func writeSome() throws(RedisError) -> Bool {
        var done: Int32 = 0
        if redisBufferWrite(context, &done) != REDIS_OK { throw lost() }
        return done != 0
    }

    /// Reads what has arrived (after the loop said the socket is readable); an end of file throws.
    func readSome() throws(RedisError) {
        if redisBufferRead(context) != REDIS_OK { throw lost() }
    }

    /// The next reply already read, if whole: a `RedisError` of kind `.reply` is that reply's (the connection
    /// stays good); one of kind `.connection` is the connection's.
    func bufferedReply() throws(RedisError) -> RedisValue? {
        var raw: UnsafeMutableRawPointer?
        if redisGetReplyFromReader(context, &raw) != REDIS_OK { throw lost() }
        guard let raw else { return nil }
        defer { freeReplyObject(raw) }
        return try check(raw.assumingMemoryBound(to: redisReply.self))
    }

    /// The reply as a `RedisValue`, or its error as a `RedisError`.
    private func check(_ reply: UnsafeMutablePointer<redisReply>) throws(RedisError) -> RedisValue {
        let value = reply.pointee
        switch value.type {
        case REDIS_REPLY_ERROR:
            let text = Self.text(value)
            // A master demoted by a failover: what this connection reaches is no longer the cluster's Redis.
            // A connection error, so that the caller makes a new connection (and asks the sentinels again).
            if text.hasPrefix("READONLY") { throw RedisError(.connection, "Redis connection lost: \(text)") }
            throw RedisError(.reply, text)
        case REDIS_REPLY_STRING:
            return .string(Self.text(value))
        case REDIS_REPLY_STATUS:
            return .status(Self.text(value))
        case REDIS_REPLY_INTEGER:
            return .integer(Int64(value.integer))
        case REDIS_REPLY_NIL:
            return .null
        case REDIS_REPLY_ARRAY:
            var items: [RedisValue] = []
            for index in 0..<Int(value.elements) {
                guard let element = value.element[index] else { items.append(.null); continue }
                items.append(try check(element))
            }
            return .array(items)
        default:
            throw RedisError(.unexpected, "unknown Redis reply type \(value.type)")
        }
    }

    /// hiredis's words when the server had closed the connection (end of file on read).
    static let closedByServer = "Server closed the connection"

    private func lost() -> RedisError {
        let message = pomodoro_redis_error(context).map { String(cString: $0) } ?? "unknown error"
        return RedisError(.connection, "Redis connection lost: \(message)")
    }

    private static func text(_ reply: redisReply) -> String {
        guard let pointer = reply.str else { return "" }
        return pointer.withMemoryRebound(to: UInt8.self, capacity: Int(reply.len)) {
            String(decoding: UnsafeBufferPointer(start: $0, count: Int(reply.len)), as: UTF8.self)
        }
    }

    private static func timeval(seconds: Double) -> Glibc.timeval {
        let whole = max(seconds, 0.001)
        return Glibc.timeval(tv_sec: Int(whole), tv_usec: Int((whole - Double(Int(whole))) * 1_000_000))
    }
}
