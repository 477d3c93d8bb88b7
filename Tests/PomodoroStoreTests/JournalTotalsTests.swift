import Foundation
import Testing
import PomodoroCore
@testable import PomodoroStore
@testable import PomodoroSQLite
import PomodoroTestSupport

/// Reports from running totals against reports from the whole journal, on generated journals that cross
/// daylight-saving changes in zones with whole-hour, half-hour and 45-minute offsets.
@Suite(.computing) struct JournalTotalsTests {
    static let zones = ["UTC", "Europe/Berlin", "Europe/London", "America/New_York", "America/Santiago",
                        "Australia/Lord_Howe", "Asia/Kathmandu", "Asia/Kolkata", "Pacific/Chatham",
                        "America/St_Johns", "Pacific/Kiritimati", "Pacific/Pago_Pago"]

    /// A generated journal (see `JournalFixtures.journal`).
    static func journal(seed: UInt64, room: RoomID = Sample.room) -> ([FocusSessionRecord], [InterruptionRecord]) {
        JournalFixtures.journal(seed: seed, room: room)
    }

    /// Moments to report at: inside each generated stretch, at its end, and long after.
    static let moments: [Int64] = [utcMs(2026, 3, 29, 0, 30), utcMs(2026, 4, 5, 23, 59), utcMs(2026, 4, 16, 13),
                                   utcMs(2026, 10, 25, 1, 15), utcMs(2026, 11, 2, 4, 45), utcMs(2026, 11, 9, 22),
                                   utcMs(2027, 6, 1)]

    static func compare(_ store: (any RoomStore)?, _ sessions: [FocusSessionRecord],
                        _ interruptions: [InterruptionRecord]) throws {
        for name in zones {
            let zone = try #require(TimeZone(identifier: name))
            for now in moments {
                for days in [1, 9, 366] {
                    let old = FocusReport.make(room: Sample.room, sessions: sessions, interruptions: interruptions,
                                               days: days, timeZone: zone, nowMs: now)
                    let range = FocusReport.quarterRange(days: days, timeZone: zone, nowMs: now)
                    let totals = try store?.journalTotals(room: Sample.room, quarters: range)
                        ?? JournalTotals.make(sessions: sessions, interruptions: interruptions, quarterRange: range)
                    let new = FocusReport.make(room: Sample.room, totals: totals, days: days, timeZone: zone, nowMs: now)
                    #expect(new == old, "\(name) at \(now), \(days) days")
                    if new != old { return }
                }
            }
        }
    }

    @Test(arguments: [1, 2, 3] as [UInt64])
    func totalsGiveTheSameReportAsTheJournal(seed: UInt64) throws {
        let (sessions, interruptions) = Self.journal(seed: seed)
        #expect(sessions.count > 150)
        try Self.compare(nil, sessions, interruptions)
    }

