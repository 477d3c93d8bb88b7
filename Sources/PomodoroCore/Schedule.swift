import Foundation

/// A time on the wall clock: whole seconds since the Unix epoch (UTC).
///
/// Schedules live on the wall clock, not on the monotonic `Instant` the timers use: "09:30 in Berlin" is a
/// statement about the calendar. The server turns one into the other with its wall-minus-monotonic offset.
public struct WallTime: Comparable, Hashable, Sendable, CustomStringConvertible {
    public var seconds: Int64
    public init(seconds: Int64) { self.seconds = seconds }
    public init(milliseconds: Int64) {
        seconds = milliseconds >= 0 ? milliseconds / 1000 : (milliseconds - 999) / 1000
    }

    public var milliseconds: Int64 { seconds * 1000 }
    public static func < (lhs: WallTime, rhs: WallTime) -> Bool { lhs.seconds < rhs.seconds }
    public static func + (lhs: WallTime, rhs: Int64) -> WallTime { WallTime(seconds: lhs.seconds + rhs) }
    public static func - (lhs: WallTime, rhs: Int64) -> WallTime { WallTime(seconds: lhs.seconds - rhs) }
    public static func - (lhs: WallTime, rhs: WallTime) -> Int64 { lhs.seconds - rhs.seconds }
    public var description: String { "WallTime(\(seconds)s)" }
}

/// A schedule's number within its room ("s1", "s2", ...): never reused while the room lives.
public struct ScheduleID: Hashable, Sendable, Comparable, CustomStringConvertible {
    public let number: Int
    public init(_ number: Int) { self.number = number }
    /// Reads "s12"; nil for anything else.
    public init?(parsing text: String) {
        guard text.hasPrefix("s"), let n = Int(text.dropFirst()), n > 0, "s\(n)" == text else { return nil }
        number = n
    }
    public var description: String { "s\(number)" }
    public static func < (lhs: ScheduleID, rhs: ScheduleID) -> Bool { lhs.number < rhs.number }
}

/// A day of the week. The raw values count from Monday (ISO 8601), as `BYDAY` lists them.
public enum Weekday: Int, CaseIterable, Hashable, Sendable, Comparable {
    case monday = 1, tuesday, wednesday, thursday, friday, saturday, sunday

    /// "mon", "tue", ...: the wire's and the store's spelling.
    public var code: String {
        switch self {
        case .monday: "mon"
        case .tuesday: "tue"
        case .wednesday: "wed"
        case .thursday: "thu"
        case .friday: "fri"
        case .saturday: "sat"
        case .sunday: "sun"
        }
    }

    public init?(code: String) {
        guard let day = Weekday.allCases.first(where: { $0.code == code }) else { return nil }
        self = day
    }

    /// "MO", "TU", ...: iCalendar's spelling.
    public var iCalendarCode: String { String(code.prefix(2)).uppercased() }

    public static func < (lhs: Weekday, rhs: Weekday) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// A day on the calendar, with no zone: what a one-time schedule names.
public struct LocalDate: Hashable, Sendable, Comparable, CustomStringConvertible {
    public let year: Int
    public let month: Int
    public let day: Int

    /// Throws when the date does not exist (2026-02-30) or is outside 2000–2999.
    public init(year: Int, month: Int, day: Int) throws(RoomError) {
        guard (2000...2999).contains(year), (1...12).contains(month),
              (1...CivilDays.daysIn(month: month, year: year)).contains(day) else {
            throw .invalidArgument(field: "date", reason: "must be a real date from 2000-01-01 to 2999-12-31")
        }
        self.year = year
        self.month = month
        self.day = day
    }

    /// Reads "2026-11-30".
    public init(parsing text: String) throws(RoomError) {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard text.utf8.count == 10, parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
              let y = Int(parts[0]), let m = Int(parts[1]), let d = Int(parts[2]) else {
            throw .invalidArgument(field: "date", reason: "must be YYYY-MM-DD")
        }
        try self.init(year: y, month: m, day: d)
    }

    init(daysSinceEpoch days: Int64) {
        let (y, m, d) = CivilDays.civil(fromDays: days)
        year = y
        month = m
        day = d
    }

