import PomodoroCore

// The host's tools on the wire (docs/PROTOCOL.md §4, "The host's tools"): `passcode` and `kick`, decoded
// and encoded together.

extension WireCodec {
    static func hostingMessage(_ type: String, _ fields: FieldReader) throws(ProtocolError) -> ClientMessage {
        switch type {
        case "passcode": return .passcode(try fields.stringOrNull("passcode"))
        default: return .kick(member: try fields.string("member"))
        }
    }

    static func setHosting(_ message: ClientMessage, into object: JSONBuilder) {
        switch message {
        case .passcode(let passcode):
            object.set("passcode", passcode.map(JSONBuilder.string))  // null unlocks
        case .kick(let member):
            object.set("member", member)
        default:
            break
        }
    }
}

extension FieldReader {
    /// A field that must be present, and is a string or null (for `passcode`, where null unlocks the room
    /// and a forgotten field must not).
    func stringOrNull(_ key: String) throws(ProtocolError) -> String? {
        guard let value = node[key] else { throw failure(key, "missing field '\(name(key))'") }
        if value.isNull { return nil }
        guard let s = value.string else { throw failure(key, "'\(name(key))' must be a string or null") }
        return s
    }
}

extension ProtocolError {
    /// How long a ban has left as `retryAfter` says it: whole seconds, rounded up, at least one (a ban that
    /// still refuses has not ended).
    static func banSeconds(_ remaining: Duration) -> Int {
        let (seconds, attoseconds) = remaining.components
        return max(1, Int(seconds) + (attoseconds > 0 ? 1 : 0))
    }

    /// What a member the host removed is told, when removed and when they try to come back: why, and for how
    /// long, in people's words (clients show `retryAfter` in theirs).
    static func banMessage(_ remaining: Duration) -> String {
        let minutes = (banSeconds(remaining) + 59) / 60
        return "the host removed you from this room; you may join again in \(minutes) minute\(minutes == 1 ? "" : "s")"
    }

    /// The `error` a removed member's connection gets before it is closed with 4002.
    public static func removed(for ban: Duration) -> ProtocolError {
        ProtocolError(code: .removed, message: banMessage(ban), retryAfter: banSeconds(ban))
    }
}
