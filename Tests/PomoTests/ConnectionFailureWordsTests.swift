@testable import PomodoroClient
import Testing

/// What `pomo` says of a connection that failed, from libwebsockets' reason (and the status the server gave).
@Suite struct ConnectionFailureWordsTests {
    @Test func anUpgradeRefusedWith502To504IsAProxyOrARestartAndA403IsAnotherServer() {
        for status in [502, 503, 504] {
            let why = "the server answered \(status) to the upgrade (HS: ws upgrade response not 101)"
            #expect(RoomSession.explain(why) == "the server or its proxy is unavailable just now (\(status))")
            #expect(RoomSession.unavailableStatus(why) == status)
        }
        #expect(RoomSession.unavailableStatus("the server answered 500 to the upgrade (HS: ws upgrade response not 101)") == nil)
        let other = "the server answered 403 to the upgrade (HS: ws upgrade response not 101)"
        #expect(RoomSession.explain(other) == "not a Pomodoro server (\(other))")
        #expect(RoomSession.explain("connect failed: Connection refused") == "nothing answered")
    }

    @Test func aProxyWhoseServerIsAwayIsSaidInEveryLanguageAndOtherReasonsPlainly() {
        let why = RoomSession.explain("the server answered 504 to the upgrade (HS: ws upgrade response not 101)")
        #expect(Words(.en).reason(why) == why)
        #expect(Words(.ko).reason(why) == "서버나 그 앞의 프록시를 지금은 쓸 수 없어요 (504)")
        #expect(Words(.zhHans).reason(why) == "服务器或其代理暂时不可用（504）")
        #expect(Words(.zhHant).reason(why) == "伺服器或其代理暫時無法使用（504）")
        #expect(Words(.ko).reason("the connection closed (1006)") == Words(.ko)(.connectionLost))
    }
}
