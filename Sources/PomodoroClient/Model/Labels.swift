import PomodoroCore
import PomodoroProtocol

/// The words and numbers people see in the status line and the plain lines (English, for scripts), and the
/// numbers the full-screen view shares with them; the view's words are `Words`, in its language.
public enum Labels {
    /// "Focus", "Short break", "Long break", "Idle".
    public static func phase(_ phase: Phase) -> String {
        switch phase {
        case .idle: "Idle"
        case .focus: "Focus"
        case .shortBreak: "Short break"
        case .longBreak: "Long break"
        }
    }

    /// Where the room is in its set: the scheduled run's focus sessions while one is under way, otherwise the
    /// long-break cycle. `total` is nil for a scheduled run that goes on until stopped.
    public static func setPosition(_ s: SnapshotPayload) -> (name: String?, n: Int, total: Int?) {
        guard let run = s.scheduledRun else {
            return (nil, min(s.cycle, s.settings.longBreakEvery), s.settings.longBreakEvery)
        }
        // As the cycle does: the focus under way, or during a break the one just done.
        var n = s.phase == .focus ? run.focusDone + 1 : max(run.focusDone, 1)
        if let total = run.focusSessions { n = min(n, total) }
        return (run.name, n, run.focusSessions)
    }

    /// The phase and where it stands, for plain lines: "Focus 2 of 4", or during a scheduled run
    /// "Focus · Writing block · focus 2 of 3" ("focus 2" when it runs until stopped).
    public static func phaseAndPosition(_ s: SnapshotPayload) -> String {
        let (name, n, total) = setPosition(s)
        guard let name else { return "\(phase(s.phase)) \(n) of \(total ?? n)" }
        return "\(phase(s.phase)) · \(name) · focus \(n)" + (total.map { " of \($0)" } ?? "")
    }

    /// "running", "paused", "ready", "idle".
    public static func status(_ status: TimerStatus) -> String { status.rawValue }

    /// A count with thousands grouped: "4,900", "12", "-1,000".
    public static func grouped(_ n: Int) -> String {
        let digits = String(n.magnitude)
        var out = ""
        for (i, digit) in digits.enumerated() {
            if i > 0 && (digits.count - i) % 3 == 0 { out += "," }
            out.append(digit)
        }
        return n < 0 ? "-" + out : out
    }

    /// A countdown: "MM:SS", or "H:MM:SS" from one hour on ("04:59", "1:02:03").
    public static func clock(seconds: Int64) -> String {
        let s = max(0, seconds)
        let h = s / 3600, m = (s % 3600) / 60, sec = s % 60
        if h > 0 { return "\(h):\(twoDigits(m)):\(twoDigits(sec))" }
        return "\(twoDigits(m)):\(twoDigits(sec))"
    }

    /// A setting's length, short: "25m", "90s", "1h", "1h30m", "2m30s".
    public static func duration(seconds: Int) -> String {
        let h = seconds / 3600, m = (seconds % 3600) / 60, s = seconds % 60
        var text = ""
        if h > 0 { text += "\(h)h" }
        if m > 0 { text += "\(m)m" }
        if s > 0 || text.isEmpty { text += "\(s)s" }
        return text
    }

    /// A refusal's message as a sentence. The server words a bad value as "<field> <reason>", which reads
    /// well when the reason goes on from the field ("seconds must be non-zero") and not when it is a sentence
    /// of its own ("id this room has no API token t9"): then the field's name follows the sentence in
    /// brackets, so that the setting it is about is still named ("… divide a day (aligned)").
    public static func refusal(_ message: String, field: String?) -> String {
        guard let field, message.hasPrefix(field + " ") else { return message }
        let reason = message.dropFirst(field.count + 1)
        let goesOn = ["must ", "is ", "are ", "may ", "cannot "].contains { reason.hasPrefix($0) }
        return goesOn ? message : "\(reason) (\(field))"
    }

    /// A time of day from epoch milliseconds and a UTC offset: "14:25".
    public static func timeOfDay(epochMs: Int64, utcOffsetSeconds: Int) -> String {
        let local = epochMs / 1000 + Int64(utcOffsetSeconds)
        let secondsOfDay = ((local % 86400) + 86400) % 86400
        return "\(twoDigits(secondsOfDay / 3600)):\(twoDigits((secondsOfDay % 3600) / 60))"
    }

    static func twoDigits(_ n: Int64) -> String { n < 10 ? "0\(n)" : "\(n)" }

    /// The settings in one line, long or short: "Focus 25m · Short 5m · Long 15m after 4 · auto-start off".
    public static func settings(_ s: RoomSettings, short: Bool) -> String {
        let clock = s.aligned.map { " · on the clock (\($0.identifier))" } ?? ""
        if short {
            return "\(duration(seconds: s.focus))/\(duration(seconds: s.shortBreak))/\(duration(seconds: s.longBreak))"
                + " ×\(s.longBreakEvery) · auto \(s.autoStart ? "on" : "off")" + clock
        }
        return "Focus \(duration(seconds: s.focus)) · Short \(duration(seconds: s.shortBreak)) · "
            + "Long \(duration(seconds: s.longBreak)) after \(s.longBreakEvery) · "
            + "auto-start \(s.autoStart ? "on" : "off")" + clock
    }
}
