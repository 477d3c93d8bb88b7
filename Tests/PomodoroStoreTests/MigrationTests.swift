import Foundation
import Testing
import PomodoroCore
@testable import PomodoroStore
@testable import PomodoroSQLite
import PomodoroTestSupport

/// The schema from an empty file and from each earlier version, with the data an older server left.
@Suite struct MigrationTests {
    static let schema = [
        "api_token", "focus_session", "focus_session_by_room_end", "interruption", "interruption_by_room_time", "journal_day",
        "journal_quarter", "journal_size", "member", "room", "room_ban", "schedule", "session_member", "webhook",
        "webhook_outbox", "webhook_outbox_by_webhook", "webhook_outbox_due",
    ]
    static let schemaSQL = """
        SELECT name FROM sqlite_master
        WHERE type IN ('table', 'index') AND name NOT LIKE 'sqlite_%' AND name NOT LIKE 'grdb_%' ORDER BY name
        """

    @Test func anEmptyFileGetsEveryMigration() throws {
        try withStore { (store, _) throws in
            #expect(SQLiteRoomStore.migrationIdentifiers == ["v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "api_tokens", "webhooks"])
            #expect(try store.appliedMigrations() == SQLiteRoomStore.migrationIdentifiers)
            #expect(try store.column(sql: Self.schemaSQL) == Self.schema)
        }
    }

    /// Rows as the v1 schema took them, written in SQL rather than through today's code (member columns
    /// named, so the rows also go into a v3 table).
    static let v1Rows = """
        INSERT INTO room VALUES ('team-a', 1500, 300, 900, 4, 1, 3000, 600, 1200, 2, 0, 'focus', 'running',
            1795001234567, 1500000, 3, 12, 18000123456789, 4, 'host', 'm1', 5, 1795000000000, 1795000600000,
            -1, 'verifier');
        INSERT INTO room VALUES ('team-b', 1500, 300, 900, 4, 0, NULL, NULL, NULL, NULL, NULL, 'idle', 'idle',
            NULL, 0, 1, 0, 0, 0, 'anyone', NULL, 1, NULL, NULL, 0, NULL);
        INSERT INTO member (room_id, id, ord, name, token, task, away, connected, focus_completed, focus_ns, interruptions, session_focus_ms)
            VALUES ('team-a', 'm2', 1, 'Bob', 'token-b', '', 1, 0, 1, 2000000000, 3, 0);
        INSERT INTO member (room_id, id, ord, name, token, task, away, connected, focus_completed, focus_ns, interruptions, session_focus_ms)
            VALUES ('team-a', 'm1', 0, 'Ada', 'token-a', 'proofs', 0, 1, 2, 5000000001, 0, 600000);
        INSERT INTO focus_session (room_id, started_at_ms, ended_at_ms, length_seconds)
            VALUES ('team-a', 1794998500000, 1795000000000, 1500);
        INSERT INTO session_member VALUES (last_insert_rowid(), 0, 'm1', 'Ada', 'proofs', 1500000);
        INSERT INTO focus_session (room_id, started_at_ms, ended_at_ms, length_seconds)
            VALUES ('gone-room', 1000, 2000, 1);
        INSERT INTO interruption (room_id, member_id, name, at_ms) VALUES ('team-a', NULL, NULL, 1795000300000);
        INSERT INTO interruption (room_id, member_id, name, at_ms) VALUES ('team-a', 'm2', 'Bob', 1795000300000);
        """

    /// (From v3 on, the member table has another column: JournalTotalsTests builds a v3 journal.)
    @Test(arguments: ["v1", "v2"])
    func anOlderDatabaseIsMigratedAndKeepsItsData(version: String) throws {
        try withTemporaryFolder { (folder) throws in
            let path = folder.appendingPathComponent("pomodoro.sqlite").path
            let old = try SQLiteRoomStore.open(path: path, migratedUpTo: version)
            let applied = try old.appliedMigrations()
            #expect(applied.last == version)
            #expect(applied.count < SQLiteRoomStore.migrationIdentifiers.count)
            try old.execute(sql: Self.v1Rows)
            try old.close()

            let store = try SQLiteRoomStore.open(path: path)
            #expect(try store.appliedMigrations() == SQLiteRoomStore.migrationIdentifiers)
            #expect(try store.column(sql: Self.schemaSQL) == Self.schema)

            let rooms = try store.loadRooms()
            #expect(rooms.map(\.record.id.rawValue) == ["team-a", "team-b"])
            let a = try #require(rooms.first)
            #expect(a.record.timer == .running(endsAtMs: 1_795_001_234_567))
            #expect(a.record.pendingSettings == RoomSettings(focus: 3000, shortBreak: 600, longBreak: 1200,
                                                              longBreakEvery: 2, autoStart: false))
            #expect(a.record.seq == .max)
            #expect(a.record.stats.focusTime == .nanoseconds(18_000_123_456_789))
            #expect(a.passcode == "verifier")
            #expect(a.members.map(\.name) == ["Ada", "Bob"])
            #expect(a.members.last?.away == true)
            if version < "v3" {
                // v3: Ada was present in a running focus, credited up to the room's moment; Bob was away.
                #expect(a.members.map(\.creditedSinceMs) == [1_795_000_600_000, nil])
            }
            // v4: the tokens' hashes in place of the tokens.
            #expect(a.members.map(\.tokenHash) == [ResumeToken("token-a").hash, ResumeToken("token-b").hash])
            #expect(rooms.last?.record.pendingSettings == nil)
            #expect(rooms.last?.record.host == nil)

