import CPostgres
import Glibc

/// A PostgreSQL error: the SQLSTATE when the server sent one (`23505` a unique violation, `40001` a
/// serialization failure), and the server's or libpq's message.
public struct PostgresError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Five characters from the server; nil when the connection itself failed.
    public var code: String?
    public var message: String

    public init(code: String?, message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { code.map { "\(message) (SQLSTATE \($0))" } ?? message }

    /// PostgreSQL's own code for a character its text cannot hold (`character_not_in_repertoire`): a NUL in a
    /// parameter, refused before it is sent.
    public static let nulInParameter = "22021"

    /// The server could not be reached or would not take a connection now (it is starting, stopping, or
    /// full): nothing was done, and the same request may succeed later.
    public var isUnreachable: Bool {
        guard let code else { return message.hasPrefix(Self.connectFailure) }
        return ["57P03", "53300", "08001", "08006"].contains(code)
    }

    /// SQLSTATE's `connection_failure`, for a connection lost inside a transaction before its COMMIT was
    /// sent: nothing of it committed, so it may be tried again (unlike a COMMIT whose answer was lost).
    public static let connectionLostBeforeCommit = "08006"

    static let connectFailure = "could not connect to PostgreSQL"
}

/// The rows of a result, as PostgreSQL's text format: nil is SQL NULL.
public struct PostgresRows: Sendable {
    public let columns: [String]
    public let values: [[String?]]
    /// Rows an INSERT, UPDATE or DELETE touched (0 for other statements).
    public let affected: Int

    public var count: Int { values.count }

    /// The value of `column` in row `row`; nil for NULL or an unknown column.
    public subscript(row: Int, column: String) -> String? {
        guard let index = columns.firstIndex(of: column) else { return nil }
        return values[row][index]
    }
}

/// One connection to PostgreSQL through libpq. This file is the only Swift code that touches libpq, and
/// `check` the one place its results become Swift errors.
///
/// Not for sharing between threads: one owner at a time (a store's writer queue, one reader).
public final class PostgresConnection {
    private let connection: OpaquePointer

    /// Connects with a libpq URL (`postgres://USER[:PASSWORD]@HOST[:PORT]/DBNAME?sslmode=...`, a Unix-socket
    /// folder as `host=` in the query) or a `key=value` connection string.
    public init(_ url: String) throws(PostgresError) {
        guard let pointer = PQconnectdb(url) else { throw PostgresError(code: nil, message: "libpq is out of memory") }
        guard PQstatus(pointer) == CONNECTION_OK else {
            let message = Self.trimmed(PQerrorMessage(pointer))
            PQfinish(pointer)
            throw PostgresError(code: nil, message: "\(PostgresError.connectFailure): \(message)")
        }
        connection = pointer
    }

    /// Connects with `url` as above, giving up after `seconds` (each step waited on here, not in libpq):
    /// for a caller that must not wait on a server that accepts TCP connections but does not answer
    /// (paused, or cut off behind a proxy). Every host of a multi-host URL is tried within that time.
    public init(_ url: String, within seconds: Double) throws(PostgresError) {
        guard let pointer = PQconnectStart(url) else { throw PostgresError(code: nil, message: "libpq is out of memory") }
        let deadline = Self.monotonicSeconds() + seconds
        var status = PQstatus(pointer) == CONNECTION_BAD ? PGRES_POLLING_FAILED : PGRES_POLLING_WRITING
        while status != PGRES_POLLING_OK && status != PGRES_POLLING_FAILED {
            let events = Int16(status == PGRES_POLLING_READING ? POLLIN : POLLOUT)
            let left = deadline - Self.monotonicSeconds()
            var ready = pollfd(fd: PQsocket(pointer), events: events, revents: 0)
            let count = left > 0 ? poll(&ready, 1, Int32(max(left * 1000, 1))) : 0
            if count < 0 && errno == EINTR { continue }
            if count <= 0 {
                PQfinish(pointer)
                throw PostgresError(code: nil, message: "\(PostgresError.connectFailure): no answer within \(seconds) s")
            }
            status = PQconnectPoll(pointer)
        }
        guard status == PGRES_POLLING_OK, PQstatus(pointer) == CONNECTION_OK else {
            let message = Self.trimmed(PQerrorMessage(pointer))
            PQfinish(pointer)
            throw PostgresError(code: nil, message: "\(PostgresError.connectFailure): \(message)")
        }
        connection = pointer
    }

