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
public enum TextRules {
    /// Trims surrounding white space and checks length and characters.
    /// Control characters and bidirectional overrides are refused: they would garble other people's screens.
    public static func clean(_ text: String, field: String, allowEmpty: Bool, maxLength: Int) throws(RoomError) -> String {
        let trimmed = text.trimmingWhitespace()
        if trimmed.isEmpty && !allowEmpty {
            throw .invalidArgument(field: field, reason: "must not be empty")
        }
        if trimmed.count > maxLength {
            throw .invalidArgument(field: field, reason: "must be at most \(maxLength) characters")
        }
        for scalar in trimmed.unicodeScalars where isForbidden(scalar) {
            throw .invalidArgument(field: field, reason: "must not contain control or direction-override characters")
        }
        return trimmed
    }

    static func isForbidden(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F: true                 // C0 and C1 controls, DEL
        case 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: true  // bidi marks, embeddings, overrides, isolates
        case 0x2028, 0x2029: true                          // line and paragraph separators
        default: false
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
