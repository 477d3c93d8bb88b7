/// What a server frame is, read from its bytes without parsing the JSON.
///
/// The generator needs the contents of ticks, replies and phase ends only. A `state` or `welcome` carries
/// the whole member list: about 170 bytes a member, so 850 KB in a room of 5,000, sent to every member on
/// every join. Parsing those would make the generator, not the server, the bottleneck, so they are
/// recognised and counted but never parsed.
///
/// The scan looks for the exact bytes `"type":"` and `"kind":"`. In the server's compact JSON these can
/// only be keys: inside a string (a member's name or task), a quote is escaped as `\"`, and no nested
/// object of a server message has a `type` or `kind` key. Key order does not matter.
public enum FrameKind: Equatable, Sendable {
    case tick
    case state
    case welcome
    /// An event, with its `kind` (`phaseCompleted`, `memberJoined`, ...).
    case event(kind: String)
    case ok
    case error
    case pong
    /// A type this generator does not know, or a frame without a readable type: parse it to find out.
    case other(String?)

    public init(of frame: [UInt8]) {
        self = frame.withUnsafeBufferPointer { Self.classify($0) }
    }

    static func classify(_ frame: UnsafeBufferPointer<UInt8>) -> FrameKind {
        guard let type = stringValue(after: typeKey, in: frame) else { return .other(nil) }
        switch type {
        case "tick": return .tick
        case "state": return .state
        case "welcome": return .welcome
        case "ok": return .ok
        case "error": return .error
        case "pong": return .pong
        case "event": return stringValue(after: kindKey, in: frame).map { .event(kind: $0) } ?? .other(type)
        default: return .other(type)
        }
    }

    /// The member's token in a `welcome` (the one `token` key of the frame: other members' entries carry
    /// none), read without parsing the frame.
    public static func token(inWelcome frame: [UInt8]) -> String? {
        frame.withUnsafeBufferPointer { stringValue(after: tokenKey, in: $0) }
    }

    /// The running timer a `welcome` or `state` shows (its room's `remainingMs` and `endsAt`, and its phase
    /// and cycle), read without parsing the frame: nil unless the room is running. The room's own keys come
    /// before its member list, whose entries hold none of these keys, so the first occurrence of each is the
    /// room's.
    public static func runningTimer(inSnapshot frame: [UInt8]) -> (remainingMs: Int64, endsAtMs: Int64, phase: PhaseMark?)? {
        frame.withUnsafeBufferPointer { bytes in
            guard let running = rawValue(after: runningKey, in: bytes), running == Array("true".utf8),
                  let remaining = integerValue(after: remainingKey, in: bytes),
                  let endsAt = integerValue(after: endsAtKey, in: bytes) else { return nil }
            let phase = stringValue(after: phaseKey, in: bytes).flatMap { name in
                integerValue(after: cycleKey, in: bytes).map { PhaseMark(name, cycle: Int($0)) }
            }
            return (remaining, endsAt, phase)
        }
    }

    private static let tokenKey = Array(#""token":""#.utf8)
    private static let runningKey = Array(#""running":"#.utf8)
    private static let remainingKey = Array(#""remainingMs":"#.utf8)
    private static let endsAtKey = Array(#""endsAt":"#.utf8)
    private static let phaseKey = Array(#""phase":""#.utf8)
    private static let cycleKey = Array(#""cycle":"#.utf8)

    /// The decimal integer after the first `key` (which ends with the colon); nil when absent or not a
    /// non-negative integer (`null`).
    static func integerValue(after key: [UInt8], in frame: UnsafeBufferPointer<UInt8>) -> Int64? {
        guard let raw = rawValue(after: key, in: frame), !raw.isEmpty, raw.count <= 18 else { return nil }
        var value: Int64 = 0
        for byte in raw {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            value = value * 10 + Int64(byte - UInt8(ascii: "0"))
        }
        return value
    }

    /// The bytes after the first `key` up to the next `,` or `}` (a number, `true`, `null`), at most 32.
    private static func rawValue(after key: [UInt8], in frame: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        guard let start = firstIndex(of: key, in: frame) else { return nil }
        var end = start
        while end < frame.count, end - start <= 32, frame[end] != UInt8(ascii: ","), frame[end] != UInt8(ascii: "}") {
            end += 1
        }
        return end - start <= 32 ? Array(frame[start..<end]) : nil
    }

    /// Where the value after the first occurrence of `key` starts.
    private static func firstIndex(of key: [UInt8], in frame: UnsafeBufferPointer<UInt8>) -> Int? {
        guard frame.count >= key.count else { return nil }
        var start = 0
        while start + key.count <= frame.count {
            var matches = true
            for offset in 0..<key.count where frame[start + offset] != key[offset] {
                matches = false
                break
            }
            if matches { return start + key.count }
            start += 1
        }
        return nil
    }

    private static let typeKey = Array(#""type":""#.utf8)
    private static let kindKey = Array(#""kind":""#.utf8)

    /// The string after the first occurrence of `key` (which ends with the opening quote), up to the next
    /// quote; nil when the key is absent, the value holds an escape or runs past 32 bytes (no type or kind
    /// is that long).
    static func stringValue(after key: [UInt8], in frame: UnsafeBufferPointer<UInt8>) -> String? {
        guard let valueStart = firstIndex(of: key, in: frame) else { return nil }
        let quote = UInt8(ascii: "\""), backslash = UInt8(ascii: "\\")
        var end = valueStart
        while end < frame.count, end - valueStart <= 32 {
            let byte = frame[end]
            if byte == quote { return String(decoding: frame[valueStart..<end], as: UTF8.self) }
            if byte == backslash { return nil }
            end += 1
        }
        return nil
    }
}
