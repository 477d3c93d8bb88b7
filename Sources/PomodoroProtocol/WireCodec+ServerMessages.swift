import PomodoroCore

// The envelope of every server message (docs/PROTOCOL.md §5), with the small messages whole: `welcome`
// (and its `limits`), `tick`, `ok`, `error`, `pong`. The snapshot, the events and the stats report have files
// of their own.

extension WireCodec {
    /// Encodes a server message as one compact JSON object.
    public static func encode(_ message: ServerMessage) -> [UInt8] {
        let object = JSONBuilder.object(capacity: 256)
        object.set("type", message.type)
        switch message {
        case let .welcome(you, room, serverTime, limits, ref):
            let youObject = JSONBuilder.object()
            youObject.set("id", you.id)
            youObject.set("token", you.token)
            youObject.set("resumed", you.resumed)
            object.set("you", youObject)
            object.set("room", snapshot(room))
            object.set("serverTime", serverTime)
            object.set("limits", limitsObject(limits))
            if let ref { set(ref, into: object) }
        case let .state(room):
            object.set("room", snapshot(room))
        case let .tick(tick):
            object.set("room", tick.room)
            object.set("phase", tick.phase.rawValue)
            object.set("remainingMs", tick.remainingMs)
            object.set("endsAt", tick.endsAt)
            object.set("cycle", tick.cycle)
            object.set("seq", tick.seq)
            object.set("serverTime", tick.serverTime)
        case let .event(room, event, serverTime):
            object.set("room", room)
            object.set("kind", event.kind)
            object.set("serverTime", serverTime)
            set(event, into: object)
        case let .ok(command, appliesFrom, ref):
            object.set("command", command)
            if let appliesFrom { object.set("appliesFrom", appliesFrom.rawValue) }
            if let ref { set(ref, into: object) }
        case let .error(code, message, field, ref, retryAfter):
            object.set("code", code.rawValue)
            object.set("message", message)
            if let field { object.set("field", field) }
            if let ref { set(ref, into: object) }
            if let retryAfter { object.set("retryAfter", retryAfter) }
        case let .pong(serverTime, ref):
            object.set("serverTime", serverTime)
            if let ref { set(ref, into: object) }
        case let .stats(report, ref):
            set(report, into: object)
            if let ref { set(ref, into: object) }
        case let .observing(room, serverTime, ref):
            object.set("room", snapshot(room))
            object.set("serverTime", serverTime)
            if let ref { set(ref, into: object) }
        case let .schedules(payload, ref):
            set(payload, into: object)
            if let ref { set(ref, into: object) }
        case let .apiTokens(payload, ref):
            set(payload, into: object)
            if let ref { set(ref, into: object) }
        case let .webhooks(payload, ref):
            set(payload, into: object)
            if let ref { set(ref, into: object) }
        case let .you(room, member):
            object.set("room", room)
            object.set("member", memberObject(member))
        }
        return object.serialize()
    }

    /// Decodes one server message (for clients: the terminal client, tests, the load generator).
    /// An unknown `type`, or an unknown event `kind`, is `unknown_type`: clients should skip those messages.
    /// An unknown error `code` decodes as `.internalError`, message intact.
    public static func decodeServerMessage(_ bytes: [UInt8]) throws(ProtocolError) -> ServerMessage {
        try withBytes(of: bytes) { (buffer) throws(ProtocolError) -> ServerMessage in
            try JSONNode.parse(buffer, maxDepth: serverMaxDepth) { (root) throws(ProtocolError) -> ServerMessage in
                guard root.kind == .object else { throw ProtocolError(.badJSON, "a message must be a JSON object") }
                let ref = try readRef(root["ref"])
                let fields = FieldReader(root, path: "", ref: ref)
                switch try fields.type() {
                case "welcome":
                    let you = try fields.object("you")
                    return .welcome(you: YouPayload(id: try you.string("id"), token: try you.string("token"),
                                                    resumed: try you.bool("resumed")),
                                    room: try fields.object("room").snapshot(),
                                    serverTime: try fields.int64("serverTime"),
                                    limits: try fields.object("limits").limits(), ref: ref)
                case "state":
                    return .state(try fields.object("room").snapshot())
                case "tick":
                    return .tick(TickPayload(
                        room: try fields.string("room"), phase: try fields.enumeration("phase"),
                        remainingMs: try fields.int64("remainingMs"), endsAt: try fields.int64("endsAt"),
                        cycle: try fields.int("cycle"), seq: try fields.uint64("seq"),
                        serverTime: try fields.int64("serverTime")))
                case "event":
                    return .event(room: try fields.string("room"), try fields.event(),
                                  serverTime: try fields.int64("serverTime"))
                case "ok":
                    return .ok(command: try fields.string("command"),
                               appliesFrom: try fields.optionalEnumeration("appliesFrom"), ref: ref)
                case "error":
                    // A code from a newer server reads as `internal`, keeping its message (docs/PROTOCOL.md §13).
                    return .error(code: ErrorCode(rawValue: try fields.string("code")) ?? .internalError,
                                  message: try fields.string("message"),
                                  field: try fields.optionalString("field"), ref: ref,
                                  retryAfter: try fields.optionalInt("retryAfter"))
                case "pong":
                    return .pong(serverTime: try fields.int64("serverTime"), ref: ref)
                case "stats":
                    return .stats(try fields.statsReport(), ref: ref)
                case "observing":
                    return .observing(room: try fields.object("room").snapshot(),
                                      serverTime: try fields.int64("serverTime"), ref: ref)
                case "schedules":
                    return .schedules(try fields.schedules(), ref: ref)
                case "apiTokens":
                    return .apiTokens(try fields.apiTokens(), ref: ref)
                case "webhooks":
                    return .webhooks(try fields.webhooks(), ref: ref)
                case "you":
                    return .you(room: try fields.string("room"), member: try fields.object("member").member())
                case let type:
                    throw ProtocolError(.unknownType, "unknown message type\(quotedIfShort(type))", field: "type",
                                        ref: ref)
                }
            }
        }
    }

    static func limitsObject(_ l: LimitsPayload) -> JSONBuilder {
        let object = JSONBuilder.object()
        object.set("maxNameLength", l.maxNameLength)
        object.set("maxTaskLength", l.maxTaskLength)
        object.set("minPasscodeLength", l.minPasscodeLength)
        object.set("maxPasscodeLength", l.maxPasscodeLength)
        object.set("maxExtendSeconds", l.maxExtendSeconds)
        object.set("maxPhaseSeconds", l.maxPhaseSeconds)
        object.set("minFocusSeconds", l.minFocusSeconds)
        object.set("maxSettingSeconds", l.maxSettingSeconds)
        object.set("maxLongBreakEvery", l.maxLongBreakEvery)
        return object
    }
}

extension FieldReader {
    func limits() throws(ProtocolError) -> LimitsPayload {
        LimitsPayload(maxNameLength: try int("maxNameLength"), maxTaskLength: try int("maxTaskLength"),
                      minPasscodeLength: try int("minPasscodeLength"), maxPasscodeLength: try int("maxPasscodeLength"),
                      maxExtendSeconds: try int("maxExtendSeconds"), maxPhaseSeconds: try int("maxPhaseSeconds"),
                      minFocusSeconds: try int("minFocusSeconds"), maxSettingSeconds: try int("maxSettingSeconds"),
                      maxLongBreakEvery: try int("maxLongBreakEvery"))
    }
}
