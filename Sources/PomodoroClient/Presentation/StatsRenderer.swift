import PomodoroProtocol

/// `pomo stats`: a room's stats report as plain text lines, a table per person and a bar chart per day.
///
/// The table counts the report's window (`days` days up to today): sessions, focus time and interruptions
/// per person, then the whole room; the streaks are the report's, in days. The chart draws each day's focus
/// minutes with eighth blocks, scaled so the best day fills the width. No escape codes, no trailing spaces;
/// every line fits `columns` (from 30 on; narrower gets 30).
public enum StatsRenderer {
    /// The narrowest layout drawn.
    public static let minimumColumns = 30

    public static func render(_ report: StatsReportPayload, columns: Int) -> String {
        lines(report, columns: columns).joined(separator: "\n")
    }

    public static func lines(_ report: StatsReportPayload, columns requested: Int) -> [String] {
        let columns = max(minimumColumns, requested)
        let roomWindow = sum(report.perDay)
        var out = wrap(title(report), columns: columns) + [""]
        if report.members.isEmpty && report.totals.focusSessions == 0 && roomWindow.focusSessions == 0
            && roomWindow.focusSeconds == 0 {
            out += wrap("No focus sessions in \(report.room) yet.", columns: columns)
            return out
        }
        out += table(report, columns: columns)
        out.append("")
        let t = report.totals
        out += wrap("All time: \(count(t.focusSessions, "session")), \(hoursMinutes(t.focusSeconds)) of focus, "
                    + "\(count(t.interruptions, "interruption")).", columns: columns)
        if !report.perDay.isEmpty {
            out.append("")
            out.append("FOCUS MINUTES PER DAY")
            out += chart(report.perDay, columns: columns)
        }
        return out.map(trimmingTrailingSpaces)
    }

    // MARK: Parts

    static func title(_ report: StatsReportPayload) -> String {
        let window = report.days == 1 ? "today" : "last \(report.days) days"
        let first = report.perDay.first?.date ?? report.today
        let span = report.days == 1 ? report.today : "\(first) to \(report.today)"
        return "\(report.room) · \(window), \(span) (\(report.tz))"
    }

    /// The table: a heading, a row per person, a rule, the whole room, and what the columns count.
    static func table(_ report: StatsReportPayload, columns: Int) -> [String] {
        struct Row {
            var name: String
            var cells: [String]
        }
        func row(_ name: String, _ window: DayTotalsPayload, _ totals: StatsTotalsPayload) -> Row {
            Row(name: name, cells: ["\(window.focusSessions)", hoursMinutes(window.focusSeconds), "\(window.interruptions)",
                                    "\(totals.currentStreak)", "\(totals.longestStreak)"])
        }
        let people = report.members.map { row($0.name, sum($0.perDay), $0.totals) }
        let room = row("Whole room", sum(report.perDay), report.totals)

        let wide = ["SESSIONS", "FOCUS", "INTERRUPTIONS", "STREAK", "LONGEST"]
        let compact = ["SESS", "FOCUS", "INT", "STRK", "BEST"]
        func widths(_ headings: [String]) -> [Int] {
            headings.indices.map { i in ([headings[i]] + (people + [room]).map { $0.cells[i] }).map(TextWidth.of).max()! }
        }
        let longestName = (["NAME", room.name] + people.map(\.name)).map(TextWidth.of).max()!
        // The wide headings when they leave room for every name or a dozen columns, else the short ones, one
        // space apart.
        var headings = wide, gap = 2
        if columns - widths(wide).reduce(0, +) - gap * wide.count < min(12, longestName) {
            headings = compact
            gap = 1
        }
        let cellWidths = widths(headings)
        let available = max(4, columns - cellWidths.reduce(0, +) - gap * headings.count)
        let nameWidth = min(available, longestName)

        func line(_ name: String, _ cells: [String]) -> String {
            var text = TextWidth.fit(name, columns: nameWidth)
            for (cell, width) in zip(cells, cellWidths) {
                text += String(repeating: " ", count: gap + width - TextWidth.of(cell)) + cell
            }
            return text
        }
        var out = [line("NAME", headings)]
        out += people.map { line($0.name, $0.cells) }
        out.append(String(repeating: "─", count: nameWidth + cellWidths.reduce(0, +) + gap * headings.count))
        out.append(line(room.name, room.cells))
        let window = report.days == 1 ? "today" : "the last \(report.days) days"
        let legend = headings == wide
            ? "Sessions, focus (h:mm) and interruptions \(report.days == 1 ? "" : "in ")\(window); streaks in days."
            : "SESS, FOCUS, INT: \(window). STRK, BEST: streaks in days."
        out += wrap(legend, columns: columns)
        return out
    }

