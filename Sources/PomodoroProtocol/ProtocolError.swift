import PomodoroCore

/// A frame the codec could not turn into a message, or any refusal sent back as an `error` message.
///
/// `field` names the offending field (`"seconds"`; nested as `"room.members[2].name"` when decoding server
/// messages); `ref` is the request's ref when it could be read, so the error can echo it; `retryAfter` is how
/// many seconds a removed member waits before they may join again (`removed`, `banned`).
public struct ProtocolError: Error, Equatable, Sendable, CustomStringConvertible {
    public var code: ErrorCode
    public var message: String
    public var field: String?
    public var ref: Ref?
    public var retryAfter: Int?

    public init(code: ErrorCode, message: String, field: String? = nil, ref: Ref? = nil, retryAfter: Int? = nil) {
        self.code = code
        self.message = message
        self.field = field
        self.ref = ref
        self.retryAfter = retryAfter
    }

    init(_ code: ErrorCode, _ message: String, field: String? = nil, ref: Ref? = nil) {
        self.init(code: code, message: message, field: field, ref: ref)
    }

    /// The wire error for a refusal from the core: the one mapping of `RoomError` to code and message, which
    /// the server sends (`seconds must be non-zero`, field `seconds`).
    public init(_ error: RoomError, ref: Ref? = nil) {
        switch error {
        case let .invalidArgument(field, reason):
            self.init(code: .badRequest, message: "\(field) \(reason)", field: field, ref: ref)
        case let .invalidState(reason):
            self.init(code: .invalidState, message: reason, ref: ref)
        case .roomFull:
            self.init(code: .roomFull, message: "the room is full", ref: ref)
        case .unknownMember:
            self.init(code: .notJoined, message: "join a room first", ref: ref)
        case .forbidden:
            self.init(code: .forbidden, message: "only the host may do that in this room", ref: ref)
        case let .banned(remaining):
            self.init(code: .banned, message: Self.banMessage(remaining), ref: ref, retryAfter: Self.banSeconds(remaining))
        }
    }

    public var description: String {
        "\(code.rawValue): \(message)" + (field.map { " (field \($0))" } ?? "")
    }
}

extension ServerMessage {
    /// The `error` message that reports `e` to the client.
    public static func error(_ e: ProtocolError) -> ServerMessage {
        .error(code: e.code, message: e.message, field: e.field, ref: e.ref, retryAfter: e.retryAfter)
    }
}
