import Foundation
import Testing
import PomodoroCore
import PomodoroStore
import PomodoroSQLite
@testable import PomodoroPostgres
import PomodoroTestSupport

/// The same scenarios against `SQLiteRoomStore` and `PostgresRoomStore`: both must give the same answers
/// (and, where the answer is known, the right one).
@Suite(.onOwnThreads, .timeLimit(.minutes(TestTime.minutes(5))))
struct StoreConformanceTests {
    let server: PostgresTestServer

    /// The shared server, awaited rather than waited for: see `PostgresTestServer.shared`.
    init() async throws { server = try await PostgresTestServer.shared }

    /// A fresh SQLite store in a temporary folder and a fresh PostgreSQL store, both with `retention`.
    func withBothStores<T>(retention: JournalRetention = .standard,
                           _ body: (SQLiteRoomStore, PostgresRoomStore) throws -> T) throws -> T {
        let url = try server.makeDatabase()
        return try withTemporaryFolder { (folder) throws in
            let sqlite = try SQLiteRoomStore.open(path: folder.appendingPathComponent("pomodoro.sqlite").path,
                                                  retention: retention)
            return try body(sqlite, try PostgresRoomStore.open(url: url, retention: retention))
        }
    }

    func applyToBoth(_ stores: (SQLiteRoomStore, PostgresRoomStore), _ changes: [StoreChange],
                     batch: Int = 500) throws {
        for start in stride(from: 0, to: changes.count, by: batch) {
            let slice = Array(changes[start..<min(start + batch, changes.count)])
            try stores.0.apply(slice)
            try stores.1.apply(slice)
        }
    }

    @Test func roomsAndMembersRoundTripAlike() throws {
        try withBothStores { sqlite, postgres in
            let other = roomID("team-b")
            var members = [Sample.member(1, name: "Ada"), Sample.member(2, name: "Émile ✓", away: true),
                           Sample.member(3, name: "Lin; DROP TABLE room; --", joinOrder: 0, connected: false)]
            members[0].creditedSinceMs = 1_795_000_100_000
            let changes: [StoreChange] = [
                .saveRoom(Sample.roomRecord(timer: .running(endsAtMs: 1_795_000_900_000), phase: .focus,
                                            pending: RoomSettings(focus: 600, shortBreak: 60, longBreak: 120,
                                                                  longBreakEvery: 2, autoStart: false),
                                            seq: UInt64.max - 3),
                          passcode: "scrypt$opaque$verifier"),
                .saveRoom(Sample.roomRecord(other, timer: .paused(remainingMs: 42), phase: .shortBreak, host: nil),
                          passcode: nil),
                .saveMember(Sample.room, members[0]), .saveMember(Sample.room, members[1]),
                .saveMember(Sample.room, members[2]), .saveMember(other, Sample.member(4, name: "Bob")),
                .saveMember(other, Sample.member(5, name: "Cy")), .removeMember(other, MemberID("m4")),
                // Saving again updates in place and keeps the members.
                .saveRoom(Sample.roomRecord(other, timer: .ready(remainingMs: 7), phase: .longBreak, host: nil, seq: 9),
                          passcode: "changed"),
            ]
            try applyToBoth((sqlite, postgres), changes)
            let rooms = try postgres.loadRooms()
            #expect(rooms == (try sqlite.loadRooms()))
            #expect(rooms.map(\.record.id) == [Sample.room, other])
            #expect(rooms[0].members.map(\.id) == [MemberID("m3"), MemberID("m1"), MemberID("m2")], "join order")
            #expect(rooms[0].members.first { $0.id == MemberID("m1") } == members[0])
            #expect(rooms[0].passcode == "scrypt$opaque$verifier" && rooms[1].passcode == "changed")
            #expect(rooms[0].record.seq == UInt64.max - 3)
            #expect(rooms[1].members.map(\.id) == [MemberID("m5")])
            for id in [Sample.room, other, roomID("nowhere")] {
                #expect(try postgres.loadRoom(id) == (try sqlite.loadRoom(id)))
            }
            #expect(try postgres.loadRoom(roomID("nowhere")) == nil)
        }
    }

