import PomodoroClient
import PomodoroProtocol
import Testing

/// `pomo stats`: the report drawn as exact text at 80 columns and narrower.
@Suite struct StatsRendererTests {
    static func day(_ date: String, _ sessions: Int, _ minutes: Int64, interruptions: Int = 0) -> DayTotalsPayload {
        DayTotalsPayload(date: date, focusSessions: sessions, focusSeconds: minutes * 60, interruptions: interruptions)
    }

    static func totals(_ sessions: Int, _ minutes: Int64, _ interruptions: Int, streak: Int, longest: Int)
        -> StatsTotalsPayload {
        StatsTotalsPayload(focusSessions: sessions, focusSeconds: minutes * 60, interruptions: interruptions,
                           currentStreak: streak, longestStreak: longest)
    }

    /// A week of team-alpha in Berlin: two idle days (one of them today), a best day of 125 minutes.
    static let week = StatsReportPayload(
        room: "team-alpha", tz: "Europe/Berlin", today: "2026-11-21", days: 7,
        totals: totals(120, 3000, 14, streak: 0, longest: 9),
        perDay: [day("2026-11-15", 1, 25), day("2026-11-16", 0, 0), day("2026-11-17", 5, 125, interruptions: 2),
                 day("2026-11-18", 2, 50), day("2026-11-19", 3, 80, interruptions: 1), day("2026-11-20", 1, 13),
                 day("2026-11-21", 0, 0)],
        members: [
            MemberStatsPayload(name: "Ada", totals: totals(90, 2250, 5, streak: 5, longest: 9),
                               perDay: [day("2026-11-15", 1, 25), day("2026-11-16", 0, 0), day("2026-11-17", 5, 125),
                                        day("2026-11-18", 2, 50), day("2026-11-19", 3, 75), day("2026-11-20", 1, 13),
                                        day("2026-11-21", 0, 0)]),
            MemberStatsPayload(name: "Lin 林", totals: totals(30, 750, 9, streak: 0, longest: 3),
                               perDay: [day("2026-11-15", 0, 0), day("2026-11-16", 0, 0), day("2026-11-17", 2, 50, interruptions: 2),
                                        day("2026-11-18", 0, 0), day("2026-11-19", 1, 20, interruptions: 1), day("2026-11-20", 0, 0),
                                        day("2026-11-21", 0, 0)]),
            MemberStatsPayload(name: "Bartholomew Featherstonehaugh-Cholmondeley the Third", totals: totals(1, 25, 0, streak: 0, longest: 1),
                               perDay: [day("2026-11-15", 1, 25)] + (16...21).map { day("2026-11-\($0)", 0, 0) }),
        ])

    /// The week again, with nothing in the window for anyone: all days zero, the all-time totals kept.
    static var quietWeek: StatsReportPayload {
        var report = week
        report.perDay = report.perDay.map { day($0.date, 0, 0) }
        report.members = [MemberStatsPayload(name: "Ada", totals: totals(90, 2250, 5, streak: 0, longest: 9),
                                             perDay: report.perDay)]
        report.totals.currentStreak = 0
        return report
    }

    /// A room never seen.
    static let empty = StatsReportPayload(room: "fresh", tz: "UTC", today: "2026-11-21", days: 14,
                                          totals: .zero, perDay: (8...21).map { day("2026-11-\($0 < 10 ? "0" : "")\($0)", 0, 0) },
                                          members: [])

