@testable import PomodoroClient
import Testing

/// What `pomo` says of a connection that failed, from libwebsockets' reason (and the status the server gave).
@Suite struct ConnectionFailureWordsTests {
    @Test func anUpgradeRefusedWith503IsARestartAndA403IsAnotherServer() {
        #expect(RoomSession.explain("the server answered 503 to the upgrade (HS: ws upgrade response not 101)")
            == "the server is restarting")
        let other = "the server answered 403 to the upgrade (HS: ws upgrade response not 101)"
        #expect(RoomSession.explain(other) == "not a Pomodoro server (\(other))")
        #expect(RoomSession.explain("connect failed: Connection refused") == "nothing answered")
    }
}
