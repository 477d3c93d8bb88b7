import Foundation
import GRDB
import PomodoroCore
import PomodoroNet
import PomodoroProtocol
import PomodoroSQLite
import PomodoroStore
import PomodoroTestSupport
import Testing

/// `pomodoro-server backup` and `restore`, run as an admin would: every row of every table comes back, a
/// backup taken under a running server's writes is whole, and what cannot work is refused in one line.
@Suite(.onOwnThreads, .timeLimit(.minutes(2)))
struct BackupTests {
    /// Two rooms (one locked, with bans and schedules), three members, a journal of sessions and
    /// interruptions.
    static func deployment(at path: String) throws {
        let store = try SQLiteRoomStore.open(path: path)
        defer { try? store.close() }
        let other = roomID("team-b")
        let (sessions, interruptions) = JournalFixtures.journal(seed: 11)
        let made = WallTime(seconds: 1_795_608_000)
        let schedule = Schedule(id: ScheduleID(3), name: "Standup ✍️", time: try LocalTime(parsing: "09:30"),
                                zone: try ZoneName("Europe/Berlin"), recurrence: .weekly([.monday, .friday]),
                                length: .focusSessions(4), warningMinutes: 5, since: made)
        let bans = [BanRecord(nameKey: "ivo", tokenHash: ResumeToken("token-9").hash, untilMs: 1_795_000_600_000)]
        try store.apply([.saveRoom(Sample.roomRecord(), passcode: "pbkdf2-sha256$600000$00ff$" + String(repeating: "ab", count: 32)),
                         .saveMember(Sample.room, Sample.member(1, name: "Ada")),
                         .saveMember(Sample.room, Sample.member(2, name: "Lin", away: true, connected: false)),
                         .saveSchedules(Sample.room, [schedule]), .saveBans(Sample.room, bans),
                         .saveRoom(Sample.roomRecord(other, host: nil), passcode: nil),
                         .saveMember(other, Sample.member(3, name: "Zoë"))]
                        + sessions.map { .focusCompleted($0) } + interruptions.map { .interrupted($0) }
                        + [.focusCompleted(Sample.session(other, endedAtMs: utcMs(2026, 11, 2)))])
    }

    /// Every row of every table of `path`, each as its columns quoted by SQLite (blobs as X'…'), by table.
    static func rows(of path: String) throws -> [String: [String]] {
        var configuration = Configuration()
        configuration.readonly = true
        let queue = try DatabaseQueue(path: path, configuration: configuration)
        defer { try? queue.close() }
        return try queue.read { db in
            let tables = try String.fetchAll(db, sql: """
                SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name
                """)
            var all: [String: [String]] = [:]
            for table in tables {
                let columns = try String.fetchAll(db, sql: "SELECT name FROM pragma_table_info(?)", arguments: [table])
                let row = columns.map { "quote(\"\($0)\")" }.joined(separator: " || '|' || ")
                all[table] = try String.fetchAll(db, sql: "SELECT \(row) FROM \"\(table)\"").sorted()
            }
            return all
        }
    }

    static func command(_ arguments: [String]) throws -> ProcessResult {
        try ProcessLauncher.run(ProcessLauncher.server, arguments)
    }

    @Test func aRestoredStoreHoldsEveryRowOfTheOriginal() throws {
        try withTemporaryFolder { folder in
            let original = folder.appendingPathComponent("pomodoro.sqlite").path
            let backup = folder.appendingPathComponent("backup.sqlite").path
            let restored = folder.appendingPathComponent("restored/pomodoro.sqlite").path
            try Self.deployment(at: original)
            try FileManager.default.createDirectory(atPath: folder.appendingPathComponent("restored").path,
                                                    withIntermediateDirectories: true)

            let made = try Self.command(["backup", "--db", "sqlite:\(original)", "--to", backup])
            #expect(made.status == 0, "\(made)")
            #expect(made.output.contains("2 rooms, 3 members, 1 schedule, 1 ban"), "\(made.output)")
            #expect(!FileManager.default.fileExists(atPath: backup + "-wal"), "the backup is one file")
            let back = try Self.command(["restore", "--from", backup, "--db", restored])
            #expect(back.status == 0, "\(back)")

            let before = try Self.rows(of: original), after = try Self.rows(of: restored)
            #expect(Set(after.keys) == Set(before.keys))
            for table in ["room", "member", "schedule", "room_ban", "focus_session", "session_member", "interruption"] {
                #expect(!(before[table] ?? []).isEmpty, "the deployment has rows in \(table)")
            }
            for (table, rows) in before {
                #expect(after[table] == rows, "table \(table)")
            }
            // And the store reads the restored file as it reads the original.
            let source = try SQLiteRoomStore.open(path: original), target = try SQLiteRoomStore.open(path: restored)
            #expect(try target.loadRooms() == source.loadRooms())
            #expect(try target.loadSchedules() == source.loadSchedules())
        }
    }

