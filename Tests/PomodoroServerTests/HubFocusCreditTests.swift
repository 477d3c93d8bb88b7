@testable import PomodoroServer
import PomodoroCore
import PomodoroProtocol
import PomodoroStore
import PomodoroTestSupport
import Testing

/// What the hub writes for a focus that ends: a journal session only for one that ran at least the
/// server's shortest focus (the room decides, `Room.focusRanLongEnough`), through the hub with no socket.
@Suite struct HubFocusCreditTests {
    @Test func aFocusShortenedBeforeItRanWritesNoSessionAndOneThatRanWritesItsLength() throws {
        let store = try HeldStore()
        let t = TestHub(store: store)
        let room = try RoomID(validating: "team")
        let a = t.connect()
        t.send(.join(room: "team", name: "Ada", token: nil), from: a)
        t.send(.start, from: a)
        t.send(.skip, from: a)                           // short break, ready
        t.send(.skip, from: a)                           // focus 2, ready: it never ran
        t.send(.extend(seconds: -1500), ref: "cut", from: a)
        t.send(.start, from: a)                          // the break that follows
        t.settle()
        #expect(try t.messages(to: a).contains { $0.label == "ok extend" })
        #expect(try store.store.sessions(room: room, endedFrom: nil, before: nil, limit: nil).isEmpty)
        #expect(try t.messages(to: a).last { $0.snapshot != nil }?.snapshot?.stats.focusCompleted == 0)

        // The same, for a focus that ran its minute first: one session of the length it ran.
        t.send(.skip, from: a)                           // focus 3, ready
        t.send(.start, from: a)
        t.settle()
        t.pass(.seconds(RoomPolicy.standard.minFocusSeconds))
        t.send(.extend(seconds: -3600), from: a)
        t.settle()
        let sessions = try store.store.sessions(room: room, endedFrom: nil, before: nil, limit: nil)
        #expect(sessions.map(\.lengthSeconds) == [RoomPolicy.standard.minFocusSeconds])
        #expect(sessions.first?.participants.map(\.name) == ["Ada"])
        #expect(try t.messages(to: a).last { $0.snapshot != nil }?.snapshot?.stats.focusCompleted == 1)
    }
}
