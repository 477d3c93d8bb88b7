import Foundation
import PomodoroCore
import PomodoroPostgres
@testable import PomodoroStore
import PomodoroSQLite
import PomodoroTestSupport
import Testing

/// `pomodoro-server migrate` from an SQLite deployment into PostgreSQL: everything arrives, the counts are
/// checked, and a second run duplicates nothing.
@Suite(.onOwnThreads, .timeLimit(.minutes(TestTime.minutes(2))))
struct MigrateTests {
    /// Two rooms (one locked), three members, a journal of sessions and interruptions, in an SQLite file.
    static func deployment(at path: String) throws {
        let store = try SQLiteRoomStore.open(path: path)
        let other = roomID("team-b")
        let (sessions, interruptions) = JournalFixtures.journal(seed: 7)
        try store.apply([.saveRoom(Sample.roomRecord(), passcode: "pbkdf2-sha256$600000$00ff$" + String(repeating: "ab", count: 32)),
                         .saveMember(Sample.room, Sample.member(1, name: "Ada")),
                         .saveMember(Sample.room, Sample.member(2, name: "Lin", away: true, connected: false)),
                         .saveRoom(Sample.roomRecord(other, host: nil), passcode: nil),
                         .saveMember(other, Sample.member(3, name: "Zoë"))]
                        + sessions.map { .focusCompleted($0) } + interruptions.map { .interrupted($0) }
                        + [.focusCompleted(Sample.session(other, endedAtMs: utcMs(2026, 11, 2)))])
    }

    static func migrate(_ arguments: [String]) throws -> (status: Int32, output: String, errors: String) {
        let run = try ProcessLauncher.run(ProcessLauncher.server, ["migrate"] + arguments)
        return (run.status, run.output, run.errors)
    }

    @Test func aDeploymentMovesToPostgresOnceAndIsVerified() async throws {
        let url = try await PostgresTestServer.makeDatabase()
        try withTemporaryFolder { folder in
            let path = folder.appendingPathComponent("pomodoro.sqlite").path
            try Self.deployment(at: path)

            let first = try Self.migrate(["--from", "sqlite:\(path)", "--to", url])
            #expect(first.status == 0, "\(first.errors)")
            #expect(first.output.contains("verified"))
            let second = try Self.migrate(["--from", path, "--to", url])
            #expect(second.status == 0, "\(second.errors)")
            #expect(second.output.contains("copied 0 focus sessions and 0 interruptions"))

            // Every row is there once, and the stores answer alike.
            let source = try SQLiteRoomStore.open(path: path)
            let target = try PostgresRoomStore.open(url: url)
            defer { target.close() }
            #expect(try target.loadRooms() == source.loadRooms())
            for room in [Sample.room, roomID("team-b")] {
                #expect(try target.sessions(room: room, endedFrom: nil, before: nil, limit: nil)
                        == source.sessions(room: room, endedFrom: nil, before: nil, limit: nil))
                #expect(try target.interruptions(room: room, from: nil, before: nil)
                        == source.interruptions(room: room, from: nil, before: nil))
                let quarters: Range<Int64> = 0..<Int64.max / 900_000
                #expect(try target.journalTotals(room: room, quarters: quarters)
                        == source.journalTotals(room: room, quarters: quarters))
            }
        }
    }

    @Test func unusableArgumentsAreOneLineAndStatus78() throws {
        let bad = try Self.migrate(["--from", "mysql://x/y", "--to", "none"])
        #expect(bad.status == 78)
        #expect(bad.errors == "pomodoro-server migrate: 'mysql://' is not a database this server can use: give a file path, sqlite:PATH, postgres://USER@HOST/DBNAME or none\n")
        let same = try Self.migrate(["--from", "a.sqlite", "--to", "sqlite:a.sqlite"])
        #expect(same.status == 78)
    }

    @Test func anUnreachableTargetFailsWithoutThePassword() throws {
        try withTemporaryFolder { folder in
            let path = folder.appendingPathComponent("pomodoro.sqlite").path
            try Self.deployment(at: path)
            let result = try Self.migrate(["--from", path, "--to", "postgres://focus:hunter2@127.0.0.1:1/none?connect_timeout=2"])
            #expect(result.status == 1)
            #expect(result.errors.hasPrefix("pomodoro-server migrate: "))
            #expect(!result.errors.contains("hunter2") && !result.output.contains("hunter2"))
        }
    }
}
