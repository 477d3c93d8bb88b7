import Foundation
import PomodoroCore

/// A room's focus statistics, with each member's: totals over every record, and per-day numbers for a
/// window of days ending today. Days are calendar days in a time zone the client names. The server makes
/// it from the store's running totals (`JournalTotals`); made from the journal's records it is the same.
///
/// Pure: the records and the time come in as arguments.
public struct FocusReport: Equatable, Sendable {
    /// One calendar day in the report's zone.
    public typealias Day = DayTotals
    /// All-time numbers, and the streaks of days with at least one completed focus session.
    public typealias Totals = StatsTotals
    /// A person, known by name.
    public typealias Member = MemberTotals

    public var room: RoomID
    /// The zone's identifier ("Europe/Berlin").
    public var timeZone: String
    /// Today in the zone, `yyyy-MM-dd`.
    public var today: String
    public var totals: Totals
    /// The last `days` days ending today, oldest first, every day present (zeros too).
    public var days: [Day]
    /// Everyone named in the records, by focus time in the window (most first), then by name.
    public var members: [Member]

    /// How many days a report may cover.
    public static let dayRange: ClosedRange<Int> = 1...366

    /// The zone a client named: UTC when it named none, nil when the name is not a known zone.
    public static func timeZone(named name: String?) -> TimeZone? {
        guard let name else { return TimeZone(identifier: "UTC") }
        return TimeZone(identifier: name)
    }

    /// The zone's name as a report gives it: Foundation names the zone asked for as `UTC` (the default)
    /// "GMT", which is the same zone under another name than the one documented and asked for.
    static func reportedName(of zone: TimeZone) -> String {
        zone.identifier == "GMT" ? "UTC" : zone.identifier
    }

    /// The report of `room` from its completed sessions and interruptions.
    ///
    /// A session counts on the day it ended. The room's focus time is the sessions' lengths; a member's
    /// is the time they were present in each (`focusMs`, summed, then in whole seconds). Interruptions of
    /// the room itself (no member) count for the room, those of a member for that member's name.
    /// - Parameter days: the window's length, clamped to `dayRange`.
    public static func make(room: RoomID, sessions: [FocusSessionRecord], interruptions: [InterruptionRecord],
                            days: Int, timeZone: TimeZone, nowMs: Int64) -> FocusReport {
        let zone = LocalDays(timeZone)
        let today = zone.day(atMs: nowMs)
        let window = (today - (min(max(days, dayRange.lowerBound), dayRange.upperBound) - 1))...today

        var roomTally = Tally()
        var memberTallies: [String: Tally] = [:]
        for session in sessions {
            let day = zone.day(atMs: session.endedAtMs)
            roomTally.add(day, sessions: 1, focusMs: Int64(session.lengthSeconds) * 1000)
            // Someone listed twice in one session (two ids, one name) still completed one session.
            var counted = Set<String>()
            for participant in session.participants {
                let first = counted.insert(participant.name).inserted
                memberTallies[participant.name, default: Tally()]
                    .add(day, sessions: first ? 1 : 0, focusMs: participant.focusMs)
            }
        }
        for interruption in interruptions {
            let day = zone.day(atMs: interruption.atMs)
            if interruption.member == nil {
                roomTally.add(day, interruptions: 1)
            } else if let name = interruption.name {
                memberTallies[name, default: Tally()].add(day, interruptions: 1)
            }
        }

        return assemble(room: room, timeZone: timeZone, zone: zone, today: today, window: window,
                        roomTally: roomTally, memberTallies: memberTallies)
    }

    /// The quarters (`JournalTotals`) a report of `days` days at `nowMs` needs: its window's local days,
    /// with a day to spare on each side for the zone's offset.
    public static func quarterRange(days: Int, timeZone: TimeZone, nowMs: Int64) -> Range<Int64> {
        let today = LocalDays(timeZone).day(atMs: nowMs)
        let first = today - (min(max(days, dayRange.lowerBound), dayRange.upperBound) - 1)
        let perDay = JournalTotals.dayMs / JournalTotals.quarterMs
        return Int64(first - 1) * perDay..<Int64(today + 2) * perDay
    }

