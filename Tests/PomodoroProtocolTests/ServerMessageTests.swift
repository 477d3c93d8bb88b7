import Foundation
import PomodoroCore
@testable import PomodoroProtocol
import Testing

@Suite("Server messages")
struct ServerMessageTests {
    @Test("every server message round-trips through encode and decodeServerMessage",
          arguments: Fixtures.serverMessages)
    func roundTrip(_ message: ServerMessage) throws {
        #expect(try WireCodec.decodeServerMessage(WireCodec.encode(message)) == message)
    }

    @Test("every encoded message is standard JSON to an independent parser (Foundation), strings intact",
          arguments: Fixtures.serverMessages)
    func independentParser(_ message: ServerMessage) throws {
        let object = try JSONSerialization.jsonObject(with: Data(WireCodec.encode(message))) as? [String: Any]
        let parsed = try #require(object)
        #expect(parsed["type"] as? String == message.type)
        switch message {
        case let .error(_, text, field, ref, _):
            #expect(parsed["message"] as? String == text)
            #expect(parsed["field"] as? String == field)
            if case .string(let s)? = ref { #expect(parsed["ref"] as? String == s) }
        case let .event(_, .memberJoined(member, name), _):
            #expect(parsed["member"] as? String == member)
            #expect(parsed["name"] as? String == name)
        case let .state(snapshot):
            let room = try #require(parsed["room"] as? [String: Any])
            let members = try #require(room["members"] as? [[String: Any]])
            #expect(members.map { $0["name"] as? String } == snapshot.members.map(\.name))
            #expect(members.map { $0["task"] as? String } == snapshot.members.map(\.task))
        default:
            break
        }
    }

    // MARK: The wire contract, pinned

    @Test("a tick is exactly this JSON")
    func tickText() {
        #expect(WireCodec.encode(.tick(Fixtures.tick)).text
            == #"{"type":"tick","room":"team-alpha","phase":"focus","remainingMs":1499000,"endsAt":1700000001499,"cycle":2,"seq":42,"serverTime":1700000000000}"#)
    }

    @Test("an error is exactly this JSON, optional keys omitted when nil")
    func errorText() {
        #expect(WireCodec.encode(.error(code: .badRequest, message: "'seconds' must be an integer",
                                        field: "seconds", ref: .string("r1"))).text
            == #"{"type":"error","code":"bad_request","message":"'seconds' must be an integer","field":"seconds","ref":"r1"}"#)
        #expect(WireCodec.encode(.error(code: .invalidState, message: "the timer is not running", field: nil,
                                        ref: .number(7))).text
            == #"{"type":"error","code":"invalid_state","message":"the timer is not running","ref":7}"#)
        #expect(WireCodec.encode(.error(code: .replaced, message: "m", field: nil, ref: nil)).text
            == #"{"type":"error","code":"replaced","message":"m"}"#)
    }

    @Test("strings are escaped as JSON requires and no more: quotes, backslashes, controls; / and UTF-8 as is")
    func escaping() {
        let text = "a\"b\\c/d\n\u{1}\u{0}é🍅"
        #expect(WireCodec.encode(.pong(serverTime: 1, ref: .string(text))).text
            == #"{"type":"pong","serverTime":1,"ref":"a\"b\\c/d\n\u0001\u0000é🍅"}"#)
    }

    @Test("ok and pong carry only their documented keys")
    func okAndPongText() {
        #expect(WireCodec.encode(.ok(command: "configure", appliesFrom: .nextPhase, ref: .number(3))).text
            == #"{"type":"ok","command":"configure","appliesFrom":"nextPhase","ref":3}"#)
        #expect(WireCodec.encode(.ok(command: "start", appliesFrom: nil, ref: nil)).text
            == #"{"type":"ok","command":"start"}"#)
        #expect(WireCodec.encode(.pong(serverTime: 1_700_000_000_000, ref: nil)).text
            == #"{"type":"pong","serverTime":1700000000000}"#)
    }

    static let snapshotKeys: Set<String> = ["id", "phase", "status", "running", "remainingMs", "phaseLengthMs",
                                            "endsAt", "cycle", "settings", "pendingSettings", "members",
                                            "memberCount", "presentCount", "membersTruncated", "stats",
                                            "seq", "serverTime", "control", "host", "locked"]
    static let settingsKeys: Set<String> = ["focus", "shortBreak", "longBreak", "longBreakEvery", "autoStart"]
    static let statsKeys: Set<String> = ["focusCompleted", "focusSeconds", "interruptions"]
    static let memberKeys: Set<String> = ["id", "name", "present", "connected", "task", "stats"]

    @Test("a snapshot counts every member and says when its list is cut")
    func snapshotCounts() throws {
        var crowd = Fixtures.runningSnapshot
        crowd.memberCount = 5000
        crowd.presentCount = 4321
        crowd.membersTruncated = true
        let room = try #require(try JSONValue.parse(WireCodec.encode(.state(crowd)))["room"])
        #expect(room["memberCount"] == .integer(.signed(5000)))
        #expect(room["presentCount"] == .integer(.signed(4321)))
        #expect(room["membersTruncated"] == .bool(true))
        #expect(try WireCodec.decodeServerMessage(WireCodec.encode(.state(crowd))) == .state(crowd))

        // A whole list: the counts are the list's, and nothing is cut.
        let small = try #require(try JSONValue.parse(WireCodec.encode(.state(Fixtures.runningSnapshot)))["room"])
        #expect(small["memberCount"] == .integer(.signed(3)))
        #expect(small["presentCount"] == .integer(.signed(1)))
        #expect(small["membersTruncated"] == .bool(false))
    }

    @Test("state and welcome carry the same snapshot object, endsAt and pendingSettings always present")
    func snapshotKeys() throws {
        let idle = try JSONValue.parse(WireCodec.encode(.state(Fixtures.idleSnapshot)))
        #expect(idle.keys == ["type", "room"])
        let room = try #require(idle["room"])
        #expect(room.keys == Self.snapshotKeys)
        #expect(room["endsAt"] == .null)
        #expect(room["pendingSettings"] == .null)
        #expect(room["id"] == .string("r"))
        #expect(room["members"] == .array([]))
        #expect(room["settings"]?.keys == Self.settingsKeys)
        #expect(room["stats"]?.keys == Self.statsKeys)

        let running = try JSONValue.parse(WireCodec.encode(.state(Fixtures.runningSnapshot)))["room"]
        #expect(running?["endsAt"] == .integer(.signed(1_700_000_001_499)))
        #expect(running?["pendingSettings"]?.keys == Self.settingsKeys)
        #expect(running?["running"] == .bool(true))
        #expect(running?["status"] == .string("running"))
        guard case .array(let members)? = running?["members"] else {
            Issue.record("members is not an array")
            return
        }
        #expect(members.count == 3)
        #expect(members.allSatisfy { $0.keys == Self.memberKeys && $0["stats"]?.keys == Self.statsKeys })

        let welcome = try JSONValue.parse(WireCodec.encode(
            .welcome(you: YouPayload(id: "m1", token: "t", resumed: false), room: Fixtures.runningSnapshot,
                     serverTime: 9, limits: Fixtures.limits, ref: .string("j"))))
        #expect(welcome.keys == ["type", "you", "room", "serverTime", "limits", "ref"])
        #expect(welcome["you"]?.keys == ["id", "token", "resumed"])
        #expect(welcome["room"] == running)

        let noRef = try JSONValue.parse(WireCodec.encode(
            .welcome(you: YouPayload(id: "m1", token: "t", resumed: true), room: Fixtures.idleSnapshot,
                     serverTime: 9, limits: Fixtures.limits, ref: nil)))
        #expect(noRef.keys == ["type", "you", "room", "serverTime", "limits"])
    }

    @Test("events carry room, kind, serverTime and the kind's own keys", arguments: Fixtures.events)
    func eventKeys(_ event: EventPayload) throws {
        let value = try JSONValue.parse(WireCodec.encode(.event(room: "team-alpha", event, serverTime: 5)))
        let own: Set<String> = switch event {
        case .phaseCompleted: ["completed", "next", "autoStarted", "cycle"]
        case .memberJoined: ["member", "name"]
        case .memberReturned, .memberBack: ["member"]
        case .memberAway(_, _, nil), .memberLeft: ["member", "reason"]
        case .memberAway: ["member", "reason", "connection"]
        case .control(_, _, nil): ["action", "by"]
        case .control: ["action", "by", "seconds"]
        case .hostChanged: ["member"]
        case .controlModeChanged: ["mode", "by"]
        case .schedule(.warning): ["schedule", "name", "startsAt", "minutes"]
        case .schedule(.started): ["schedule", "name", "lateMs"]
        case .schedule(.missed): ["schedule", "name", "occurrence", "busy"]
        case .schedule(.ended): ["schedule", "name", "focusSessions"]
        case .lockChanged: ["locked", "by"]
        case .webhookDisabled: ["webhook", "reason"]
        }
        #expect(value.keys == own.union(["type", "room", "kind", "serverTime"]))
        #expect(value["type"] == .string("event"))
        #expect(value["kind"] == .string(event.kind))
        #expect(value["room"] == .string("team-alpha"))
    }

    @Test("memberAway's connection is optional, and one this client does not know says no more than none")
    func memberAwayConnection() throws {
        func decoded(_ extra: String) throws -> ServerMessage {
            try WireCodec.decodeServerMessage(Array(#"{"type":"event","room":"r","kind":"memberAway","serverTime":0,"member":"m2","reason":"disconnected"\#(extra)}"#.utf8))
        }
        let plain = ServerMessage.event(room: "r", .memberAway(member: "m2", reason: .disconnected), serverTime: 0)
        #expect(try decoded("") == plain)
        #expect(try decoded(#","connection":null"#) == plain)
        #expect(try decoded(#","connection":"hung up""#) == plain)
        #expect(try decoded(#","connection":"closed""#)
                == .event(room: "r", .memberAway(member: "m2", reason: .disconnected, connection: .closed), serverTime: 0))
    }

    @Test("enum values travel as their documented strings")
    func enumStrings() throws {
        let completed = try JSONValue.parse(WireCodec.encode(.event(
            room: "r", .phaseCompleted(completed: .longBreak, next: .focus, autoStarted: false, cycle: 1),
            serverTime: 0)))
        #expect(completed["completed"] == .string("longBreak"))
        #expect(completed["next"] == .string("focus"))
        let away = try JSONValue.parse(WireCodec.encode(.event(
            room: "r", .memberAway(member: "m1", reason: .disconnected), serverTime: 0)))
        #expect(away["reason"] == .string("disconnected"))
        #expect(away["connection"] == nil, "left out when the server does not say")
        let closed = try JSONValue.parse(WireCodec.encode(.event(
            room: "r", .memberAway(member: "m1", reason: .disconnected, connection: .closed), serverTime: 0)))
        #expect(closed["connection"] == .string("closed"))
        let extend = try JSONValue.parse(WireCodec.encode(.event(
            room: "r", .control(action: .extend, by: "m2", seconds: -30), serverTime: 0)))
        #expect(extend["action"] == .string("extend"))
        #expect(extend["seconds"] == .integer(.signed(-30)))
        #expect(ErrorCode.allCases.map(\.rawValue) == [
            "bad_json", "bad_request", "unknown_type", "not_joined", "already_joined", "too_large",
            "binary_unsupported", "invalid_state", "room_full", "replaced", "shutting_down", "rate_limited", "room_limit",
            "forbidden", "bad_passcode", "removed", "banned", "unavailable", "store_unavailable", "not_found", "observer",
            "webhook_limit", "internal",
        ])
    }

    // MARK: Decoding server messages (for clients)

    @Test("decoding server messages reports unknown types and kinds as unknown_type, bad fields by path",
          arguments: [
              (#"{"type":"party"}"#, ErrorCode.unknownType, "type"),
              (#"{"type":"event","room":"r","kind":"confetti","serverTime":1}"#, .unknownType, "kind"),
              (#"{"type":"tick","room":"r","phase":"nap","remainingMs":0,"endsAt":0,"cycle":1,"seq":1,"serverTime":0}"#,
               .badRequest, "phase"),
              (#"{"type":"tick","room":"r","phase":"focus","remainingMs":0,"endsAt":0,"cycle":1,"seq":-1,"serverTime":0}"#,
               .badRequest, "seq"),
              (#"{"type":"tick","room":"r","phase":"focus","remainingMs":0,"endsAt":null,"cycle":1,"seq":1,"serverTime":0}"#,
               .badRequest, "endsAt"),
              (#"{"type":"error","code":5,"message":"m"}"#, .badRequest, "code"),
              (#"{"type":"error","code":"bad_json"}"#, .badRequest, "message"),
              (#"{"type":"ok","command":"configure","appliesFrom":"later"}"#, .badRequest, "appliesFrom"),
              (#"{"type":"pong"}"#, .badRequest, "serverTime"),
              (#"{"type":"state","room":[]}"#, .badRequest, "room"),
              (#"[]"#, .badJSON, nil),
          ] as [(String, ErrorCode, String?)])
    func decodeErrors(_ input: String, _ code: ErrorCode, _ field: String?) {
        let error = #expect(throws: ProtocolError.self) { try WireCodec.decodeServerMessage([UInt8](input)) }
        #expect(error?.code == code)
        #expect(error?.field == field)
    }

    @Test("a bad nested field is named by its path")
    func nestedPath() {
        // members[1] is the only one with 3000 focus seconds: turn that number into a string.
        let text = WireCodec.encode(.state(Fixtures.runningSnapshot)).text
        let broken = text.replacingOccurrences(of: #""focusSeconds":3000"#, with: #""focusSeconds":"3000""#)
        #expect(broken != text)
        let error = #expect(throws: ProtocolError.self) { try WireCodec.decodeServerMessage([UInt8](broken)) }
        #expect(error?.field == "room.members[1].stats.focusSeconds")
        #expect(error?.code == .badRequest)
    }

    @Test("an error code from a newer server reads as internal, message and ref intact")
    func unknownErrorCode() throws {
        let message = try WireCodec.decodeServerMessage(
            [UInt8](#"{"type":"error","code":"quota_exceeded","message":"too many rooms","ref":3}"#))
        #expect(message == .error(code: .internalError, message: "too many rooms", field: nil, ref: .number(3)))
    }

    @Test("clients ignore unknown fields in server messages")
    func unknownFieldsIgnored() throws {
        let message = try WireCodec.decodeServerMessage(
            [UInt8](#"{"type":"pong","serverTime":5,"ref":"p","future":{"x":[1,{"y":null}]}}"#))
        #expect(message == .pong(serverTime: 5, ref: .string("p")))
    }

    // MARK: Conveniences

    @Test("ServerMessage.error(_:) carries every part of a ProtocolError")
    func errorConvenience() {
        let error = ProtocolError(code: .badRequest, message: "m", field: "f", ref: .number(1))
        #expect(ServerMessage.error(error) == .error(code: .badRequest, message: "m", field: "f", ref: .number(1)))
    }

    @Test("a core refusal maps to the code, message and field the server sends", arguments: [
        (RoomError.invalidArgument(field: "seconds", reason: "must be non-zero"), ErrorCode.badRequest,
         "seconds must be non-zero", "seconds"),
        (.invalidState("the timer is not running"), .invalidState, "the timer is not running", nil),
        (.roomFull, .roomFull, "the room is full", nil),
        (.unknownMember, .notJoined, "join a room first", nil),
        (.forbidden, .forbidden, "only the host may do that in this room", nil),
    ] as [(RoomError, ErrorCode, String, String?)])
    func roomErrors(_ roomError: RoomError, _ code: ErrorCode, _ message: String, _ field: String?) {
        let error = ProtocolError(roomError, ref: .string("r"))
        #expect(ServerMessage.error(error) == .error(code: code, message: message, field: field, ref: .string("r")))
    }
}
