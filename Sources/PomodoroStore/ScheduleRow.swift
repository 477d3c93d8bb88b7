import PomodoroCore

/// A schedule as a row of plain values, the same in every store: what the `schedule` table holds.
///
/// Times are milliseconds since 1970 like every time in the stores; the weekdays are "mon,wed,fri"; the
/// settings columns are all NULL when the schedule runs with the room's settings, all set otherwise.
public struct ScheduleRow: Equatable, Sendable {
    public var number: Int64
    public var name: String
    /// "09:30".
    public var time: String
    public var zone: String
    /// "2026-12-03" for a one-time schedule, NULL for a weekly one.
    public var date: String?
    /// "mon,tue" for a weekly schedule, NULL for a one-time one.
    public var weekdays: String?
    public var focusS: Int64?
    public var shortBreakS: Int64?
    public var longBreakS: Int64?
    public var longBreakEvery: Int64?
    public var autoStart: Bool?
    /// NULL: until stopped.
    public var sessions: Int64?
    public var warningMinutes: Int64
    public var enabled: Bool
    public var sinceMs: Int64
    public var handledThroughMs: Int64
    public var missed: Int64

    /// The columns after `room_id`, in the order `values` gives them.
    public static let columns = [
        "id", "name", "time", "zone", "date", "weekdays", "focus_s", "short_break_s", "long_break_s",
        "long_break_every", "auto_start", "sessions", "warning_min", "enabled", "since_ms",
        "handled_through_ms", "missed",
    ]

    public init(_ s: Schedule) {
        number = Int64(s.id.number)
        name = s.name
        time = s.time.description
        zone = s.zone.identifier
        switch s.recurrence {
        case .once(let day):
            date = day.description
        case .weekly(let days):
            weekdays = days.sorted().map(\.code).joined(separator: ",")
        }
        if let settings = s.settings {
            focusS = Int64(settings.focus)
            shortBreakS = Int64(settings.shortBreak)
            longBreakS = Int64(settings.longBreak)
            longBreakEvery = Int64(settings.longBreakEvery)
            autoStart = settings.autoStart
        }
        if case .focusSessions(let n) = s.length { sessions = Int64(n) }
        warningMinutes = Int64(s.warningMinutes)
        enabled = s.enabled
        sinceMs = s.since.milliseconds
        handledThroughMs = s.handledThrough.milliseconds
        missed = Int64(s.missed)
    }

    public init(number: Int64, name: String, time: String, zone: String, date: String?, weekdays: String?,
                focusS: Int64?, shortBreakS: Int64?, longBreakS: Int64?, longBreakEvery: Int64?, autoStart: Bool?,
                sessions: Int64?, warningMinutes: Int64, enabled: Bool, sinceMs: Int64, handledThroughMs: Int64,
                missed: Int64) {
        self.number = number
        self.name = name
        self.time = time
        self.zone = zone
        self.date = date
        self.weekdays = weekdays
        self.focusS = focusS
        self.shortBreakS = shortBreakS
        self.longBreakS = longBreakS
        self.longBreakEvery = longBreakEvery
        self.autoStart = autoStart
        self.sessions = sessions
        self.warningMinutes = warningMinutes
        self.enabled = enabled
        self.sinceMs = sinceMs
        self.handledThroughMs = handledThroughMs
        self.missed = missed
    }

    /// The row's schedule; a row the store cannot read back (a zone the system no longer knows, say) is an
    /// error naming the room and the schedule.
    public func schedule(room: RoomID) throws(StoreError) -> Schedule {
        do {
            let recurrence: Recurrence
            if let date {
                recurrence = .once(try LocalDate(parsing: date))
            } else {
                let days = (weekdays ?? "").split(separator: ",").compactMap { Weekday(code: String($0)) }
                recurrence = .weekly(Set(days))
            }
            var settings: RoomSettings?
            if let focusS, let shortBreakS, let longBreakS, let longBreakEvery, let autoStart {
                settings = RoomSettings(focus: Int(focusS), shortBreak: Int(shortBreakS), longBreak: Int(longBreakS),
                                        longBreakEvery: Int(longBreakEvery), autoStart: autoStart)
            }
            return Schedule(id: ScheduleID(Int(number)), name: name, time: try LocalTime(parsing: time),
                            zone: try ZoneName(zone), recurrence: recurrence, settings: settings,
                            length: sessions.map { .focusSessions(Int($0)) } ?? .untilStopped,
                            warningMinutes: Int(warningMinutes), enabled: enabled,
                            since: WallTime(milliseconds: sinceMs), handledThrough: WallTime(milliseconds: handledThroughMs),
                            missed: Int(missed))
        } catch {
            throw StoreError("room \(room) schedule s\(number): \(error)")
        }
    }
}
