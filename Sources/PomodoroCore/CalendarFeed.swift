import Foundation

/// A room's schedules as an iCalendar (RFC 5545) feed that calendar apps subscribe to.
///
/// One `VEVENT` per schedule that is switched on: a one-time schedule is a single event, a recurring one
/// an event with `RRULE:FREQ=WEEKLY;BYDAY=...`. Times are local with `DTSTART;TZID=<IANA name>`, so a 09:30
/// schedule stays 09:30 across daylight-saving changes in every app; the daylight-saving rule for times
/// that do not exist or exist twice is RFC 5545's own, which the server follows too (`ZoneName.instant`).
/// The series starts at the schedule's first occurrence since it was made, changed or switched on, so an
/// event's `UID` and its occurrences stay put from one fetch to the next.
///
/// Each zone gets a `VTIMEZONE`, as the RFC requires, listing the zone's actual offset changes from a year
/// before the feed's earliest event to five years after it is written. Apps that know the IANA name (all
/// common ones do) use their own rules beyond that; the rest carry the last offset on.
///
/// Lines end in CRLF and are folded at 75 octets (never inside a UTF-8 sequence); text is escaped.
public enum CalendarFeed {
    /// The feed for `room`. `now` stamps it (`DTSTAMP`) and bounds its time zone data; `link` is the
    /// room's page, if known.
    public static func write(room: RoomID, schedules: [Schedule], roomSettings: RoomSettings,
                             now: WallTime, link: String? = nil) -> String {
        var lines = [
            "BEGIN:VCALENDAR",
            "VERSION:2.0",
            "PRODID:-//Pomodoro//Room schedules//EN",
            "CALSCALE:GREGORIAN",
            "METHOD:PUBLISH",
            "X-WR-CALNAME:\(escape("Pomodoro: \(room.rawValue)"))",
        ]
        let events = schedules.filter(\.enabled).compactMap { s in firstStart(of: s).map { (s, $0) } }
        let earliest = events.map(\.1).min() ?? now
        let zones = Set(events.map { $0.0.zone })
        for zone in zones.sorted(by: { $0.identifier < $1.identifier }) {
            lines += timeZoneLines(zone, from: min(earliest, now) - 366 * 86_400, through: now + 5 * 366 * 86_400)
        }
        for (schedule, start) in events {
            lines += eventLines(schedule, start: start, room: room, roomSettings: roomSettings, now: now, link: link)
        }
        lines.append("END:VCALENDAR")
        return lines.map(fold).joined()
    }

    /// Where the feed's series for `schedule` starts: its first occurrence since `since`.
    public static func firstStart(of schedule: Schedule) -> WallTime? {
        switch schedule.recurrence {
        case .once(let date): schedule.zone.instant(on: date, at: schedule.time)
        case .weekly: schedule.nextOccurrence(onOrAfter: schedule.since)
        }
    }

    static func eventLines(_ s: Schedule, start: WallTime, room: RoomID, roomSettings: RoomSettings,
                           now: WallTime, link: String?) -> [String] {
        let settings = s.sessionSettings(room: roomSettings)
        let localDay: LocalDate = switch s.recurrence {
        case .once(let date): date
        // The day the first occurrence falls on (a time moved by a gap stays on its day).
        case .weekly: s.zone.date(of: start)
        }
        var lines = [
            "BEGIN:VEVENT",
            "UID:\(s.id).\(room.rawValue)@pomodoro",
            "DTSTAMP:\(utcStamp(now))",
            "DTSTART;TZID=\(s.zone.identifier):\(compact(localDay))T\(twoDigits(s.time.hour))\(twoDigits(s.time.minute))00",
            "DURATION:\(duration(s.plannedLength(room: roomSettings)))",
        ]
        if case .weekly(let days) = s.recurrence {
            lines.append("RRULE:FREQ=WEEKLY;BYDAY=\(days.sorted().map(\.iCalendarCode).joined(separator: ","))")
        }
        let what: String = switch s.length {
        case .focusSessions(let n): "\(n) focus session\(n == 1 ? "" : "s") of \(minutes(settings.focus))"
        case .untilStopped: "Focus sessions of \(minutes(settings.focus)) until stopped"
        }
        lines.append("SUMMARY:\(escape(s.name))")
        lines.append("DESCRIPTION:\(escape("\(what), short breaks of \(minutes(settings.shortBreak)), in room \(room.rawValue)."))")
        if let link { lines.append("URL:\(link)") }
        if s.warningMinutes > 0 {
            lines += [
                "BEGIN:VALARM",
                "ACTION:DISPLAY",
                "TRIGGER:-PT\(s.warningMinutes)M",
                "DESCRIPTION:\(escape("\(s.name) starts in \(s.warningMinutes) min"))",
                "END:VALARM",
            ]
        }
        lines.append("END:VEVENT")
        return lines
    }

