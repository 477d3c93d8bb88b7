/// An `INSERT` (or upsert) whose `VALUES` list takes any number of rows, so that rows of one kind written in
/// one transaction (a session's participants, a batch's running totals, a phase change's members) go to the
/// database as one statement instead of one each: on PostgreSQL every statement is work for its backend, on
/// the same cores as the service thread. At most `maxRows` rows to a statement, so that its texts (each
/// prepared once per connection by the stores) stay few and its parameters within every database's limit.
public struct RowsStatement: Sendable {
    public static let maxRows = 64
    /// `INSERT INTO table (columns)`, and what follows the values (an `ON CONFLICT` clause, or nothing).
    let head: String
    let tail: String
    /// Values per row.
    public let columns: Int
    let dialect: SQLDialect

    init(into table: String, columns: [String], tail: String = "", _ dialect: SQLDialect) {
        head = "INSERT INTO \(table) (\(columns.joined(separator: ", "))) VALUES "
        self.tail = tail
        self.columns = columns.count
        self.dialect = dialect
    }

    /// The statement for `rows` rows (1 to `maxRows`), whose values are bound one row after the other.
    public func text(rows: Int) -> String {
        precondition(rows > 0 && rows <= Self.maxRows)
        return head + (0..<rows).map { "(\(dialect.parameters(columns, from: $0 * columns + 1)))" }
            .joined(separator: ", ") + tail
    }
}
