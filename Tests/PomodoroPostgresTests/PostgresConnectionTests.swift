@testable import PomodoroPostgres
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

    /// The text arrays the fences' statements send (`FenceReader.arrayLiteral`) come back element by element,
    /// whatever an element holds: quotes, backslashes, commas, braces, spaces, NULL's spelling, other scripts.
    @Test func aTextArrayLiteralComesBackWhole() throws {
        let items = ["room-1", "a\"b", "back\\slash", "{,}", " spaced ", "NULL", "", "ünïcødé ✓", "\\\""]
        let rows = try connection.query("SELECT u FROM unnest($1::text[]) WITH ORDINALITY AS a(u, n) ORDER BY n",
                                        [FenceReader.arrayLiteral(items)])
        #expect(rows.values.map { $0[0] } == items)
        #expect(try connection.query("SELECT cardinality($1::text[])::text AS n", [FenceReader.arrayLiteral([])])[0, "n"] == "0")
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

    /// A pipeline runs its statements in order and answers each, prepared or not; a prepared statement is
    /// prepared once on the connection and run by name after that.
    @Test(arguments: [true, false]) func aPipelineRunsInOrderAndAnswersEach(prepared: Bool) throws {
        try connection.execute("CREATE TABLE p (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, name text)")
        let insert = "INSERT INTO p (name) VALUES ($1) RETURNING id"
        for round in 0..<2 {
            let rows = try connection.pipeline([
                PostgresStatement("BEGIN"),
                PostgresStatement(insert, ["Ada \(round)"]),
                PostgresStatement(insert, [nil]),
                PostgresStatement("UPDATE p SET name = $1 WHERE name IS NULL", ["Lin ✓"]),
                PostgresStatement("SELECT name FROM p ORDER BY id"),
                PostgresStatement("COMMIT"),
            ], prepared: prepared)
            #expect(rows.count == 6)
            #expect(rows[1].values == [[String(2 * round + 1)]] && rows[2].values == [[String(2 * round + 2)]])
            #expect(rows[3].affected == 1)
            #expect(rows[4].values.suffix(2) == [["Ada \(round)"], ["Lin ✓"]])
        }
        let named = try connection.query("SELECT count(*) FROM pg_prepared_statements").values[0][0]
        #expect(named == (prepared ? "5" : "0"), "each text prepared once, on the first round")
    }

    /// A statement that fails stops the pipeline: the ones after it do not run, its error comes back with its
    /// SQLSTATE, and the connection goes on (the transaction it was in is rolled back by the caller).
    @Test func aFailureInAPipelineStopsTheRestAndTheConnectionGoesOn() throws {
        try connection.execute("CREATE TABLE f (id bigint PRIMARY KEY)")
        do {
            _ = try connection.pipeline([PostgresStatement("BEGIN"), PostgresStatement("INSERT INTO f VALUES ($1)", ["1"]),
                                         PostgresStatement("INSERT INTO f VALUES ($1)", ["1"]),
                                         PostgresStatement("INSERT INTO f VALUES ($1)", ["3"]), PostgresStatement("COMMIT")])
            Issue.record("a duplicate key went in")
        } catch {
            #expect(error.code == "23505")
        }
        #expect(connection.isConnected)
        try connection.execute("ROLLBACK")
        #expect(try connection.query("SELECT count(*) FROM f").values == [["0"]])
        #expect(try connection.pipeline([PostgresStatement("INSERT INTO f VALUES ($1)", ["3"]),
                                         PostgresStatement("SELECT id FROM f")])[1].values == [["3"]])
        // A NUL is refused before anything is sent.
        #expect(throws: PostgresError.self) {
            try connection.pipeline([PostgresStatement("INSERT INTO f VALUES ($1)", ["4"]),
                                     PostgresStatement("SELECT $1::text", ["a\u{0}b"])])
        }
        #expect(try connection.query("SELECT count(*) FROM f").values == [["1"]])
    }

    /// What a `ROLLBACK` after a failure asks first: idle outside a transaction (the failure came before
    /// `BEGIN` reached the server) there is nothing to end; in a transaction, or in one a statement failed,
    /// there is.
    @Test func whetherATransactionIsOpenIsKnownBeforeARollback() throws {
        try connection.execute("CREATE TABLE r (id bigint PRIMARY KEY)")
        #expect(!connection.mayBeInTransaction)
        // A NUL refused before anything was sent leaves the connection idle.
        #expect(throws: PostgresError.self) {
            try connection.pipeline(PostgresRoomStore.beginStatements + [PostgresStatement("SELECT $1::text", ["a\u{0}b"])])
        }
        #expect(connection.isConnected && !connection.mayBeInTransaction)
        try connection.execute(PostgresRoomStore.beginSQL)
        #expect(connection.mayBeInTransaction)
        try connection.query("INSERT INTO r VALUES ($1)", ["1"])
        #expect(throws: PostgresError.self) { try connection.query("INSERT INTO r VALUES ($1)", ["1"]) }
        #expect(connection.mayBeInTransaction)
        try connection.execute("ROLLBACK")
        #expect(!connection.mayBeInTransaction)
        #expect(try connection.query("SELECT count(*) FROM r").values == [["0"]])
        // A pipeline that began and then failed leaves the failed transaction open, to be rolled back.
        #expect(throws: PostgresError.self) {
            try connection.pipeline(PostgresRoomStore.beginStatements + [PostgresStatement("SELECT 1 / 0")])
        }
        #expect(connection.mayBeInTransaction)
        try connection.execute("ROLLBACK")
        #expect(!connection.mayBeInTransaction)
    }

    /// A pipeline far larger than the sockets' buffers goes through: its answers are read while the rest is
    /// still being sent.
    @Test func aLongPipelineDoesNotStall() throws {
        try connection.execute("CREATE TABLE l (id bigint PRIMARY KEY, note text)")
        let note = String(repeating: "x", count: 200)
        let statements = (0..<20_000).map { PostgresStatement("INSERT INTO l VALUES ($1, $2)", [String($0), note]) }
        let rows = try connection.pipeline(statements)
        #expect(rows.count == 20_000 && rows.allSatisfy { $0.affected == 1 })
        #expect(try connection.query("SELECT count(*) FROM l").values == [["20000"]])
    }

    /// Prepared statements the server no longer has (a pooler handed the work to another server connection,
    /// or they were deallocated) fail with a code of their own, and the connection prepares them again next.
    @Test func preparedStatementsTheServerLostAreMadeAgain() throws {
        let select = PostgresStatement("SELECT $1::bigint + 1", ["41"])
        #expect(try connection.pipeline([select])[0].values == [["42"]])
        try connection.execute("DEALLOCATE ALL")
        do {
            _ = try connection.pipeline([select])
            Issue.record("a deallocated statement ran")
        } catch {
            #expect(error.code == PostgresError.preparedStatementMissing)
        }
        #expect(try connection.pipeline([select])[0].values == [["42"]])
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
