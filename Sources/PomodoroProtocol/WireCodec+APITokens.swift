import PomodoroCore

// A room's API tokens on the wire (docs/PROTOCOL.md, "API tokens"): the `apiToken` request and the
// `apiTokens` reply, decoded and encoded together.

/// What a member asks of the room's API tokens.
public enum APITokenRequest: Equatable, Sendable {
    case list
    /// Make a named token; the reply carries it once (`APITokensPayload.created`).
    case create(name: String)
    /// Revoke the token with this id: from that moment it carries nothing.
    case revoke(id: String)

    public var action: String {
        switch self {
        case .list: "list"
        case .create: "create"
        case .revoke: "revoke"
        }
    }
}

/// One token as the room lists it: never the token itself.
public struct APITokenPayload: Equatable, Sendable {
    public var id: String
    public var name: String
    /// Epoch milliseconds.
    public var createdAt: Int64
    /// Epoch milliseconds, to the minute; nil when never used.
    public var lastUsedAt: Int64?

    public init(id: String, name: String, createdAt: Int64, lastUsedAt: Int64?) {
        self.id = id
        self.name = name
        self.createdAt = createdAt
        self.lastUsedAt = lastUsedAt
    }

    public init(_ record: APITokenRecord) {
        self.init(id: record.id, name: record.name, createdAt: record.createdAtMs, lastUsedAt: record.lastUsedAtMs)
    }
}

/// The room's tokens, and the token just made (its id and secret), shown to its maker only, once.
public struct APITokensPayload: Equatable, Sendable {
    public var room: String
    public var tokens: [APITokenPayload]
    public var created: Created?

    public struct Created: Equatable, Sendable {
        public var id: String
        public var token: String
        public init(id: String, token: String) {
            self.id = id
            self.token = token
        }
    }

    public init(room: String, tokens: [APITokenPayload], created: Created? = nil) {
        self.room = room
        self.tokens = tokens
        self.created = created
    }
}

extension WireCodec {
    static func apiTokenRequest(_ fields: FieldReader) throws(ProtocolError) -> APITokenRequest {
        let action = try fields.string("action")
        switch action {
        case "list": return .list
        case "create": return .create(name: try fields.string("name"))
        case "revoke": return .revoke(id: try fields.string("id"))
        default: throw fields.failure("action", "action must be list, create or revoke")
        }
    }

    static func set(_ request: APITokenRequest, into object: JSONBuilder) {
        object.set("action", request.action)
        switch request {
        case .list: break
        case .create(let name): object.set("name", name)
        case .revoke(let id): object.set("id", id)
        }
    }

    static func set(_ payload: APITokensPayload, into object: JSONBuilder) {
        object.set("room", payload.room)
        let array = JSONBuilder.array(capacity: payload.tokens.count)
        for token in payload.tokens {
            let t = JSONBuilder.object()
            t.set("id", token.id)
            t.set("name", token.name)
            t.set("createdAt", token.createdAt)
            t.set("lastUsedAt", token.lastUsedAt.map(JSONBuilder.integer))
            array.append(t)
        }
        object.set("tokens", array)
        if let created = payload.created {
            let c = JSONBuilder.object()
            c.set("id", created.id)
            c.set("token", created.token)
            object.set("created", c)
        }
    }
}

extension FieldReader {
    func apiTokens() throws(ProtocolError) -> APITokensPayload {
        var list: [APITokenPayload] = []
        for t in try objects("tokens") {
            list.append(APITokenPayload(id: try t.string("id"), name: try t.string("name"),
                                        createdAt: try t.int64("createdAt"), lastUsedAt: try t.optionalInt64("lastUsedAt")))
        }
        let created = try optionalObject("created").map { (c) throws(ProtocolError) in
            APITokensPayload.Created(id: try c.string("id"), token: try c.string("token"))
        }
        return APITokensPayload(room: try string("room"), tokens: list, created: created)
    }
}

/// The body of `POST /api/rooms`: a new room, its settings, and optionally its lock and control mode.
public struct RoomCreationRequest: Equatable, Sendable {
    public var room: String
    public var settings: RoomSettings?
    public var passcode: String?
    public var control: ControlMode?
    /// The name of the API token the answer carries (default "api").
    public var tokenName: String?

    public init(room: String, settings: RoomSettings? = nil, passcode: String? = nil, control: ControlMode? = nil,
                tokenName: String? = nil) {
        self.room = room
        self.settings = settings
        self.passcode = passcode
        self.control = control
        self.tokenName = tokenName
    }
}

extension WireCodec {
    /// Reads the body of `POST /api/rooms`; errors as the wire's (`bad_json`, `bad_request` with `field`).
    public static func decodeRoomCreation(_ bytes: [UInt8]) throws(ProtocolError) -> RoomCreationRequest {
        try withBytes(of: bytes) { (buffer) throws(ProtocolError) -> RoomCreationRequest in
            try JSONNode.parse(buffer, maxDepth: serverMaxDepth) { (root) throws(ProtocolError) -> RoomCreationRequest in
                guard root.kind == .object else { throw ProtocolError(.badJSON, "the body must be a JSON object") }
                let fields = FieldReader(root, path: "", ref: nil)
                return RoomCreationRequest(room: try fields.string("room"),
                                           settings: try fields.optionalObject("settings")?.settings(),
                                           passcode: try fields.optionalString("passcode"),
                                           control: try fields.optionalEnumeration("control"),
                                           tokenName: try fields.optionalString("tokenName"))
            }
        }
    }

    /// The answer to `POST /api/rooms`: the room as `state.room` has it and its first API token, shown once.
    public static func encodeRoomCreated(_ room: SnapshotPayload, token: APITokensPayload.Created, name: String) -> [UInt8] {
        let object = JSONBuilder.object()
        object.set("room", snapshot(room))
        let t = JSONBuilder.object()
        t.set("id", token.id)
        t.set("name", name)
        t.set("token", token.token)
        object.set("token", t)
        return object.serialize()
    }
}
