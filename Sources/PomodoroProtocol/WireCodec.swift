import PomodoroCore

/// The JSON codec of the wire protocol (v1, see docs/PROTOCOL.md), over json-c.
///
/// Decoding checks JSON types and presence only; value bounds (lengths, ranges, room-id characters) are the
/// core's to check. Unknown extra fields are ignored; optional fields may be absent or `null`.
public enum WireCodec {
    /// Client frames nest at most this deep (`{"a":[[...]]}` counts the object as one level).
    public static let clientMaxDepth = 8
    /// Server messages nest 5 levels today (welcome → room → members → member → stats, and stats → members
    /// → member → perDay → day); room to grow.
    static let serverMaxDepth = 16
    /// Longest string `ref`, in UTF-8 bytes.
    public static let maxRefBytes = 64

    // MARK: Parts every message shares

    static func set(_ ref: Ref, into object: JSONBuilder) {
        switch ref {
        case .string(let s): object.set("ref", s)
        case .number(let n): object.set("ref", n)
        }
    }

    /// Reads `ref`: absent or null is none; otherwise a string of at most 64 bytes or a 64-bit integer.
    static func readRef(_ node: JSONNode?) throws(ProtocolError) -> Ref? {
        guard let node, !node.isNull else { return nil }
        if let s = node.string {
            guard s.utf8.count <= maxRefBytes else {
                throw ProtocolError(.badRequest, "'ref' must be at most \(maxRefBytes) bytes", field: "ref")
            }
            return .string(s)
        }
        switch node.integer {
        case .signed(let n)?: return .number(n)
        case .unsigned?, .outOfRange?: throw ProtocolError(.badRequest, "'ref' is out of range", field: "ref")
        case nil: throw ProtocolError(.badRequest, "'ref' must be a string or an integer", field: "ref")
        }
    }

    static func quotedIfShort(_ text: String) -> String {
        text.utf8.count <= 32 && text.unicodeScalars.allSatisfy({ $0.isASCII && $0.value >= 0x20 }) ? " '\(text)'" : ""
    }
}
