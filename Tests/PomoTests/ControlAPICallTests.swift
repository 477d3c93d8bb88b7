import PomodoroClient
import PomodoroProtocol
import Testing

/// The control API's requests as `pomo` writes them, and its answers as `pomo` reads them: the bytes alone,
/// no socket (LiveControlTests send them to the real server).
struct ControlAPICallTests {
    @Test func aCommandIsAPostUnderTheWebSocketPathsFolderWithItsToken() throws {
        let call = ControlAPICall.command(ClientFrame(.extend(seconds: 300)), room: "team", token: "pomo_abc",
                                          at: try ServerAddress(parsing: "ws://example.org:8080/pomodoro/ws"))
        let text = String(decoding: call.bytes, as: UTF8.self)
        let body = #"{"type":"extend","seconds":300}"#
        #expect(text == "POST /pomodoro/api/rooms/team/commands HTTP/1.1\r\nHost: example.org:8080\r\n"
                + "Connection: close\r\nAccept: application/json\r\nAuthorization: Bearer pomo_abc\r\n"
                + "Content-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n" + body)
    }

    @Test func theSnapshotIsAGetAtTheRootForTheUsualPathWithThePasscodeIfAny() throws {
        let address = try ServerAddress(parsing: "ws://[::1]:9000")
        let open = String(decoding: ControlAPICall.snapshot(room: "team", passcode: nil, at: address).bytes, as: UTF8.self)
        #expect(open == "GET /api/rooms/team HTTP/1.1\r\nHost: [::1]:9000\r\nConnection: close\r\nAccept: application/json\r\n\r\n")
        let locked = String(decoding: ControlAPICall.snapshot(room: "team", passcode: "soup", at: address).bytes, as: UTF8.self)
        #expect(locked.contains("\r\nAuthorization: Bearer soup\r\n") && !locked.contains("Content-Length"))
    }

    @Test func anAnswerIsReadByItsStatusAndContentLength() throws {
        let bytes = Array("HTTP/1.1 401 Unauthorized\r\nContent-Type: application/json\r\nContent-Length: 66\r\n\r\n".utf8)
            + Array(#"{"type":"error","code":"forbidden","message":"no","field":"token"}trailing"#.utf8)
        let answer = try #require(ControlAPICall.Answer(parsing: bytes))
        #expect(answer.status == 401)
        guard case let .error(code, message, field, _, _)? = answer.message else {
            Issue.record("not the wire's error: \(String(decoding: answer.body, as: UTF8.self))")
            return
        }
        #expect(code == .forbidden && message == "no" && field == "token")
        #expect(ControlAPICall.Answer(parsing: Array("HTTP/1.1 200 OK\r\n\r\n".utf8))?.body == [])
        #expect(ControlAPICall.Answer(parsing: Array("SSH-2.0-OpenSSH\r\n\r\n".utf8)) == nil)
        #expect(ControlAPICall.Answer(parsing: Array("HTTP/1.1 200 OK\r\nContent-Length: 2".utf8)) == nil)
    }
}
