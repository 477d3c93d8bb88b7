import PomodoroCore
import PomodoroProtocol

/// Draws the full-screen view: a pure function from the dashboard, the terminal's size and the moment
/// to the screen's lines. Nothing here reads a clock or writes to a terminal.
///
/// Layout, top to bottom: the title bar; the phase and cycle; the remaining time in large digits; the
/// progress bar; the members; then, at the bottom, the last thing that happened, the settings and the
/// keys. Smaller terminals lose the large digits first, then the members and the settings.
public enum DashboardRenderer {
    /// Where and when to draw.
    public struct Context: Equatable, Sendable {
        public var columns: Int
        public var rows: Int
        public var now: LocalInstant
        /// Seconds east of UTC, for times of day ("ends 14:25").
        public var utcOffsetSeconds: Int
        public init(columns: Int, rows: Int, now: LocalInstant, utcOffsetSeconds: Int) {
            self.columns = columns
            self.rows = rows
            self.now = now
            self.utcOffsetSeconds = utcOffsetSeconds
        }
    }

    public static func render(_ dashboard: Dashboard, in context: Context) -> Frame {
        let columns = max(1, context.columns), rows = max(1, context.rows)
        let margin = columns >= 60 ? 2 : 1
        let inner = max(1, columns - 2 * margin)
        let title = titleBar(dashboard, columns: columns, now: context.now)
        let words = dashboard.words

        guard let snapshot = dashboard.room.snapshot else {
            var lines: [ScreenLine] = [title]
            let message: String
            switch dashboard.connection {
            case .reconnecting(let attempt, let retryAt, let reason):
                let why = words.reason(reason)
                message = words(.retrying, ["reason": why.capitalizedFirst, "s": secondsUntil(retryAt, from: context.now),
                                            "n": attempt])
            default:
                message = words(.connectingTo, ["server": dashboard.serverLabel])
            }
            let blankRows = max(0, (rows - 3) / 2)
            lines += Array(repeating: ScreenLine.blank, count: blankRows)
            lines.append(centered(ScreenLine(TextWidth.truncate(message, columns: inner), .dim), width: columns))
            while lines.count < rows - 1 { lines.append(.blank) }
            var keys = ScreenLine()
            keys.append("q", .bold)
            keys.append(" " + words(.keyQuit))
            lines.append(keys.indented(by: margin))
            return Frame(columns: columns, rows: rows, lines: lines)
        }

        let now = context.now
        let phaseLine = self.phaseLine(dashboard, snapshot, width: inner, context: context)
        let bar = progressBar(dashboard, snapshot, width: inner, now: now)
        let footer = self.footer(dashboard, snapshot, width: inner, context: context)
            .map { $0.indented(by: margin) }

        var lines: [ScreenLine] = [title]
        let digitText = Labels.clock(seconds: shownSeconds(dashboard, snapshot, now: now))
        let scale = BigDigits.width(of: digitText, scale: 2) <= inner ? 2
            : BigDigits.width(of: digitText, scale: 1) <= inner ? 1 : 0
        // The list of keys takes the members' place and the room the large digits would have.
        let big = rows >= 18 && scale > 0 && dashboard.mode != .help
        if big {
            // Below 22 rows the timer gives up its inner blank lines so the members keep some room.
            let airy = rows >= 22
            lines += [.blank, phaseLine.indented(by: margin)] + (airy ? [.blank] : [])
            let style = digitStyle(snapshot)
            for row in BigDigits.render(digitText, scale: scale) {
                lines.append(centered(ScreenLine(row, style), width: columns))
            }
            lines += (airy ? [.blank] : []) + [bar.indented(by: margin)]
        } else {
            var compact = ScreenLine()
            compact.append(digitText, TextStyle(color: digitStyle(snapshot).color, bold: true, dim: digitStyle(snapshot).dim))
            compact.append("  ")
            compact.append(self.phaseLine(dashboard, snapshot, width: inner - compact.width, context: context))
            if rows >= 8 { lines.append(.blank) }
            lines += [compact.truncated(to: inner).indented(by: margin), bar.indented(by: margin)]
        }

        // Members take what is left between the timer and the footer, with a blank line on each side.
        let shownFooter: [ScreenLine]
        let room = rows - lines.count - footer.count
        if room >= 4 || rows >= 10 {
            shownFooter = footer
        } else {
            shownFooter = Array(footer.suffix(max(1, rows - lines.count)))  // keep the keys at least
        }
        let memberRows = rows - lines.count - shownFooter.count - 2
        // The list of keys makes do with one row (it then says where they all are); the members need two.
        if memberRows >= (dashboard.mode == .help ? 1 : 2) {
            lines.append(.blank)
            let middle = dashboard.mode == .help ? help(dashboard, width: inner, rows: memberRows)
                : members(dashboard, snapshot, width: inner, rows: memberRows)
            lines += middle.map { $0.indented(by: margin) }
        }
        while lines.count < rows - shownFooter.count { lines.append(.blank) }
        lines = Array(lines.prefix(rows - shownFooter.count)) + shownFooter
        return Frame(columns: columns, rows: rows, lines: lines)
    }

