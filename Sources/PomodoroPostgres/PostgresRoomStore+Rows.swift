import PomodoroCore
import PomodoroStore

// PostgreSQL's side of the shared codec: its dialect, its text-format rows as `StoreRow`s, and
// `ColumnValue`s as text parameters. Every statement and every record's columns are in PomodoroStore
// (`SQLStatements`, `RowCodec`).

extension SQLDialect {
    /// PostgreSQL's: `$n` parameters, text ordered `COLLATE "C"` (byte order, as SQLite's, whatever collation
    /// the database was made with), `LIMIT NULL` for none, LEAST and GREATEST (which ignore NULLs), and
    /// `floor` on numerics.
    static let postgres = SQLDialect(
        parameter: { "$\($0)" }, byteOrder: " COLLATE \"C\"", limit: { "$\($0)::bigint" }, noLimit: .integer(Int64?.none),
        least: { "LEAST(\($0), \($1))" }, greatest: { "GREATEST(\($0), \($1))" },
        floorDivision: { time, length in "floor(\(time)::numeric / \(length))::bigint" },
        nullInteger: "NULL::bigint")
}

extension SQLColumnTypes {
    /// PostgreSQL's: times in milliseconds since 1970 as bigint, journal ids as identity columns.
    static let postgres = SQLColumnTypes(text: "text", integer: "bigint", smallInteger: "integer", boolean: "boolean",
                                         identity: "bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY", withoutRowID: "")
}

extension PostgresRoomStore {
    static let statements = SQLStatements(.postgres)
}

/// One row of a result, read by column name; a value that is missing or does not parse is a `StoreError`.
struct Row: StoreRow {
    let rows: PostgresRows
    let index: Int

    func text(_ column: String) throws(StoreError) -> String? {
        guard let position = rows.columns.firstIndex(of: column) else {
            throw StoreError("no column \(column) in the result")
        }
        return rows.values[index][position]
    }

    func integer(_ column: String) throws(StoreError) -> Int64? {
        guard let value = try text(column) else { return nil }
        guard let number = Int64(value) else { throw StoreError("column \(column) is not a number: \(value)") }
        return number
    }

    func boolean(_ column: String) throws(StoreError) -> Bool? {
        switch try text(column) {
        case nil: return nil
        case "t": return true
        case "f": return false
        case let value?: throw StoreError("column \(column) is not a boolean: \(value)")
        }
    }
}

extension PostgresRows {
    var rows: [Row] { (0..<count).map { Row(rows: self, index: $0) } }
}

extension ColumnValue {
    /// The value in PostgreSQL's text format.
    var parameter: String? {
        switch self {
        case .text(let text): text
        case .integer(let number): number.map { String($0) }
        case .boolean(let flag): flag.map { String($0) }
        }
    }
}

extension PostgresConnection {
    /// Runs `query` with its values as parameters.
    @discardableResult
    func query(_ query: SQLStatements.Query) throws(PostgresError) -> PostgresRows {
        try self.query(query.sql, query.values.map(\.parameter))
    }
}

/// The writer connection in its transaction, for the shared writing steps. Statements whose answer is not
/// needed (`send`) are held and go to the server together, in one pipeline (`PostgresConnection.pipeline`),
/// with the next statement whose answer is needed or at `flush`: a batch of changes costs a round trip or
/// two, not one per row. A statement that fails fails the pipeline it went in, and so the transaction.
final class PostgresWriting: SQLWriting {
    typealias Failure = PostgresError
    let connection: PostgresConnection
    /// Whether statements are prepared on the connection (see `PostgresConnection.pipeline`).
    let prepared: Bool
    private var held: [PostgresStatement] = []
    /// Ids taken from `focus_session`'s sequence for the sessions of the batch (`reserveSessionIDs`), so that a
    /// session's participants can name it without waiting for its INSERT's answer.
    private var sessionIDs: ArraySlice<Int64> = []

    init(connection: PostgresConnection, prepared: Bool = false) {
        self.connection = connection
        self.prepared = prepared
    }

    var statements: SQLStatements { PostgresRoomStore.statements }

    func send(_ sql: String, _ values: [ColumnValue]) {
        held.append(PostgresStatement(sql, values.map(\.parameter)))
    }

    @discardableResult
    func run(_ sql: String, _ values: [ColumnValue]) throws(PostgresError) -> Int {
        try flush(then: [PostgresStatement(sql, values.map(\.parameter))])[0].affected
    }

    func insertReturningID(_ sql: String, _ values: [ColumnValue]) throws(PostgresError) -> Int64 {
        if sql == statements.insertSession, let id = sessionIDs.popFirst() {
            send(PostgresRoomStore.insertSessionWithID, [.integer(id)] + values)
            return id
        }
        let rows = try flush(then: [PostgresStatement(sql + " RETURNING id", values.map(\.parameter))])[0]
        guard let id = rows.values.first?.first.flatMap({ $0 }).flatMap({ Int64($0) }) else {
            throw PostgresError(code: nil, message: "an INSERT returned no id")
        }
        return id
    }

    func integer(_ sql: String, _ values: [ColumnValue]) throws(PostgresError) -> Int64? {
        try flush(then: [PostgresStatement(sql, values.map(\.parameter))])[0]
            .values.first?.first.flatMap { $0 }.flatMap { Int64($0) }
    }

    /// Sends what is held, then `last`, in one pipeline; returns the rows of each of `last`.
    @discardableResult
    func flush(then last: [PostgresStatement] = []) throws(PostgresError) -> [PostgresRows] {
        let statements = held + last
        held.removeAll()
        return Array(try connection.pipeline(statements, prepared: prepared).suffix(last.count))
    }

    /// With `begin`, `BEGIN` and the transaction's settings (`PostgresRoomStore.beginStatements`), held to go
    /// first in the batch's first pipeline. Raises the fence of each room to its epoch (`fencesStatements`: two
    /// statements for all), held to go next: a fenced room fails the pipeline, and so the transaction, before
    /// any change is written. Then takes an id for each of the `sessions` the batch inserts (one round trip,
    /// when there are any).
    func start(begin: Bool = false, fences: [RoomID: Int64], sessions: Int) throws(PostgresError) {
        if begin { held.append(contentsOf: PostgresRoomStore.beginStatements) }
        if !fences.isEmpty { held.append(contentsOf: PostgresRoomStore.fencesStatements(fences)) }
        guard sessions > 0 else { return }
        let ids = try flush(then: [PostgresStatement(PostgresRoomStore.reserveSessionIDs, [String(sessions)])])[0]
        sessionIDs = ArraySlice(ids.values.compactMap { $0.first.flatMap { $0 }.flatMap { Int64($0) } })
    }
}

extension PostgresRoomStore {
    /// `n` new ids from `focus_session`'s identity sequence, for `insertSessionWithID`.
    static let reserveSessionIDs =
        "SELECT nextval(pg_get_serial_sequence('focus_session', 'id')) FROM generate_series(1, $1::integer)"
    /// `SQLStatements.insertSession` with the id given first (one `reserveSessionIDs` handed out).
    static let insertSessionWithID = "INSERT INTO focus_session (id, \(StoreSchema.sessionColumns.joined(separator: ", "))) "
        + "OVERRIDING SYSTEM VALUE VALUES (\((1...StoreSchema.sessionColumns.count + 1).map { "$\($0)" }.joined(separator: ", ")))"
}
