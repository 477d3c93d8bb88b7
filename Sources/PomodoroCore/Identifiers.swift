/// A room's name as it appears in invite links: 1–64 characters of `[A-Za-z0-9_-]`.
public struct RoomID: Hashable, Sendable, CustomStringConvertible, Comparable {
    public let rawValue: String

    public init(validating raw: String) throws(RoomError) {
        guard (1...64).contains(raw.utf8.count), raw.utf8.allSatisfy(RoomID.isAllowed) else {
            throw .invalidArgument(field: "room", reason: "must be 1–64 characters of A–Z, a–z, 0–9, '_' or '-'")
        }
        rawValue = raw
    }

    private static func isAllowed(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "-"): true
        default: false
        }
    }

    public var description: String { rawValue }
    public static func < (lhs: RoomID, rhs: RoomID) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// A member's public id within a room ("m1", "m2", ...): stable across reconnections, shown to everyone.
public struct MemberID: Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String
    public init(_ rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }
}

/// The secret a member presents to get their place back after a reconnection. Never shown to others.
public struct ResumeToken: Sendable, CustomStringConvertible {
    public let rawValue: String
    public init(_ rawValue: String) { self.rawValue = rawValue }

    /// What rooms and stores keep instead of the token: its SHA-256, as 64 lowercase hex digits.
    public var hash: String { SHA256.hexDigest(rawValue) }

    /// Compares two hashes in time that depends only on their lengths, not on where the first difference is.
    public static func sameHash(_ a: String, _ b: String) -> Bool {
        let a = Array(a.utf8), b = Array(b.utf8)
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for i in a.indices { difference |= a[i] ^ b[i] }
        return difference == 0
    }

    /// Redacted, so a token never reaches a log by accident.
    public var description: String { "ResumeToken(…)" }
}

/// Checks for the short texts people type: names and tasks.
///
/// Every member's name and task goes out in each `state`, so a text is bounded in what it costs to send
/// and to draw, not only in characters: one character can carry thousands of combining marks.
public enum TextRules {
    /// A text may take this many UTF-8 bytes per character of its limit: 4 is one scalar of any plane per
    /// character, or a few more for characters built of several (an emoji with a skin tone takes 8).
    public static let bytesPerCharacter = 4
    /// At most this many combining marks (general category Mn or Me, the ones drawn over or around the
    /// letter before them) on one character: enough for any language's accents, too few to pile up.
    public static let maxMarksPerCharacter = 4

    /// Trims surrounding white space and checks the length in characters and in UTF-8 bytes, and the
    /// characters themselves. Refused: control characters and direction overrides (they would garble other
    /// people's screens), characters with more than `maxMarksPerCharacter` combining marks, invisible
    /// fillers (see `isForbidden`), and a non-empty text with no visible character at all.
    public static func clean(_ text: String, field: String, allowEmpty: Bool, maxLength: Int) throws(RoomError) -> String {
        let trimmed = text.trimmingWhitespace()
        if trimmed.isEmpty && !allowEmpty {
            throw .invalidArgument(field: field, reason: "must not be empty")
        }
        // Bytes first: cheap, and it bounds the work of everything after.
        let maxBytes = maxLength * bytesPerCharacter
        if trimmed.utf8.count > maxBytes {
            throw .invalidArgument(field: field, reason: "must be at most \(maxBytes) bytes of UTF-8")
        }
        if trimmed.count > maxLength {
            throw .invalidArgument(field: field, reason: "must be at most \(maxLength) characters")
        }
        for scalar in trimmed.unicodeScalars where isForbidden(scalar) {
            throw .invalidArgument(field: field,
                                   reason: "must not contain control, direction-override or invisible filler characters")
        }
        for character in trimmed where markCount(character) > maxMarksPerCharacter {
            throw .invalidArgument(field: field,
                                   reason: "must have at most \(maxMarksPerCharacter) combining marks on one character")
        }
        if !trimmed.isEmpty && !trimmed.unicodeScalars.contains(where: isVisible) {
            throw .invalidArgument(field: field, reason: "must contain at least one visible character")
        }
        return trimmed
    }

    static func isForbidden(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F: true                 // C0 and C1 controls, DEL
        case 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: true  // bidi marks, embeddings, overrides, isolates
        case 0x2028, 0x2029: true                          // line and paragraph separators
        // Invisible fillers that make a name look empty or two names look alike: the zero-width space,
        // word joiner and invisible operators, the byte-order mark, the Mongolian vowel separator, the
        // Hangul fillers, and the tag characters (which also spell out subdivision flags: those are refused).
        case 0x200B, 0x2060...0x2064, 0xFEFF, 0x180E: true
        case 0x115F, 0x1160, 0x3164, 0xFFA0: true
        case 0xE0000...0xE007F: true
        default: false
        }
    }

    /// The combining marks drawn over, under or around the base of `character`.
    static func markCount(_ character: Character) -> Int {
        character.unicodeScalars.count { scalar in
            switch scalar.properties.generalCategory {
            case .nonspacingMark, .enclosingMark: true
            default: false
            }
        }
    }

    /// Whether `scalar` alone puts ink on the screen: not white space, not a mark, not a format or control
    /// character, not a default-ignorable code point (zero-width joiners, variation selectors, ...), not
    /// unassigned, and not the blank Braille pattern.
    static func isVisible(_ scalar: Unicode.Scalar) -> Bool {
        let properties = scalar.properties
        if properties.isWhitespace || properties.isDefaultIgnorableCodePoint || scalar.value == 0x2800 { return false }
        switch properties.generalCategory {
        case .nonspacingMark, .spacingMark, .enclosingMark, .control, .format, .surrogate, .unassigned,
             .spaceSeparator, .lineSeparator, .paragraphSeparator: return false
        default: return true
        }
    }
}

extension StringProtocol {
    /// The text without white space (in Unicode's sense) at either end.
    public func trimmingWhitespace() -> String {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !$0.properties.isWhitespace }) else { return "" }
        let last = scalars.lastIndex(where: { !$0.properties.isWhitespace })!
        return String(String.UnicodeScalarView(scalars[first...last]))
    }
}
