/// One row of a query's result, read by column name: what `RowCodec` decodes records from. Each SQL store
/// adapts its own rows (GRDB's `Row` for SQLite, libpq's text result for PostgreSQL) with these three reads;
/// nil is SQL NULL.
///
/// A column the result does not have, or a value that is not of the kind asked for, throws a `StoreError`
/// naming the column.
public protocol StoreRow {
    func text(_ column: String) throws(StoreError) -> String?
    func integer(_ column: String) throws(StoreError) -> Int64?
    func boolean(_ column: String) throws(StoreError) -> Bool?
}

extension StoreRow {
    /// A column that may not be NULL.
    public func string(_ column: String) throws(StoreError) -> String { try required(text(column), column) }
    public func int64(_ column: String) throws(StoreError) -> Int64 { try required(integer(column), column) }
    public func int(_ column: String) throws(StoreError) -> Int { Int(try int64(column)) }
    public func optionalInt(_ column: String) throws(StoreError) -> Int? { try integer(column).map { Int($0) } }
    public func bool(_ column: String) throws(StoreError) -> Bool { try required(boolean(column), column) }

    private func required<T>(_ value: T?, _ column: String) throws(StoreError) -> T {
        guard let value else { throw StoreError("column \(column) is NULL") }
        return value
    }
}

/// One value to bind to a statement's parameter, NULL as nil: what `RowCodec` encodes records into, and
/// each store binds in its own way.
public enum ColumnValue: Equatable, Sendable {
    case text(String?)
    case integer(Int64?)
    case boolean(Bool?)

    public static func integer(_ value: Int) -> ColumnValue { .integer(Int64(value)) }
    public static func integer(_ value: Int?) -> ColumnValue { .integer(value.map { Int64($0) }) }
}
