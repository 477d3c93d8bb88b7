import Testing
import PomodoroCore

/// Helpers: wall times written as UTC, schedules made in one line.
enum When {
    /// "2026-03-29T01:30Z" as a wall time.
    static func utc(_ text: String) -> WallTime {
        let date = try! LocalDate(parsing: String(text.prefix(10)))
        let time = try! LocalTime(parsing: String(text.dropFirst(11).prefix(5)))
        return WallTime(seconds: date.daysSinceEpoch * 86_400 + time.secondsIntoDay)
    }
}

func weekly(_ days: Set<Weekday>, _ time: String, _ zone: String, id: Int = 1, since: String = "2026-01-01T00:00Z",
            warning: Int = 5) throws -> Schedule {
    Schedule(id: ScheduleID(id), name: "Standup", time: try LocalTime(parsing: time), zone: try ZoneName(zone),
             recurrence: .weekly(days), warningMinutes: warning, since: When.utc(since))
}

func draft(_ name: String = "Writing block", time: String = "14:00", zone: String = "Europe/Berlin",
           recurrence: Recurrence = .weekly([.thursday]), length: SessionLength = .focusSessions(4),
           warning: Int = 5) throws -> ScheduleDraft {
    ScheduleDraft(name: name, time: try LocalTime(parsing: time), zone: try ZoneName(zone), recurrence: recurrence,
                  length: length, warningMinutes: warning)
}

