import Testing
import PomodoroCore

/// What a room's schedules do as wall time passes: the clock is a value the test moves.
@Suite struct ScheduleBookTests {
    private let made = When.utc("2026-11-25T12:00Z")  // a Wednesday

    /// A book with one Thursday 14:00 Berlin schedule (13:00 UTC), made on Wednesday.
    private func bookWithThursday(length: SessionLength = .focusSessions(4)) throws -> ScheduleBook {
        var book = ScheduleBook()
        try book.add(try draft(length: length), now: made)
        return book
    }

    @Test func warnsThenStartsOnTheMinuteAndCountsTheNextWeek() throws {
        var book = try bookWithThursday()
        let start = When.utc("2026-11-26T13:00Z")
        #expect(book.nextWakeup(after: made) == start - 300)
        #expect(book.due(at: start - 301, roomInSession: false) == [])
        let warned = book.due(at: start - 300, roomInSession: false)
        guard case .warn(let s, let at)? = warned.first, warned.count == 1 else {
            Issue.record("expected one warning, got \(warned)"); return
        }
        #expect(s.name == "Writing block" && at == start)
        // Warned once: the next thing to do is the start itself.
        #expect(book.due(at: start - 200, roomInSession: false) == [])
        #expect(book.nextWakeup(after: start - 200) == start)
        let started = book.due(at: start, roomInSession: false)
        guard case .start(let s2, let occurrence, let late)? = started.first, started.count == 1 else {
            Issue.record("expected one start, got \(started)"); return
        }
        #expect(s2.id == ScheduleID(1) && occurrence == start && late == 0)
        #expect(book.due(at: start + 1, roomInSession: true) == [], "an occurrence starts once")
        #expect(book.nextWakeup(after: start + 1) == When.utc("2026-12-03T13:00Z") - 300)
        #expect(book.schedules[0].enabled, "a recurring schedule stays on")
    }

    @Test func aOneTimeScheduleSwitchesItselfOffOnceRun() throws {
        var book = ScheduleBook()
        try book.add(try draft(recurrence: .once(try LocalDate(parsing: "2026-11-27")), warning: 0), now: made)
        let start = When.utc("2026-11-27T13:00Z")
        #expect(book.nextWakeup(after: made) == start)
        #expect(book.nextSession(after: made)?.at == start)
        guard case .start? = book.due(at: start + 2, roomInSession: false).first else {
            Issue.record("expected a start two seconds late"); return
        }
        #expect(!book.schedules[0].enabled)
        #expect(book.nextWakeup(after: start + 2) == nil)
        #expect(book.nextSession(after: start + 2) == nil)
        #expect(throws: RoomError.invalidArgument(field: "date", reason: "the date and time have passed")) {
            try book.setEnabled(ScheduleID(1), true, now: start + 3)
        }
    }

    @Test func aOneTimeScheduleWhoseTimePassedWhileDownIsMissedAndSwitchedOff() throws {
        var book = ScheduleBook()
        try book.add(try draft(recurrence: .once(try LocalDate(parsing: "2026-11-27"))), now: made)
        // The server comes back an hour after the time.
        let actions = book.due(at: When.utc("2026-11-27T14:00Z"), roomInSession: false)
        #expect(actions.count == 1)
        guard case .missed(let s, _, let busy)? = actions.first else { Issue.record("expected a miss"); return }
        #expect(!busy && s.missed == 1 && !s.enabled)
        #expect(book.schedules[0] == s)
    }

    @Test func aStartWithinTheGraceIsLateButHappens() throws {
        var book = try bookWithThursday()
        let start = When.utc("2026-11-26T13:00Z")
        let grace = book.policy.lateStartGrace
        guard case .start(_, _, let late)? = book.due(at: start + grace, roomInSession: false).first else {
            Issue.record("expected a late start at the edge of the grace"); return
        }
        #expect(late == grace)

        var later = try bookWithThursday()
        guard case .missed(_, _, false)? = later.due(at: start + grace + 1, roomInSession: false).first else {
            Issue.record("expected a miss one second past the grace"); return
        }
    }

    @Test func severalMissedWhileDownStartTheLatestAndCountTheRest() throws {
        var book = try bookWithThursday()
        // Down from Wednesday to three weeks later, back two minutes after that Thursday's time.
        let actions = book.due(at: When.utc("2026-12-10T13:02Z"), roomInSession: false)
        guard case .start(let s, let occurrence, let late)? = actions.first, actions.count == 1 else {
            Issue.record("expected one start, got \(actions)"); return
        }
        #expect(occurrence == When.utc("2026-12-10T13:00Z") && late == 120)
        #expect(s.missed == 2, "the two Thursdays before were missed")
    }

    @Test func aScheduleFallingDueInARunningRoomIsSkippedNotCutIn() throws {
        var book = try bookWithThursday()
        let start = When.utc("2026-11-26T13:00Z")
        let actions = book.due(at: start, roomInSession: true)
        guard case .missed(let s, let occurrence, let busy)? = actions.first, actions.count == 1 else {
            Issue.record("expected a busy miss, got \(actions)"); return
        }
        #expect(busy && occurrence == start && s.missed == 1 && s.enabled)
        // The next week is not affected.
        #expect(book.nextSession(after: start)?.at == When.utc("2026-12-03T13:00Z"))
    }

    @Test func twoSchedulesAtOnceStartTheFirstOnly() throws {
        var book = ScheduleBook()
        try book.add(try draft("First"), now: made)
        try book.add(try draft("Second"), now: made)
        let actions = book.due(at: When.utc("2026-11-26T13:00Z"), roomInSession: false)
        #expect(actions.count == 2)
        guard case .start(let a, _, _) = actions[0], case .missed(let b, _, true) = actions[1] else {
            Issue.record("expected the first to start and the second to miss, got \(actions)"); return
        }
        #expect(a.name == "First" && b.name == "Second")
    }

    @Test func switchedOffSchedulesDoNothingAndSwitchingOnDoesNotCatchUp() throws {
        var book = try bookWithThursday()
        try book.setEnabled(ScheduleID(1), false, now: made)
        #expect(book.nextWakeup(after: made) == nil)
        #expect(book.due(at: When.utc("2026-11-26T13:00Z"), roomInSession: false) == [])
        try book.setEnabled(ScheduleID(1), true, now: When.utc("2026-11-26T13:01Z"))
        #expect(book.due(at: When.utc("2026-11-26T13:02Z"), roomInSession: false) == [],
                "the occurrence before it was switched on is not its own")
        #expect(book.nextSession(after: When.utc("2026-11-26T13:02Z"))?.at == When.utc("2026-12-03T13:00Z"))
    }

    @Test func aChangeHoldsFromNowAndKeepsTheMissedCount() throws {
        var book = try bookWithThursday()
        _ = book.due(at: When.utc("2026-11-26T13:00Z"), roomInSession: true)
        let changed = try book.change(ScheduleID(1), to: try draft("Renamed", time: "15:00"),
                                      now: When.utc("2026-11-26T13:30Z"))
        #expect(changed.missed == 1 && changed.name == "Renamed")
        // 15:00 Berlin today is still ahead.
        #expect(book.nextSession(after: When.utc("2026-11-26T13:30Z"))?.at == When.utc("2026-11-26T14:00Z"))
    }

    @Test func upcomingListsEverySessionInOrder() throws {
        var book = ScheduleBook()
        try book.add(try draft("Thu", time: "14:00", recurrence: .weekly([.thursday])), now: made)
        try book.add(try draft("Daily", time: "09:00", zone: "America/New_York",
                               recurrence: .weekly(Set(Weekday.allCases))), now: made)
        // Wednesday 09:00 in New York is 14:00 UTC, before Thursday's 14:00 in Berlin (13:00 UTC).
        let list = book.upcoming(after: made, through: When.utc("2026-11-26T13:30Z"))
        #expect(list.map(\.schedule.name) == ["Daily", "Thu"])
        #expect(list.map(\.at) == [When.utc("2026-11-25T14:00Z"), When.utc("2026-11-26T13:00Z")])
    }

    @Test func aWarningWhoseMomentPassedWhileDownIsNotSentLate() throws {
        var book = try bookWithThursday()
        let start = When.utc("2026-11-26T13:00Z")
        #expect(book.due(at: start - 120, roomInSession: false) == [])
        #expect(book.nextWakeup(after: start - 120) == start)
    }
}