    // MARK: Parts

    static func titleBar(_ d: Dashboard, columns: Int, now: LocalInstant) -> ScreenLine {
        let words = d.words
        var left = ScreenLine()
        left.append(" pomo", TextStyle(bold: true, reverse: true))
        left.append(" · \(d.roomName)", .reverse)
        var status: Span
        switch d.connection {
        case .connecting: status = Span(" ○ \(words(.connecting)) ", .reverse)
        case .live: status = Span(" ● \(words(.live)) ", .reverse)
        case let .reconnecting(_, retryAt, _):
            let left = secondsUntil(retryAt, from: now)
            status = Span(left > 0 ? " ◌ \(words(.reconnectingIn, ["s": left])) " : " ◌ \(words(.reconnecting)) ",
                          TextStyle(color: .yellow, reverse: true))
        case .ended(let end):
            status = Span(" ✕ \(words(end == .replaced ? .replaced : .disconnected)) ", TextStyle(color: .red, reverse: true))
        }
        var right = ScreenLine()
        let who = d.room.me.map { "\($0.name) · " } ?? ""
        let identity = "\(who)\(d.serverLabel) "
        if columns >= 60 && left.width + TextWidth.of(identity) + TextWidth.of(status.text) + 2 <= columns {
            right.append(identity, TextStyle(dim: false, reverse: true))
        }
        right.append(status.text, status.style)
        if left.width + right.width > columns { left = left.truncated(to: max(0, columns - right.width)) }
        var line = left
        line.append(String(repeating: " ", count: max(0, columns - left.width - right.width)), .reverse)
        line.append(right)
        return line
    }

    static func phaseLine(_ d: Dashboard, _ s: SnapshotPayload, width: Int, context: Context) -> ScreenLine {
        let words = d.words
        var left = ScreenLine()
        left.append(words.phase(s.phase).uppercased(), TextStyle(color: phaseColor(s.phase), bold: true))
        left.append("  ·  ", .dim)
        let (name, n, total) = Labels.setPosition(s)
        if let name {
            // A scheduled run: its own set of focus sessions, not the room's long-break cycle.
            let phrase: Phrase = total == nil ? (width >= 50 ? .setOpenLong : .setOpenShort)
                                              : (width >= 50 ? .setLong : .setShort)
            left.append(words(phrase, ["name": name, "n": n, "total": total ?? n]))
        } else {
            left.append(words(width >= 50 ? .cycleLong : .cycleShort, ["n": n, "total": total ?? n]))
        }
        var right = ScreenLine()
        switch s.status {
        case .running:
            let remaining = d.room.remainingMs(at: context.now)
            // To the nearest second: a phase that ends on the minute (a scheduled one) is not shown a minute early.
            let endWall = (context.now.wallMs + remaining + 500) / 1000 * 1000
            let time = Labels.timeOfDay(epochMs: endWall, utcOffsetSeconds: context.utcOffsetSeconds)
            right.append(words(.endsAt, ["time": time]), .dim)
        case .paused: right.append(words(.paused), TextStyle(color: .yellow, bold: true))
        case .ready: right.append(words(.ready), .bold)
        case .idle: right.append(words(.notStarted), .dim)
        }
        return spread(left, right, width: width)
    }