@Suite struct RecurrenceTests {
    @Test func weekdaysAtNineThirtyFallOnTheWeekdaysOnly() throws {
        let s = try weekly([.monday, .tuesday, .wednesday, .thursday, .friday], "09:30", "Europe/Berlin")
        // Wednesday 2026-11-25 12:00 UTC: today's 09:30 has passed.
        let all = s.occurrences(from: When.utc("2026-11-25T12:00Z"), through: When.utc("2026-12-03T00:00Z"))
        #expect(all == ["2026-11-26T08:30Z", "2026-11-27T08:30Z", "2026-11-30T08:30Z", "2026-12-01T08:30Z",
                        "2026-12-02T08:30Z"].map(When.utc))
    }

    @Test func anOccurrenceAtTheStartInstantCounts() throws {
        let s = try weekly([.monday], "09:30", "Europe/Berlin")
        #expect(s.nextOccurrence(onOrAfter: When.utc("2026-11-30T08:30Z")) == When.utc("2026-11-30T08:30Z"))
        #expect(s.nextOccurrence(onOrAfter: When.utc("2026-11-30T08:30Z") + 1) == When.utc("2026-12-07T08:30Z"))
    }

    @Test func aLateEveningInUTCIsTheNextMorningInTokyo() throws {
        let s = try weekly([.thursday], "07:00", "Asia/Tokyo")
        // Wednesday 23:00 UTC is Thursday 08:00 in Tokyo: Thursday 07:00 there has passed, next is a week on.
        #expect(s.nextOccurrence(onOrAfter: When.utc("2026-11-25T23:00Z")) == When.utc("2026-12-02T22:00Z"))
        #expect(s.nextOccurrence(onOrAfter: When.utc("2026-11-25T21:00Z")) == When.utc("2026-11-25T22:00Z"))
    }

    @Test func nineThirtyStaysNineThirtyLocalAcrossBerlinsChanges() throws {
        let s = try weekly([.friday, .monday], "09:30", "Europe/Berlin")
        let spring = s.occurrences(from: When.utc("2026-03-26T00:00Z"), through: When.utc("2026-03-31T00:00Z"))
        #expect(spring == [When.utc("2026-03-27T08:30Z"), When.utc("2026-03-30T07:30Z")])
        let autumn = s.occurrences(from: When.utc("2026-10-22T00:00Z"), through: When.utc("2026-10-27T00:00Z"))
        #expect(autumn == [When.utc("2026-10-23T07:30Z"), When.utc("2026-10-26T08:30Z")])
    }

    @Test func berlinsSpringGapMovesTheTimeForwardByTheGap() throws {
        let s = try weekly([.saturday, .sunday, .monday], "02:30", "Europe/Berlin")
        let all = s.occurrences(from: When.utc("2026-03-28T00:00Z"), through: When.utc("2026-03-31T00:00Z"))
        // 02:30 CET; 02:30 does not exist on the 29th: 03:30 CEST; then 02:30 CEST.
        #expect(all == [When.utc("2026-03-28T01:30Z"), When.utc("2026-03-29T01:30Z"), When.utc("2026-03-30T00:30Z")])
        #expect(try ZoneName("Europe/Berlin").secondsIntoDay(of: When.utc("2026-03-29T01:30Z")) == 3 * 3600 + 1800)
    }

    @Test func berlinsAutumnRepeatTakesTheFirstOfTheTwo() throws {
        let s = try weekly([.sunday], "02:30", "Europe/Berlin")
        // 02:30 happens twice on 2026-10-25: at 00:30 UTC (CEST) and at 01:30 UTC (CET). The first.
        #expect(s.nextOccurrence(onOrAfter: When.utc("2026-10-24T00:00Z")) == When.utc("2026-10-25T00:30Z"))
        // Once past the first, the second is not another occurrence: the next is a week on.
        #expect(s.nextOccurrence(onOrAfter: When.utc("2026-10-25T00:31Z")) == When.utc("2026-11-01T01:30Z"))
    }

    @Test func newYorksSpringGapAndAutumnRepeat() throws {
        let gap = try weekly([.sunday], "02:30", "America/New_York")
        // 2026-03-08: 02:00 EST jumps to 03:00 EDT; 02:30 reads 03:30 EDT = 07:30 UTC.
        #expect(gap.nextOccurrence(onOrAfter: When.utc("2026-03-07T00:00Z")) == When.utc("2026-03-08T07:30Z"))
        #expect(gap.nextOccurrence(onOrAfter: When.utc("2026-03-09T00:00Z")) == When.utc("2026-03-15T06:30Z"))
        let twice = try weekly([.sunday, .saturday, .monday], "01:30", "America/New_York")
        // 2026-11-01: 02:00 EDT falls back to 01:00 EST; 01:30 EDT (05:30 UTC) is the first.
        let all = twice.occurrences(from: When.utc("2026-10-31T00:00Z"), through: When.utc("2026-11-03T00:00Z"))
        #expect(all == [When.utc("2026-10-31T05:30Z"), When.utc("2026-11-01T05:30Z"), When.utc("2026-11-02T06:30Z")])
    }

    @Test func aOneTimeScheduleHasOneOccurrenceThenNone() throws {
        var s = try weekly([], "14:00", "Europe/Berlin")
        s.recurrence = .once(try LocalDate(parsing: "2026-12-03"))
        #expect(s.nextOccurrence(onOrAfter: When.utc("2026-11-25T00:00Z")) == When.utc("2026-12-03T13:00Z"))
        #expect(s.nextOccurrence(onOrAfter: When.utc("2026-12-03T13:00Z") + 1) == nil)
    }

    @Test func theWarningIsWarningMinutesBeforeAndNoneAtZero() throws {
        let s = try weekly([.monday], "09:30", "Europe/Berlin", warning: 5)
        #expect(s.warningInstant(for: When.utc("2026-11-30T08:30Z")) == When.utc("2026-11-30T08:25Z"))
        let quiet = try weekly([.monday], "09:30", "Europe/Berlin", warning: 0)
        #expect(quiet.warningInstant(for: When.utc("2026-11-30T08:30Z")) == nil)
    }

    @Test func plannedLengthCountsTheBreaksBetweenFocusSessions() throws {
        var s = try weekly([.monday], "09:30", "Europe/Berlin")
        s.length = .focusSessions(4)
        #expect(s.plannedLength(room: .standard) == 4 * 1500 + 3 * 300)
        s.length = .focusSessions(5)
        #expect(s.plannedLength(room: .standard) == 5 * 1500 + 3 * 300 + 900)
        s.length = .untilStopped
        #expect(s.plannedLength(room: .standard) == 1500)
    }
}

