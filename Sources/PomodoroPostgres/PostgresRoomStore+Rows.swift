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

/// The writer connection in its transaction, for the shared writing steps.
struct PostgresWriting: SQLWriting {
    typealias Failure = PostgresError
    let connection: PostgresConnection
    var statements: SQLStatements { PostgresRoomStore.statements }

    @discardableResult
    func run(_ sql: String, _ values: [ColumnValue]) throws(PostgresError) -> Int {
        try connection.query(sql, values.map(\.parameter)).affected
    }

    func insertReturningID(_ sql: String, _ values: [ColumnValue]) throws(PostgresError) -> Int64 {
        let rows = try connection.query(sql + " RETURNING id", values.map(\.parameter))
        guard let id = rows.values.first?.first.flatMap({ $0 }).flatMap({ Int64($0) }) else {
            throw PostgresError(code: nil, message: "an INSERT returned no id")
        }
        return id
    }

    func integer(_ sql: String, _ values: [ColumnValue]) throws(PostgresError) -> Int64? {
        try connection.query(sql, values.map(\.parameter)).values.first?.first.flatMap { $0 }.flatMap { Int64($0) }
    }
}