    /// Days since 1970-01-01.
    public var daysSinceEpoch: Int64 { CivilDays.days(year: year, month: month, day: day) }
    public var weekday: Weekday { CivilDays.weekday(ofDays: daysSinceEpoch) }
    /// "2026-11-30".
    public var description: String {
        "\(year)-\(month < 10 ? "0" : "")\(month)-\(day < 10 ? "0" : "")\(day)"
    }
    public static func < (lhs: LocalDate, rhs: LocalDate) -> Bool { lhs.daysSinceEpoch < rhs.daysSinceEpoch }
}

/// A time of day on the wall clock, to the minute.
public struct LocalTime: Hashable, Sendable, Comparable, CustomStringConvertible {
    public let hour: Int
    public let minute: Int

    public init(hour: Int, minute: Int) throws(RoomError) {
        guard (0...23).contains(hour), (0...59).contains(minute) else {
            throw .invalidArgument(field: "time", reason: "must be HH:MM from 00:00 to 23:59")
        }
        self.hour = hour
        self.minute = minute
    }

    /// Reads "09:30".
    public init(parsing text: String) throws(RoomError) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard text.utf8.count == 5, parts.count == 2, parts[0].count == 2, parts[1].count == 2,
              let h = Int(parts[0]), let m = Int(parts[1]) else {
            throw .invalidArgument(field: "time", reason: "must be HH:MM from 00:00 to 23:59")
        }
        try self.init(hour: h, minute: m)
    }

    public var secondsIntoDay: Int64 { Int64(hour * 3600 + minute * 60) }
    /// "09:30".
    public var description: String { "\(hour < 10 ? "0" : "")\(hour):\(minute < 10 ? "0" : "")\(minute)" }
    public static func < (lhs: LocalTime, rhs: LocalTime) -> Bool { lhs.secondsIntoDay < rhs.secondsIntoDay }
}

/// An IANA time zone ("Europe/Berlin"), checked against the zone database when made.
public struct ZoneName: Hashable, Sendable, CustomStringConvertible {
    public let identifier: String

    /// Accepts names of the IANA database only ("Europe/Berlin", "UTC"), not abbreviations ("CET", "EST")
    /// nor fixed offsets ("GMT+2"): a schedule must follow its place's daylight-saving rules.
    public init(_ identifier: String) throws(RoomError) {
        guard identifier.utf8.count <= 64, identifier == "UTC" || identifier.contains("/"),
              !identifier.hasPrefix("Etc/"), TimeZone(identifier: identifier) != nil else {
            throw .invalidArgument(field: "zone", reason: "must be an IANA time zone such as Europe/Berlin")
        }
        self.identifier = identifier
    }

    var timeZone: TimeZone { TimeZone(identifier: identifier)! }
    public var description: String { identifier }
}

/// When a schedule comes round: once, on a date, or every week on some days.
public enum Recurrence: Hashable, Sendable {
    case once(LocalDate)
    case weekly(Set<Weekday>)
}

/// How long a scheduled session runs.
public enum SessionLength: Hashable, Sendable {
    /// The room stops after this many focus sessions (with the breaks between them).
    case focusSessions(Int)
    /// The room runs until somebody stops it.
    case untilStopped
}

/// A room's scheduled session: "Writing block, Thursdays 14:00 Europe/Berlin, four pomodoros".
///
/// A plain value: the times it falls on are computed from it and an instant passed in
/// (`Schedule+Recurrence.swift`); what is due at a moment is `ScheduleBook`'s business.
public struct Schedule: Hashable, Sendable {
    public let id: ScheduleID
    public var name: String
    public var time: LocalTime
    public var zone: ZoneName
    public var recurrence: Recurrence
    /// The settings the session runs with; nil runs it with the room's own.
    public var settings: RoomSettings?
    public var length: SessionLength
    /// How many minutes before the start the room is told it is coming (0: not told).
    public var warningMinutes: Int
    public var enabled: Bool
    /// Since when the schedule holds as it is (made, changed or switched on): occurrences before it are not
    /// its own. The calendar feed starts the series here.
    public var since: WallTime
    /// Occurrences up to and including this time have been dealt with (run, or counted as missed).
    public var handledThrough: WallTime
    /// Occurrences that fell due while the server could not run them in time.
    public var missed: Int

    public init(id: ScheduleID, name: String, time: LocalTime, zone: ZoneName, recurrence: Recurrence,
                settings: RoomSettings? = nil, length: SessionLength = .untilStopped,
                warningMinutes: Int = 5, enabled: Bool = true, since: WallTime,
                handledThrough: WallTime? = nil, missed: Int = 0) {
        self.id = id
        self.name = name
        self.time = time
        self.zone = zone
        self.recurrence = recurrence
        self.settings = settings
        self.length = length
        self.warningMinutes = warningMinutes
        self.enabled = enabled
        self.since = since
        self.handledThrough = handledThrough ?? since
        self.missed = missed
    }

