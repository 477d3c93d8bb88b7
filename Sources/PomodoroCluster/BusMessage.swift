import PomodoroCore

/// What nodes say to each other on the bus (`ClusterBus`), and its text form.
///
/// A member's connection stays on the node it reached; when the room is owned elsewhere, that node only
/// relays: the member's frames that pass its limits and decode go to the owner exactly as sent (the others
/// are answered by that node, through the owner, as `refused`), and what the owner sends back is written to
/// the member untouched. So the bus carries frames, never re-encoded messages, and the wire protocol has
/// one codec. Connections are named by their node and that node's connection number. `RedisConnection`
/// publishes the text as bytes with a length: whatever a frame holds reaches the other node byte for byte.
///
/// Text form: one header line, then the frame exactly as it was (it may hold any text, newlines too):
/// ```
/// v1 frame NODE CONNECTION ROOM\n{"type":"start","ref":"r1"}
/// v1 refused NODE CONNECTION ROOM\n{"type":"error","code":"bad_json",…}
/// v1 closing NODE CONNECTION ROOM CODE\nREASON
/// v1 reply NODE CONNECTION,CONNECTION,…[ FROM]\n{"type":"ok","ref":"r1"}
/// v1 opened NODE CONNECTION ROOM\nPEER
/// v1 closed NODE CONNECTION ROOM\n[closed]
/// v1 close NODE CONNECTION CODE[ FROM]\nREASON
/// v1 schedules ROOM\n
/// v1 handoff ROOM FROM\nROOM\nROOM…     (the rooms after the first, one a line)
/// v1 api … / v1 apiread … / v1 apianswer …   (a control-API command or snapshot read, and its answer;
/// v1 apiwatch … / v1 apistream … / …            an event stream's watch and pieces: ControlAPIBusMessage)
/// ```
/// Node ids and room names hold no spaces or newlines (`RoomID` and the node-id option refuse them).
/// `FROM` names the node that sent a reply or close, so that a node ignores what a former owner of a room
/// still sends after the room moved; it is left out when empty.
public enum BusMessage: Equatable, Sendable {
    /// A member's frame, from the node holding its connection, to the room's owner. Only a frame that node
    /// decoded and let through its limits is sent, exactly as the member sent it.
    case frame(from: RemoteConnection, room: String, frame: String)
    /// What the node holding the connection answered a frame it did not relay (one the server refuses on
    /// any node: not JSON, a bad field, too fast): the owner sends `answer` back in that frame's turn, so
    /// the member hears its answers in the order of its frames, as on one server. The frame itself never
    /// reaches Redis.
    case refused(from: RemoteConnection, room: String, answer: String)
    /// The node holding the connection closes it (it kept flooding) once the answers to its earlier frames are
    /// out: the owner sends `close` back in its turn, and the node closes the connection then.
    case closing(from: RemoteConnection, room: String, code: UInt16, reason: String)
    /// A frame from the owner to some of one node's connections (a reply with a `ref`, a welcome, an
    /// error; or a broadcast to the node's members, encoded once).
    case reply(node: String, connections: [UInt64], frame: String, from: String = "")
    /// A member's connection to a room owned elsewhere opened, or closed: the owner admits or lets go.
    /// `peer` is the member's address as its node saw it, for the owner's per-address limits.
    case opened(RemoteConnection, room: String, peer: String = "")
    /// `ended`: how it ended, as the body: "closed" (the member's client closed it itself, a close frame: "Ada
    /// stepped out"), "restart" (its node sent it back for a restart, 1012: not announced), or empty (lost).
    /// A node from before a body reads it as a connection lost.
    case closed(RemoteConnection, room: String, ended: ConnectionEnd = .lost)
    /// The owner closes one of another node's connections (a member replaced, kicked or banned), with a
    /// WebSocket close code and reason.
    case close(RemoteConnection, code: UInt16, reason: String, from: String = "")
    /// A room's schedules changed in the store (on `schedulesChannel`): every node reads them again, to
    /// know which rooms must always run somewhere (docs/CLUSTER.md, "Schedules on a cluster").
    case schedulesChanged(room: String)
    /// A node that is draining gave the leases of `rooms` back and asks the node it is sent to to take the
    /// rooms and run them at once, members or not, all together (docs/CLUSTER.md, "Draining a node"). The
    /// first room is in the header, as when the message named one room: a node that reads only the header
    /// takes that one.
    case handOff(rooms: [String], from: String)
    /// A control-API command or snapshot read for a room another node runs, and its answer
    /// (`ControlAPIBusMessage.swift`).
    case controlAPI(ControlAPIBusMessage)

    /// A connection held by another node.
    public struct RemoteConnection: Hashable, Sendable, CustomStringConvertible {
        public var node: String
        public var connection: UInt64
        public init(node: String, connection: UInt64) {
            self.node = node
            self.connection = connection
        }
        public var description: String { "\(node)/c\(connection)" }
    }

    /// A message that is not one of ours: says what is wrong with it.
    public struct Malformed: Error, Equatable, Sendable, CustomStringConvertible {
        public let description: String
    }

    static let version = "v1"