    /// The totals the writer keeps row by row, and those the migration builds from an older journal.
    @Test func theStoreKeepsTheTotalsAsItWritesAndTheMigrationBuildsThem() throws {
        let (sessions, interruptions) = Self.journal(seed: 4)
        let other = Self.journal(seed: 5, room: roomID("team-b"))
        try withTemporaryFolder { (folder) throws in
            let written = try SQLiteRoomStore.open(path: folder.appendingPathComponent("written.sqlite").path)
            let changes = sessions.map(StoreChange.focusCompleted) + interruptions.map(StoreChange.interrupted)
                + other.0.map(StoreChange.focusCompleted) + other.1.map(StoreChange.interrupted)
            for start in stride(from: 0, to: changes.count, by: 500) {
                try written.apply(Array(changes[start..<min(start + 500, changes.count)]))
            }
            try Self.compare(written, sessions, interruptions)

            let path = folder.appendingPathComponent("migrated.sqlite").path
            let old = try SQLiteRoomStore.open(path: path, migratedUpTo: "v3")
            var sql = ""
            var id = 0
            for session in sessions + other.0 {
                id += 1
                sql += "INSERT INTO focus_session (id, room_id, started_at_ms, ended_at_ms, length_seconds) VALUES "
                    + "(\(id), '\(session.room)', \(session.startedAtMs), \(session.endedAtMs), \(session.lengthSeconds));\n"
                for (ord, p) in session.participants.enumerated() {
                    sql += "INSERT INTO session_member VALUES (\(id), \(ord), '\(p.member)', '\(p.name)', '', \(p.focusMs));\n"
                }
            }
            for i in interruptions + other.1 {
                sql += "INSERT INTO interruption (room_id, member_id, name, at_ms) VALUES ('\(i.room)', "
                    + "\(i.member.map { "'\($0)'" } ?? "NULL"), \(i.name.map { "'\($0)'" } ?? "NULL"), \(i.atMs));\n"
            }
            try old.execute(sql: "BEGIN; \(sql) COMMIT;")
            try old.close()
            let migrated = try SQLiteRoomStore.open(path: path)
            try Self.compare(migrated, sessions, interruptions)
            #expect(try migrated.column(sql: "SELECT sessions FROM journal_size WHERE room_id = 'team-a'")
                    == [String(sessions.count)])
            #expect(try migrated.column(sql: "SELECT interruptions FROM journal_size WHERE room_id = 'team-a'")
                    == [String(interruptions.count)])
        }
    }

    /// Retention deletes the oldest rows, in batches, while the report stays what it was.
    @Test func retentionDeletesOldRowsAndTheReportStaysTheSame() throws {
        let (sessions, interruptions) = Self.journal(seed: 6)
        try withTemporaryFolder { (folder) throws in
            let path = folder.appendingPathComponent("pomodoro.sqlite").path
            let cap = 100
            let store = try SQLiteRoomStore.open(path: path, retention: JournalRetention(maxAgeDays: 30, maxRowsPerRoom: cap))
            // One write at a time, as the server writes: each deletes what is past the limits.
            for session in sessions { try store.apply([.focusCompleted(session)]) }
            for interruption in interruptions { try store.apply([.interrupted(interruption)]) }
            let kept = try store.sessions(room: Sample.room, endedFrom: nil, before: nil, limit: nil)
            #expect(kept.count <= cap)
            #expect(kept == Array(sessions.suffix(kept.count)), "the newest are kept")
            let last = try #require(sessions.last).endedAtMs
            #expect(kept.allSatisfy { $0.endedAtMs >= last - 30 * JournalTotals.dayMs })
            #expect(try store.interruptions(room: Sample.room, from: nil, before: nil).count <= cap)
            #expect(try store.column(sql: "SELECT count(*) FROM session_member")
                    == [String(kept.reduce(0) { $0 + $1.participants.count })], "participants go with their session")
            #expect(try store.column(sql: "SELECT sessions FROM journal_size") == [String(kept.count)])
            try Self.compare(store, sessions, interruptions)
        }
    }

    /// A room that writes no more is pruned by the sweep, in batches, down to the limits.
    @Test func theSweepPrunesRoomsThatNoLongerWrite() throws {
        let (sessions, interruptions) = Self.journal(seed: 7)
        try withTemporaryFolder { (folder) throws in
            let path = folder.appendingPathComponent("pomodoro.sqlite").path
            try SQLiteRoomStore.open(path: path, retention: .keepEverything)
                .apply(sessions.map(StoreChange.focusCompleted) + interruptions.map(StoreChange.interrupted))
            let store = try SQLiteRoomStore.open(path: path, retention: JournalRetention(maxAgeDays: nil, maxRowsPerRoom: 10))
            #expect(try store.pruneJournal(nowMs: utcMs(2027, 1, 1)) == sessions.count - 10 + interruptions.count - 10)
            #expect(try store.sessions(room: Sample.room, endedFrom: nil, before: nil, limit: nil) == Array(sessions.suffix(10)))
            #expect(try store.pruneJournal(nowMs: utcMs(2027, 1, 1)) == 0)
            try Self.compare(store, sessions, interruptions)
        }
    }
}