    @Test func whatCannotWorkIsRefusedInOneLine() throws {
        try withTemporaryFolder { folder in
            let original = folder.appendingPathComponent("pomodoro.sqlite").path
            let backup = folder.appendingPathComponent("backup.sqlite").path
            try Self.deployment(at: original)
            let postgres = try Self.command(["backup", "--db", "postgres://focus:secret@db.example/pomodoro", "--to", backup])
            #expect(postgres.status == 78)
            #expect(postgres.errors.contains("pg_dump") && !postgres.errors.contains("secret"), "\(postgres.errors)")
            let missing = try Self.command(["backup", "--db", folder.appendingPathComponent("none.sqlite").path, "--to", backup])
            #expect(missing.status == 78 && missing.errors.contains("no database at"), "\(missing.errors)")

            let nowhere = try Self.command(["backup", "--db", original, "--to", folder.appendingPathComponent("no/such.sqlite").path])
            #expect(nowhere.status == 78 && nowhere.errors.contains("no folder"), "\(nowhere.errors)")
            #expect(try Self.command(["backup", "--db", original, "--to", backup]).status == 0)
            let again = try Self.command(["backup", "--db", original, "--to", backup])
            #expect(again.status == 78 && again.errors.contains("exists already"), "\(again.errors)")
            // Restoring over a database that holds rooms would mix two deployments.
            let over = try Self.command(["restore", "--from", backup, "--db", original])
            #expect(over.status == 78 && over.errors.contains("holds 2 rooms"), "\(over.errors)")
            let text = folder.appendingPathComponent("notes.txt").path
            try Data("not a database\n".utf8).write(to: URL(fileURLWithPath: text))
            let junk = try Self.command(["restore", "--from", text, "--db", folder.appendingPathComponent("new.sqlite").path])
            #expect(junk.status == 1 && junk.errors.hasPrefix("pomodoro-server restore: "), "\(junk.errors)")
            #expect(junk.errors.split(separator: "\n").count == 1, "\(junk.errors)")
        }
    }

    /// A server runs on the database and a member writes to it (each task change is a commit) while backups
    /// are taken: each backup is whole, restores, and holds the room as of some commit, later each time.
    @Test func aBackupTakenWhileTheServerWritesIsWhole() throws {
        try withTemporaryFolder { folder in
            let db = folder.appendingPathComponent("pomodoro.sqlite").path
            let process = try ProcessLauncher.start(ProcessLauncher.server,
                                                    ["--port", "0", "--host", "127.0.0.1", "--db", db, "--log-level", "warning",
                                                     "--messages-per-second", "1000", "--message-burst", "1000"])
            defer { _ = process.stop() }
            let port = try process.waitUntilServing()
            let client = try WebSocketClient()
            client.start()
            defer { client.stop(); client.waitUntilFinished() }
            let peer = try Peer(client, port: port)
            _ = try peer.join("busy", name: "Ada")

            // The member's changes go on, one every 2 ms, for as long as the backups take.
            let writing = Locked(true)
            let writer = Thread {
                var n = 0
                while writing.current {
                    n += 1
                    peer.send(.task(text: "task \(n)"))
                    usleep(2_000)
                }
            }
            writer.start()
            defer { writing.update { $0 = false } }

            var tasks: [Int] = []
            for round in 0..<3 {
                usleep(200_000)   // letting the writes run between backups, not ordering the test's steps
                let backup = folder.appendingPathComponent("backup-\(round).sqlite").path
                let restored = folder.appendingPathComponent("restored-\(round).sqlite").path
                let made = try Self.command(["backup", "--db", db, "--to", backup])
                #expect(made.status == 0 && made.output.contains("1 room, 1 member"), "\(made)")
                let back = try Self.command(["restore", "--from", backup, "--db", restored])
                #expect(back.status == 0, "\(back)")
                let store = try SQLiteRoomStore.open(path: restored)
                let room = try #require(try store.loadRoom(roomID("busy")))
                let task = try #require(room.members.first?.task)
                tasks.append(Int(task.dropFirst("task ".count)) ?? 0)
            }
            writing.update { $0 = false }
            #expect(tasks.allSatisfy { $0 > 0 } && tasks == tasks.sorted() && Set(tasks).count == 3,
                    "each backup caught the writes as they were then: \(tasks)")
        }
    }
}