    /// Members saved one after the other go in multi-row upserts (`RowsStatement`): a run longer than one
    /// statement's rows, and a member saved twice in a run (an upsert may touch a row once per statement), come
    /// back as saved last, in both stores.
    @Test func longRunsOfMembersAndAMemberSavedTwiceComeBackAsSavedLast() throws {
        try withBothStores { sqlite, postgres in
            let many = (1...150).map { Sample.member($0, name: "Member \($0)") }
            var renamed = many[1]
            renamed.name = "Renamed"
            renamed.away = true
            let changes: [StoreChange] = [.saveRoom(Sample.roomRecord(timer: .running(endsAtMs: 1_795_000_900_000),
                                                                      phase: .focus), passcode: nil)]
                + many.prefix(3).map { .saveMember(Sample.room, $0) }
                + [.saveMember(Sample.room, renamed)]
                + many.dropFirst(3).map { .saveMember(Sample.room, $0) }
            try applyToBoth((sqlite, postgres), changes)
            let room = try #require(try postgres.loadRoom(Sample.room))
            #expect(room == (try sqlite.loadRoom(Sample.room)))
            #expect(room.members.count == 150)
            #expect(room.members.first { $0.id == renamed.id } == renamed)
            #expect(room.members.first { $0.id == many[149].id } == many[149])
        }
    }

