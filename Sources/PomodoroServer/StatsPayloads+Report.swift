import PomodoroProtocol
import PomodoroStore

// The store's stats report and journal records, as the wire carries them.

extension StatsTotalsPayload {
    init(_ totals: FocusReport.Totals) {
        self.init(focusSessions: totals.focusSessions, focusSeconds: Int64(totals.focusSeconds),
                  interruptions: totals.interruptions, currentStreak: totals.currentStreak,
                  longestStreak: totals.longestStreak)
    }
}

extension DayTotalsPayload {
    init(_ day: FocusReport.Day) {
        self.init(date: day.date, focusSessions: day.focusSessions, focusSeconds: Int64(day.focusSeconds),
                  interruptions: day.interruptions)
    }
}

extension StatsReportPayload {
    init(_ report: FocusReport) {
        self.init(room: report.room.rawValue, tz: report.timeZone, today: report.today, days: report.days.count,
                  totals: StatsTotalsPayload(report.totals), perDay: report.days.map(DayTotalsPayload.init),
                  members: report.members.map {
                      MemberStatsPayload(name: $0.name, totals: StatsTotalsPayload($0.totals),
                                         perDay: $0.days.map(DayTotalsPayload.init))
                  })
    }
}