@Suite struct ScheduleValidationTests {
    @Test func textsAreCheckedWithClearErrors() {
        #expect(throws: RoomError.invalidArgument(field: "time", reason: "must be HH:MM from 00:00 to 23:59")) {
            try LocalTime(parsing: "24:00")
        }
        #expect(throws: RoomError.invalidArgument(field: "time", reason: "must be HH:MM from 00:00 to 23:59")) {
            try LocalTime(parsing: "9:30")
        }
        #expect(throws: RoomError.invalidArgument(field: "date", reason: "must be a real date from 2000-01-01 to 2999-12-31")) {
            try LocalDate(parsing: "2026-02-29")
        }
        #expect(throws: RoomError.invalidArgument(field: "date", reason: "must be YYYY-MM-DD")) {
            try LocalDate(parsing: "2026-2-28")
        }
        #expect((try? LocalDate(parsing: "2028-02-29")) != nil)
        for zone in ["CET", "EST", "GMT+2", "Etc/GMT-2", "Mars/Olympus", ""] {
            #expect(throws: RoomError.invalidArgument(field: "zone", reason: "must be an IANA time zone such as Europe/Berlin")) {
                try ZoneName(zone)
            }
        }
        #expect((try? ZoneName("UTC")) != nil)
        #expect((try? ZoneName("America/Argentina/Buenos_Aires")) != nil)
    }

    @Test func boundsOfADraft() throws {
        var book = ScheduleBook(policy: SchedulePolicy(maxSchedules: 2, maxNameLength: 20))
        let now = When.utc("2026-11-25T12:00Z")
        #expect(throws: RoomError.invalidArgument(field: "name", reason: "must be at most 20 characters")) {
            try book.add(try draft("A name far too long for it"), now: now)
        }
        #expect(throws: RoomError.self) { try book.add(try draft("  "), now: now) }
        #expect(throws: RoomError.invalidArgument(field: "days", reason: "must name at least one weekday")) {
            try book.add(try draft(recurrence: .weekly([])), now: now)
        }
        #expect(throws: RoomError.invalidArgument(field: "sessions", reason: "must be 1–24, or null to run until stopped")) {
            try book.add(try draft(length: .focusSessions(0)), now: now)
        }
        #expect(throws: RoomError.invalidArgument(field: "warning", reason: "must be 0–60 minutes")) {
            try book.add(try draft(warning: 61), now: now)
        }
        var tooShort = try draft()
        tooShort.settings = RoomSettings(focus: 10)
        #expect(throws: RoomError.invalidArgument(field: "focus", reason: "must be at least 60 seconds")) {
            try book.add(tooShort, now: now)
        }
        #expect(throws: RoomError.invalidArgument(field: "date", reason: "the date and time have passed")) {
            try book.add(try draft(recurrence: .once(try LocalDate(parsing: "2026-11-24"))), now: now)
        }
        try book.add(try draft("One"), now: now)
        try book.add(try draft("Two"), now: now)
        #expect(throws: RoomError.invalidArgument(field: "schedules", reason: "a room holds at most 2 schedules")) {
            try book.add(try draft("Three"), now: now)
        }
        #expect(book.schedules.map(\.id) == [ScheduleID(1), ScheduleID(2)])
        #expect(throws: RoomError.invalidArgument(field: "id", reason: "no schedule s9 in this room")) {
            try book.remove(ScheduleID(9))
        }
    }

    @Test func scheduleIDsReadAndWriteAsSN() {
        #expect(ScheduleID(parsing: "s12") == ScheduleID(12))
        #expect(ScheduleID(12).description == "s12")
        for bad in ["12", "s", "s0", "s-1", "s01", "S1"] { #expect(ScheduleID(parsing: bad) == nil) }
    }
}
