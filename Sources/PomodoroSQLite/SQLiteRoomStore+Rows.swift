import GRDB
import PomodoroStore

// SQLite's side of the shared codec: its dialect, its rows as `StoreRow`s, and `ColumnValue`s bound as
// GRDB's arguments. Every statement and every record's columns are in PomodoroStore (`SQLStatements`,
// `RowCodec`).

extension SQLDialect {
    /// SQLite's: `?` parameters, byte order by default, a negative LIMIT for none, MIN and MAX of two values
    /// (which are NULL when either is, hence the coalescing), and integer division that rounds towards zero.
    static let sqlite = SQLDialect(
        parameter: { _ in "?" }, byteOrder: "", limit: { _ in "?" }, noLimit: .integer(-1),
        least: { "min(coalesce(\($0), \($1)), coalesce(\($1), \($0)))" },
        greatest: { "max(coalesce(\($0), \($1)), coalesce(\($1), \($0)))" },
        floorDivision: { time, length in
            "CASE WHEN \(time) >= 0 THEN \(time) / \(length) ELSE (\(time) - \(length - 1)) / \(length) END"
        },
        nullInteger: "NULL")
}

extension SQLColumnTypes {
    /// SQLite's: booleans as 0 and 1, journal ids that are never used again, and `WITHOUT ROWID` for tables
    /// keyed by their primary key alone.
    static let sqlite = SQLColumnTypes(text: "TEXT", integer: "INTEGER", smallInteger: "INTEGER", boolean: "INTEGER",
                                       identity: "INTEGER PRIMARY KEY AUTOINCREMENT", withoutRowID: " WITHOUT ROWID")
}

extension SQLiteRoomStore {
    static let statements = SQLStatements(.sqlite)
}

/// A GRDB row read by column name, with GRDB's own conversions (an integer column read as a boolean is
/// true when not 0).
struct SQLiteRow: StoreRow {
    let row: Row

    private func value(_ column: String) throws(StoreError) -> DatabaseValue? {
        guard row.hasColumn(column) else { throw StoreError("no column \(column) in the result") }
        let value: DatabaseValue = row[column]
        return value.isNull ? nil : value
    }

    private func converted<T: DatabaseValueConvertible>(_ column: String, _ type: T.Type) throws(StoreError) -> T? {
        guard let value = try value(column) else { return nil }
        guard let converted = T.fromDatabaseValue(value) else {
            throw StoreError("column \(column) is not \(T.self): \(value)")
        }
        return converted
    }

    func text(_ column: String) throws(StoreError) -> String? { try converted(column, String.self) }
    func integer(_ column: String) throws(StoreError) -> Int64? { try converted(column, Int64.self) }
    func boolean(_ column: String) throws(StoreError) -> Bool? { try converted(column, Bool.self) }
}

extension StatementArguments {
    init(_ values: [ColumnValue]) {
        self.init(values.map { value -> (any DatabaseValueConvertible)? in
            switch value {
            case .text(let text): text
            case .integer(let number): number
            case .boolean(let flag): flag
            }
        })
    }
}

extension Database {
    /// The rows of `query`, as `StoreRow`s.
    func rows(_ query: SQLStatements.Query) throws -> [SQLiteRow] {
        try Row.fetchAll(self, sql: query.sql, arguments: StatementArguments(query.values)).map(SQLiteRow.init)
    }

    /// The same, with the statement prepared once on this connection and kept (GRDB's statement cache): for
    /// the few fixed texts asked again and again, a join's look-up of its room above all (preparing them was
    /// three quarters of that look-up's time in a storm of joins). Never for text that varies with the values.
    func cachedRows(_ query: SQLStatements.Query) throws -> [SQLiteRow] {
        try Row.fetchAll(cachedStatement(sql: query.sql), arguments: StatementArguments(query.values)).map(SQLiteRow.init)
    }
}

/// The writer connection in its transaction, for the shared writing steps. Each statement is prepared once
/// on the writer connection (GRDB's statement cache, kept for the connection's life) and reused with new
/// arguments: the writer's SQL is a fixed set of texts with parameters, so the cache stays as small as that
/// set, and SQLite no longer parses every statement again at every commit.
struct SQLiteWriting: SQLWriting {
    typealias Failure = any Error
    let db: Database
    var statements: SQLStatements { SQLiteRoomStore.statements }

    @discardableResult
    func run(_ sql: String, _ values: [ColumnValue]) throws -> Int {
        try db.cachedStatement(sql: sql).execute(arguments: StatementArguments(values))
        return db.changesCount
    }

    func insertReturningID(_ sql: String, _ values: [ColumnValue]) throws -> Int64 {
        try db.cachedStatement(sql: sql).execute(arguments: StatementArguments(values))
        return db.lastInsertedRowID
    }

    func integer(_ sql: String, _ values: [ColumnValue]) throws -> Int64? {
        try Int64.fetchOne(db.cachedStatement(sql: sql), arguments: StatementArguments(values))
    }
}
