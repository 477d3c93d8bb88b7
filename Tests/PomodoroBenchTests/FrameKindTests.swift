import PomodoroBench
import PomodoroCore
import PomodoroProtocol
import Testing

/// The sniffer must agree with the protocol's decoder on every message the server sends.
@Suite struct FrameKindTests {
    static func snapshot(members: [MemberPayload]) -> SnapshotPayload {
        SnapshotPayload(room: "team-alpha", phase: .focus, status: .running, running: true, remainingMs: 1_234_567,
                        phaseLengthMs: 1_500_000, endsAt: 1_767_226_834_567, cycle: 1, settings: .standard,
                        pendingSettings: nil, members: members,
                        stats: StatsPayload(focusCompleted: 0, focusSeconds: 0, interruptions: 0), seq: 5,
                        serverTime: 1_767_225_600_000)
    }

    static func member(_ name: String, task: String = "") -> MemberPayload {
        MemberPayload(id: "m1", name: name, present: true, connected: true, task: task,
                      stats: StatsPayload(focusCompleted: 0, focusSeconds: 0, interruptions: 0))
    }

    static let tick = ServerMessage.tick(TickPayload(room: "team-alpha", phase: .focus, remainingMs: 1_234_000,
                                                     endsAt: 1_767_226_834_567, cycle: 3, seq: 57,
                                                     serverTime: 1_767_225_600_567))

    @Test func everyServerMessageTypeIsRecognised() {
        let cases: [(ServerMessage, FrameKind)] = [
            (Self.tick, .tick),
            (.state(Self.snapshot(members: [Self.member("Ada")])), .state),
            (.welcome(you: YouPayload(id: "m1", token: "t", resumed: false), room: Self.snapshot(members: []),
                      serverTime: 1, limits: LimitsPayload(RoomPolicy(), passcodeLength: 4...64), ref: .string("j1")),
             .welcome),
            (.event(room: "team-alpha", .phaseCompleted(completed: .focus, next: .shortBreak, autoStarted: true, cycle: 1),
                    serverTime: 1), .event(kind: "phaseCompleted")),
            (.event(room: "team-alpha", .memberJoined(member: "m2", name: "Lin"), serverTime: 1),
             .event(kind: "memberJoined")),
            (.ok(command: "start", appliesFrom: nil, ref: .number(1)), .ok),
            (.error(code: .roomLimit, message: "too many", field: "room", ref: nil), .error),
            (.pong(serverTime: 1, ref: nil), .pong),
        ]
        for (message, kind) in cases {
            #expect(FrameKind(of: WireCodec.encode(message)) == kind, "\(message)")
        }
    }

    @Test func namesAndTasksThatLookLikeKeysDoNotFoolIt() {
        // A member named "type":"tick" in a room whose name sorts first: the quotes are escaped on the wire.
        let sly = Self.member(#""type":"tick""#, task: #"","kind":"phaseCompleted"#)
        let state = WireCodec.encode(.state(Self.snapshot(members: [sly])))
        #expect(FrameKind(of: state) == .state)
        let joined = WireCodec.encode(.event(room: "r", .memberJoined(member: "m9", name: #""kind":"x""#), serverTime: 1))
        #expect(FrameKind(of: joined) == .event(kind: "memberJoined"))
    }

    @Test func keyOrderDoesNotMatter() {
        let text = #"{"room":"r","kind":"phaseCompleted","serverTime":1,"type":"event"}"#
        #expect(FrameKind(of: Array(text.utf8)) == .event(kind: "phaseCompleted"))
        #expect(FrameKind(of: Array(#"{"remainingMs":1000,"type":"tick"}"#.utf8)) == .tick)
    }

    @Test func unknownOrMissingTypesAreLeftToTheDecoder() {
        #expect(FrameKind(of: Array(#"{"type":"hello"}"#.utf8)) == .other("hello"))
        #expect(FrameKind(of: Array(#"{"kind":"tick"}"#.utf8)) == .other(nil))
        #expect(FrameKind(of: Array("".utf8)) == .other(nil))
        #expect(FrameKind(of: Array(#"{"type":"tick"#.utf8)) == .other(nil))
        #expect(FrameKind(of: Array(#"{"type":"ti\"ck"}"#.utf8)) == .other(nil))
        // An event without a kind is not guessed at.
        #expect(FrameKind(of: Array(#"{"type":"event"}"#.utf8)) == .other("event"))
    }
}