            #expect(try store.sessions(room: roomID("team-a"), endedFrom: nil, before: nil, limit: nil) == [
                FocusSessionRecord(room: roomID("team-a"), startedAtMs: 1_794_998_500_000, endedAtMs: 1_795_000_000_000,
                                   lengthSeconds: 1500, participants: [Sample.participant("m1", "Ada", task: "proofs")]),
            ])
            #expect(try store.sessions(room: roomID("gone-room"), endedFrom: nil, before: nil, limit: nil).count == 1)
            #expect(try store.interruptions(room: roomID("team-a"), from: nil, before: nil) == [
                InterruptionRecord(room: roomID("team-a"), member: nil, name: nil, atMs: 1_795_000_300_000),
                InterruptionRecord(room: roomID("team-a"), member: MemberID("m2"), name: "Bob", atMs: 1_795_000_300_000),
            ])
        }
    }

    /// v3 only takes over the room's moment for members present in a running focus.
    @Test func v3GivesTheRoomsMomentOnlyToMembersEarningInARunningFocus() throws {
        try withTemporaryFolder { (folder) throws in
            let path = folder.appendingPathComponent("pomodoro.sqlite").path
            let old = try SQLiteRoomStore.open(path: path, migratedUpTo: "v2")
            try old.execute(sql: Self.v1Rows)
            try old.execute(sql: """
                INSERT INTO room VALUES ('team-c', 1500, 300, 900, 4, 0, NULL, NULL, NULL, NULL, NULL, 'focus',
                    'paused', 600000, 1500000, 1, 0, 0, 0, 'anyone', 'm1', 2, 1795000000000, 1795000600000, 3, NULL);
                INSERT INTO member VALUES ('team-c', 'm1', 0, 'Cy', 'token-c', '', 0, 1, 0, 0, 0, 0);
                INSERT INTO member VALUES ('team-a', 'm3', 2, 'Dee', 'token-d', '', 0, 0, 0, 0, 0, 0);
                """)
            try old.close()
            let rooms = try SQLiteRoomStore.open(path: path).loadRooms()
            let a = try #require(rooms.first { $0.record.id.rawValue == "team-a" })
            #expect(a.members.map(\.creditedSinceMs) == [1_795_000_600_000, nil, nil], "Dee was disconnected")
            let c = try #require(rooms.first { $0.record.id.rawValue == "team-c" })
            #expect(c.members.map(\.creditedSinceMs) == [nil], "a paused focus credits nobody")
        }
    }

    /// After v4 no row holds a token, and a member still gets their place back with theirs.
    @Test func v4HashesTheTokensInPlaceAndMembersStillResume() throws {
        try withTemporaryFolder { (folder) throws in
            let path = folder.appendingPathComponent("pomodoro.sqlite").path
            let old = try SQLiteRoomStore.open(path: path, migratedUpTo: "v3")
            try old.execute(sql: Self.v1Rows)
            try old.close()
            let store = try SQLiteRoomStore.open(path: path)
            #expect(try store.column(sql: "SELECT token_sha256 FROM member ORDER BY id")
                    == [ResumeToken("token-a").hash, ResumeToken("token-b").hash])
            #expect(try store.column(sql: "SELECT name FROM pragma_table_info('member') WHERE name LIKE 'token%'")
                    == ["token_sha256"])
            let a = try #require(try store.loadRoom(roomID("team-a")))
            let room = Room(restoring: a.record, members: a.members, now: Instant(nanoseconds: 0),
                            wallOffsetNanoseconds: 1_795_000_000_000 * 1_000_000)
            #expect(room.hasMember(withToken: ResumeToken("token-a")))
            #expect(!room.hasMember(withToken: ResumeToken(ResumeToken("token-a").hash)))
        }
    }

    @Test func reopeningAnUpToDateDatabaseRunsNothingAgain() throws {
        try withTemporaryFolder { (folder) throws in
            let path = folder.appendingPathComponent("pomodoro.sqlite").path
            let first = try SQLiteRoomStore.open(path: path)
            try first.apply([.saveRoom(Sample.roomRecord(), passcode: nil)])
            try first.close()
            let second = try SQLiteRoomStore.open(path: path)
            #expect(try second.appliedMigrations() == SQLiteRoomStore.migrationIdentifiers)
            #expect(try second.loadRooms().count == 1)
        }
    }

    @Test func aDatabaseFromANewerServerIsRefused() throws {
        try withTemporaryFolder { (folder) throws in
            let path = folder.appendingPathComponent("pomodoro.sqlite").path
            let newer = try SQLiteRoomStore.open(path: path)
            try newer.execute(sql: "INSERT INTO grdb_migrations (identifier) VALUES ('v99')")
            try newer.close()
            let error = #expect(throws: StoreError.self) { try SQLiteRoomStore.open(path: path) }
            #expect(error?.message.contains("v99") == true)
            #expect(error?.message.contains("newer") == true)
        }
    }
}
