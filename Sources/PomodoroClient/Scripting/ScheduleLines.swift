import Foundation
import PomodoroProtocol

/// `pomo schedule ROOM`: a room's schedules, one line each, with the next start in the reader's own zone
/// as well as the schedule's (a 14:00 Berlin schedule reads "next Thu 26 Nov 08:00 here" in New York).
public enum ScheduleLines {
    /// The lines for `payload`; `viewer` is the reader's zone.
    public static func lines(_ payload: SchedulesPayload, viewer: TimeZone) -> [String] {
        guard !payload.schedules.isEmpty else { return ["\(payload.room): no schedules"] }
        return payload.schedules.map { line($0, viewer: viewer) }
    }

    static func line(_ s: SchedulePayload, viewer: TimeZone) -> String {
        let f = s.fields
        let when: String
        if let date = f.date {
            when = "on \(date)"
        } else {
            let days = f.days ?? []
            when = days.count == 7 ? "every day"
                : days == ["mon", "tue", "wed", "thu", "fri"] ? "weekdays"
                : days.map { $0.prefix(1).uppercased() + $0.dropFirst() }.joined(separator: ", ")
        }
        var text = "\(s.id)  \(f.enabled ?? true ? "on " : "off")  \(f.name) · \(when) at \(f.time) \(f.zone)"
        text += f.sessions.map { " · \($0) focus session\($0 == 1 ? "" : "s")" } ?? " · until stopped"
        if let settings = f.settings { text += " · " + lengths(settings.focus, settings.shortBreak) }
        if let next = s.next { text += " · next \(local(next, in: viewer)) here" }
        if s.missed > 0 { text += " · missed \(s.missed)" }
        return text
    }

    /// A schedule's focus and break lengths: "50/10 min" in whole minutes, otherwise each to the second
    /// ("1m30s/30s"), so that a length under a minute never reads as 0.
    public static func lengths(_ focus: Int, _ shortBreak: Int) -> String {
        if focus % 60 == 0 && shortBreak % 60 == 0 { return "\(focus / 60)/\(shortBreak / 60) min" }
        func exact(_ seconds: Int) -> String {
            let (m, s) = (seconds / 60, seconds % 60)
            return m == 0 ? "\(s)s" : s == 0 ? "\(m)m" : "\(m)m\(s)s"
        }
        return "\(exact(focus))/\(exact(shortBreak))"
    }

    /// "Thu 26 Nov 08:00" in `zone`.
    public static func local(_ epochMs: Int64, in zone: TimeZone) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        let date = Date(timeIntervalSince1970: TimeInterval(epochMs) / 1000)
        let c = calendar.dateComponents([.weekday, .day, .month, .hour, .minute], from: date)
        let weekdays = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        func two(_ n: Int?) -> String { let n = n ?? 0; return n < 10 ? "0\(n)" : "\(n)" }
        return "\(weekdays[(c.weekday ?? 1) - 1]) \(c.day ?? 0) \(months[(c.month ?? 1) - 1]) \(two(c.hour)):\(two(c.minute))"
    }
}
