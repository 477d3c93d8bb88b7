@testable import PomodoroServer
import PomodoroCore
import PomodoroNet
import PomodoroProtocol
import PomodoroTestSupport
import Testing

/// Stopping: the library's context is destroyed after the hub's last turn, so no room timer may stay armed.
@Suite struct HubStoppingTests {
    @Test func stoppingCancelsEveryRoomTimerAndArmsNoMore() throws {
        let t = TestHub()
        let a = t.connect(), b = t.connect()
        t.send(.join(room: "running", name: "Ada", token: nil), from: a)
        t.send(.start, from: a)
        t.send(.join(room: "left", name: "Bo", token: nil), from: b)
        t.disconnect(b)
        // The running room's next tick, the left room's grace.
        #expect(t.transport.armedTimers == 2)

        t.hub.stopTracking()
        #expect(t.transport.armedTimers == 0)
        // Frames still handled while the connections drain change the room, but arm nothing.
        t.send(.pause, ref: "p", from: a)
        t.send(.resume, ref: "r", from: a)
        #expect(try t.messages(to: a).suffix(3).map(\.label).contains("ok resume"))
        #expect(t.transport.armedTimers == 0)
        #expect(t.hub.roomCount == 2)
    }
}
