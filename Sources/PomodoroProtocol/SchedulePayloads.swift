import PomodoroCore

// A room's schedules on the wire (docs/PROTOCOL.md, "Schedules"): the requests to list, add, change, switch
// and delete them, the `schedules` list the server sends, the schedule events, and the next session in the
// room snapshot.

/// What a member asks of the room's schedules.
public enum ScheduleRequest: Equatable, Sendable {
    /// `schedules`: send me the list.
    case list
    /// `addSchedule`.
    case add(ScheduleFields)
    /// `changeSchedule`: replace schedule `id` by these fields.
    case change(id: String, ScheduleFields)
    /// `switchSchedule`: on or off.
    case setEnabled(id: String, enabled: Bool)
    /// `deleteSchedule`.
    case delete(id: String)

    /// The `type` field on the wire.
    public var type: String {
        switch self {
        case .list: "schedules"
        case .add: "addSchedule"
        case .change: "changeSchedule"
        case .setEnabled: "switchSchedule"
        case .delete: "deleteSchedule"
        }
    }
}

/// A schedule as a member writes it: texts as typed, checked by the server (`draft()`).
public struct ScheduleFields: Equatable, Sendable {
    public var name: String
    /// "09:30", local to `zone`.
    public var time: String
    /// An IANA zone, "Europe/Berlin".
    public var zone: String
    /// "2026-12-03" for a one-time schedule; nil for a weekly one.
    public var date: String?
    /// "mon" ... "sun" for a weekly schedule; nil for a one-time one.
    public var days: [String]?
    /// The settings to run with; nil: the room's.
    public var settings: RoomSettings?
    /// Focus sessions before the room stops; nil: until stopped.
    public var sessions: Int?
    /// Minutes of warning before the start; nil: 5.
    public var warning: Int?
    /// Nil: on.
    public var enabled: Bool?

    public init(name: String, time: String, zone: String, date: String? = nil, days: [String]? = nil,
                settings: RoomSettings? = nil, sessions: Int? = nil, warning: Int? = nil, enabled: Bool? = nil) {
        self.name = name
        self.time = time
        self.zone = zone
        self.date = date
        self.days = days
        self.settings = settings
        self.sessions = sessions
        self.warning = warning
        self.enabled = enabled
    }

    /// The draft these fields make, or the first field that is wrong. Exactly one of `date` and `days`.
    public func draft() throws(RoomError) -> ScheduleDraft {
        let recurrence: Recurrence
        switch (date, days) {
        case (let date?, nil):
            recurrence = .once(try LocalDate(parsing: date))
        case (nil, let days?):
            var set: Set<Weekday> = []
            for code in days {
                guard let day = Weekday(code: code) else {
                    throw .invalidArgument(field: "days", reason: "must be weekdays written mon, tue, wed, thu, fri, sat, sun")
                }
                set.insert(day)
            }
            recurrence = .weekly(set)
        default:
            throw .invalidArgument(field: "date", reason: "give either a date (one time) or days (every week), not both")
        }
        return ScheduleDraft(name: name, time: try LocalTime(parsing: time), zone: try ZoneName(zone),
                             recurrence: recurrence, settings: settings,
                             length: sessions.map { .focusSessions($0) } ?? .untilStopped,
                             warningMinutes: warning ?? 5, enabled: enabled ?? true)
    }
}

/// A schedule as the server lists it.
public struct SchedulePayload: Equatable, Sendable {
    /// "s1".
    public var id: String
    public var fields: ScheduleFields
    /// Occurrences that did not run (the server was down too long, or the room was in a session).
    public var missed: Int
    /// The next start, epoch milliseconds; nil when it is off or will not come round again.
    public var next: Int64?

    public init(id: String, fields: ScheduleFields, missed: Int, next: Int64?) {
        self.id = id
        self.fields = fields
        self.missed = missed
        self.next = next
    }

    /// The schedule as listed, `next` its next start if any.
    public init(_ s: Schedule, next: WallTime?) {
        var date: String?
        var days: [String]?
        switch s.recurrence {
        case .once(let d): date = d.description
        case .weekly(let set): days = set.sorted().map(\.code)
        }
        var sessions: Int?
        if case .focusSessions(let n) = s.length { sessions = n }
        self.init(id: s.id.description,
                  fields: ScheduleFields(name: s.name, time: s.time.description, zone: s.zone.identifier, date: date,
                                         days: days, settings: s.settings, sessions: sessions,
                                         warning: s.warningMinutes, enabled: s.enabled),
                  missed: s.missed, next: next?.milliseconds)
    }
}

/// A room's schedules: the reply to `schedules`, and what every member gets after a change.
public struct SchedulesPayload: Equatable, Sendable {
    public var room: String
    public var schedules: [SchedulePayload]
    public init(room: String, schedules: [SchedulePayload]) {
        self.room = room
        self.schedules = schedules
    }
}

/// The room's next scheduled start, in the snapshot.
public struct NextSessionPayload: Equatable, Sendable {
    /// The schedule's id, "s1".
    public var schedule: String
    public var name: String
    /// Epoch milliseconds.
    public var startsAt: Int64
    public init(schedule: String, name: String, startsAt: Int64) {
        self.schedule = schedule
        self.name = name
        self.startsAt = startsAt
    }
}

/// The scheduled session under way, in the snapshot: which schedule, and how far through its set it is.
public struct ScheduledRunPayload: Equatable, Sendable {
    /// The schedule's id, "s1".
    public var schedule: String
    public var name: String
    /// Focus sessions in the set; nil: the session runs until somebody stops it.
    public var focusSessions: Int?
    /// Focus sessions completed so far.
    public var focusDone: Int
    public init(schedule: String, name: String, focusSessions: Int?, focusDone: Int) {
        self.schedule = schedule
        self.name = name
        self.focusSessions = focusSessions
        self.focusDone = focusDone
    }
}

/// What a schedule did, as an `event`.
public enum ScheduleEventPayload: Equatable, Sendable {
    /// `scheduleWarning`: "Writing block starts in 5 min".
    case warning(schedule: String, name: String, startsAt: Int64, minutes: Int)
    /// `scheduleStarted`: the server started the room; `lateMs` after the time (0 on time).
    case started(schedule: String, name: String, lateMs: Int64)
    /// `scheduleMissed`: an occurrence did not run; `busy`: the room was in a session.
    case missed(schedule: String, name: String, occurrence: Int64, busy: Bool)
    /// `scheduleEnded`: the scheduled session's focus sessions are done and the room stopped.
    case ended(schedule: String, name: String, focusSessions: Int)

    public var kind: String {
        switch self {
        case .warning: "scheduleWarning"
        case .started: "scheduleStarted"
        case .missed: "scheduleMissed"
        case .ended: "scheduleEnded"
        }
    }
}
