import Foundation

/// Turning a local date and time in a zone into an instant, and a schedule into the instants it falls on.
///
/// Daylight saving, the rule (the same as RFC 5545, section 3.3.5, so the calendar feed agrees):
/// - a local time that does not exist that day (spring forward, 02:30 in Berlin on the last Sunday of March)
///   is read with the offset from before the change, which moves it forward by the gap: 03:30 local;
/// - a local time that exists twice (fall back, 02:30 in Berlin on the last Sunday of October) is the
///   first of the two, the one still on summer time.
extension ZoneName {
    /// The instant `time` on `date` reads on this zone's clocks, by the rule above.
    public func instant(on date: LocalDate, at time: LocalTime) -> WallTime {
        let local = date.daysSinceEpoch * 86_400 + time.secondsIntoDay
        let zone = timeZone
        // Offsets a day either side: no zone changes its offset twice within two days.
        let before = Int64(zone.secondsFromGMT(for: Date(timeIntervalSince1970: TimeInterval(local - 86_400))))
        let after = Int64(zone.secondsFromGMT(for: Date(timeIntervalSince1970: TimeInterval(local + 86_400))))
        let candidates = [local - before, local - after].filter { utc in
            Int64(zone.secondsFromGMT(for: Date(timeIntervalSince1970: TimeInterval(utc)))) == local - utc
        }
        // Both hold: the time exists twice, take the first. Neither: it falls in a gap, and the offset
        // from before the change moves it forward by the gap.
        return WallTime(seconds: candidates.min() ?? (local - before))
    }

    /// The local date `instant` falls on in this zone.
    public func date(of instant: WallTime) -> LocalDate {
        LocalDate(daysSinceEpoch: CivilDays.floorDiv(instant.seconds + offset(at: instant), 86_400))
    }

    /// The local time of day `instant` reads in this zone, to the second.
    public func secondsIntoDay(of instant: WallTime) -> Int64 {
        let local = instant.seconds + offset(at: instant)
        return local - CivilDays.floorDiv(local, 86_400) * 86_400
    }

    /// The zone's offset from UTC at `instant`, in seconds.
    public func offset(at instant: WallTime) -> Int64 {
        Int64(timeZone.secondsFromGMT(for: Date(timeIntervalSince1970: TimeInterval(instant.seconds))))
    }
}

extension Schedule {
    /// Whether the schedule comes round on `date` (whatever the time).
    public func fallsOn(_ date: LocalDate) -> Bool {
        switch recurrence {
        case .once(let day): day == date
        case .weekly(let days): days.contains(date.weekday)
        }
    }

    /// The first time the schedule falls on at or after `start`, or nil when it never does again (a
    /// one-time schedule whose time has passed). Whether it is switched on does not matter here.
    public func nextOccurrence(onOrAfter start: WallTime) -> WallTime? {
        switch recurrence {
        case .once(let date):
            let at = zone.instant(on: date, at: time)
            return at >= start ? at : nil
        case .weekly:
            // From the day before (an instant late on one day in UTC may be the next day's morning in the
            // zone, and a gap may move a time into the next day) through eight days on.
            let first = zone.date(of: start).daysSinceEpoch - 1
            for day in first...(first + 9) {
                let date = LocalDate(daysSinceEpoch: day)
                guard fallsOn(date) else { continue }
                let at = zone.instant(on: date, at: time)
                if at >= start { return at }
            }
            return nil
        }
    }

    /// Every time the schedule falls on in `start...end`, in order.
    public func occurrences(from start: WallTime, through end: WallTime) -> [WallTime] {
        var found: [WallTime] = []
        var cursor = start
        while cursor <= end, let next = nextOccurrence(onOrAfter: cursor), next <= end {
            found.append(next)
            cursor = next + 1
        }
        return found
    }

    /// The last time the schedule fell on in `(after, through]`, and how many earlier ones it skipped.
    func latestOccurrence(after: WallTime, through end: WallTime) -> (at: WallTime, earlier: Int)? {
        let all = occurrences(from: after + 1, through: end)
        guard let last = all.last else { return nil }
        return (last, all.count - 1)
    }

    /// When the "starts in N min" warning for the occurrence at `start` goes out, or nil for no warning.
    public func warningInstant(for start: WallTime) -> WallTime? {
        warningMinutes > 0 ? start - Int64(warningMinutes * 60) : nil
    }

    /// The settings the session runs with.
    public func sessionSettings(room: RoomSettings) -> RoomSettings { settings ?? room }

    /// How long the session is planned to last, for the calendar: the focus sessions and the breaks between
    /// them (long breaks where the settings put them); a session run until stopped shows as one focus.
    public func plannedLength(room: RoomSettings) -> Int64 {
        let s = sessionSettings(room: room)
        guard case .focusSessions(let n) = length else { return Int64(s.focus) }
        var total = Int64(n * s.focus)
        for k in stride(from: 1, to: n, by: 1) {
            total += Int64(k % s.longBreakEvery == 0 ? s.longBreak : s.shortBreak)
        }
        return total
    }
}