    /// The seconds the big digits show: the countdown, or the focus length a start would run when idle.
    static func shownSeconds(_ d: Dashboard, _ s: SnapshotPayload, now: LocalInstant) -> Int64 {
        s.status == .idle ? Int64(s.settings.focus) : d.room.displaySeconds(at: now)
    }

    static func digitStyle(_ s: SnapshotPayload) -> TextStyle {
        switch s.status {
        case .idle: return .dim
        case .paused: return TextStyle(color: phaseColor(s.phase), dim: true)
        case .ready, .running: return TextStyle(color: phaseColor(s.phase), bold: true)
        }
    }

    static func phaseColor(_ phase: Phase) -> TerminalColor? {
        switch phase {
        case .idle: nil
        case .focus: .red
        case .shortBreak: .green
        case .longBreak: .cyan
        }
    }

    /// A bar of full blocks with an eighth-block edge, over a light-shade track.
    static func progressBar(_ d: Dashboard, _ s: SnapshotPayload, width: Int, now: LocalInstant) -> ScreenLine {
        let eighths = Int((d.room.progress(at: now) * Double(width * 8)).rounded(.down))
        let full = min(width, eighths / 8)
        let partial = full < width ? eighths % 8 : 0
        let edges: [String] = ["", "▏", "▎", "▍", "▌", "▋", "▊", "▉"]
        var line = ScreenLine()
        let style = TextStyle(color: phaseColor(s.phase), dim: s.status == .paused)
        line.append(String(repeating: "█", count: full), style)
        line.append(edges[partial], style)
        line.append(String(repeating: "░", count: width - full - (partial > 0 ? 1 : 0)), .dim)
        return line
    }