    /// The report of `room` from its running totals: the same numbers as from its records (see
    /// `JournalTotals` for why they are exact), at a cost that grows with the days, not the sessions.
    /// `totals.quarterRange` must cover `quarterRange(days:timeZone:nowMs:)`.
    public static func make(room: RoomID, totals: JournalTotals, days: Int, timeZone: TimeZone,
                            nowMs: Int64) -> FocusReport {
        let zone = LocalDays(timeZone)
        let today = zone.day(atMs: nowMs)
        let window = (today - (min(max(days, dayRange.lowerBound), dayRange.upperBound) - 1))...today

        var roomTally = Tally()
        var memberTallies: [String: Tally] = [:]
        func update(_ name: String?, _ change: (inout Tally) -> Void) {
            if let name { change(&memberTallies[name, default: Tally()]) } else { change(&roomTally) }
        }
        for bucket in totals.days {
            update(bucket.name) { tally in
                tally.allTime.sessions += bucket.sessions
                tally.allTime.focusMs += bucket.focusMs
                tally.allTime.interruptions += bucket.interruptions
                if bucket.sessions > 0, let first = bucket.firstEndMs, let last = bucket.lastEndMs {
                    tally.active.insert(zone.day(atMs: first))
                    tally.active.insert(zone.day(atMs: last))
                }
            }
        }
        for bucket in totals.quarters {
            let day = zone.day(atMs: bucket.index * JournalTotals.quarterMs)
            guard window.contains(day) else { continue }
            update(bucket.name) { tally in
                tally.byDay[day, default: Tally.Counts()].sessions += bucket.sessions
                tally.byDay[day, default: Tally.Counts()].focusMs += bucket.focusMs
                tally.byDay[day, default: Tally.Counts()].interruptions += bucket.interruptions
            }
        }
        return assemble(room: room, timeZone: timeZone, zone: zone, today: today, window: window,
                        roomTally: roomTally, memberTallies: memberTallies)
    }

    private static func assemble(room: RoomID, timeZone: TimeZone, zone: LocalDays, today: Int,
                                 window: ClosedRange<Int>, roomTally: Tally,
                                 memberTallies: [String: Tally]) -> FocusReport {
        let members = memberTallies
            .map { name, tally in
                (windowMs: tally.focusMs(in: window),
                 member: Member(name: name, totals: tally.totals(today: today),
                                perDay: tally.days(in: window, zone: zone)))
            }
            .sorted { a, b in a.windowMs != b.windowMs ? a.windowMs > b.windowMs : a.member.name < b.member.name }
            .map(\.member)
        return FocusReport(room: room, timeZone: reportedName(of: timeZone), today: zone.date(today),
                           totals: roomTally.totals(today: today), days: roomTally.days(in: window, zone: zone),
                           members: members)
    }
}

/// One person's (or the room's) numbers, by day number.
private struct Tally {
    struct Counts {
        var sessions = 0
        var focusMs: Int64 = 0
        var interruptions = 0
    }

    /// Per local day: every day when made from records, the window's days when made from totals.
    var byDay: [Int: Counts] = [:]
    var allTime = Counts()
    /// The days with at least one completed session.
    var active = Set<Int>()

    mutating func add(_ day: Int, sessions: Int = 0, focusMs: Int64 = 0, interruptions: Int = 0) {
        byDay[day, default: Counts()].sessions += sessions
        byDay[day, default: Counts()].focusMs += focusMs
        byDay[day, default: Counts()].interruptions += interruptions
        allTime.sessions += sessions
        allTime.focusMs += focusMs
        allTime.interruptions += interruptions
        if sessions > 0 { active.insert(day) }
    }

    func focusMs(in window: ClosedRange<Int>) -> Int64 {
        window.reduce(0) { $0 + (byDay[$1]?.focusMs ?? 0) }
    }

