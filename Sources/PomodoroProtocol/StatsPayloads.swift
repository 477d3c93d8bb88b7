import PomodoroCore

// The stats report (the `stats` reply, and the body of GET /api/rooms/{room}/stats) and the focus history
// (the body of GET /api/rooms/{room}/history), as sent on the wire. See docs/PROTOCOL.md, "Stats and history".

/// A room's or a member's counters over all time, with their streaks of days.
public struct StatsTotalsPayload: Equatable, Sendable {
    /// Completed focus sessions.
    public var focusSessions: Int
    public var focusSeconds: Int64
    public var interruptions: Int
    /// Consecutive days with a completed focus session, ending today (or yesterday while today has none).
    public var currentStreak: Int
    public var longestStreak: Int

    public init(focusSessions: Int, focusSeconds: Int64, interruptions: Int, currentStreak: Int,
                longestStreak: Int) {
        self.focusSessions = focusSessions
        self.focusSeconds = focusSeconds
        self.interruptions = interruptions
        self.currentStreak = currentStreak
        self.longestStreak = longestStreak
    }

    /// All zeros: a room never seen, or a member with nothing yet.
    public static let zero = StatsTotalsPayload(focusSessions: 0, focusSeconds: 0, interruptions: 0,
                                                currentStreak: 0, longestStreak: 0)
}

/// One day's counters, the day a calendar date in the report's time zone.
public struct DayTotalsPayload: Equatable, Sendable {
    /// `YYYY-MM-DD`.
    public var date: String
    public var focusSessions: Int
    public var focusSeconds: Int64
    public var interruptions: Int

    public init(date: String, focusSessions: Int, focusSeconds: Int64, interruptions: Int) {
        self.date = date
        self.focusSessions = focusSessions
        self.focusSeconds = focusSeconds
        self.interruptions = interruptions
    }
}

/// One person in a stats report, counted by name across visits.
public struct MemberStatsPayload: Equatable, Sendable {
    public var name: String
    public var totals: StatsTotalsPayload
    /// The same dates as the report's `perDay`.
    public var perDay: [DayTotalsPayload]

    public init(name: String, totals: StatsTotalsPayload, perDay: [DayTotalsPayload]) {
        self.name = name
        self.totals = totals
        self.perDay = perDay
    }
}

/// A room's stats: all-time totals and the last `days` days, for the room and for each person.
public struct StatsReportPayload: Equatable, Sendable {
    public var room: String
    /// The IANA time zone the days are counted in.
    public var tz: String
    /// Today's date in `tz`, `YYYY-MM-DD`: the last entry of `perDay`.
    public var today: String
    public var days: Int
    public var totals: StatsTotalsPayload
    /// `days` entries, oldest first, today last; days without sessions are there with zeros.
    public var perDay: [DayTotalsPayload]
    /// By focus seconds in the window, most first, then by name.
    public var members: [MemberStatsPayload]

    public init(room: String, tz: String, today: String, days: Int, totals: StatsTotalsPayload,
                perDay: [DayTotalsPayload], members: [MemberStatsPayload]) {
        self.room = room
        self.tz = tz
        self.today = today
        self.days = days
        self.totals = totals
        self.perDay = perDay
        self.members = members
    }
}

/// Someone who was present when a focus session completed.
public struct FocusSessionMemberPayload: Equatable, Sendable {
    /// The member id they had in the room then.
    public var id: String
    public var name: String
    /// What they were working on ("" when nothing).
    public var task: String
    /// Time they were present during the session, whole seconds rounded down.
    public var focusSeconds: Int64

    public init(id: String, name: String, task: String, focusSeconds: Int64) {
        self.id = id
        self.name = name
        self.task = task
        self.focusSeconds = focusSeconds
    }
}

/// One completed focus session of a room's history.
public struct FocusSessionPayload: Equatable, Sendable {
    /// When the focus phase first started and when it ended, wall-clock epoch milliseconds.
    public var startedAt: Int64
    public var endedAt: Int64
    /// The phase's length including extensions, in seconds.
    public var lengthSeconds: Int
    public var members: [FocusSessionMemberPayload]

    public init(startedAt: Int64, endedAt: Int64, lengthSeconds: Int, members: [FocusSessionMemberPayload]) {
        self.startedAt = startedAt
        self.endedAt = endedAt
        self.lengthSeconds = lengthSeconds
        self.members = members
    }
}

/// A page of a room's focus history, newest first.
public struct HistoryPayload: Equatable, Sendable {
    public var room: String
    public var sessions: [FocusSessionPayload]
    /// The `before` that fetches the next (older) page; nil when there is no more.
    public var nextBefore: Int64?

    public init(room: String, sessions: [FocusSessionPayload], nextBefore: Int64?) {
        self.room = room
        self.sessions = sessions
        self.nextBefore = nextBefore
    }
}

extension FocusSessionPayload {
    /// A journal entry as sent on the wire.
    public init(_ record: FocusSessionRecord) {
        self.init(startedAt: record.startedAtMs, endedAt: record.endedAtMs, lengthSeconds: record.lengthSeconds,
                  members: record.participants.map {
                      FocusSessionMemberPayload(id: $0.member.rawValue, name: $0.name, task: $0.task,
                                                focusSeconds: $0.focusMs / 1000)
                  })
    }
}

extension ErrorCode {
    /// The HTTP status that goes with this code on the HTTP endpoints (docs/PROTOCOL.md §12).
    public var httpStatus: Int {
        switch self {
        case .badPasscode: 401
        case .forbidden: 403
        case .notFound: 404
        case .tooLarge: 413
        case .rateLimited: 429
        case .internalError: 500
        case .unavailable, .storeUnavailable, .shuttingDown: 503
        default: 400
        }
    }
}