    /// One row per day: weekday and date, minutes, and the bar.
    static func chart(_ days: [DayTotalsPayload], columns: Int) -> [String] {
        let longDates = columns >= 60
        let labels = days.map { day -> String in
            let date = longDates || day.date.count != 10 ? day.date : String(day.date.dropFirst(5))
            return (weekday(day.date).map { "\($0) " } ?? "") + date
        }
        let labelWidth = labels.map(TextWidth.of).max() ?? 0
        let minutes = days.map { "\(max(0, $0.focusSeconds) / 60)" }
        let minutesWidth = minutes.map(\.count).max() ?? 1
        let cells = max(1, columns - labelWidth - 2 - minutesWidth - 1)
        let most = days.map { max(0, $0.focusSeconds) }.max() ?? 0
        return days.indices.map { i in
            let label = TextWidth.fit(labels[i], columns: labelWidth)
            let number = String(repeating: " ", count: minutesWidth - minutes[i].count) + minutes[i]
            return "\(label)  \(number) \(bar(days[i].focusSeconds, of: most, cells: cells))"
        }
    }

    /// `value` of `most` seconds as a bar of at most `cells` columns, in eighths; any time at all shows at
    /// least ▏. A day under a whole minute reads 0 in the minutes column, so it gets that smallest mark and
    /// nothing more, even when it is the best day (a day of seconds never fills the width).
    static func bar(_ value: Int64, of most: Int64, cells: Int) -> String {
        guard value > 0, most > 0 else { return "" }
        guard value >= 60 else { return "▏" }
        let exact = Double(value) / Double(most) * Double(cells * 8)
        let eighths = min(cells * 8, max(1, Int(exact.rounded())))
        let partial = ["", "▏", "▎", "▍", "▌", "▋", "▊", "▉"]
        return String(repeating: "█", count: eighths / 8) + partial[eighths % 8]
    }

    // MARK: Words and numbers

    /// Whole hours and minutes, rounded down: "0:25", "5:00", "123:04".
    static func hoursMinutes(_ seconds: Int64) -> String {
        let minutes = max(0, seconds) / 60
        let m = minutes % 60
        return "\(minutes / 60):\(m < 10 ? "0" : "")\(m)"
    }

    static func count(_ n: Int, _ noun: String) -> String { "\(n) \(noun)\(n == 1 ? "" : "s")" }

    /// A person's or the room's counts over the days given.
    static func sum(_ days: [DayTotalsPayload]) -> DayTotalsPayload {
        days.reduce(into: DayTotalsPayload(date: "", focusSessions: 0, focusSeconds: 0, interruptions: 0)) {
            $0.focusSessions += $1.focusSessions
            $0.focusSeconds += $1.focusSeconds
            $0.interruptions += $1.interruptions
        }
    }

    /// "Mon" … "Sun" for a `YYYY-MM-DD` date of the proleptic Gregorian calendar; nil when not such a date.
    static func weekday(_ date: String) -> String? {
        let parts = date.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
              let y = Int(parts[0]), let m = Int(parts[1]), let d = Int(parts[2]),
              (1...12).contains(m), (1...31).contains(d) else { return nil }
        // Days since 1970-01-01 (a Thursday), after Howard Hinnant's days_from_civil.
        let year = m <= 2 ? y - 1 : y
        let era = (year >= 0 ? year : year - 399) / 400
        let yearOfEra = year - era * 400
        let dayOfYear = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        let days = era * 146_097 + dayOfEra - 719_468
        let names = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"]
        return names[((days % 7) + 7) % 7]
    }

    /// Words filled into lines of at most `columns`; a word longer than a line is cut.
    static func wrap(_ text: String, columns: Int) -> [String] {
        var lines: [String] = []
        var line = ""
        for word in text.split(separator: " ").map(String.init) {
            if line.isEmpty {
                line = TextWidth.truncate(word, columns: columns)
            } else if TextWidth.of(line) + 1 + TextWidth.of(word) <= columns {
                line += " " + word
            } else {
                lines.append(line)
                line = TextWidth.truncate(word, columns: columns)
            }
        }
        if !line.isEmpty || lines.isEmpty { lines.append(line) }
        return lines
    }

    static func trimmingTrailingSpaces(_ line: String) -> String {
        var line = line
        while line.last == " " { line.removeLast() }
        return line
    }
}
