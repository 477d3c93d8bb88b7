@testable import PomodoroServer
import PomodoroCore
import PomodoroNet
import PomodoroProtocol
import PomodoroTestSupport
import Testing

/// `stats` over the WebSocket and a restart, through the hub with no socket.
@Suite struct HubJournalTests {
    static func replies(_ messages: [ServerMessage]) -> [String] {
        messages.map(\.label).filter { $0 != "state" && $0 != "tick" && !$0.hasPrefix("event") }
    }

    @Test func statsOfALockedRoomNeedItsPasscodeAndHoldLaterFrames() throws {
        let t = TestHub(store: try HeldStore())
        let owner = t.connect(peer: "203.0.113.1")
        t.send(.join(room: "vault", name: "Ada", token: nil, passcode: "open sesame"), from: owner)
        t.settle()

        let guesser = t.connect(peer: "203.0.113.2"), friend = t.connect(peer: "203.0.113.3")
        t.send(.stats(room: "vault", days: 7, tz: nil, passcode: "guess"), ref: "s", from: guesser)
        t.send(.ping, ref: "p", from: guesser)
        t.send(.stats(room: "vault", days: 7, tz: nil, passcode: "open sesame"), ref: "s", from: friend)
        t.send(.ping, ref: "p", from: friend)
        // The pings wait behind the reads.
        #expect(t.transport.sent[guesser] == nil && t.transport.sent[friend] == nil)

        t.settle()
        #expect(Self.replies(try t.messages(to: guesser)) == ["error bad_passcode", "pong"])
        #expect(Self.replies(try t.messages(to: friend)) == ["stats", "pong"])
        // A member asks without the passcode.
        t.send(.stats(room: nil, days: nil, tz: nil, passcode: nil), ref: "mine", from: owner)
        t.settle()
        #expect(try t.messages(to: owner).last?.label == "stats")
    }

    @Test func aRestartBringsBackARunningRoomAndItsMembers() throws {
        let store = try HeldStore()
        let clock = ManualServerClock()
        let before = TestHub(clock: clock, store: store)
        let a = before.connect()
        before.send(.join(room: "team", name: "Ada", token: nil), from: a)
        before.send(.start, from: a)
        before.settle()
        let token = try #require(try before.messages(to: a).first?.you?.token)

        // The server stops for a minute and starts again on the same store.
        clock.advance(by: .seconds(60))
        let after = TestHub(clock: clock, store: store)
        after.hub.restore(try store.store.loadRooms())
        after.settle()
        #expect(after.hub.roomCount == 1)
        #expect(after.transport.armedTimers >= 1)

        let back = after.connect()
        after.send(.join(room: "team", name: "Ada", token: token), from: back)
        let welcome = try #require(try after.messages(to: back).first)
        #expect(welcome.you?.resumed == true)
        #expect(welcome.snapshot?.running == true)
        #expect(welcome.snapshot?.remainingMs == 1_440_000)
    }
}
