import Foundation
import Testing
import PomodoroCore
import PomodoroStore
@testable import PomodoroPostgres
import PomodoroTestSupport

/// A PostgreSQL store whose first `apply` waits, once started, until the test lets it go, and which
/// records the size of every `apply`: so the test can make batches queue up behind it.
final class HeldStore: RoomStore, @unchecked Sendable {
    let store: PostgresRoomStore
    let entered = DispatchSemaphore(value: 0)
    let release = DispatchSemaphore(value: 0)
    private let lock = NSLock()
    private var held = false
    private var sizes: [Int] = []

    init(_ store: PostgresRoomStore) { self.store = store }

    /// The number of changes of each `apply`, in order.
    var applied: [Int] { lock.withLock { sizes } }

    func apply(_ changes: [StoreChange]) throws(StoreError) {
        let hold = lock.withLock { () -> Bool in
            sizes.append(changes.count)
            defer { held = true }
            return !held
        }
        if hold {
            entered.signal()
            _ = waitFor(release)
        }
        try store.apply(changes)
    }

    func loadRooms() throws(StoreError) -> [StoredRoom] { try store.loadRooms() }
    func loadRoom(_ id: RoomID) throws(StoreError) -> StoredRoom? { try store.loadRoom(id) }
    func loadSchedules() throws(StoreError) -> [RoomID: [Schedule]] { try store.loadSchedules() }
    func loadSchedules(room: RoomID) throws(StoreError) -> [Schedule] { try store.loadSchedules(room: room) }
    func sessions(room: RoomID, endedFrom from: Int64?, before: Int64?, limit: Int?) throws(StoreError)
        -> [FocusSessionRecord] { try store.sessions(room: room, endedFrom: from, before: before, limit: limit) }
    func interruptions(room: RoomID, from: Int64?, before: Int64?) throws(StoreError) -> [InterruptionRecord] {
        try store.interruptions(room: room, from: from, before: before)
    }
}

/// What is particular to PostgreSQL: migrations under a lock and their versions, durability settings,
/// connections that break, and messages that keep the password out.
@Suite(.onOwnThreads, .timeLimit(.minutes(TestTime.minutes(3))))
struct PostgresRoomStoreTests {
    let server: PostgresTestServer
    init() async throws { server = try await PostgresTestServer.shared }

    @Test func aFreshDatabaseGetsEveryMigrationOnceAndReopensWithoutRunningThemAgain() throws {
        let url = try server.makeDatabase()
        let store = try PostgresRoomStore.open(url: url)
        #expect(try store.appliedMigrations() == ["v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "api_tokens", "webhooks"])
        let first = try store.column(sql: "SELECT applied_at::text FROM schema_migrations ORDER BY version")
        try store.apply([.saveRoom(Sample.roomRecord(), passcode: nil)])
        let again = try PostgresRoomStore.open(url: url)
        #expect(try again.column(sql: "SELECT applied_at::text FROM schema_migrations ORDER BY version") == first)
        #expect(try again.loadRooms().count == 1)
    }

