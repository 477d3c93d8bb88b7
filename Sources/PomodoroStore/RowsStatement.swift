/// An `INSERT` (or upsert) whose `VALUES` list takes any number of rows, so that rows of one kind written in
/// one transaction (a session's participants, a batch's running totals, a phase change's members) go to the
/// database as one statement instead of one each: on PostgreSQL every statement is work for its backend, on
/// the same cores as the service thread. At most `maxRows` rows to a statement, so that its texts (each
/// prepared once per connection by the stores) stay few and its parameters within every database's limit.
public struct RowsStatement: Sendable {
    public static let maxRows = 64
    /// Values per row.
    public let columns: Int
    /// The texts for 1 to `maxRows` rows, `INSERT INTO table (columns) VALUES (…), …` and what follows the
    /// values (an `ON CONFLICT` clause, or nothing), made once: the writer asks for one with every batch, and
    /// building it each time (up to 64 × `columns` parameters) showed in its profile.
    private let texts: [String]

    init(into table: String, columns: [String], tail: String = "", _ dialect: SQLDialect) {
        let head = "INSERT INTO \(table) (\(columns.joined(separator: ", "))) VALUES ", width = columns.count
        self.columns = width
        texts = (1...Self.maxRows).map { rows in
            head + (0..<rows).map { "(\(dialect.parameters(width, from: $0 * width + 1)))" }.joined(separator: ", ") + tail
        }
    }

    /// The statement for `rows` rows (1 to `maxRows`), whose values are bound one row after the other.
    public func text(rows: Int) -> String {
        precondition(rows > 0 && rows <= Self.maxRows)
        return texts[rows - 1]
    }
}
