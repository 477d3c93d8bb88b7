import CPostgres
import Glibc

/// One connection to PostgreSQL through libpq. This file is the only Swift code that touches libpq, and
/// `check` the one place its results become Swift errors; what it hands back and takes in is plain Swift
/// (`PostgresValues.swift`).
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
        try Self.refuseNUL(in: parameters)
        let sent = Self.withParameters(parameters) { values in
            PQsendQueryParams(connection, sql, Int32(parameters.count), nil, values, nil, nil, 0)
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

    /// Whether a `ROLLBACK` has something to end: the connection is good and not idle outside a transaction
    /// (in one, in a failed one, or with a command still under way). False after a failure that came before
    /// any `BEGIN` reached the server, where a `ROLLBACK` would only earn the server's warning.
    public var mayBeInTransaction: Bool { isConnected && PQtransactionStatus(connection) != PQTRANS_IDLE }

    /// Ends the transaction a failure left open, if one may be: the `ROLLBACK` after a failed transaction
    /// (its own failure ignored: the caller reports the first one).
    public func rollBackAfterFailure() {
        if mayBeInTransaction { try? execute("ROLLBACK") }
    }

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
        try Self.refuseNUL(in: parameters)
        let result = Self.withParameters(parameters) { values in
            PQexecParams(connection, sql, Int32(parameters.count), nil, values, nil, nil, 0)
        }
        defer { PQclear(result) }
        return try check(result)
    }

    // MARK: Pipelines

    /// Runs `statements` in order in libpq's pipeline mode: all of them sent at once, then their answers read,
    /// so that the whole list costs one round trip to the server instead of one each.
    ///
    /// With `prepared`, each statement is prepared on this connection the first time its text is seen here
    /// (`PQsendPrepare`, in the same pipeline) and run by name after that, so the server parses and plans it
    /// once per connection. The name is made from the text alone, so a name means the same statement on any
    /// connection: behind a pooler that hands transactions to other server connections, a statement missing
    /// there fails with `PostgresError.preparedStatementMissing` (or `.preparedStatementExists`), never runs as
    /// another one; the caller then runs without `prepared`.
    ///
    /// Returns each statement's rows, in order. A statement that fails throws its error, and those after it
    /// are not run (the server skips them up to the pipeline's end); a transaction the statements opened
    /// with `BEGIN` is then left open and aborted, for the caller to roll back.
    public func pipeline(_ statements: [PostgresStatement], prepared: Bool = true) throws(PostgresError) -> [PostgresRows] {
        guard !statements.isEmpty else { return [] }
        for statement in statements { try Self.refuseNUL(in: statement.parameters) }
        guard PQenterPipelineMode(connection) == 1 else { throw lastError() }
        // Non-blocking while the pipeline is in flight: the answers are read as they come, while the rest is
        // still being sent, so that neither side waits for the other with full buffers.
        guard PQsetnonblocking(connection, 1) == 0 else {
            PQexitPipelineMode(connection)
            throw lastError()
        }
        let outcome: Result<[PostgresRows], PostgresError>
        do throws(PostgresError) {
            outcome = try runPipeline(statements, preparing: prepared)
        } catch {
            // The connection failed half-way, and answers may still be on their way: it is not reused.
            abandonedAnswer = true
            PQsetnonblocking(connection, 0)
            throw error
        }
        PQsetnonblocking(connection, 0)
        guard PQexitPipelineMode(connection) == 1 else {
            abandonedAnswer = true
            throw lastError()
        }
        if case .failure(let error) = outcome,
           error.code == PostgresError.preparedStatementMissing || error.code == PostgresError.preparedStatementExists {
            self.prepared.removeAll()
        }
        return try outcome.get()
    }

    /// What one answer in a pipeline belongs to.
    private enum Expected {
        case prepare(sql: String, name: String)
        case statement(Int)
    }

    /// Statement texts prepared on this connection, and the names they were prepared under.
    private var prepared: [String: String] = [:]

    /// Sends the pipeline and reads every answer up to its end: the statements' rows or the first statement's
    /// error. Throws only when the connection itself fails.
    private func runPipeline(_ statements: [PostgresStatement], preparing: Bool) throws(PostgresError)
        -> Result<[PostgresRows], PostgresError> {
        var expected: [Expected] = []
        var naming: [String: String] = [:]   // prepared in this pipeline, not yet confirmed
        for (index, statement) in statements.enumerated() {
            let count = Int32(statement.parameters.count)
            let sent: Int32
            if preparing {
                let name: String
                if let known = prepared[statement.sql] ?? naming[statement.sql] {
                    name = known
                } else {
                    name = Self.preparedName(of: statement.sql)
                    guard PQsendPrepare(connection, name, statement.sql, count, nil) == 1 else { throw lastError() }
                    naming[statement.sql] = name
                    expected.append(.prepare(sql: statement.sql, name: name))
                }
                sent = Self.withParameters(statement.parameters) { values in
                    PQsendQueryPrepared(connection, name, count, values, nil, nil, 0)
                }
            } else {
                sent = Self.withParameters(statement.parameters) { values in
                    PQsendQueryParams(connection, statement.sql, count, nil, values, nil, nil, 0)
                }
            }
            guard sent == 1 else { throw lastError() }
            expected.append(.statement(index))
        }
        guard PQpipelineSync(connection) == 1 else { throw lastError() }

        var rows = [PostgresRows?](repeating: nil, count: statements.count)
        var failure: PostgresError?
        var answered = 0   // answers complete (each ends with a NULL from PQgetResult)
        var synced = false
        while !synced {
            let unsent = PQflush(connection)
            guard unsent >= 0 else { throw lastError() }
            if PQisBusy(connection) == 1 || unsent == 1 {
                try waitForever(for: Int16(POLLIN) | (unsent == 1 ? Int16(POLLOUT) : 0))
                guard PQconsumeInput(connection) == 1 else { throw lastError() }
            }
            while !synced && PQisBusy(connection) == 0 {
                guard let result = PQgetResult(connection) else {
                    answered += 1
                    continue
                }
                defer { PQclear(result) }
                let status = PQresultStatus(result)
                if status == PGRES_PIPELINE_SYNC {
                    synced = true
                } else if status != PGRES_PIPELINE_ABORTED, answered < expected.count {
                    do throws(PostgresError) {
                        let read = try check(result)
                        switch expected[answered] {
                        case .prepare(let sql, let name): prepared[sql] = name
                        case .statement(let index): rows[index] = read
                        }
                    } catch {
                        if failure == nil { failure = error }
                    }
                }
            }
        }
        if let failure { return .failure(failure) }
        let all = rows.compactMap { $0 }
        guard all.count == rows.count else {
            return .failure(PostgresError(code: nil, message: "PostgreSQL sent no answer to a statement"))
        }
        return .success(all)
    }

    /// The name a statement is prepared under: its text's 64-bit FNV-1a hash, the same on every connection.
    static func preparedName(of sql: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in sql.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        return "pomodoro_" + String(hash, radix: 16)
    }

    /// Waits without a deadline for the socket to be ready for `events`.
    private func waitForever(for events: Int16) throws(PostgresError) {
        let socket = PQsocket(connection)
        guard socket >= 0 else { throw PostgresError(code: nil, message: "PostgreSQL connection lost") }
        while true {
            var ready = pollfd(fd: socket, events: events, revents: 0)
            if poll(&ready, 1, -1) > 0 { return }
            if errno != EINTR { throw PostgresError(code: nil, message: "PostgreSQL connection: poll failed (errno \(errno))") }
        }
    }

    private func lastError() -> PostgresError {
        PostgresError(code: nil, message: Self.trimmed(PQerrorMessage(connection)))
    }

    /// Refuses a parameter holding a NUL character: libpq takes text parameters as C strings and would
    /// store them cut short at the NUL (PostgreSQL's text cannot hold one either).
    private static func refuseNUL(in parameters: [String?]) throws(PostgresError) {
        if let index = parameters.firstIndex(where: { $0?.utf8.contains(0) ?? false }) {
            throw PostgresError(code: PostgresError.nulInParameter,
                                message: "parameter $\(index + 1) holds a NUL character, which a text value cannot")
        }
    }

    /// Calls `body` with the parameters as libpq's array of NUL-terminated copies (nil for NULL), freed after.
    private static func withParameters<T>(_ parameters: [String?],
                                          _ body: (UnsafePointer<UnsafePointer<CChar>?>?) -> T) -> T {
        let copies = parameters.map { $0.flatMap { strdup($0) } }
        defer { copies.forEach { free($0) } }
        let values = copies.map { UnsafePointer<CChar>($0) }
        return values.withUnsafeBufferPointer { body($0.baseAddress) }
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
