import Testing
import PomodoroCore

/// A clock-aligned room on a manual clock: its phases sit on the wall clock's grid, in the room's zone.
@Suite struct AlignedRoomTests {
    /// Thursday 2026-01-01 09:10:00 UTC, as wall-clock seconds.
    static let nineTen: Int64 = 1_767_258_600

    /// A room whose wall clock reads `wall` seconds (plus `extraNs`) at the manual clock's origin.
    private func room(_ settings: RoomSettings, wall: Int64 = nineTen, extraNs: Int64 = 0) -> TestRoom {
        var t = TestRoom(settings: settings)
        t.room.wallOffsetNanoseconds = wall * 1_000_000_000 + extraNs - ManualClock.origin.nanoseconds
        return t
    }

    private func wallSeconds(_ t: TestRoom, _ instant: Instant) -> Int64 {
        (instant.nanoseconds + t.room.wallOffsetNanoseconds) / 1_000_000_000
    }

    private func aligned(_ zone: String, focus: Int = 1500, shortBreak: Int = 300) throws -> RoomSettings {
        RoomSettings(focus: focus, shortBreak: shortBreak, aligned: try ZoneName(zone))
    }

    @Test func aStartMidFocusRunsToTheHalfHourThenBreaksAndFocusesOnTheClock() throws {
        var t = room(try aligned("Europe/Berlin"))  // 10:10 in Berlin: the 10:00 focus is under way
        let ada = try t.add("Ada")
        try t.send(.start, by: ada)
        #expect(t.room.phase == .focus)
        let deadline = try #require(t.deadline)
        #expect(wallSeconds(t, deadline) == Self.nineTen + 15 * 60, "ends at 10:25 Berlin, 09:25 UTC")
        #expect(t.room.phaseLength == .seconds(15 * 60), "what is left of the clock's focus")
        t.advance(to: deadline)
        #expect(t.room.phase == .shortBreak && t.room.status == .running, "the break follows by itself")
        t.advance(by: .seconds(300))
        #expect(t.room.phase == .focus && t.room.status == .running)
        #expect(t.deadline.map { wallSeconds(t, $0) } == Self.nineTen + 45 * 60, "10:30 to 10:55 Berlin")
        #expect(t.room.phaseLength == .seconds(1500))
    }

    @Test func aStartInTheClocksBreakRunsTheBreakToTheNextFocus() throws {
        var t = room(try aligned("UTC"), wall: Self.nineTen + 17 * 60 + 30)  // 09:27:30
        let ada = try t.add("Ada")
        try t.send(.start, by: ada)
        #expect(t.room.phase == .shortBreak)
        #expect(t.deadline.map { wallSeconds(t, $0) } == Self.nineTen + 20 * 60, "to 09:30")
    }

    @Test func fiftyTenFocusesOnTheHourAndTakesNoLongBreak() throws {
        var t = room(try aligned("America/New_York", focus: 3000, shortBreak: 600))
        let ada = try t.add("Ada")
        try t.send(.start, by: ada)  // 04:10 in New York
        #expect(t.deadline.map { wallSeconds(t, $0) } == Self.nineTen + 40 * 60, "to 04:50")
        for _ in 0..<8 {
            let outcome = t.advance(to: t.deadline!)
            #expect(!outcome.completions.contains { $0.next == .longBreak })
        }
        #expect(t.room.phase == .focus)
        #expect(t.deadline.map { (wallSeconds(t, $0) - 3000) % 3600 } == 0, "a focus starts on the hour")
    }

    @Test func theGridIsTheZonesNotUTC() throws {
        // Kolkata is UTC+05:30: 09:10 UTC is 14:40 there, in the 14:00 focus (to 14:50).
        var t = room(try aligned("Asia/Kolkata", focus: 3000, shortBreak: 600))
        let ada = try t.add("Ada")
        try t.send(.start, by: ada)
        #expect(t.room.phase == .focus)
        #expect(t.deadline.map { wallSeconds(t, $0) } == Self.nineTen + 10 * 60, "14:50 Kolkata, 09:20 UTC")
    }

    @Test func aBoundaryIsExactToTheNanosecond() throws {
        // The wall clock is 0.4 s past 09:10:00: the focus still ends on the clock's second.
        var t = room(try aligned("UTC"), extraNs: 400_000_000)
        let ada = try t.add("Ada")
        try t.send(.start, by: ada)
        let deadline = try #require(t.deadline)
        #expect(deadline.nanoseconds + t.room.wallOffsetNanoseconds == (Self.nineTen + 15 * 60) * 1_000_000_000)
    }

    @Test func extendIsRefusedAndResumeJoinsTheClock() throws {
        var t = room(try aligned("UTC"))
        let ada = try t.add("Ada")
        try t.send(.start, by: ada)
        #expect(throws: RoomError.invalidState("an aligned room keeps to the clock: it cannot be extended")) {
            try t.send(.extend(seconds: 60), by: ada)
        }
        try t.send(.pause, by: ada)
        t.advance(by: .seconds(12 * 60))  // paused until 09:22
        try t.send(.resume, by: ada)
        #expect(t.room.phase == .focus)
        #expect(t.deadline.map { wallSeconds(t, $0) } == Self.nineTen + 15 * 60, "still to 09:25")
    }

    @Test func skippingAFocusBreaksUntilTheNextFocusOnTheClock() throws {
        var t = room(try aligned("UTC"))
        let ada = try t.add("Ada")
        try t.send(.start, by: ada)
        try t.send(.skip, by: ada)
        #expect(t.room.phase == .shortBreak)
        #expect(t.deadline.map { wallSeconds(t, $0) } == Self.nineTen + 20 * 60, "to 09:30")
    }

    @Test func withNobodyConnectedTheNextPhaseWaitsAndAStartRejoinsTheClock() throws {
        var t = room(try aligned("UTC"))
        let ada = try t.add("Ada")
        try t.send(.start, by: ada)
        _ = t.room.disconnect(ada, now: t.now)
        t.advance(to: t.deadline!)
        #expect(t.room.status == .ready && t.room.phase == .shortBreak)
        t.advance(by: .seconds(40 * 60))  // 10:05
        let back = try t.join("Ada", token: ResumeToken("token-1")).memberID
        try t.send(.start, by: back)
        #expect(t.room.phase == .focus, "the clock is in the 10:00 focus")
        #expect(t.deadline.map { wallSeconds(t, $0) } == Self.nineTen + 75 * 60, "to 10:25")
    }

    @Test func lengthsThatDoNotFitTheHourAreRefused() throws {
        var t = room(.standard)
        let ada = try t.add("Ada")
        do {
            try t.send(.configure(RoomSettings(focus: 1500, shortBreak: 600, aligned: try ZoneName("UTC"))), by: ada)
            Issue.record("25 + 10 does not divide the hour")
        } catch .invalidArgument(let field, _) {
            #expect(field == "aligned")
        } catch {
            Issue.record("unexpected \(error)")
        }
        #expect(throws: Never.self) {
            try t.send(.configure(RoomSettings(focus: 1200, shortBreak: 600, aligned: try ZoneName("UTC"))), by: ada)
        }
    }

    @Test func aScheduleMayNotCarryTheRoomsAlignment() throws {
        var book = ScheduleBook()
        let draft = ScheduleDraft(name: "Standup", time: try LocalTime(parsing: "09:30"), zone: try ZoneName("UTC"),
                                  recurrence: .weekly([.monday]), settings: try aligned("UTC"))
        #expect(throws: RoomError.self) { try book.add(draft, now: WallTime(seconds: Self.nineTen)) }
    }
}