    public var isOneTime: Bool { if case .once = recurrence { true } else { false } }
}

/// What a member sends to make or change a schedule: everything but the bookkeeping.
public struct ScheduleDraft: Hashable, Sendable {
    public var name: String
    public var time: LocalTime
    public var zone: ZoneName
    public var recurrence: Recurrence
    public var settings: RoomSettings?
    public var length: SessionLength
    public var warningMinutes: Int
    public var enabled: Bool

    public init(name: String, time: LocalTime, zone: ZoneName, recurrence: Recurrence,
                settings: RoomSettings? = nil, length: SessionLength = .untilStopped,
                warningMinutes: Int = 5, enabled: Bool = true) {
        self.name = name
        self.time = time
        self.zone = zone
        self.recurrence = recurrence
        self.settings = settings
        self.length = length
        self.warningMinutes = warningMinutes
        self.enabled = enabled
    }
}

/// The bounds on a room's schedules, set once by the server's configuration.
public struct SchedulePolicy: Equatable, Sendable {
    /// Schedules a room holds at most.
    public var maxSchedules: Int
    /// Longest schedule name, in characters.
    public var maxNameLength: Int
    /// How late a start may be and still happen: an occurrence that fell due while the server was down
    /// starts when it comes back within this span; later than that it is counted as missed. Five minutes:
    /// a restart for a deploy catches the session, a morning's outage does not start it at lunch.
    public var lateStartGrace: Int64
    /// The allowed focus sessions of a scheduled session.
    public static let focusSessionsRange: ClosedRange<Int> = 1...24
    /// The allowed warning, in minutes before the start.
    public static let warningMinutesRange: ClosedRange<Int> = 0...60

    public init(maxSchedules: Int = 20, maxNameLength: Int = 60, lateStartGrace: Int64 = 300) {
        self.maxSchedules = maxSchedules
        self.maxNameLength = maxNameLength
        self.lateStartGrace = lateStartGrace
    }

    public static let standard = SchedulePolicy()

    /// The draft with its name cleaned, or `invalidArgument` naming the first field out of bounds.
    public func validated(_ draft: ScheduleDraft, settingsPolicy: RoomPolicy) throws(RoomError) -> ScheduleDraft {
        var draft = draft
        draft.name = try TextRules.clean(draft.name, field: "name", allowEmpty: false, maxLength: maxNameLength)
        if case .weekly(let days) = draft.recurrence, days.isEmpty {
            throw .invalidArgument(field: "days", reason: "must name at least one weekday")
        }
        if case .focusSessions(let n) = draft.length, !Self.focusSessionsRange.contains(n) {
            throw .invalidArgument(field: "sessions", reason: "must be \(Self.focusSessionsRange.lowerBound)–\(Self.focusSessionsRange.upperBound), or null to run until stopped")
        }
        if !Self.warningMinutesRange.contains(draft.warningMinutes) {
            throw .invalidArgument(field: "warning", reason: "must be \(Self.warningMinutesRange.lowerBound)–\(Self.warningMinutesRange.upperBound) minutes")
        }
        if let settings = draft.settings {
            if settings.aligned != nil {
                throw .invalidArgument(field: "aligned", reason: "is a room's setting: a schedule starts at its own time")
            }
            try settings.validate()
            if settings.focus < settingsPolicy.minFocusSeconds {
                throw .invalidArgument(field: "focus", reason: "must be at least \(settingsPolicy.minFocusSeconds) seconds")
            }
        }
        return draft
    }
}

/// Days since 1970-01-01 and back, on the proleptic Gregorian calendar (H. Hinnant's algorithms): exact,
/// with no calendar object and no zone.
enum CivilDays {
    static func days(year: Int, month: Int, day: Int) -> Int64 {
        let y = Int64(month <= 2 ? year - 1 : year)
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let m = Int64(month)
        let doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + Int64(day) - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    static func civil(fromDays z0: Int64) -> (Int, Int, Int) {
        let z = z0 + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (Int(yoe + era * 400 + (m <= 2 ? 1 : 0)), Int(m), Int(d))
    }

    /// 1970-01-01 was a Thursday.
    static func weekday(ofDays days: Int64) -> Weekday {
        let fromMonday = ((days + 3) % 7 + 7) % 7
        return Weekday(rawValue: Int(fromMonday) + 1)!
    }

    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    static func floorDiv(_ a: Int64, _ b: Int64) -> Int64 { a >= 0 ? a / b : -((-a + b - 1) / b) }
}