    /// The zone's offset changes in `from...through`, each its own observance, after one for the offset in
    /// force at `from`.
    static func timeZoneLines(_ zone: ZoneName, from: WallTime, through: WallTime) -> [String] {
        let tz = zone.timeZone
        var lines = ["BEGIN:VTIMEZONE", "TZID:\(zone.identifier)"]
        func observance(at instant: WallTime, offsetFrom: Int64, offsetTo: Int64) {
            let date = Date(timeIntervalSince1970: TimeInterval(instant.seconds))
            let kind = tz.isDaylightSavingTime(for: date) ? "DAYLIGHT" : "STANDARD"
            // DTSTART is the local time of the change on the clocks before it.
            let local = WallTime(seconds: instant.seconds + offsetFrom)
            let day = LocalDate(daysSinceEpoch: CivilDays.floorDiv(local.seconds, 86_400))
            let secs = local.seconds - CivilDays.floorDiv(local.seconds, 86_400) * 86_400
            lines += [
                "BEGIN:\(kind)",
                "DTSTART:\(compact(day))T\(twoDigits(Int(secs / 3600)))\(twoDigits(Int(secs / 60 % 60)))\(twoDigits(Int(secs % 60)))",
                "TZOFFSETFROM:\(offsetText(offsetFrom))",
                "TZOFFSETTO:\(offsetText(offsetTo))",
            ]
            if let name = tz.abbreviation(for: date), !name.isEmpty { lines.append("TZNAME:\(escape(name))") }
            lines.append("END:\(kind)")
        }
        var offset = zone.offset(at: from)
        observance(at: from, offsetFrom: offset, offsetTo: offset)
        var cursor = Date(timeIntervalSince1970: TimeInterval(from.seconds))
        while let next = tz.nextDaylightSavingTimeTransition(after: cursor), next.timeIntervalSince1970 <= TimeInterval(through.seconds) {
            let instant = WallTime(seconds: Int64(next.timeIntervalSince1970.rounded()))
            let newOffset = zone.offset(at: instant)
            if newOffset != offset { observance(at: instant, offsetFrom: offset, offsetTo: newOffset) }
            offset = newOffset
            cursor = next
        }
        lines.append("END:VTIMEZONE")
        return lines
    }

    // MARK: Text

    /// TEXT values: backslash, semicolon, comma and line breaks escaped (RFC 5545, 3.3.11).
    public static func escape(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\\": out += "\\\\"
            case ";": out += "\\;"
            case ",": out += "\\,"
            case "\n": out += "\\n"
            case "\r": continue
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// One content line, folded so that no line is longer than 75 octets (a continuation line starts with a
    /// space, which counts), never inside a UTF-8 sequence, and ended with CRLF.
    public static func fold(_ line: String) -> String {
        var out = ""
        var width = 0
        for scalar in line.unicodeScalars {
            let size = String(scalar).utf8.count
            if width + size > 75 {
                out += "\r\n "
                width = 1
            }
            out.unicodeScalars.append(scalar)
            width += size
        }
        return out + "\r\n"
    }

    private static func twoDigits(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }

    private static func compact(_ date: LocalDate) -> String {
        String(date.year) + twoDigits(date.month) + twoDigits(date.day)
    }

    /// "20261125T120000Z".
    static func utcStamp(_ t: WallTime) -> String {
        let day = LocalDate(daysSinceEpoch: CivilDays.floorDiv(t.seconds, 86_400))
        let secs = t.seconds - CivilDays.floorDiv(t.seconds, 86_400) * 86_400
        return "\(compact(day))T\(twoDigits(Int(secs / 3600)))\(twoDigits(Int(secs / 60 % 60)))\(twoDigits(Int(secs % 60)))Z"
    }

    /// "+0100", "-0430", "+053730".
    static func offsetText(_ seconds: Int64) -> String {
        let sign = seconds < 0 ? "-" : "+"
        let a = abs(seconds)
        let base = "\(sign)\(twoDigits(Int(a / 3600)))\(twoDigits(Int(a / 60 % 60)))"
        return a % 60 == 0 ? base : base + twoDigits(Int(a % 60))
    }

    /// "PT1H55M", "PT25M", "PT30S".
    static func duration(_ seconds: Int64) -> String {
        let h = seconds / 3600, m = seconds / 60 % 60, s = seconds % 60
        var text = "PT"
        if h > 0 { text += "\(h)H" }
        if m > 0 { text += "\(m)M" }
        if s > 0 || seconds == 0 { text += "\(s)S" }
        return text
    }

    private static func minutes(_ seconds: Int) -> String {
        seconds % 60 == 0 ? "\(seconds / 60) min" : "\(seconds) s"
    }
}
