// The numbers of a stats report, one shape for the store that counts them (`FocusReport`) and the wire that
// carries them (PomodoroProtocol's stats payloads). See docs/PROTOCOL.md, "Stats and history".

/// A room's or a member's counters over all time, with their streaks of days.
public struct StatsTotals: Equatable, Sendable {
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
    public static let zero = StatsTotals(focusSessions: 0, focusSeconds: 0, interruptions: 0,
                                         currentStreak: 0, longestStreak: 0)
}

/// One calendar day's counters, in the report's time zone.
public struct DayTotals: Equatable, Sendable {
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

/// One person in a stats report, known by name: someone who comes back another day under the same name (with
/// a new member id) carries on their numbers and their streak.
public struct MemberTotals: Equatable, Sendable {
    public var name: String
    public var totals: StatsTotals
    /// The report's window of days, oldest first.
    public var perDay: [DayTotals]

    public init(name: String, totals: StatsTotals, perDay: [DayTotals]) {
        self.name = name
        self.totals = totals
        self.perDay = perDay
    }
}