    func expectFits(_ text: String, _ columns: Int, sourceLocation: SourceLocation = #_sourceLocation) {
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            #expect(TextWidth.of(String(line)) <= columns, "\(line)", sourceLocation: sourceLocation)
            #expect(line.last != " ", "trailing space: \(line)", sourceLocation: sourceLocation)
        }
    }

    @Test func aWeekAt80Columns() {
        let text = StatsRenderer.render(Self.week, columns: 80)
        expectFits(text, 80)
        #expect(text == """
            team-alpha · last 7 days, 2026-11-15 to 2026-11-21 (Europe/Berlin)

            NAME                             SESSIONS  FOCUS  INTERRUPTIONS  STREAK  LONGEST
            Ada                                    12   4:48              0       5        9
            Lin 林                                  3   1:10              3       0        3
            Bartholomew Featherstonehaugh-…         1   0:25              0       0        1
            ────────────────────────────────────────────────────────────────────────────────
            Whole room                             12   4:53              3       0        9
            Sessions, focus (h:mm) and interruptions in the last 7 days; streaks in days.

            All time: 120 sessions, 50:00 of focus, 14 interruptions.

            FOCUS MINUTES PER DAY
            Sun 2026-11-15   25 ████████████
            Mon 2026-11-16    0
            Tue 2026-11-17  125 ████████████████████████████████████████████████████████████
            Wed 2026-11-18   50 ████████████████████████
            Thu 2026-11-19   80 ██████████████████████████████████████▍
            Fri 2026-11-20   13 ██████▎
            Sat 2026-11-21    0
            """)
    }

    @Test func aWeekAt40ColumnsUsesShortHeadingsAndDates() {
        let text = StatsRenderer.render(Self.week, columns: 40)
        expectFits(text, 40)
        #expect(text == """
            team-alpha · last 7 days, 2026-11-15 to
            2026-11-21 (Europe/Berlin)

            NAME            SESS FOCUS INT STRK BEST
            Ada               12  4:48   0    5    9
            Lin 林             3  1:10   3    0    3
            Bartholomew Fe…    1  0:25   0    0    1
            ────────────────────────────────────────
            Whole room        12  4:53   3    0    9
            SESS, FOCUS, INT: the last 7 days. STRK,
            BEST: streaks in days.

            All time: 120 sessions, 50:00 of focus,
            14 interruptions.

            FOCUS MINUTES PER DAY
            Sun 11-15   25 █████
            Mon 11-16    0
            Tue 11-17  125 █████████████████████████
            Wed 11-18   50 ██████████
            Thu 11-19   80 ████████████████
            Fri 11-20   13 ██▋
            Sat 11-21    0
            """)
    }

    @Test func aWindowWithoutSessionsDrawsZeroDaysWithoutBars() {
        let text = StatsRenderer.render(Self.quietWeek, columns: 60)
        expectFits(text, 60)
        #expect(text == """
            team-alpha · last 7 days, 2026-11-15 to 2026-11-21
            (Europe/Berlin)

            NAME        SESSIONS  FOCUS  INTERRUPTIONS  STREAK  LONGEST
            Ada                0   0:00              0       0        9
            ───────────────────────────────────────────────────────────
            Whole room         0   0:00              0       0        9
            Sessions, focus (h:mm) and interruptions in the last 7 days;
            streaks in days.

            All time: 120 sessions, 50:00 of focus, 14 interruptions.

            FOCUS MINUTES PER DAY
            Sun 2026-11-15  0
            Mon 2026-11-16  0
            Tue 2026-11-17  0
            Wed 2026-11-18  0
            Thu 2026-11-19  0
            Fri 2026-11-20  0
            Sat 2026-11-21  0
            """)
    }

    @Test func anEmptyRoomSaysSo() {
        #expect(StatsRenderer.render(Self.empty, columns: 80) == """
            fresh · last 14 days, 2026-11-08 to 2026-11-21 (UTC)

            No focus sessions in fresh yet.
            """)
        var today = Self.empty
        today.days = 1
        today.perDay = [Self.day("2026-11-21", 0, 0)]
        #expect(StatsRenderer.render(today, columns: 80) == """
            fresh · today, 2026-11-21 (UTC)

            No focus sessions in fresh yet.
            """)
    }

    @Test func barsAreDrawnInEighthsAndAnyFocusShows() {
        // 30 columns: "Sun 11-15" (9) + 2 + 3 for the minutes + 1 leaves 15 cells, so 120 minutes fill them
        // and each minute is one eighth of a cell.
        let minutes: [Int64] = [120, 1, 2, 3, 4, 5, 6, 7, 8, 9]
        var days = minutes.enumerated().map { Self.day("2026-11-\(10 + $0.offset)", 1, $0.element) }
        days.append(DayTotalsPayload(date: "2026-11-20", focusSessions: 0, focusSeconds: 20, interruptions: 1))
        let report = StatsReportPayload(room: "r", tz: "UTC", today: "2026-11-20", days: days.count,
                                        totals: Self.totals(10, 165, 1, streak: 11, longest: 11), perDay: days,
                                        members: [])
        let chart = StatsRenderer.render(report, columns: 30).split(separator: "\n").suffix(days.count)
        #expect(chart.joined(separator: "\n") == """
            Tue 11-10  120 ███████████████
            Wed 11-11    1 ▏
            Thu 11-12    2 ▎
            Fri 11-13    3 ▍
            Sat 11-14    4 ▌
            Sun 11-15    5 ▋
            Mon 11-16    6 ▊
            Tue 11-17    7 ▉
            Wed 11-18    8 █
            Thu 11-19    9 █▏
            Fri 11-20    0 ▏
            """)
    }

    @Test func aDayOfSecondsGetsTheSmallestMarkEvenWhenItIsTheBest() {
        // Today alone, with 40 seconds of focus: the minutes read 0, so the bar is no more than ▏.
        let today = DayTotalsPayload(date: "2026-11-21", focusSessions: 0, focusSeconds: 40, interruptions: 1)
        let report = StatsReportPayload(room: "r", tz: "UTC", today: "2026-11-21", days: 1,
                                        totals: StatsTotalsPayload(focusSessions: 0, focusSeconds: 40, interruptions: 1,
                                                                   currentStreak: 0, longestStreak: 0),
                                        perDay: [today], members: [])
        let lines = StatsRenderer.render(report, columns: 80).split(separator: "\n")
        #expect(lines.last == "Sat 2026-11-21  0 ▏")
        #expect(lines.contains("Sessions, focus (h:mm) and interruptions today; streaks in days."), "\(lines)")
        // Two days of seconds: both the smallest mark; a day of whole minutes beside them fills the width.
        var two = report
        two.days = 2
        two.perDay = [DayTotalsPayload(date: "2026-11-20", focusSessions: 0, focusSeconds: 59, interruptions: 0), today]
        #expect(StatsRenderer.render(two, columns: 30).split(separator: "\n").suffix(2) == ["Fri 11-20  0 ▏", "Sat 11-21  0 ▏"])
        two.perDay[0].focusSeconds = 120
        #expect(StatsRenderer.render(two, columns: 30).split(separator: "\n").suffix(2)
                == ["Fri 11-20  2 █████████████████", "Sat 11-21  0 ▏"])
    }

    @Test func everyWidthFitsAndTooNarrowDrawsAtTheMinimum() {
        for columns in StatsRenderer.minimumColumns...100 {
            expectFits(StatsRenderer.render(Self.week, columns: columns), columns)
            expectFits(StatsRenderer.render(Self.quietWeek, columns: columns), columns)
            expectFits(StatsRenderer.render(Self.empty, columns: columns), columns)
        }
        #expect(StatsRenderer.render(Self.week, columns: 10) == StatsRenderer.render(Self.week, columns: 30))
        #expect(StatsRenderer.render(Self.week, columns: 0) == StatsRenderer.render(Self.week, columns: 30))
    }

    @Test func weekdaysFollowTheCalendar() {
        // Leap days, the turn of a century, and a date before 1970.
        let dates = ["2024-02-29", "2000-03-01", "1969-12-31", "2026-01-01", "2100-03-01"]
        let report = StatsReportPayload(room: "r", tz: "UTC", today: dates.last!, days: dates.count,
                                        totals: Self.totals(1, 1, 0, streak: 0, longest: 1),
                                        perDay: dates.map { Self.day($0, 0, 0) }, members: [])
        let labels = StatsRenderer.render(report, columns: 80).split(separator: "\n").suffix(dates.count)
            .map { $0.prefix(14) }
        #expect(labels == ["Thu 2024-02-29", "Wed 2000-03-01", "Wed 1969-12-31", "Thu 2026-01-01", "Mon 2100-03-01"])
    }
}