    static func members(_ d: Dashboard, _ s: SnapshotPayload, width: Int, rows: Int) -> [ScreenLine] {
        let me = d.room.myID
        let words = d.words
        // Me first: as listed, or as the server told me alone when a big room's list leaves me out.
        let mine = d.room.me
        let meUnlisted = mine != nil && !s.members.contains { $0.id == me }
        let ordered = (mine.map { [$0] } ?? []) + s.members.filter { $0.id != me }
        var summary: String
        if s.membersTruncated {
            // A big room lists only its first members: the counts come from the room itself.
            summary = words(.hereOf, ["present": Labels.grouped(s.presentCount), "total": Labels.grouped(s.memberCount)])
        } else {
            let present = s.members.filter(\.present).count
            let away = s.members.filter { $0.connected && !$0.present }.count
            let offline = s.members.filter { !$0.connected }.count
            summary = words(.hereCount, ["n": present])
            if away > 0 { summary += " · " + words(.awayCount, ["n": away]) }
            if offline > 0 { summary += " · " + words(.offlineCount, ["n": offline]) }
        }
        let countWidth = 4
        var header = ScreenLine()
        header.append(words(.members), .bold)
        header.append("  \(summary)", .dim)
        var lines = [spread(header, ScreenLine(words(.done), .dim), width: width)]

        func label(_ m: MemberPayload) -> String { m.id == me ? words(.youSuffix, ["name": m.name]) : m.name }
        // While the host picks a member, the others are numbered as `Dashboard.pick` counts them.
        var numbers: [String: Int] = [:]
        if case .pickingMember = d.mode {
            for (index, member) in d.pickable.enumerated() { numbers[member.id] = index + 1 }
        }
        let numberWidth = numbers.isEmpty ? 0 : String(numbers.count).count + 1
        let longest = ordered.map { TextWidth.of(label($0)) }.max() ?? 0
        let nameWidth = min(longest, width >= 60 ? 22 : 14)
        let taskWidth = max(0, width - numberWidth - 2 - nameWidth - 2 - 2 - countWidth)
        let fits = ordered.count <= rows - 1 ? ordered.count : max(0, rows - 2)
        for m in ordered.prefix(fits) {
            var line = ScreenLine()
            if numberWidth > 0 {
                let number = numbers[m.id].map(String.init) ?? ""
                line.append(String(repeating: " ", count: numberWidth - 1 - number.count) + number + " ",
                            TextStyle(color: .yellow, bold: true))
            }
            let (dot, dotStyle): (String, TextStyle) =
                m.present ? ("●", .color(.green)) : m.connected ? ("◐", .color(.yellow)) : ("○", .dim)
            line.append(dot, dotStyle)
            line.append(" ")
            line.append(TextWidth.fit(label(m), columns: nameWidth), m.connected ? (m.id == me ? .bold : .plain) : .dim)
            line.append("  ")
            var task = ScreenLine()
            if !m.connected {
                task.append(words(.offline), .dim)
            } else if !m.present {
                task.append(words(.away), .color(.yellow))
            }
            if !m.task.isEmpty {
                if task.width > 0 { task.append(" · ", .dim) }
                task.append(m.task, m.present ? .plain : .dim)
            }
            line.append(task.truncated(to: taskWidth).padded(to: taskWidth))
            line.append("  ")
            let count = "\(m.stats.focusCompleted)"
            line.append(String(repeating: " ", count: max(0, countWidth - count.count)) + count,
                        m.stats.focusCompleted > 0 ? .bold : .dim)
            lines.append(line)
        }
        let unlisted = max(0, s.memberCount - s.members.count - (meUnlisted ? 1 : 0))
        if unlisted > 0 {
            lines.append(ScreenLine(words(.andMore, ["n": Labels.grouped(ordered.count - fits + unlisted)]), .dim))
        } else if fits < ordered.count {
            lines.append(ScreenLine(words(.plusMore, ["n": ordered.count - fits]), .dim))
        }
        return lines
    }

    /// The notice, the settings and the keys (or the task editor, or the reset question).
    static func footer(_ d: Dashboard, _ s: SnapshotPayload, width: Int, context: Context) -> [ScreenLine] {
        let words = d.words
        var notice = ScreenLine()
        var settings = ScreenLine()
        let long = words.settings(s.settings, short: false)
        if let pending = s.pendingSettings {
            settings.append(words.settings(s.settings, short: true), .dim)
            settings.append(words(.nextPhase), .dim)
            settings.append(words.settings(pending, short: true), .plain)
        } else {
            settings.append(TextWidth.of(long) <= width ? long : words.settings(s.settings, short: true), .dim)
        }
        if case .editingTask(let editor) = d.mode {
            notice.append(words(width >= 60 ? .editHintLong : .editHintShort), .dim)
            return [notice.truncated(to: width), settings.truncated(to: width), taskEditor(editor, prompt: words(.taskPrompt), width: width)]
        }
        if case .editingPasscode(let editor) = d.mode {
            notice.append(words(width >= 60 ? .passcodeHintLong : .passcodeHintShort), .dim)
            return [notice.truncated(to: width), settings.truncated(to: width),
                    taskEditor(editor, prompt: words(.passcodePrompt), width: width, masked: true)]
        }
        if case .pickingMember(let pick, let editor) = d.mode {
            notice.append(words(width >= 60 ? .pickHintLong : .pickHintShort), .dim)
            let prompt = words(pick == .remove ? .removePrompt : .handOffPrompt)
            return [notice.truncated(to: width), settings.truncated(to: width),
                    taskEditor(editor, prompt: prompt, width: width)]
        }
        if let n = d.notice(at: context.now) {
            notice.append(Labels.timeOfDay(epochMs: n.at.wallMs, utcOffsetSeconds: context.utcOffsetSeconds) + "  ", .dim)
            switch n.kind {
            case .event: notice.append(n.text)
            case .error: notice.append(n.text, .color(.red, bold: true))
            case .info: notice.append(n.text, .color(.yellow))
            }
        }
        return [notice.truncated(to: width), settings.truncated(to: width), keyLine(d, width: width)]
    }