    @Test func aDatabaseFromANewerServerIsRefused() throws {
        let url = try server.makeDatabase()
        try PostgresRoomStore.open(url: url).execute(sql: "INSERT INTO schema_migrations (version) VALUES ('v9')")
        let error = #expect(throws: StoreError.self) { try PostgresRoomStore.open(url: url) }
        #expect(error?.message.contains("this database was migrated by a newer pomodoro-server (version v9); "
                                        + "upgrade the server") == true, "\(String(describing: error))")
    }

    /// Servers started together on one fresh database: the advisory lock makes them take turns, and every
    /// one of them opens.
    @Test func opensAtOnceOnAFreshDatabaseAllSucceed() throws {
        let url = try server.makeDatabase()
        let results = Locked<[Result<PostgresRoomStore, StoreError>]>([])
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            let result = Result { () throws(StoreError) in try PostgresRoomStore.open(url: url) }
            results.update { $0.append(result) }
        }
        #expect(results.current.count == 4)
        for result in results.current {
            let store = try result.get()
            #expect(try store.appliedMigrations() == ["v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "api_tokens", "webhooks"])
        }
    }

    /// A database left at v3 with plain tokens and a journal: v4 hashes the tokens as `ResumeToken.hash`
    /// does, and v5 builds the same totals the writer keeps.
    @Test func anOlderDatabaseIsMigratedAndKeepsItsData() throws {
        let (sessions, interruptions) = JournalFixtures.journal(seed: 4)
        let url = try server.makeDatabase()
        let old = try PostgresRoomStore.open(url: url, migratedUpTo: "v3")
        #expect(try old.appliedMigrations() == ["v1", "v2", "v3"])
        let token = "0123456789abcdef0123456789abcdef"
        try Self.saveRoomBeforeV8(Sample.roomRecord(), passcode: "pc", in: url)
        // At v3 the member's row holds the token itself, and there are no totals tables: rows go in by hand.
        let connection = try PostgresConnection(url)
        try connection.query("""
            INSERT INTO member (room_id, id, ord, name, token, task, away, connected, focus_completed, focus_ns,
                                interruptions, session_focus_ms)
            VALUES ($1, 'm1', 1, 'Ada', $2, '', false, true, 0, 0, 0, 0)
            """, [Sample.room.rawValue, token])
        try connection.execute("BEGIN")
        for session in sessions {
            let id = try connection.query("""
                INSERT INTO focus_session (room_id, started_at_ms, ended_at_ms, length_seconds)
                VALUES ($1, $2, $3, $4) RETURNING id
                """, [session.room.rawValue, String(session.startedAtMs), String(session.endedAtMs),
                      String(session.lengthSeconds)]).values[0][0]
            for (ord, p) in session.participants.enumerated() {
                try connection.query("INSERT INTO session_member VALUES ($1, $2, $3, $4, $5, $6)",
                                     [id, String(ord), p.member.rawValue, p.name, p.task, String(p.focusMs)])
            }
        }
        for i in interruptions {
            try connection.query("INSERT INTO interruption (room_id, member_id, name, at_ms) VALUES ($1, $2, $3, $4)",
                                 [i.room.rawValue, i.member?.rawValue, i.name, String(i.atMs)])
        }
        try connection.execute("COMMIT")

        let migrated = try PostgresRoomStore.open(url: url, retention: .keepEverything)
        #expect(try migrated.appliedMigrations() == ["v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "api_tokens", "webhooks"])
        #expect(try migrated.loadRoom(Sample.room)?.members.first?.tokenHash == ResumeToken(token).hash)
        #expect(try migrated.sessions(room: Sample.room, endedFrom: nil, before: nil, limit: nil) == sessions)
        #expect(try migrated.column(sql: "SELECT sessions || ' ' || interruptions FROM journal_size")
                == ["\(sessions.count) \(interruptions.count)"])

        let written = try PostgresRoomStore.open(url: try server.makeDatabase(), retention: .keepEverything)
        try written.apply(sessions.map(StoreChange.focusCompleted) + interruptions.map(StoreChange.interrupted))
        let range = 0..<Int64.max
        #expect(try migrated.journalTotals(room: Sample.room, quarters: range)
                == (try written.journalTotals(room: Sample.room, quarters: range)))
    }

    /// v3 gives the room's credited moment to the members present in a running focus, and to nobody else.
    @Test func v3GivesTheRoomsMomentOnlyToMembersEarningInARunningFocus() throws {
        let url = try server.makeDatabase()
        _ = try PostgresRoomStore.open(url: url, migratedUpTo: "v2")
        let running = roomID("team-a")
        let paused = roomID("team-c")
        try Self.saveRoomBeforeV8(Sample.roomRecord(running, timer: .running(endsAtMs: 1_795_001_500_000), phase: .focus),
                                  passcode: nil, in: url)
        try Self.saveRoomBeforeV8(Sample.roomRecord(paused, timer: .paused(remainingMs: 600_000), phase: .focus),
                                  passcode: nil, in: url)
        let connection = try PostgresConnection(url)
        for (room, id, away, connected) in [(running, "m1", false, true), (running, "m2", true, true),
                                            (running, "m3", false, false), (paused, "m1", false, true)] {
            try connection.query("""
                INSERT INTO member (room_id, id, ord, name, token, task, away, connected, focus_completed, focus_ns,
                                    interruptions, session_focus_ms)
                VALUES ($1, $2, 0, $2, 'token', '', $3, $4, 0, 0, 0, 0)
                """, [room.rawValue, id, String(away), String(connected)])
        }
        let store = try PostgresRoomStore.open(url: url)
        #expect(try store.loadRoom(running)?.members.map(\.creditedSinceMs) == [1_795_000_600_000, nil, nil],
                "m2 was away, m3 disconnected")
        #expect(try store.loadRoom(paused)?.members.map(\.creditedSinceMs) == [nil], "a paused focus credits nobody")
    }

    /// Every batch is durable when `apply` returns, whatever the database's default says.
    @Test func commitsAreSynchronousEvenWhereTheDatabaseSaysOtherwise() throws {
        let url = try server.makeDatabase()
        let name = String(url.split(separator: "/").last!)
        try PostgresConnection(server.url(database: "postgres"))
            .execute("ALTER DATABASE \(name) SET synchronous_commit = off")
        #expect(try PostgresConnection(url).query("SHOW synchronous_commit").values == [["off"]])
        let store = try PostgresRoomStore.open(url: url)
        #expect(try store.column(sql: "SHOW synchronous_commit") == ["on"])
        #expect(try store.loadRooms() == [])    // a reader too
    }

    /// The database ends every connection (a restart, a failover): the store makes new ones, and neither
    /// a write nor a read fails for it.
    @Test func brokenConnectionsAreReplaced() throws {
        let url = try server.makeDatabase()
        let store = try PostgresRoomStore.open(url: url)
        try store.apply([.saveRoom(Sample.roomRecord(seq: 1), passcode: nil)])
        #expect(try store.loadRoom(Sample.room)?.record.seq == 1)
        let name = String(url.split(separator: "/").last!)
        let ended = try PostgresConnection(server.url(database: "postgres")).query("""
            SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1
            """, [name])
        #expect(ended.count == 2, "the writer and one reader")
        try store.apply([.saveRoom(Sample.roomRecord(seq: 2), passcode: nil)])
        #expect(try store.loadRoom(Sample.room)?.record.seq == 2)
    }

    /// Reads at once share at most `maxReaders` connections: with the room table locked elsewhere, four
    /// reads wait in the database and the others wait for a connection; once the lock goes, all answer.
    @Test func readsAtOnceShareABoundedPool() throws {
        let url = try server.makeDatabase()
        let name = String(url.split(separator: "/").last!)
        let store = try PostgresRoomStore.open(url: url)
        try store.apply([.saveRoom(Sample.roomRecord(), passcode: nil)])
        let blocker = try PostgresConnection(url)
        try blocker.execute("BEGIN; LOCK TABLE room IN ACCESS EXCLUSIVE MODE")
        let reads = 8
        let answers = Locked<Int>(0)
        let done = DispatchGroup()
        for _ in 0..<reads {
            done.enter()
            Thread.detachNewThread {
                if (try? store.loadRooms().count) == 1 { answers.update { $0 += 1 } }
                done.leave()
            }
        }
        let observer = try PostgresConnection(server.url(database: "postgres"))
        func lockWaiters() throws -> Int {
            Int(try observer.query("""
                SELECT count(*) FROM pg_stat_activity WHERE datname = $1 AND wait_event_type = 'Lock'
                """, [name]).values[0][0] ?? "") ?? -1
        }
        let max = PostgresRoomStore.maxReaders
        let deadline = TestTime.deadline(20)
        while (try lockWaiters() != max || store.readerPool.waiting != reads - max) && Date() < deadline {
            usleep(10_000)
        }
        #expect(try lockWaiters() == max)
        #expect(store.readerPool.readers == max && store.readerPool.waiting == reads - max)
        try blocker.execute("COMMIT")
        #expect(done.wait(timeout: .now() + 20) == .success)
        #expect(answers.current == reads)
        #expect(store.readerPool.readers == max)
        store.close()
        #expect(store.readerPool.readers == 0)
        #expect(try store.loadRooms().count == 1, "a closed store connects again")
    }

    /// The writer's group commit over PostgreSQL: batches that queue up behind a running one go in together,
    /// and everything lands in the order it was enqueued.
    @Test func theStoreWriterGroupsWaitingBatchesAndKeepsTheirOrder() throws {
        let store = HeldStore(try PostgresRoomStore.open(url: try server.makeDatabase(), retention: .keepEverything))
        let writer = StoreWriter(store: store)
        let completed = Locked<[Int]>([])
        func interruption(_ n: Int) -> StoreChange {
            .interrupted(InterruptionRecord(room: Sample.room, member: nil, name: nil, atMs: Int64(n)))
        }
        writer.enqueue([.saveRoom(Sample.roomRecord(seq: 0), passcode: nil)]) { error in
            completed.update { $0.append(error == nil ? 0 : -1) }
        }
        #expect(waitFor(store.entered))
        for n in 1...20 {
            writer.enqueue([interruption(n), .saveRoom(Sample.roomRecord(seq: UInt64(n)), passcode: nil)]) { error in
                completed.update { $0.append(error == nil ? n : -n) }
            }
        }
        store.release.signal()
        writer.flush()
        #expect(completed.current == Array(0...20))
        // 20 interruptions and the room's row once: a group commit writes a row saved over and over once.
        #expect(store.applied == [1, 21], "the twenty waiting batches went in as one")
        #expect(try store.store.interruptions(room: Sample.room, from: nil, before: nil).map(\.atMs)
                == (1...20).map(Int64.init))
        #expect(try store.store.loadRoom(Sample.room)?.record.seq == 20, "the last save wins")
    }

    /// The writer's statements go prepared; when the server turns out not to have them (a pooler ran the
    /// transaction on another server connection), the batch is written again unprepared, and so are the
    /// next ones: nothing is lost or refused.
    @Test func aWriterWhosePreparedStatementsAreGoneStillWrites() throws {
        let store = try PostgresRoomStore.open(url: try server.makeDatabase())
        let session = Sample.session(endedAtMs: 1_795_000_000_000, participants: [Sample.participant("m1", "Ada")])
        try store.apply([.saveRoom(Sample.roomRecord(seq: 1), passcode: nil), .focusCompleted(session)])
        #expect(try store.column(sql: "SELECT count(*) FROM pg_prepared_statements") != ["0"])
        try store.execute(sql: "DEALLOCATE ALL")
        var later = session
        later.endedAtMs += 60_000
        try store.apply([.saveRoom(Sample.roomRecord(seq: 2), passcode: nil), .focusCompleted(later)])
        #expect(try store.loadRoom(Sample.room)?.record.seq == 2)
        #expect(try store.sessions(room: Sample.room, endedFrom: nil, before: nil, limit: nil) == [session, later])
        try store.apply([.saveRoom(Sample.roomRecord(seq: 3), passcode: nil)])
        #expect(try store.column(sql: "SELECT count(*) FROM pg_prepared_statements") == ["0"], "no longer prepared")
    }

    @Test func aRowThatDoesNotDecodeIsAStoreErrorNotACrash() throws {
        let store = try PostgresRoomStore.open(url: try server.makeDatabase())
        try store.apply([.saveRoom(Sample.roomRecord(), passcode: nil)])
        try store.execute(sql: "UPDATE room SET phase = 'nap'")
        let error = #expect(throws: StoreError.self) { try store.loadRooms() }
        #expect(error?.message.contains("nap") == true)
        #expect(throws: StoreError.self) { try store.loadRoom(Sample.room) }

        try store.execute(sql: "UPDATE room SET phase = 'focus', timer_kind = 'running', timer_ms = NULL")
        #expect(throws: StoreError.self) { try store.loadRooms() }

        try store.execute(sql: "UPDATE room SET timer_kind = 'idle', timer_ms = NULL, host = NULL, id = 'not a room id'")
        #expect(throws: StoreError.self) { try store.loadRooms() }
    }

    @Test func aServerThatIsNotThereIsAClearErrorWithoutThePassword() throws {
        let url = "postgres://pomodoro:s3cret-pw%21@127.0.0.1:1/none?connect_timeout=2"
        let error = #expect(throws: StoreError.self) { try PostgresRoomStore.open(url: url) }
        let message = error?.message ?? ""
        #expect(message.contains("could not connect to PostgreSQL"), "\(message)")
        #expect(message.contains("postgres://pomodoro:***@127.0.0.1:1/none"), "\(message)")
        #expect(!message.contains("s3cret"), "\(message)")
    }

    @Test func aDatabaseThatIsNotThereIsAClearErrorWithoutThePassword() throws {
        let url = "postgres://pomodoro:hunter2@127.0.0.1:\(server.port)/no_such_database"
        let error = #expect(throws: StoreError.self) { try PostgresRoomStore.open(url: url) }
        let message = error?.message ?? ""
        #expect(message.contains("no_such_database") && message.contains("does not exist"), "\(message)")
        #expect(!message.contains("hunter2"), "\(message)")
    }

    @Test(arguments: [
        ("postgres://u:pw@host:5432/db", "postgres://u:***@host:5432/db"),
        ("postgresql://u:p%40ss@host/db?sslmode=require", "postgresql://u:***@host/db?sslmode=require"),
        ("postgres://u@host/db?password=pw&sslmode=require", "postgres://u@host/db?password=***&sslmode=require"),
        ("postgres://u@host/db", "postgres://u@host/db"),
        ("host=db user=u password=pw dbname=x", "host=db user=u password=*** dbname=x"),
        ("host=db password='a b' dbname=x", "host=db password='***' dbname=x"),
    ])
    func urlsAreShownWithoutTheirPassword(url: String, shown: String) {
        #expect(PostgresRoomStore.redacted(url) == shown)
    }
}

extension PostgresRoomStoreTests {
    /// A room's row as servers before schema v8 wrote it, into a database left at an older version.
    static func saveRoomBeforeV8(_ record: RoomRecord, passcode: String?, in url: String) throws {
        let connection = try PostgresConnection(url)
        let columns = StoreSchema.roomColumnsBeforeV8
        let placeholders = (1...columns.count).map { "$\($0)" }.joined(separator: ", ")
        try connection.query("INSERT INTO room (\(columns.joined(separator: ", "))) VALUES (\(placeholders))",
                             RowCodec.valuesBeforeV8(of: record, passcode: passcode).map(\.parameter))
    }
}
