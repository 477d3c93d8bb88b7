import Testing
import PomodoroCore

@Suite struct CalendarFeedTests {
    private let room = try! RoomID(validating: "team")
    private let now = When.utc("2026-11-25T12:00Z")

    private func feed(_ schedules: [Schedule]) -> String {
        CalendarFeed.write(room: room, schedules: schedules, roomSettings: .standard, now: now,
                           link: "https://pomodoro.example/#team")
    }

    @Test func aRecurringScheduleIsOneEventWithAWeeklyRule() throws {
        var s = try weekly([.monday, .friday, .wednesday], "09:30", "Europe/Berlin", since: "2026-11-25T12:00Z")
        s.length = .focusSessions(4)
        let text = feed([s])
        let lines = text.components(separatedBy: "\r\n")
        #expect(lines.first == "BEGIN:VCALENDAR")
        #expect(lines.suffix(2) == ["END:VCALENDAR", ""], "every line ends in CRLF")
        #expect(lines.filter { $0 == "BEGIN:VEVENT" }.count == 1)
        // The first occurrence since it was made: Friday 27th.
        #expect(lines.contains("DTSTART;TZID=Europe/Berlin:20261127T093000"))
        #expect(lines.contains("RRULE:FREQ=WEEKLY;BYDAY=MO,WE,FR"))
        #expect(lines.contains("DURATION:PT1H55M"))
        #expect(lines.contains("UID:s1.team@pomodoro"))
        #expect(lines.contains("DTSTAMP:20261125T120000Z"))
        #expect(lines.contains("TRIGGER:-PT5M"))
        #expect(lines.contains("TZID:Europe/Berlin"))
        // Berlin's 2027 spring change: 02:00 CET becomes 03:00 CEST.
        let spring = try #require(lines.firstIndex(of: "DTSTART:20270328T020000"))
        #expect(lines[spring - 1] == "BEGIN:DAYLIGHT")
        #expect(lines[spring + 1] == "TZOFFSETFROM:+0100" && lines[spring + 2] == "TZOFFSETTO:+0200")
        #expect(!text.contains("\n\n") && !text.replacingOccurrences(of: "\r\n", with: "").contains("\n"))
    }

    @Test func aOneTimeScheduleHasNoRuleAndSwitchedOffOnesAreLeftOut() throws {
        var once = try weekly([], "14:00", "America/New_York")
        once.recurrence = .once(try LocalDate(parsing: "2026-12-03"))
        var off = try weekly([.monday], "09:30", "Europe/Berlin", id: 2)
        off.enabled = false
        let text = feed([once, off])
        #expect(text.contains("DTSTART;TZID=America/New_York:20261203T140000\r\n"))
        #expect(!text.contains("RRULE"))
        #expect(!text.contains("s2.team"))
        #expect(!text.contains("TZID:Europe/Berlin"))
    }

    @Test func textIsEscapedAndLongLinesFoldAt75OctetsOutsideUTF8Sequences() throws {
        #expect(CalendarFeed.escape("a,b;c\\d\ne") == "a\\,b\\;c\\\\d\\ne")
        let long = "SUMMARY:" + String(repeating: "é", count: 60)  // 8 + 120 octets
        let folded = CalendarFeed.fold(long)
        let parts = folded.components(separatedBy: "\r\n")
        #expect(parts.last == "")
        for part in parts { #expect(part.utf8.count <= 75) }
        #expect(parts.dropFirst().dropLast().allSatisfy { $0.hasPrefix(" ") })
        // Unfolding gives the line back.
        #expect(folded.replacingOccurrences(of: "\r\n ", with: "").replacingOccurrences(of: "\r\n", with: "") == long)
        #expect(parts[0].utf8.count == 74, "75 would split an é")
        let ascii = CalendarFeed.fold(String(repeating: "x", count: 150))
        #expect(ascii.components(separatedBy: "\r\n").map(\.utf8.count) == [75, 75, 2, 0])
    }

    @Test func everyLineOfAWholeFeedIsWithin75Octets() throws {
        var s = try weekly([.tuesday], "07:15", "Asia/Kolkata")
        s.name = "Un bloc d’écriture, long; très long, \\ avec des virgules, et des points-virgules; ✍️✍️✍️"
        let text = feed([s])
        for line in text.components(separatedBy: "\r\n") { #expect(line.utf8.count <= 75) }
        #expect(text.contains("TZOFFSETFROM:+0530"))
    }
}