    /// The keys and what they do, in the members' place while `?` shows them; the host's tools only to the host.
    static func help(_ d: Dashboard, width: Int, rows: Int) -> [ScreenLine] {
        let words = d.words
        let entries: [(String, Phrase)] = [
            ("space", .helpToggle), ("s", .helpSkip), ("r", .helpReset), ("+ -", .helpExtend), ("1 3 5", .helpAdd),
            ("t", .helpTask), ("a", .helpAway), ("m", .helpMute), ("q", .helpQuit),
        ]
        let hostEntries: [(String, Phrase)] = [("p", .helpPasscode), ("k", .helpRemove), ("c", .helpControl),
                                               ("h", .helpHandOff)]
        let keyWidth = 6
        func line(_ key: String, _ phrase: Phrase) -> ScreenLine {
            var line = ScreenLine()
            line.append(key + String(repeating: " ", count: max(1, keyWidth - key.count)), .bold)
            line.append(words(phrase))
            return line.truncated(to: width)
        }
        // Each line, and whether it is a key (not a heading).
        var lines: [(line: ScreenLine, isKey: Bool)] = [(ScreenLine(words(.helpTitle), .bold), false)]
        lines += entries.map { (line($0.0, $0.1), true) }
        if d.isHost {
            lines.append((ScreenLine(words(.helpHostTitle), .bold), false))
            lines += hostEntries.map { (line($0.0, $0.1), true) }
        }
        guard lines.count > rows else { return lines.map(\.line) }
        // A short window: as many keys as fit, and a last line that says how many more there are and where
        // they are all listed, so a cut list never looks whole.
        let shown = lines.prefix(max(0, rows - 1))
        let hidden = lines.dropFirst(shown.count).filter(\.isKey).count
        return shown.map(\.line) + [ScreenLine(words(.helpMore, ["n": hidden]), .color(.yellow)).truncated(to: width)]
    }

    /// `masked` shows an asterisk for each character, for a passcode: the terminal may be shared or recorded,
    /// and the page's passcode fields are password fields. ASCII, so one column wide in every locale.
    static func taskEditor(_ editor: LineEditor, prompt: String, width: Int, masked: Bool = false) -> ScreenLine {
        var line = ScreenLine()
        line.append(prompt, .bold)
        let room = max(1, width - line.width)
        // Scroll so the cursor stays in view.
        let chars = masked ? editor.characters.map { _ in Character("*") } : editor.characters
        var start = 0
        while TextWidth.of(String(chars[start..<editor.cursor])) >= room { start += 1 }
        var used = 0, index = start
        while index < chars.count, used + TextWidth.of(chars[index]) <= room - (index == editor.cursor ? 0 : 0) {
            if index == editor.cursor {
                line.append(String(chars[index]), .reverse)
            } else {
                line.append(String(chars[index]))
            }
            used += TextWidth.of(chars[index])
            index += 1
        }
        if editor.cursor == chars.count && used < room { line.append(" ", .reverse) }
        return line
    }

