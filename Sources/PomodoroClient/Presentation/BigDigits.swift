/// Large digits for the countdown, drawn with full blocks on a 3×5 grid (the look of tty-clock).
///
/// Each grid cell is `scale` columns wide: scale 2 keeps strokes as thick across as they are tall on a
/// terminal's tall cells, scale 1 fits narrow terminals.
public enum BigDigits {
    public static let height = 5

    private static let glyphs: [Character: [String]] = [
        "0": ["###", "# #", "# #", "# #", "###"],
        "1": [" # ", "## ", " # ", " # ", "###"],
        "2": ["###", "  #", "###", "#  ", "###"],
        "3": ["###", "  #", "###", "  #", "###"],
        "4": ["# #", "# #", "###", "  #", "  #"],
        "5": ["###", "#  ", "###", "  #", "###"],
        "6": ["###", "#  ", "###", "# #", "###"],
        "7": ["###", "  #", "  #", "  #", "  #"],
        "8": ["###", "# #", "###", "# #", "###"],
        "9": ["###", "# #", "###", "  #", "###"],
        ":": [" ", "#", " ", "#", " "],
    ]

    /// Columns `text` takes at `scale`: glyphs and one cell of space between neighbours.
    public static func width(of text: String, scale: Int) -> Int {
        let cells = text.reduce(0) { $0 + (glyphs[$1]?.first?.count ?? 0) } + max(0, text.count - 1)
        return cells * scale
    }

    /// The five rows of `text` (digits and colons) at `scale`, all of the same width.
    public static func render(_ text: String, scale: Int) -> [String] {
        (0..<height).map { row in
            text.compactMap { glyphs[$0]?[row] }
                .map { cells in String(cells.flatMap { cell in repeatElement(cell == "#" ? "█" : " ", count: scale) }) }
                .joined(separator: String(repeating: " ", count: scale))
        }
    }
}