    private static func monotonicSeconds() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }

    deinit { PQfinish(connection) }

    /// Runs one statement with text parameters like `query`, waiting at most `seconds` for its answer. Past
    /// that the statement is abandoned and the connection is no good any more (throws; make a new one): a
    /// server that stopped answering must not hold up a caller bound by a deadline.
    public func query(_ sql: String, _ parameters: [String?], within seconds: Double) throws(PostgresError) -> PostgresRows {
        if let index = parameters.firstIndex(where: { $0?.utf8.contains(0) ?? false }) {
            throw PostgresError(code: PostgresError.nulInParameter,
                                message: "parameter $\(index + 1) holds a NUL character, which a text value cannot")
        }
        let copies = parameters.map { $0.flatMap { strdup($0) } }
        defer { copies.forEach { free($0) } }
        let values = copies.map { UnsafePointer<CChar>($0) }
        let sent = values.withUnsafeBufferPointer { buffer in
            PQsendQueryParams(connection, sql, Int32(parameters.count), nil, buffer.baseAddress, nil, nil, 0)
        }
        guard sent == 1 else { throw PostgresError(code: nil, message: Self.trimmed(PQerrorMessage(connection))) }
        let deadline = Self.monotonicSeconds() + seconds
        // Sent in full first (a statement this small normally is at once), then read until libpq has it all.
        while PQflush(connection) == 1 {
            guard try wait(for: Int16(POLLOUT), until: deadline) else { throw abandoned(seconds) }
        }
        while PQisBusy(connection) == 1 {
            guard try wait(for: Int16(POLLIN), until: deadline) else { throw abandoned(seconds) }
            guard PQconsumeInput(connection) == 1 else {
                throw PostgresError(code: nil, message: Self.trimmed(PQerrorMessage(connection)))
            }
        }
        var rows: PostgresRows?
        var failure: PostgresError?
        while let result = PQgetResult(connection) {
            defer { PQclear(result) }
            do throws(PostgresError) {
                let read = try check(result)
                if rows == nil { rows = read }
            } catch {
                if failure == nil { failure = error }
            }
        }
        if let failure { throw failure }
        guard let rows else { throw PostgresError(code: nil, message: Self.trimmed(PQerrorMessage(connection))) }
        return rows
    }

    /// Waits for the socket to be ready for `events` until `deadline` (CLOCK_MONOTONIC seconds); false when
    /// the deadline passed first.
    private func wait(for events: Int16, until deadline: Double) throws(PostgresError) -> Bool {
        let socket = PQsocket(connection)
        guard socket >= 0 else { throw PostgresError(code: nil, message: "PostgreSQL connection lost") }
        while true {
            let left = deadline - Self.monotonicSeconds()
            guard left > 0 else { return false }
            var ready = pollfd(fd: socket, events: events, revents: 0)
            let count = poll(&ready, 1, Int32(max(left * 1000, 1)))
            if count > 0 { return true }
            if count == 0 { return false }
            if errno != EINTR { throw PostgresError(code: nil, message: "PostgreSQL connection: poll failed (errno \(errno))") }
        }
    }

    private func abandoned(_ seconds: Double) -> PostgresError {
        abandonedAnswer = true
        return PostgresError(code: nil, message: "PostgreSQL did not answer within \(seconds) s")
    }

    /// Set once a statement was abandoned: its answer may still arrive, so the connection cannot be reused.
    private var abandonedAnswer = false

    /// Whether a server accepts connections at `url` now (without logging in): for waiting until one runs.
    public static func isAccepting(_ url: String) -> Bool { PQping(url) == PQPING_OK }

    /// Whether the connection is still good: false once libpq has seen it break (the server restarted, the
    /// network went away). A broken connection stays broken; make a new one.
    public var isConnected: Bool { !abandonedAnswer && PQstatus(connection) == CONNECTION_OK }

    /// The server's version as a number (150018 for 15.18).
    public var serverVersion: Int { Int(PQserverVersion(connection)) }

    /// Runs statements without parameters; several may be separated by `;` (schema changes, BEGIN, COMMIT).
    public func execute(_ sql: String) throws(PostgresError) {
        let result = PQexec(connection, sql)
        defer { PQclear(result) }
        _ = try check(result)
    }

    /// Runs one statement with parameters `$1`, `$2`, … given in text form (nil is NULL), and returns its rows.
    @discardableResult
    /// - Throws: `PostgresError` also for a parameter holding a NUL character: libpq takes text parameters as
    ///   C strings and would store them cut short at the NUL (PostgreSQL's text cannot hold one either), so it
    ///   is refused here rather than written as something else.
    public func query(_ sql: String, _ parameters: [String?] = []) throws(PostgresError) -> PostgresRows {
        if let index = parameters.firstIndex(where: { $0?.utf8.contains(0) ?? false }) {
            throw PostgresError(code: PostgresError.nulInParameter,
                                message: "parameter $\(index + 1) holds a NUL character, which a text value cannot")
        }
        let copies = parameters.map { $0.flatMap { strdup($0) } }
        defer { copies.forEach { free($0) } }
        let values = copies.map { UnsafePointer<CChar>($0) }
        let result = values.withUnsafeBufferPointer { buffer in
            PQexecParams(connection, sql, Int32(parameters.count), nil, buffer.baseAddress, nil, nil, 0)
        }
        defer { PQclear(result) }
        return try check(result)
    }

    /// The rows of `result`, or its error as a `PostgresError`.
    private func check(_ result: OpaquePointer?) throws(PostgresError) -> PostgresRows {
        guard let result else {
            throw PostgresError(code: nil, message: Self.trimmed(PQerrorMessage(connection)))
        }
        switch PQresultStatus(result) {
        case PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_EMPTY_QUERY:
            break
        default:
            let code = PQresultErrorField(result, Int32(UInt8(ascii: "C"))).map { String(cString: $0) }
            // The primary message alone: the DETAIL of some errors quotes the values of a row ("Failing row
            // contains (…)"), and those may be a token's hash or a passcode's verifier, not for a log.
            let primary = PQresultErrorField(result, Int32(UInt8(ascii: "M")))
            throw PostgresError(code: code, message: Self.trimmed(primary ?? PQresultErrorMessage(result)))
        }
        let columnCount = PQnfields(result)
        let rowCount = PQntuples(result)
        let columns = (0..<columnCount).map { String(cString: PQfname(result, $0)) }
        let values = (0..<rowCount).map { row in
            (0..<columnCount).map { column -> String? in
                PQgetisnull(result, row, column) != 0 ? nil : String(cString: PQgetvalue(result, row, column))
            }
        }
        let affected = Int(String(cString: PQcmdTuples(result))) ?? 0
        return PostgresRows(columns: columns, values: values, affected: affected)
    }

    private static func trimmed(_ message: UnsafePointer<CChar>?) -> String {
        guard let message else { return "unknown error" }
        var text = String(cString: message)
        while text.last == "\n" || text.last == " " { text.removeLast() }
        return text.isEmpty ? "unknown error" : text
    }
}