    /// The keys, with those that do nothing now dimmed; labels are dropped from the right as space runs out.
    static func keyLine(_ d: Dashboard, width: Int) -> ScreenLine {
        let words = d.words
        if d.mode == .confirmReset {
            var line = ScreenLine()
            line.append(words(.resetQuestion), TextStyle(color: .yellow, bold: true))
            line.append("  ")
            line.append("y", .bold)
            line.append(words(.resetYes))
            line.append(words(.anyOtherKey), .bold)
            line.append(words(.keepsIt))
            return line.truncated(to: width)
        }
        if d.mode == .help {
            return ScreenLine(words(.helpClose), TextStyle(color: .yellow, bold: true)).truncated(to: width)
        }
        struct Hint { var key: String; var label: String; var enabled: Bool }
        let toggle: Phrase = switch d.toggleLabel {
        case "pause": .keyPause
        case "resume": .keyResume
        default: .keyStart
        }
        var hints = [
            Hint(key: "space", label: words(toggle), enabled: d.isEnabled(.toggle)),
            Hint(key: "s", label: words(.keySkip), enabled: d.isEnabled(.skip)),
            Hint(key: "r", label: words(.keyReset), enabled: d.isEnabled(.reset)),
            Hint(key: "+/-", label: words(.keyOneMin), enabled: d.isEnabled(.extend(minutes: 1)) || d.isEnabled(.extend(minutes: -1))),
            Hint(key: "1 3 5", label: words(.keyAdd), enabled: d.isEnabled(.extend(minutes: 1))),
            Hint(key: "t", label: words(.keyTask), enabled: d.isEnabled(.task)),
            Hint(key: "a", label: words(d.awayRequestedOrShown ? .keyBack : .keyAway), enabled: d.isEnabled(.away)),
            Hint(key: "m", label: words(d.silenced ? .keyUnmute : .keyMute), enabled: true),
            Hint(key: "q", label: words(.keyQuit), enabled: true),
        ]
        // The host's tools, for the host alone.
        let host = d.isHost
        if host { hints.append(Hint(key: "p k c h", label: words(.keyHost), enabled: d.isLive)) }
        func build(gap: Int) -> ScreenLine {
            var line = ScreenLine()
            for (i, hint) in hints.enumerated() {
                if i > 0 { line.append(String(repeating: " ", count: gap)) }
                line.append(hint.key, hint.enabled ? .bold : .dim)
                if !hint.label.isEmpty { line.append(" " + hint.label, hint.enabled ? .plain : .dim) }
            }
            return line
        }
        var line = build(gap: 2)
        if line.width <= width { return line }
        line = build(gap: 1)
        // Drop labels, least needed first; then the silence key (it is in `pomo join --help` too); the space
        // key's label goes last.
        // The host's label goes after the labels of the minute keys, before the others.
        for index in (host ? [4, 3, 9, 6, 5, 7, 8, 2, 1] : [4, 3, 6, 5, 7, 8, 2, 1]) where line.width > width {
            if index == 4 { hints[4].key = "135" }
            if index == 3 { hints[3].key = "±" }
            hints[index].label = ""
            line = build(gap: 1)
        }
        if host && line.width > width {
            hints[9].key = "pkch"
            line = build(gap: 1)
        }
        if line.width > width {
            hints.remove(at: 7)
            line = build(gap: 1)
        }
        if line.width > width {
            hints[0].label = ""
            line = build(gap: 1)
        }
        return line.truncated(to: width)
    }

    // MARK: Helpers

    static func spread(_ left: ScreenLine, _ right: ScreenLine, width: Int) -> ScreenLine {
        if left.width + 1 + right.width > width { return left.truncated(to: width) }
        var line = left
        line.append(String(repeating: " ", count: width - left.width - right.width))
        line.append(right)
        return line
    }

    static func centered(_ line: ScreenLine, width: Int) -> ScreenLine {
        line.indented(by: max(0, (width - line.width) / 2))
    }

    static func secondsUntil(_ moment: LocalInstant, from now: LocalInstant) -> Int64 {
        max(0, (moment.monotonicMs - now.monotonicMs + 999) / 1000)
    }
}
