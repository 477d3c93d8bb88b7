/// One of the 8 basic terminal colours: the set every colour terminal has, so colours degrade well.
public enum TerminalColor: Int, Sendable, Hashable {
    case black = 0, red, green, yellow, blue, magenta, cyan, white
}

/// How a run of text looks. Colours are hints: a monochrome or plain terminal keeps the text.
public struct TextStyle: Hashable, Sendable {
    public var color: TerminalColor?
    public var bold = false
    public var dim = false
    public var reverse = false

    public init(color: TerminalColor? = nil, bold: Bool = false, dim: Bool = false, reverse: Bool = false) {
        self.color = color
        self.bold = bold
        self.dim = dim
        self.reverse = reverse
    }

    public static let plain = TextStyle()
    public static let bold = TextStyle(bold: true)
    public static let dim = TextStyle(dim: true)
    public static let reverse = TextStyle(reverse: true)
    public static func color(_ color: TerminalColor, bold: Bool = false) -> TextStyle {
        TextStyle(color: color, bold: bold)
    }
}

/// A run of text in one style.
public struct Span: Hashable, Sendable {
    public var text: String
    public var style: TextStyle
    public init(_ text: String, _ style: TextStyle = .plain) {
        self.text = text
        self.style = style
    }
}

/// One row of the screen.
public struct ScreenLine: Hashable, Sendable, ExpressibleByStringLiteral {
    public var spans: [Span]

    public init(_ spans: [Span] = []) { self.spans = spans }
    public init(_ text: String, _ style: TextStyle = .plain) { spans = text.isEmpty ? [] : [Span(text, style)] }
    public init(stringLiteral value: String) { self.init(value) }

    public static let blank = ScreenLine()

    /// The characters, without styles.
    public var text: String { spans.map(\.text).joined() }
    /// Columns the line takes.
    public var width: Int { spans.reduce(0) { $0 + TextWidth.of($1.text) } }

    public mutating func append(_ text: String, _ style: TextStyle = .plain) {
        guard !text.isEmpty else { return }
        if let last = spans.last, last.style == style {
            spans[spans.count - 1].text += text
        } else {
            spans.append(Span(text, style))
        }
    }

    public mutating func append(_ line: ScreenLine) {
        for span in line.spans { append(span.text, span.style) }
    }

    /// Pads with spaces (in `style`) up to `width` columns.
    public func padded(to width: Int, _ style: TextStyle = .plain) -> ScreenLine {
        var copy = self
        copy.append(String(repeating: " ", count: max(0, width - self.width)), style)
        return copy
    }

    /// Cuts the line to at most `width` columns, ending in "…" when something was cut.
    public func truncated(to width: Int) -> ScreenLine {
        guard self.width > width else { return self }
        guard width > 0 else { return ScreenLine() }
        var result = ScreenLine()
        var left = width - 1
        for span in spans {
            let w = TextWidth.of(span.text)
            if w <= left {
                result.append(span.text, span.style)
                left -= w
            } else {
                result.append(TextWidth.prefix(span.text, columns: left), span.style)
                result.append("…", span.style)
                return result
            }
        }
        return result
    }

    /// The line shifted right by `columns` spaces.
    public func indented(by columns: Int) -> ScreenLine {
        var line = ScreenLine(String(repeating: " ", count: max(0, columns)))
        line.append(self)
        return line
    }
}

/// The whole screen: exactly `rows` lines, none wider than `columns`.
public struct Frame: Hashable, Sendable {
    public var columns: Int
    public var rows: Int
    public var lines: [ScreenLine]

    public init(columns: Int, rows: Int, lines: [ScreenLine]) {
        self.columns = columns
        self.rows = rows
        var fitted = Array(lines.prefix(rows)).map { $0.truncated(to: columns) }
        while fitted.count < rows { fitted.append(.blank) }
        self.lines = fitted
    }

    /// The text of every line, trailing spaces removed: what a test compares.
    public var text: String {
        lines.map { line in
            var t = line.text
            while t.hasSuffix(" ") { t.removeLast() }
            return t
        }.joined(separator: "\n")
    }
}
