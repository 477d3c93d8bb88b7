import PomodoroCore

// The stats report (the `stats` reply, and the body of GET /api/rooms/{room}/stats) and the focus history
// (the body of GET /api/rooms/{room}/history), as sent on the wire. See docs/PROTOCOL.md, "Stats and history".

/// The counters as the wire carries them: the core's values, as the store's report counts them.
public typealias StatsTotalsPayload = StatsTotals
public typealias DayTotalsPayload = DayTotals
public typealias MemberStatsPayload = MemberTotals

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
