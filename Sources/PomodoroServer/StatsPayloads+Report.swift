import PomodoroProtocol
import PomodoroStore

// The store's stats report as the wire carries it: the same counters, named as the protocol names them.

extension StatsReportPayload {
    init(_ report: FocusReport) {
        self.init(room: report.room.rawValue, tz: report.timeZone, today: report.today, days: report.days.count,
                  totals: report.totals, perDay: report.days, members: report.members)
    }
}
