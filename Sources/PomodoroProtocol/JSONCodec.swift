import PomodoroCore

/// A frame the codec could not turn into a message, or any refusal sent back as an `error` message.
///
/// `field` names the offending field (`"seconds"`; nested as `"room.members[2].name"` when decoding server
/// messages); `ref` is the request's ref when it could be read, so the error can echo it.
public struct ProtocolError: Error, Equatable, Sendable, CustomStringConvertible {
    public var code: ErrorCode
    public var message: String
    public var field: String?
    public var ref: Ref?

    public init(code: ErrorCode, message: String, field: String? = nil, ref: Ref? = nil) {
        self.code = code
        self.message = message
        self.field = field
        self.ref = ref
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
        }
    }

    public var description: String {
        "\(code.rawValue): \(message)" + (field.map { " (field \($0))" } ?? "")
    }
}

extension ServerMessage {
    /// The `error` message that reports `e` to the client.
    public static func error(_ e: ProtocolError) -> ServerMessage {
        .error(code: e.code, message: e.message, field: e.field, ref: e.ref)
    }
}

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

    // MARK: Client frames

    /// Decodes one client text frame. Errors carry the ref when the frame was an object with a valid ref.
    public static func decodeClientFrame(_ bytes: [UInt8]) throws(ProtocolError) -> ClientFrame {
        try withBytes(of: bytes) { (buffer) throws(ProtocolError) -> ClientFrame in try decodeClientFrame(buffer) }
    }

    /// Decodes one client text frame. Errors carry the ref when the frame was an object with a valid ref.
    public static func decodeClientFrame(_ bytes: UnsafeRawBufferPointer) throws(ProtocolError) -> ClientFrame {
        try JSONNode.parse(bytes, maxDepth: clientMaxDepth) { (root) throws(ProtocolError) -> ClientFrame in
            guard root.kind == .object else { throw ProtocolError(.badJSON, "a frame must be a JSON object") }
            let ref = try readRef(root["ref"])
            let fields = FieldReader(root, path: "", ref: ref)
            let type = try fields.type()
            let message: ClientMessage
            switch type {
            case "join":
                message = .join(room: try fields.string("room"), name: try fields.string("name"),
                                token: try fields.optionalString("token"),
                                passcode: try fields.optionalString("passcode"),
                                control: try fields.optionalEnumeration("control"),
                                tz: try fields.optionalString("tz"))
            case "start": message = .start
            case "pause": message = .pause
            case "resume": message = .resume
            case "skip": message = .skip
            case "reset": message = .reset
            case "extend": message = .extend(seconds: try fields.int("seconds"))
            case "configure": message = .configure(try fields.settings())
            case "task": message = .task(text: try fields.string("text"))
            case "presence": message = .presence(away: try fields.bool("away"))
            case "leave": message = .leave
            case "ping": message = .ping
            case "control": message = .control(mode: try fields.enumeration("mode"))
            case "handOff": message = .handOff(member: try fields.string("member"))
            case "stats":
                message = .stats(room: try fields.optionalString("room"), days: try fields.optionalInt("days"),
                                 tz: try fields.optionalString("tz"), passcode: try fields.optionalString("passcode"))
            default: throw ProtocolError(.unknownType, "unknown message type\(quotedIfShort(type))", field: "type", ref: ref)
            }
            return ClientFrame(message, ref: ref)
        }
    }

    /// Encodes a client frame (for clients: the terminal client, tests, the load generator).
    public static func encode(_ frame: ClientFrame) -> [UInt8] {
        let object = JSONBuilder.object()
        object.set("type", frame.message.type)
        switch frame.message {
        case let .join(room, name, token, passcode, control, tz):
            object.set("room", room)
            object.set("name", name)
            if let token { object.set("token", token) }
            if let passcode { object.set("passcode", passcode) }
            if let control { object.set("control", control.rawValue) }
            if let tz { object.set("tz", tz) }
        case let .stats(room, days, tz, passcode):
            if let room { object.set("room", room) }
            if let days { object.set("days", days) }
            if let tz { object.set("tz", tz) }
            if let passcode { object.set("passcode", passcode) }
        case let .control(mode):
            object.set("mode", mode.rawValue)
        case let .handOff(member):
            object.set("member", member)
        case .start, .pause, .resume, .skip, .reset, .leave, .ping:
            break
        case let .extend(seconds):
            object.set("seconds", seconds)
        case let .configure(settings):
            set(settings, into: object)
        case let .task(text):
            object.set("text", text)
        case let .presence(away):
            object.set("away", away)
        }
        if let ref = frame.ref { set(ref, into: object) }
        return object.serialize()
    }

    // MARK: Server messages

    /// Encodes a server message as one compact JSON object.
    public static func encode(_ message: ServerMessage) -> [UInt8] {
        let object = JSONBuilder.object()
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
        case let .error(code, message, field, ref):
            object.set("code", code.rawValue)
            object.set("message", message)
            if let field { object.set("field", field) }
            if let ref { set(ref, into: object) }
        case let .pong(serverTime, ref):
            object.set("serverTime", serverTime)
            if let ref { set(ref, into: object) }
        case let .stats(report, ref):
            set(report, into: object)
            if let ref { set(ref, into: object) }
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
                                  field: try fields.optionalString("field"), ref: ref)
                case "pong":
                    return .pong(serverTime: try fields.int64("serverTime"), ref: ref)
                case "stats":
                    return .stats(try fields.statsReport(), ref: ref)
                case let type:
                    throw ProtocolError(.unknownType, "unknown message type\(quotedIfShort(type))", field: "type",
                                        ref: ref)
                }
            }
        }
    }

    // MARK: Encoding parts

    private static func snapshot(_ s: SnapshotPayload) -> JSONBuilder {
        let object = JSONBuilder.object()
        object.set("id", s.room)
        object.set("phase", s.phase.rawValue)
        object.set("status", s.status.rawValue)
        object.set("running", s.running)
        object.set("remainingMs", s.remainingMs)
        object.set("phaseLengthMs", s.phaseLengthMs)
        object.set("endsAt", s.endsAt.map(JSONBuilder.integer))  // always present: null when not running
        object.set("cycle", s.cycle)
        object.set("settings", settingsObject(s.settings))
        object.set("pendingSettings", s.pendingSettings.map { settingsObject($0).raw })  // always present
        let members = JSONBuilder.array(capacity: s.members.count)
        for member in s.members {
            let m = JSONBuilder.object()
            m.set("id", member.id)
            m.set("name", member.name)
            m.set("present", member.present)
            m.set("connected", member.connected)
            m.set("task", member.task)
            m.set("stats", stats(member.stats))
            members.append(m)
        }
        object.set("members", members)
        object.set("memberCount", s.memberCount)
        object.set("presentCount", s.presentCount)
        object.set("membersTruncated", s.membersTruncated)
        object.set("stats", stats(s.stats))
        object.set("seq", s.seq)
        object.set("serverTime", s.serverTime)
        object.set("control", s.control.rawValue)
        object.set("host", s.host.map(JSONBuilder.string))  // always present: null when nobody hosts
        object.set("locked", s.locked)
        return object
    }

    private static func limitsObject(_ l: LimitsPayload) -> JSONBuilder {
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

    private static func stats(_ s: StatsPayload) -> JSONBuilder {
        let object = JSONBuilder.object()
        object.set("focusCompleted", s.focusCompleted)
        object.set("focusSeconds", s.focusSeconds)
        object.set("interruptions", s.interruptions)
        return object
    }

    private static func settingsObject(_ settings: RoomSettings) -> JSONBuilder {
        let object = JSONBuilder.object()
        set(settings, into: object)
        return object
    }

    private static func set(_ settings: RoomSettings, into object: JSONBuilder) {
        object.set("focus", settings.focus)
        object.set("shortBreak", settings.shortBreak)
        object.set("longBreak", settings.longBreak)
        object.set("longBreakEvery", settings.longBreakEvery)
        object.set("autoStart", settings.autoStart)
    }

    static func set(_ ref: Ref, into object: JSONBuilder) {
        switch ref {
        case .string(let s): object.set("ref", s)
        case .number(let n): object.set("ref", n)
        }
    }

    private static func set(_ event: EventPayload, into object: JSONBuilder) {
        switch event {
        case let .phaseCompleted(completed, next, autoStarted, cycle):
            object.set("completed", completed.rawValue)
            object.set("next", next.rawValue)
            object.set("autoStarted", autoStarted)
            object.set("cycle", cycle)
        case let .memberJoined(member, name):
            object.set("member", member)
            object.set("name", name)
        case let .memberReturned(member), let .memberBack(member):
            object.set("member", member)
        case let .memberAway(member, reason):
            object.set("member", member)
            object.set("reason", reason.rawValue)
        case let .memberLeft(member, reason):
            object.set("member", member)
            object.set("reason", reason.rawValue)
        case let .control(action, by, seconds):
            object.set("action", action.rawValue)
            object.set("by", by)
            if let seconds { object.set("seconds", seconds) }
        case let .hostChanged(member):
            object.set("member", member.map(JSONBuilder.string))  // null when nobody is left to host
        case let .controlModeChanged(mode, by):
            object.set("mode", mode.rawValue)
            object.set("by", by)
        }
    }

    // MARK: Decoding parts

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

/// Reads the fields of one JSON object, naming the field in every error and carrying the request's ref.
struct FieldReader {
    let node: JSONNode
    /// Where this object sits in the message ("" for the top level).
    let path: String
    let ref: Ref?

    init(_ node: JSONNode, path: String, ref: Ref?) {
        self.node = node
        self.path = path
        self.ref = ref
    }

    func name(_ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

    func failure(_ key: String, _ message: String) -> ProtocolError {
        ProtocolError(.badRequest, message, field: name(key), ref: ref)
    }

    /// The value of a required field (present and not null).
    func value(_ key: String, _ expected: String) throws(ProtocolError) -> JSONNode {
        guard let value = node[key] else { throw failure(key, "missing field '\(name(key))'") }
        guard !value.isNull else { throw failure(key, "'\(name(key))' must be \(expected), not null") }
        return value
    }

    /// The value of an optional field: absent and null both mean none.
    func optionalValue(_ key: String) -> JSONNode? {
        guard let value = node[key], !value.isNull else { return nil }
        return value
    }

    func type() throws(ProtocolError) -> String {
        guard let type = try value("type", "a string").string else {
            throw failure("type", "'type' must be a string")
        }
        return type
    }

    func string(_ key: String) throws(ProtocolError) -> String {
        guard let s = try value(key, "a string").string else { throw failure(key, "'\(name(key))' must be a string") }
        return s
    }

    func optionalString(_ key: String) throws(ProtocolError) -> String? {
        guard let value = optionalValue(key) else { return nil }
        guard let s = value.string else { throw failure(key, "'\(name(key))' must be a string") }
        return s
    }

    func bool(_ key: String) throws(ProtocolError) -> Bool {
        guard let b = try value(key, "true or false").bool else {
            throw failure(key, "'\(name(key))' must be true or false")
        }
        return b
    }

    func optionalBool(_ key: String) throws(ProtocolError) -> Bool? {
        optionalValue(key) == nil ? nil : try bool(key)
    }

    func int64(_ key: String) throws(ProtocolError) -> Int64 {
        switch try value(key, "an integer").integer {
        case .signed(let n)?: return n
        case .unsigned?, .outOfRange?: throw failure(key, "'\(name(key))' is out of range")
        case nil: throw failure(key, "'\(name(key))' must be an integer")
        }
    }

    func int(_ key: String) throws(ProtocolError) -> Int {
        guard let n = Int(exactly: try int64(key)) else { throw failure(key, "'\(name(key))' is out of range") }
        return n
    }

    func optionalInt(_ key: String) throws(ProtocolError) -> Int? {
        optionalValue(key) == nil ? nil : try int(key)
    }

    func optionalInt64(_ key: String) throws(ProtocolError) -> Int64? {
        optionalValue(key) == nil ? nil : try int64(key)
    }

    func uint64(_ key: String) throws(ProtocolError) -> UInt64 {
        switch try value(key, "an integer").integer {
        case .signed(let n)? where n >= 0: return UInt64(n)
        case .unsigned(let n)?: return n
        case .signed?, .outOfRange?: throw failure(key, "'\(name(key))' is out of range")
        case nil: throw failure(key, "'\(name(key))' must be an integer")
        }
    }

    func enumeration<E: RawRepresentable<String>>(_ key: String) throws(ProtocolError) -> E {
        guard let value = E(rawValue: try string(key)) else {
            throw failure(key, "'\(name(key))' has an unknown value")
        }
        return value
    }

    func optionalEnumeration<E: RawRepresentable<String>>(_ key: String) throws(ProtocolError) -> E? {
        guard let raw = try optionalString(key) else { return nil }
        guard let value = E(rawValue: raw) else { throw failure(key, "'\(name(key))' has an unknown value") }
        return value
    }

    func object(_ key: String) throws(ProtocolError) -> FieldReader {
        let value = try value(key, "an object")
        guard value.kind == .object else { throw failure(key, "'\(name(key))' must be an object") }
        return FieldReader(value, path: name(key), ref: ref)
    }

    func optionalObject(_ key: String) throws(ProtocolError) -> FieldReader? {
        guard let value = optionalValue(key) else { return nil }
        guard value.kind == .object else { throw failure(key, "'\(name(key))' must be an object") }
        return FieldReader(value, path: name(key), ref: ref)
    }

    /// The objects of an array field, each with its own path (`members[2]`).
    func objects(_ key: String) throws(ProtocolError) -> [FieldReader] {
        let value = try value(key, "an array")
        guard value.kind == .array else { throw failure(key, "'\(name(key))' must be an array") }
        var readers: [FieldReader] = []
        readers.reserveCapacity(value.count)
        for (index, element) in value.elements.enumerated() {
            let elementName = "\(name(key))[\(index)]"
            guard element.kind == .object else {
                throw ProtocolError(.badRequest, "'\(elementName)' must be an object", field: elementName, ref: ref)
            }
            readers.append(FieldReader(element, path: elementName, ref: ref))
        }
        return readers
    }

    /// The five settings, all required (as in `configure` and in snapshots).
    func settings() throws(ProtocolError) -> RoomSettings {
        RoomSettings(focus: try int("focus"), shortBreak: try int("shortBreak"), longBreak: try int("longBreak"),
                     longBreakEvery: try int("longBreakEvery"), autoStart: try bool("autoStart"))
    }

    func limits() throws(ProtocolError) -> LimitsPayload {
        LimitsPayload(maxNameLength: try int("maxNameLength"), maxTaskLength: try int("maxTaskLength"),
                      minPasscodeLength: try int("minPasscodeLength"), maxPasscodeLength: try int("maxPasscodeLength"),
                      maxExtendSeconds: try int("maxExtendSeconds"), maxPhaseSeconds: try int("maxPhaseSeconds"),
                      minFocusSeconds: try int("minFocusSeconds"), maxSettingSeconds: try int("maxSettingSeconds"),
                      maxLongBreakEvery: try int("maxLongBreakEvery"))
    }

    func stats() throws(ProtocolError) -> StatsPayload {
        StatsPayload(focusCompleted: try int("focusCompleted"), focusSeconds: try int64("focusSeconds"),
                     interruptions: try int("interruptions"))
    }

    func snapshot() throws(ProtocolError) -> SnapshotPayload {
        let endsAt: Int64? = optionalValue("endsAt") == nil ? nil : try int64("endsAt")
        var members: [MemberPayload] = []
        for m in try objects("members") {
            members.append(MemberPayload(id: try m.string("id"), name: try m.string("name"),
                                         present: try m.bool("present"), connected: try m.bool("connected"),
                                         task: try m.string("task"), stats: try m.object("stats").stats()))
        }
        return SnapshotPayload(
            room: try string("id"), phase: try enumeration("phase"), status: try enumeration("status"),
            running: try bool("running"), remainingMs: try int64("remainingMs"),
            phaseLengthMs: try int64("phaseLengthMs"), endsAt: endsAt, cycle: try int("cycle"),
            settings: try object("settings").settings(), pendingSettings: try optionalObject("pendingSettings")?.settings(),
            members: members, memberCount: try optionalInt("memberCount"),
            presentCount: try optionalInt("presentCount"), membersTruncated: try optionalBool("membersTruncated"),
            stats: try object("stats").stats(), seq: try uint64("seq"),
            serverTime: try int64("serverTime"), control: try enumeration("control"),
            host: try optionalString("host"), locked: try bool("locked"))
    }

    func event() throws(ProtocolError) -> EventPayload {
        switch try string("kind") {
        case "phaseCompleted":
            return .phaseCompleted(completed: try enumeration("completed"), next: try enumeration("next"),
                                   autoStarted: try bool("autoStarted"), cycle: try int("cycle"))
        case "memberJoined": return .memberJoined(member: try string("member"), name: try string("name"))
        case "memberReturned": return .memberReturned(member: try string("member"))
        case "memberAway": return .memberAway(member: try string("member"), reason: try enumeration("reason"))
        case "memberBack": return .memberBack(member: try string("member"))
        case "memberLeft": return .memberLeft(member: try string("member"), reason: try enumeration("reason"))
        case "control":
            let seconds: Int? = optionalValue("seconds") == nil ? nil : try int("seconds")
            return .control(action: try enumeration("action"), by: try string("by"), seconds: seconds)
        case "hostChanged": return .hostChanged(member: try optionalString("member"))
        case "controlModeChanged": return .controlModeChanged(mode: try enumeration("mode"), by: try string("by"))
        default:
            throw ProtocolError(.unknownType, "unknown event kind", field: name("kind"), ref: ref)
        }
    }
}