@Suite struct ClockAlignmentTests {
    @Test func twentyFiveFiveFocusesAtTheHourAndHalfHour() throws {
        let a = try ClockAlignment(settings: .standard, zone: try ZoneName("Europe/Berlin"))
        #expect(a.phase(at: When.utc("2026-11-25T12:10Z")) == (.focus, When.utc("2026-11-25T12:25Z")))
        #expect(a.phase(at: When.utc("2026-11-25T12:27Z")) == (.shortBreak, When.utc("2026-11-25T12:30Z")))
        #expect(a.nextFocusStart(onOrAfter: When.utc("2026-11-25T12:10Z")) == When.utc("2026-11-25T12:30Z"))
        #expect(a.nextFocusStart(onOrAfter: When.utc("2026-11-25T12:30Z")) == When.utc("2026-11-25T12:30Z"))
    }

    @Test func fiftyTenFocusesAtTheLocalHourAlsoHalfAnHourOffUTC() throws {
        let settings = RoomSettings(focus: 50 * 60, shortBreak: 10 * 60)
        let kolkata = try ClockAlignment(settings: settings, zone: try ZoneName("Asia/Kolkata"))
        // 12:10 UTC is 17:40 in Kolkata: focus until 17:50; at 17:55 the break, the next focus at 18:00, 12:30 UTC.
        #expect(kolkata.phase(at: When.utc("2026-11-25T12:10Z")) == (.focus, When.utc("2026-11-25T12:20Z")))
        #expect(kolkata.nextFocusStart(onOrAfter: When.utc("2026-11-25T12:25Z")) == When.utc("2026-11-25T12:30Z"))
    }

    @Test func cyclesThatDoNotFitTheHourAreRefused() throws {
        #expect(throws: RoomError.self) {
            try ClockAlignment(settings: RoomSettings(focus: 25 * 60, shortBreak: 10 * 60), zone: try ZoneName("UTC"))
        }
        #expect((try? ClockAlignment(settings: RoomSettings(focus: 110 * 60, shortBreak: 10 * 60), zone: try ZoneName("UTC"))) != nil)
    }
}
