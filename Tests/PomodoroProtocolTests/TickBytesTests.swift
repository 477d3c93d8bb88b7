import PomodoroCore
@testable import PomodoroProtocol
import Testing

@Suite("Tick bytes")
struct TickBytesTests {
    static let ticks: [TickPayload] = [
        Fixtures.tick,
        TickPayload(room: "r", phase: .idle, remainingMs: 0, endsAt: 0, cycle: 0, seq: 0, serverTime: 0),
        TickPayload(room: "storm-0999", phase: .shortBreak, remainingMs: 299_000, endsAt: 1_796_480_000_123,
                    cycle: 7, seq: 123_456, serverTime: 1_796_479_701_123),
        TickPayload(room: String(repeating: "A-z_9", count: 12) + "Zz-_", phase: .longBreak, remainingMs: -1,
                    endsAt: Int64.min, cycle: Int(Int32.max), seq: UInt64.max, serverTime: Int64.max),
        TickPayload(room: "a/b", phase: .focus, remainingMs: 10, endsAt: -999, cycle: 1, seq: 10, serverTime: 9),
    ]

    @Test("a tick written straight is byte for byte what the json-c tree writes", arguments: ticks)
    func sameBytes(_ tick: TickPayload) throws {
        let direct = try #require(WireCodec.tickBytes(tick))
        #expect(direct == WireCodec.encodeThroughTree(.tick(tick)))
        #expect(WireCodec.encode(.tick(tick)) == direct)
        #expect(try WireCodec.decodeServerMessage(direct) == .tick(tick))
    }

    @Test("a room name with a quote, a backslash, a control or a non-ASCII byte goes through the tree", arguments: ["a\"b", "back\\slash", "tab\there", "é"])
    func escapedRoom(_ room: String) throws {
        let tick = TickPayload(room: room, phase: .focus, remainingMs: 1000, endsAt: 2000, cycle: 1, seq: 3, serverTime: 1000)
        #expect(WireCodec.tickBytes(tick) == nil)
        #expect(try WireCodec.decodeServerMessage(WireCodec.encode(.tick(tick))) == .tick(tick))
    }
}