    func days(in window: ClosedRange<Int>, zone: LocalDays) -> [FocusReport.Day] {
        window.map { day in
            let counts = byDay[day] ?? Counts()
            return FocusReport.Day(date: zone.date(day), focusSessions: counts.sessions,
                                   focusSeconds: counts.focusMs / 1000, interruptions: counts.interruptions)
        }
    }

    func totals(today: Int) -> FocusReport.Totals {
        let (current, longest) = Self.streaks(active, today: today)
        return FocusReport.Totals(focusSessions: allTime.sessions, focusSeconds: allTime.focusMs / 1000,
                                  interruptions: allTime.interruptions, currentStreak: current,
                                  longestStreak: longest)
    }

    /// Runs of consecutive day numbers. Today has not ended, so a run that reached yesterday is still
    /// current.
    static func streaks(_ active: Set<Int>, today: Int) -> (current: Int, longest: Int) {
        var longest = 0, run = 0
        var previous: Int?
        for day in active.sorted() {
            run = previous == day - 1 ? run + 1 : 1
            longest = max(longest, run)
            previous = day
        }
        var current = 0
        var day = active.contains(today) ? today : today - 1
        while active.contains(day) {
            current += 1
            day -= 1
        }
        return (current, longest)
    }
}

/// Calendar days in one zone, numbered as days since 1970-01-01 (so consecutive days are consecutive
/// numbers, whatever the months and however long a day was on a daylight-saving change).
struct LocalDays {
    let zone: TimeZone
    private static let utc: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        return calendar
    }()

    init(_ zone: TimeZone) { self.zone = zone }

    /// The zone's offset from UTC at that instant, in seconds.
    func offsetSeconds(atMs ms: Int64) -> Int {
        zone.secondsFromGMT(for: Date(timeIntervalSince1970: Double(ms.floorDivided(by: 1000))))
    }

    /// The day number of the local date at that instant.
    func day(atMs ms: Int64) -> Int {
        Int((ms.floorDivided(by: 1000) + Int64(offsetSeconds(atMs: ms))).floorDivided(by: 86_400))
    }

    /// The local date and time at that instant: `yyyy-MM-dd'T'HH:mm:ss±hh:mm`, to the whole second.
    func timestamp(atMs ms: Int64) -> String {
        let offset = offsetSeconds(atMs: ms)
        let local = Self.fields(ofUTCSeconds: ms.floorDivided(by: 1000) + Int64(offset))
        let sign = offset < 0 ? "-" : "+"
        let magnitude = abs(offset)
        var text = "\(pad(local.year, 4))-\(pad(local.month, 2))-\(pad(local.day, 2))"
            + "T\(pad(local.hour, 2)):\(pad(local.minute, 2)):\(pad(local.second, 2))"
            + "\(sign)\(pad(magnitude / 3600, 2)):\(pad(magnitude % 3600 / 60, 2))"
        if magnitude % 60 != 0 { text += ":\(pad(magnitude % 60, 2))" }    // old local mean times
        return text
    }

    /// A day number as `yyyy-MM-dd`.
    func date(_ day: Int) -> String {
        let fields = Self.fields(ofUTCSeconds: Int64(day) * 86_400)
        return "\(pad(fields.year, 4))-\(pad(fields.month, 2))-\(pad(fields.day, 2))"
    }

    /// Reads a UTC calendar: the local wall time, shifted by its offset, has no daylight saving left in it.
    private static func fields(ofUTCSeconds seconds: Int64)
        -> (year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int) {
        let c = utc.dateComponents([.year, .month, .day, .hour, .minute, .second],
                                   from: Date(timeIntervalSince1970: Double(seconds)))
        return (c.year ?? 0, c.month ?? 0, c.day ?? 0, c.hour ?? 0, c.minute ?? 0, c.second ?? 0)
    }

    private func pad(_ value: Int, _ width: Int) -> String {
        let digits = String(value)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }
}

extension Int64 {
    /// Division rounding toward negative infinity, so instants before 1970 fall on the right day.
    func floorDivided(by divisor: Int64) -> Int64 {
        let (quotient, remainder) = quotientAndRemainder(dividingBy: divisor)
        return remainder < 0 ? quotient - 1 : quotient
    }
}
