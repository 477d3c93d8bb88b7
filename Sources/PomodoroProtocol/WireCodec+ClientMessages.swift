import PomodoroCore

// The frames a client sends (docs/PROTOCOL.md §4): decoded by the server, encoded by clients.

extension WireCodec {
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
            case "passcode", "kick": message = try hostingMessage(type, fields)
            case "apiToken": message = .apiToken(try apiTokenRequest(fields))
            case "stats":
                message = .stats(room: try fields.optionalString("room"), days: try fields.optionalInt("days"),
                                 tz: try fields.optionalString("tz"), passcode: try fields.optionalString("passcode"))
            case "observe":
                message = .observe(room: try fields.string("room"), token: try fields.optionalString("token"),
                                   passcode: try fields.optionalString("passcode"))
            case let other:
                if let request = try fields.webhookRequest(type: other) {
                    message = .webhook(request)
                    break
                }
                guard let request = try fields.scheduleRequest(type: other) else {
                    throw ProtocolError(.unknownType, "unknown message type\(quotedIfShort(type))", field: "type", ref: ref)
                }
                message = .schedule(request)
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
        case let .observe(room, token, passcode):
            object.set("room", room)
            if let token { object.set("token", token) }
            if let passcode { object.set("passcode", passcode) }
        case let .control(mode):
            object.set("mode", mode.rawValue)
        case let .handOff(member):
            object.set("member", member)
        case .passcode, .kick:
            setHosting(frame.message, into: object)
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
        case let .schedule(request):
            set(request, into: object)
        case let .apiToken(request):
            set(request, into: object)
        case let .webhook(request):
            set(request, into: object)
        }
        if let ref = frame.ref { set(ref, into: object) }
        return object.serialize()
    }
}
