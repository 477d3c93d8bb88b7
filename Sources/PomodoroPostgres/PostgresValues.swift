// What a connection to PostgreSQL (`PostgresConnection`) hands back and takes in: its errors, a result's
// rows and a pipeline's statements, in plain Swift (no libpq type).

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

    /// SQLSTATE's `invalid_sql_statement_name`: a prepared statement this connection does not have.
    public static let preparedStatementMissing = "26000"
    /// SQLSTATE's `duplicate_prepared_statement`.
    public static let preparedStatementExists = "42P05"
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

/// One statement of a pipeline (`PostgresConnection.pipeline`): its text, with parameters `$1`, `$2`, … given
/// in text form (nil is NULL).
public struct PostgresStatement: Sendable, Equatable {
    public var sql: String
    public var parameters: [String?]

    public init(_ sql: String, _ parameters: [String?] = []) {
        self.sql = sql
        self.parameters = parameters
    }
}
