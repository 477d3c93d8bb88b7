import PomodoroPostgres
import PomodoroTestSupport
import Testing

/// The libpq layer against a real PostgreSQL: parameters, NULLs, rows, and errors with their SQLSTATE.
@Suite(.onOwnThreads, .timeLimit(.minutes(TestTime.minutes(2))))
struct PostgresConnectionTests {
    let connection: PostgresConnection

    init() async throws {
        connection = try PostgresConnection(try await PostgresTestServer.makeDatabase())
    }

    @Test func parametersAndNullsRoundTrip() throws {
        try connection.execute("CREATE TABLE t (id bigint PRIMARY KEY, name text, note text)")
        let inserted = try connection.query("INSERT INTO t VALUES ($1, $2, $3), ($4, $5, $6)",
                                            ["1", "Ada", nil, "2", "Lin; DROP TABLE t; --", "ünïcødé ✓"])
        #expect(inserted.affected == 2)
        let rows = try connection.query("SELECT id, name, note FROM t ORDER BY id")
        #expect(rows.columns == ["id", "name", "note"])
        #expect(rows.values == [["1", "Ada", nil], ["2", "Lin; DROP TABLE t; --", "ünïcødé ✓"]])
        #expect(rows[1, "note"] == "ünïcødé ✓")
    }

    /// A NUL inside a parameter is refused before libpq sees it: libpq reads text parameters as C strings,
    /// so the value would be stored cut short at the NUL, as something other than what was asked.
    @Test func aParameterHoldingANulIsRefusedNotCutShort() throws {
        try connection.execute("CREATE TABLE w (id bigint PRIMARY KEY, note text)")
        do {
            try connection.query("INSERT INTO w VALUES ($1, $2)", ["1", "before\u{0}after"])
            Issue.record("a parameter with a NUL was written")
        } catch {
            #expect(error.code == PostgresError.nulInParameter)
            #expect(error.message.contains("$2"))
        }
        #expect(try connection.query("SELECT count(*) AS n FROM w")[0, "n"] == "0")
        // Every other character goes through whole.
        try connection.query("INSERT INTO w VALUES ($1, $2)", ["2", "tab\tnew\nline \u{7f} ✓"])
        #expect(try connection.query("SELECT note FROM w WHERE id = 2")[0, "note"] == "tab\tnew\nline \u{7f} ✓")
    }

    @Test func errorsCarryTheirSQLState() throws {
        try connection.execute("CREATE TABLE u (id bigint PRIMARY KEY)")
        try connection.query("INSERT INTO u VALUES ($1)", ["7"])
        #expect(throws: PostgresError.self) { try connection.query("INSERT INTO u VALUES ($1)", ["7"]) }
        do {
            try connection.query("INSERT INTO u VALUES ($1)", ["7"])
        } catch {
            #expect(error.code == "23505")
        }
        do {
            try connection.query("SELEKT 1")
        } catch {
            #expect(error.code == "42601")
        }
        // The connection is still usable after an error.
        #expect(try connection.query("SELECT count(*) AS n FROM u")[0, "n"] == "1")
    }

    /// Some errors' DETAIL quotes the row's values: the message keeps the primary text alone.
    @Test func errorsDoNotQuoteTheRowsValues() throws {
        try connection.execute("CREATE TABLE v (id bigint NOT NULL, secret text)")
        do {
            try connection.query("INSERT INTO v VALUES ($1, $2)", [nil, "hunter2-verifier"])
            Issue.record("a NULL went in")
        } catch {
            #expect(error.code == "23502")
            #expect(error.message.contains("null value in column \"id\""), "\(error.message)")
            #expect(!error.message.contains("hunter2"), "\(error.message)")
        }
    }

    @Test func aServerThatIsNotThereIsAClearError() throws {
        do {
            _ = try PostgresConnection("postgres://nobody@127.0.0.1:1/none?connect_timeout=2")
            Issue.record("connected to nothing")
        } catch {
            #expect(error.code == nil)
            #expect(error.message.hasPrefix("could not connect to PostgreSQL"))
        }
        #expect(!PostgresConnection.isAccepting("postgres://nobody@127.0.0.1:1/none?connect_timeout=2"))
    }
}