    /// Text comes back in byte order, as from SQLite, even from a database that sorts by a language's
    /// rules (where '-' and '_' count for little and case comes after the letter).
    @Test func orderIsTheSameWhateverTheDatabaseCollation() throws {
        let url = try server.makeDatabase(icuLocale: "en-US")
        try withTemporaryFolder { (folder) throws in
            let sqlite = try SQLiteRoomStore.open(path: folder.appendingPathComponent("pomodoro.sqlite").path)
            let postgres = try PostgresRoomStore.open(url: url)
            let rooms = ["a-c", "ab", "a_b", "B", "a"].map(roomID)
            var changes = rooms.map { StoreChange.saveRoom(Sample.roomRecord($0, host: nil), passcode: nil) }
            for room in rooms {
                for (number, name) in ["bob", "Bob", "Ábel", "zed", "Zoë", "a-b", "ab"].enumerated() {
                    var member = Sample.member(number, name: name, joinOrder: 1)
                    member.id = MemberID(["m-1", "m1", "M1", "m_1", "m10", "m2", "m"][number])
                    changes.append(.saveMember(room, member))
                }
                changes.append(.focusCompleted(Sample.session(room, endedAtMs: 5000, participants: [
                    Sample.participant("m1", "bob"), Sample.participant("m2", "Bob"), Sample.participant("m3", "Ábel"),
                    Sample.participant("m4", "zed"), Sample.participant("m5", "Zoë"), Sample.participant("m6", "a-b"),
                    Sample.participant("m7", "ab"),
                ])))
            }
            try applyToBoth((sqlite, postgres), changes)
            #expect(try postgres.loadRooms() == (try sqlite.loadRooms()))
            for room in rooms {
                #expect(try postgres.loadRoom(room) == (try sqlite.loadRoom(room)))
                #expect(try postgres.journalTotals(room: room, quarters: 0..<Int64.max)
                        == (try sqlite.journalTotals(room: room, quarters: 0..<Int64.max)))
            }
        }
    }

    @Test func aBatchWithAFailingChangeLeavesNothingInEither() throws {
        try withBothStores { sqlite, postgres in
            try applyToBoth((sqlite, postgres), [.saveRoom(Sample.roomRecord(seq: 1), passcode: nil)])
            let batch: [StoreChange] = [
                .saveRoom(Sample.roomRecord(seq: 2), passcode: nil),
                .saveMember(Sample.room, Sample.member(1, name: "Ada")),
                .focusCompleted(Sample.session(endedAtMs: 5000, participants: [Sample.participant("m1", "Ada")])),
                .interrupted(InterruptionRecord(room: Sample.room, member: nil, name: nil, atMs: 4000)),
                .saveMember(roomID("no-such-room"), Sample.member(2, name: "Bob")),    // no room row: foreign key
            ]
            #expect(throws: StoreError.self) { try sqlite.apply(batch) }
            let error = #expect(throws: StoreError.self) { try postgres.apply(batch) }
            #expect(error?.message.contains("foreign key") == true, "\(String(describing: error))")
            #expect(try postgres.loadRooms() == [StoredRoom(record: Sample.roomRecord(seq: 1), members: [], passcode: nil)])
            #expect(try postgres.loadRooms() == (try sqlite.loadRooms()))
            #expect(try postgres.sessions(room: Sample.room, endedFrom: nil, before: nil, limit: nil) == [])
            #expect(try postgres.journalTotals(room: Sample.room, quarters: 0..<Int64.max).days == [])
            #expect(try postgres.column(sql: "SELECT count(*) FROM session_member") == ["0"])
            // The writer connection is still good for the next batch.
            try postgres.apply([.saveRoom(Sample.roomRecord(seq: 3), passcode: nil)])
            #expect(try postgres.loadRoom(Sample.room)?.record.seq == 3)
        }
    }

    /// Sessions and interruptions of a generated journal (two rooms), read back through every query with
    /// bounds and limits; totals and reports for a zone with a daylight-saving change and one with a
    /// 45-minute offset.
    @Test func theJournalReadsBackAlike() throws {
        let (sessions, interruptions) = JournalFixtures.journal(seed: 11)
        let other = JournalFixtures.journal(seed: 12, room: roomID("team-b"))
        try withBothStores(retention: .keepEverything) { sqlite, postgres in
            try applyToBoth((sqlite, postgres), sessions.map(StoreChange.focusCompleted)
                            + interruptions.map(StoreChange.interrupted)
                            + other.0.map(StoreChange.focusCompleted) + other.1.map(StoreChange.interrupted))
            let all = try postgres.sessions(room: Sample.room, endedFrom: nil, before: nil, limit: nil)
            #expect(all == sessions)
            #expect(try postgres.interruptions(room: Sample.room, from: nil, before: nil) == interruptions)
            let middle = sessions[sessions.count / 2].endedAtMs
            let bounds: [(Int64?, Int64?)] = [(nil, nil), (middle, nil), (nil, middle), (middle - 86_400_000, middle),
                                              (middle, middle), (utcMs(2030, 1, 1), nil)]
            for (from, before) in bounds {
                for limit in [nil, 0, 1, 7, 10_000] as [Int?] {
                    #expect(try postgres.sessions(room: Sample.room, endedFrom: from, before: before, limit: limit)
                            == (try sqlite.sessions(room: Sample.room, endedFrom: from, before: before, limit: limit)),
                            "\(String(describing: from))..<\(String(describing: before)) limit \(String(describing: limit))")
                }
                #expect(try postgres.interruptions(room: Sample.room, from: from, before: before)
                        == (try sqlite.interruptions(room: Sample.room, from: from, before: before)))
            }
            #expect(try postgres.sessions(room: roomID("team-b"), endedFrom: nil, before: nil, limit: 5)
                    == Array(other.0.suffix(5)))

            // The last Sunday of October 2026 (Berlin leaves summer time) and Kathmandu's +5:45.
            let moments = [utcMs(2026, 10, 25, 0, 30), utcMs(2026, 10, 25, 1, 15), utcMs(2026, 10, 26, 23),
                           utcMs(2026, 11, 9, 22), utcMs(2027, 6, 1)]
            for name in ["Europe/Berlin", "Asia/Kathmandu"] {
                let zone = try #require(TimeZone(identifier: name))
                for now in moments {
                    for days in [1, 9, 366] {
                        let range = FocusReport.quarterRange(days: days, timeZone: zone, nowMs: now)
                        let totals = try postgres.journalTotals(room: Sample.room, quarters: range)
                        #expect(totals == (try sqlite.journalTotals(room: Sample.room, quarters: range)),
                                "\(name) at \(now), \(days) days")
                        let report = FocusReport.make(room: Sample.room, totals: totals, days: days, timeZone: zone,
                                                      nowMs: now)
                        #expect(report == FocusReport.make(room: Sample.room, sessions: sessions,
                                                           interruptions: interruptions, days: days, timeZone: zone,
                                                           nowMs: now), "\(name) at \(now), \(days) days")
                    }
                }
            }
        }
    }

    /// 300 sessions of 20 members with 200-character tasks (about 2.7 MB): pages cut at the byte cap and by
    /// count, the same in both stores.
    @Test func historyPagesAreCutAlike() throws {
        let sessions: [FocusSessionRecord] = (0..<300).map { number in
            Sample.session(endedAtMs: utcMs(2026, 11, 1) + Int64(number) * 60_000, lengthSeconds: 60,
                           participants: (0..<20).map { member in
                               Sample.participant("m\(member)", "member \(member)",
                                                  task: String(repeating: "t", count: 200), focusMs: 60_000)
                           })
        }
        try withBothStores { sqlite, postgres in
            try applyToBoth((sqlite, postgres), sessions.map(StoreChange.focusCompleted), batch: 100)
            for (limit, maxBytes) in [(1000, HistoryPage.maxBytes), (2, HistoryPage.maxBytes), (50, 20_000), (0, 100)] {
                var before: Int64?
                var pages: [HistoryPage] = []
                repeat {
                    let page = try postgres.historyPage(room: Sample.room, before: before, limit: limit, maxBytes: maxBytes)
                    #expect(page == (try sqlite.historyPage(room: Sample.room, before: before, limit: limit,
                                                            maxBytes: maxBytes)))
                    pages.append(page)
                    before = page.nextBefore
                } while before != nil && pages.count < 200
                if limit > 0 { #expect(pages.flatMap(\.sessions) == sessions.reversed(), "limit \(limit)") }
            }
            #expect(try postgres.historyPage(room: roomID("empty"), before: nil, limit: 3, maxBytes: 10)
                    == HistoryPage(sessions: [], more: false))
        }
    }

    /// Retention by age and by count, as the writer applies it one write at a time, then the sweep: the same
    /// rows are kept in both stores, and the totals still count the deleted ones.
    @Test func retentionKeepsTheSameRows() throws {
        let (sessions, interruptions) = JournalFixtures.journal(seed: 6)
        let retention = JournalRetention(maxAgeDays: 30, maxRowsPerRoom: 100)
        try withBothStores(retention: retention) { sqlite, postgres in
            for change in sessions.map(StoreChange.focusCompleted) + interruptions.map(StoreChange.interrupted) {
                try sqlite.apply([change])
                try postgres.apply([change])
            }
            let kept = try postgres.sessions(room: Sample.room, endedFrom: nil, before: nil, limit: nil)
            #expect(kept.count <= 100 && kept.count > 0)
            #expect(kept == Array(sessions.suffix(kept.count)), "the newest are kept")
            #expect(kept == (try sqlite.sessions(room: Sample.room, endedFrom: nil, before: nil, limit: nil)))
            #expect(try postgres.interruptions(room: Sample.room, from: nil, before: nil)
                    == (try sqlite.interruptions(room: Sample.room, from: nil, before: nil)))
            #expect(try postgres.column(sql: "SELECT count(*) FROM session_member")
                    == [String(kept.reduce(0) { $0 + $1.participants.count })], "participants go with their session")
            #expect(try postgres.column(sql: "SELECT sessions FROM journal_size") == [String(kept.count)])
            let range = 0..<Int64.max
            let totals = try postgres.journalTotals(room: Sample.room, quarters: range)
            #expect(totals == (try sqlite.journalTotals(room: Sample.room, quarters: range)))
            // Quarters keep no first and last ends (the report takes those from the days).
            var expected = JournalTotals.make(sessions: sessions, interruptions: interruptions, quarterRange: range)
            expected.quarters = expected.quarters.map { JournalTotals.Bucket(
                name: $0.name, index: $0.index, sessions: $0.sessions, focusMs: $0.focusMs,
                interruptions: $0.interruptions) }
            #expect(totals == expected, "the totals count every row ever written")
        }
    }

    /// Retention by count alone, as the writer applies it in batches of several rooms (whether any room is
    /// over the cap is asked once per batch): the same rows are kept in both stores, in each room.
    @Test func retentionByCountAloneKeepsTheSameRowsInEveryRoom() throws {
        let rooms = [Sample.room, roomID("team-b")]
        let journals = rooms.enumerated().map { JournalFixtures.journal(seed: 8 + UInt64($0.offset), room: $0.element) }
        let each = journals.map { $0.0.map(StoreChange.focusCompleted) + $0.1.map(StoreChange.interrupted) }
        // The rooms' changes taken in turn, so that most batches write to both.
        var changes: [StoreChange] = []
        for index in 0..<each.map(\.count).max()! { for list in each where index < list.count { changes.append(list[index]) } }
        try withBothStores(retention: JournalRetention(maxAgeDays: nil, maxRowsPerRoom: 25)) { sqlite, postgres in
            try applyToBoth((sqlite, postgres), changes, batch: 7)
            for (room, (sessions, _)) in zip(rooms, journals) {
                let kept = try postgres.sessions(room: room, endedFrom: nil, before: nil, limit: nil)
                #expect(sessions.count > 25)
                #expect(kept == Array(sessions.suffix(25)), "the newest 25 are kept")
                #expect(kept == (try sqlite.sessions(room: room, endedFrom: nil, before: nil, limit: nil)))
                #expect(try postgres.interruptions(room: room, from: nil, before: nil)
                        == (try sqlite.interruptions(room: room, from: nil, before: nil)))
            }
            #expect(try postgres.column(sql: "SELECT sessions FROM journal_size ORDER BY room_id") == ["25", "25"])
        }
    }

    @Test func theSweepPrunesAlike() throws {
        let (sessions, interruptions) = JournalFixtures.journal(seed: 7)
        let changes = sessions.map(StoreChange.focusCompleted) + interruptions.map(StoreChange.interrupted)
        let url = try server.makeDatabase()
        try withTemporaryFolder { (folder) throws in
            let path = folder.appendingPathComponent("pomodoro.sqlite").path
            try SQLiteRoomStore.open(path: path, retention: .keepEverything).apply(changes)
            try PostgresRoomStore.open(url: url, retention: .keepEverything).apply(changes)
            let retention = JournalRetention(maxAgeDays: nil, maxRowsPerRoom: 10)
            let sqlite = try SQLiteRoomStore.open(path: path, retention: retention)
            let postgres = try PostgresRoomStore.open(url: url, retention: retention)
            let now = utcMs(2027, 1, 1)
            let deleted = try postgres.pruneJournal(nowMs: now)
            #expect(deleted == sessions.count - 10 + interruptions.count - 10)
            #expect(deleted == (try sqlite.pruneJournal(nowMs: now)))
            #expect(try postgres.sessions(room: Sample.room, endedFrom: nil, before: nil, limit: nil)
                    == Array(sessions.suffix(10)))
            #expect(try postgres.interruptions(room: Sample.room, from: nil, before: nil)
                    == (try sqlite.interruptions(room: Sample.room, from: nil, before: nil)))
            #expect(try postgres.pruneJournal(nowMs: now) == 0)
            #expect(try postgres.journalTotals(room: Sample.room, quarters: 0..<Int64.max)
                    == (try sqlite.journalTotals(room: Sample.room, quarters: 0..<Int64.max)))
        }
    }
}