    /// The text form, for `PUBLISH`.
    public var encoded: String {
        switch self {
        case .frame(let from, let room, let frame):
            "\(Self.version) frame \(from.node) \(from.connection) \(room)\n\(frame)"
        case .refused(let from, let room, let answer):
            "\(Self.version) refused \(from.node) \(from.connection) \(room)\n\(answer)"
        case .closing(let from, let room, let code, let reason):
            "\(Self.version) closing \(from.node) \(from.connection) \(room) \(code)\n\(reason)"
        case .reply(let node, let connections, let frame, let from):
            "\(Self.version) reply \(node) \(connections.map(String.init).joined(separator: ","))\(Self.sender(from))\n\(frame)"
        case .opened(let from, let room, let peer):
            "\(Self.version) opened \(from.node) \(from.connection) \(room)\n\(peer)"
        case .closed(let from, let room, let ended):
            "\(Self.version) closed \(from.node) \(from.connection) \(room)\n\(ended == .lost ? "" : ended.rawValue)"
        case .close(let to, let code, let reason, let from):
            "\(Self.version) close \(to.node) \(to.connection) \(code)\(Self.sender(from))\n\(reason)"
        case .schedulesChanged(let room):
            "\(Self.version) schedules \(room)\n"
        case .handOff(let rooms, let from):
            "\(Self.version) handoff \(rooms.first ?? "") \(from)\n\(rooms.dropFirst().joined(separator: "\n"))"
        case .controlAPI(let message):
            "\(Self.version) \(message.encoded)"
        }
    }

    private static func sender(_ node: String) -> String { node.isEmpty ? "" : " \(node)" }

    /// Reads the text form.
    /// - Throws: `Malformed` for another version, an unknown kind, or a header with the wrong fields.
    public init(decoding text: String) throws(Malformed) {
        // Found in the UTF-8 bytes: the header is ASCII, and a state's body is kilobytes that a search by
        // characters would walk grapheme by grapheme.
        guard let newline = text.utf8.firstIndex(of: UInt8(ascii: "\n")) else { throw Malformed(description: "no header line") }
        let header = text.utf8[..<newline].split(separator: UInt8(ascii: " "), omittingEmptySubsequences: false)
            .map { String(decoding: $0, as: UTF8.self) }
        let body = String(text[text.utf8.index(after: newline)...])
        guard header.first == Self.version else {
            throw Malformed(description: "not a \(Self.version) message: \(header.first ?? "")".prefix(80).description)
        }
        func connection(_ text: String) throws(Malformed) -> UInt64 {
            guard let number = UInt64(text) else { throw Malformed(description: "not a connection number: \(text.prefix(40))") }
            return number
        }
        func fields(_ count: Int, orWithSender: Bool = false) throws(Malformed) {
            guard header.count == count || (orWithSender && header.count == count + 1),
                  header.allSatisfy({ !$0.isEmpty }) else {
                throw Malformed(description: "\(header.count > 1 ? header[1] : "message") needs \(count - 2) fields")
            }
        }
        switch header.count > 1 ? header[1] : "" {
        case "frame":
            try fields(5)
            self = .frame(from: RemoteConnection(node: header[2], connection: try connection(header[3])), room: header[4],
                          frame: body)
        case "refused":
            try fields(5)
            self = .refused(from: RemoteConnection(node: header[2], connection: try connection(header[3])), room: header[4],
                            answer: body)
        case "closing":
            try fields(6)
            guard let code = UInt16(header[5]) else { throw Malformed(description: "not a close code: \(header[5].prefix(40))") }
            self = .closing(from: RemoteConnection(node: header[2], connection: try connection(header[3])), room: header[4],
                            code: code, reason: body)
        case "reply":
            try fields(4, orWithSender: true)
            var connections: [UInt64] = []
            // Every part a number: an empty list, or an empty part ("7,", ","), is not one the encoding writes.
            for part in header[3].split(separator: ",", omittingEmptySubsequences: false) {
                connections.append(try connection(String(part)))
            }
            self = .reply(node: header[2], connections: connections, frame: body, from: header.count > 4 ? header[4] : "")
        case "opened", "closed":
            try fields(5)
            let from = RemoteConnection(node: header[2], connection: try connection(header[3]))
            self = header[1] == "opened" ? .opened(from, room: header[4], peer: body)
                : .closed(from, room: header[4], ended: ConnectionEnd(rawValue: body) ?? .lost)
        case "close":
            try fields(5, orWithSender: true)
            guard let code = UInt16(header[4]) else { throw Malformed(description: "not a close code: \(header[4].prefix(40))") }
            self = .close(RemoteConnection(node: header[2], connection: try connection(header[3])), code: code, reason: body,
                          from: header.count > 5 ? header[5] : "")
        case "schedules":
            try fields(3)
            self = .schedulesChanged(room: header[2])
        case "handoff":
            try fields(4)
            let more = body.isEmpty ? [] : body.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            guard more.allSatisfy({ !$0.isEmpty && !$0.contains(" ") }) else {
                throw Malformed(description: "handoff lists an empty room or one with a space")
            }
            self = .handOff(rooms: [header[2]] + more, from: header[3])
        case let kind where ControlAPIBusMessage.kinds.contains(kind):
            self = .controlAPI(try ControlAPIBusMessage(header: Array(header.dropFirst()), body: body))
        default:
            throw Malformed(description: "unknown kind \(header.count > 1 ? header[1].prefix(40) : "")")
        }
    }

    /// Each node's channel: what is sent to its connections (a room's broadcasts among them, once per node),
    /// and frames for rooms it owns.
    public static func nodeChannel(_ node: String) -> String { "pomodoro:node:\(node)" }
    /// Every node's: notices that a room's schedules changed.
    public static let schedulesChannel = "pomodoro:schedules"
}
