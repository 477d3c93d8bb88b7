/// What a terminal can show: colours, or only bold/dim/reverse (NO_COLOR), or nothing but text.
public enum ColorSupport: String, Sendable, CaseIterable {
    case color, monochrome, plain

    /// The usual rules: NO_COLOR (any non-empty value) turns colours off; TERM=dumb turns styles off.
    public static func detect(environment: [String: String]) -> ColorSupport {
        if environment["TERM"] == "dumb" { return .plain }
        if let noColor = environment["NO_COLOR"], !noColor.isEmpty { return .monochrome }
        return .color
    }
}

/// Turns frames into the bytes that draw them, rewriting only the lines that changed since the last frame.
public struct AnsiEncoder: Sendable {
    public var support: ColorSupport
    private var previous: Frame?

    public init(support: ColorSupport) { self.support = support }

    /// Forget what is on screen, so the next frame is drawn whole (after a resize or Ctrl-L).
    public mutating func invalidate() { previous = nil }

    /// The bytes that turn the screen from the last frame into `frame`.
    public mutating func encode(_ frame: Frame) -> String {
        var out = ""
        let whole = previous == nil || previous?.columns != frame.columns || previous?.rows != frame.rows
        if whole { out += "\u{1B}[H\u{1B}[2J" }
        for (row, line) in frame.lines.enumerated() {
            if !whole, let previous, row < previous.lines.count, previous.lines[row] == line { continue }
            out += "\u{1B}[\(row + 1);1H"
            out += encode(line)
            if line.width < frame.columns { out += "\u{1B}[K" }
        }
        previous = frame
        return out
    }

    /// One line with its styles, ending with styles reset.
    public func encode(_ line: ScreenLine) -> String {
        var out = ""
        for span in line.spans {
            let codes = sgr(span.style)
            if codes.isEmpty {
                out += span.text
            } else {
                out += "\u{1B}[\(codes)m" + span.text + "\u{1B}[0m"
            }
        }
        return out
    }

    func sgr(_ style: TextStyle) -> String {
        guard support != .plain else { return "" }
        var codes: [String] = []
        if style.bold { codes.append("1") }
        if style.dim { codes.append("2") }
        if style.reverse { codes.append("7") }
        if support == .color, let color = style.color { codes.append("\(30 + color.rawValue)") }
        return codes.joined(separator: ";")
    }

    /// Enter the alternate screen and hide the cursor.
    public static let enterFullScreen = "\u{1B}[?1049h\u{1B}[?25l\u{1B}[H\u{1B}[2J"
    /// Show the cursor and go back to the normal screen, as it was.
    public static let leaveFullScreen = "\u{1B}[0m\u{1B}[?25h\u{1B}[?1049l"
    public static let bell = "\u{07}"
}
