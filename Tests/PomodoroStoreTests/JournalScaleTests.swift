import Foundation
import Testing
import PomodoroCore
@testable import PomodoroStore
@testable import PomodoroSQLite
import PomodoroTestSupport

/// A room that ran 1-second phases with auto-start for days: 200,000 sessions, written straight into an
/// older database, then migrated. A stats report must cost its days, not the journal.
@Suite struct JournalScaleTests {
    static let sessions = 200_000
    static let room = roomID("busy")
    static let start = utcMs(2026, 11, 1, 0)

    /// The journal as an old server left it: a session every 2 s, two members in each, one interruption
    /// every 100 sessions.
    static func oldJournal(at path: String) throws {
        let old = try SQLiteRoomStore.open(path: path, migratedUpTo: "v3")
        try old.execute(sql: """
            BEGIN;
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < \(sessions))
            INSERT INTO focus_session (id, room_id, started_at_ms, ended_at_ms, length_seconds)
            SELECT i, '\(room)', \(start) + i * 2000 - 1000, \(start) + i * 2000, 1 FROM n;
            INSERT INTO session_member (session_id, ord, member_id, name, task, focus_ms)
            SELECT id, 0, 'm1', 'Ada', 'writing the chapter on the journal', 1000 FROM focus_session;
            INSERT INTO session_member (session_id, ord, member_id, name, task, focus_ms)
            SELECT id, 1, 'm2', 'Bob', 'reviewing', 900 FROM focus_session;
            INSERT INTO interruption (room_id, member_id, name, at_ms)
            SELECT room_id, NULL, NULL, ended_at_ms - 500 FROM focus_session WHERE id % 100 = 0;
            COMMIT;
            """)
        try old.close()
    }

    /// Peak resident memory (VmHWM) reset to the current size, then read after `body`: what it added, in
    /// KiB. Other tests running meanwhile can only make it larger.
    static func peakGrowthKiB(_ body: () throws -> Void) throws -> Int {
        try "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8)
        let before = try status("VmRSS:")
        try body()
        return try status("VmHWM:") - before
    }

    static func status(_ key: String) throws -> Int {
        let text = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
        let line = try #require(text.split(separator: "\n").first { $0.hasPrefix(key) })
        let fields = line.dropFirst(key.count).split(whereSeparator: { $0 == " " || $0 == "\t" })
        return try #require(fields.first.flatMap { Int($0) })
    }

    @Test(.timeLimit(.minutes(TestTime.minutes(2))))
    func statsOfTwoHundredThousandSessionsCostTheirDaysNotTheJournal() throws {
        try withTemporaryFolder { (folder) throws in
            let path = folder.appendingPathComponent("pomodoro.sqlite").path
            try Self.oldJournal(at: path)
            let store = try SQLiteRoomStore.open(path: path)
            let now = Self.start + Int64(Self.sessions) * 2000 + 60_000
            let zone = try #require(TimeZone(identifier: "Europe/Berlin"))

            var report: FocusReport?
            var read: JournalTotals?
            let range = FocusReport.quarterRange(days: 14, timeZone: zone, nowMs: now)
            let grown = try Self.peakGrowthKiB {
                let totals = try store.journalTotals(room: Self.room, quarters: range)
                report = FocusReport.make(room: Self.room, totals: totals, days: 14, timeZone: zone, nowMs: now)
                read = totals
            }
            let r = try #require(report)
            // What the report read is one row per person and day, and per person and quarter of its window:
            // the room's and its two members' over the five days the journal spans, not its 200,000 rows.
            let totals = try #require(read)
            let daysSpanned = (Int64(Self.sessions) * 2000) / 86_400_000 + 2
            #expect(totals.days.count <= 3 * Int(daysSpanned), "\(totals.days.count) day rows")
            #expect(totals.quarters.count <= 3 * range.count, "\(totals.quarters.count) quarter rows")
            #expect(r.totals.focusSessions == Self.sessions)
            #expect(r.totals.focusSeconds == Self.sessions)
            #expect(r.totals.interruptions == Self.sessions / 100)
            #expect(r.days.reduce(0) { $0 + $1.focusSessions } == Self.sessions)
            #expect(r.members.map(\.name) == ["Ada", "Bob"])
            #expect(r.members.first?.totals.focusSeconds == Int64(Self.sessions))
            #expect(r.totals.longestStreak == 5)
            // Before the running totals this read the whole journal: 490 MB in a release build. A sanitizer's
            // allocator keeps what is freed for a while and adds its shadow, so its bound is looser (still an
            // eighth of the whole journal's).
            let bound = TestTime.underSanitizer ? 64 * 1024 : 32 * 1024
            #expect(grown < bound, "peak memory grew by \(grown) KiB")
        }
    }
}
