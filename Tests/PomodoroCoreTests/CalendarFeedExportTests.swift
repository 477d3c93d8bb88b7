import Foundation
import Testing
import PomodoroCore

/// Writes feeds and the core's own occurrences for Tests/calendar/check_ics.py, the independent check of the
/// feed (Python's icalendar and recurring_ical_events read it; the occurrences must be the same). Writes only
/// when POMODORO_CALENDAR_OUT names a folder; otherwise it checks that the cases are well formed.
@Suite struct CalendarFeedExportTests {
    /// Schedules that meet daylight saving in both directions, in zones either side of UTC, at times that
    /// fall in a spring gap or a repeated autumn hour, one-time and weekly.
    static func schedules(since: WallTime) throws -> [Schedule] {
        func make(_ n: Int, _ name: String, _ time: String, _ zone: String, _ recurrence: Recurrence,
                  _ length: SessionLength = .focusSessions(4)) throws -> Schedule {
            Schedule(id: ScheduleID(n), name: name, time: try LocalTime(parsing: time), zone: try ZoneName(zone),
                     recurrence: recurrence, length: length, since: since)
        }
        let weekdays: Set<Weekday> = [.monday, .tuesday, .wednesday, .thursday, .friday]
        return [
            try make(1, "Standup, daily; \"short\"", "09:30", "Europe/Berlin", .weekly(weekdays)),
            try make(2, "Night owls", "02:30", "Europe/Berlin", .weekly([.sunday, .saturday]), .untilStopped),
            try make(3, "East coast early", "01:30", "America/New_York", .weekly(Set(Weekday.allCases))),
            try make(4, "Gap hour", "02:15", "America/New_York", .weekly([.sunday])),
            try make(5, "Writing block ✍️", "14:00", "Asia/Kolkata", .weekly([.thursday])),
            try make(6, "Launch", "02:30", "Europe/Berlin", .once(try LocalDate(parsing: "2027-03-28"))),
            try make(7, "Retro", "16:45", "Australia/Sydney", .weekly([.friday])),
        ]
    }

    /// (name, when the feed is written): one window over each spring change, one over each autumn change.
    static let cases: [(String, WallTime)] = [
        ("spring", When.utc("2027-03-01T00:00Z")),
        ("autumn", When.utc("2026-10-01T00:00Z")),
    ]

    @Test func feedsAndTheirOccurrencesForTheIndependentCheck() throws {
        let out = ProcessInfo.processInfo.environment["POMODORO_CALENDAR_OUT"]
        let room = try RoomID(validating: "team-alpha")
        for (name, now) in Self.cases {
            let schedules = try Self.schedules(since: now)
            let feed = CalendarFeed.write(room: room, schedules: schedules, roomSettings: .standard, now: now)
            let end = now + 60 * 86_400
            var lines: [String] = []
            for s in schedules {
                for at in s.occurrences(from: now, through: end) {
                    lines.append("\(s.id).\(room.rawValue)@pomodoro \(at.seconds) \(s.plannedLength(room: .standard))")
                }
            }
            #expect(lines.count > 60, "\(name): a window this long has many occurrences")
            guard let out else { continue }
            let folder = URL(fileURLWithPath: out)
            try Data(feed.utf8).write(to: folder.appendingPathComponent("\(name).ics"))
            let header = "\(now.seconds) \(end.seconds)\n"
            try Data((header + lines.sorted().joined(separator: "\n") + "\n").utf8)
                .write(to: folder.appendingPathComponent("\(name).expected"))
        }
    }
}
