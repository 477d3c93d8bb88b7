import PomodoroCore
/// Durations as people type them on the command line: `25m`, `90s`, `1h30m`, `1m30s`, `-1m`, `+2m`.
/// A bare number is minutes, as on the `1` `3` `5` keys: `5` is five minutes.
public enum DurationText {
    /// Whole seconds, or nil when `text` is not a duration.
    public static func seconds(_ text: String) -> Int? {
        var rest = Substring(text.trimmingWhitespace().lowercased())
        var sign = 1
        if rest.hasPrefix("-") { sign = -1; rest = rest.dropFirst() }
        else if rest.hasPrefix("+") { rest = rest.dropFirst() }
        guard !rest.isEmpty else { return nil }
        if let minutes = Int(rest) { return sign * minutes * 60 }
        var total = 0
        var number = ""
        var seenUnits: Set<Character> = []
        for c in rest {
            if c.isASCII, c.isNumber {
                number.append(c)
                continue
            }
            guard let n = Int(number), !seenUnits.contains(c) else { return nil }
            switch c {
            case "h": total += n * 3600
            case "m": total += n * 60
            case "s": total += n
            default: return nil
            }
            seenUnits.insert(c)
            number = ""
        }
        guard number.isEmpty else { return nil }
        return sign * total
    }
}
