@testable import PomodoroServer
import PomodoroCore
import PomodoroNet
import PomodoroProtocol
import PomodoroTestSupport
import Testing

/// The hub's HTTP answers, captured without a socket.
@Suite struct HubHTTPTests {
    @Test func aStatsRequestIsAnsweredOnceTheJournalIsRead() throws {
        let t = TestHub(store: try HeldStore())
        let response = RecordedResponse()
        t.hub.receivedHTTP(HTTPRequest(method: .get, path: "/api/rooms/team/stats", query: ["days": "7"],
                                       peer: "203.0.113.1"), responder: response)
        #expect(response.response == nil)
        t.settle()
        let answer = try #require(response.response)
        #expect(answer.status == 200)
        #expect(answer.contentType == "application/json")
        #expect(String(decoding: answer.body, as: UTF8.self).contains("\"room\":\"team\""))
    }

    @Test func aLockedRoomsJournalNeedsAMembersTokenOrThePasscode() throws {
        let t = TestHub(store: try HeldStore())
        let owner = t.connect()
        t.send(.join(room: "vault", name: "Ada", token: nil, passcode: "open sesame"), from: owner)
        t.settle()
        let token = try #require(try t.messages(to: owner).first?.you?.token)

        func get(_ authorization: String?) -> HTTPResponse? {
            let response = RecordedResponse()
            t.hub.receivedHTTP(HTTPRequest(method: .get, path: "/api/rooms/vault/history", authorization: authorization,
                                           peer: "198.51.100.4"), responder: response)
            t.settle()
            return response.response
        }
        let refused = try #require(get(nil))
        #expect(refused.status == 401)
        #expect(refused.headers.contains { $0.name == "WWW-Authenticate" && $0.value == "Bearer realm=\"pomodoro\"" })
        #expect(String(decoding: refused.body, as: UTF8.self).contains("this room is locked: send Authorization: Bearer"))
        #expect(try #require(get("Bearer guess")).status == 401)
        #expect(try #require(get("Bearer \(token)")).status == 200)
        #expect(try #require(get("Bearer open sesame")).status == 200)
    }

    @Test func withoutAStoreTheAPISaysItKeepsNoStats() throws {
        let t = TestHub()
        let response = RecordedResponse()
        t.hub.receivedHTTP(HTTPRequest(method: .get, path: "/api/rooms/team/history", peer: "203.0.113.1"),
                           responder: response)
        let answer = try #require(response.response)
        #expect(answer.status == 503)
        #expect(String(decoding: answer.body, as: UTF8.self).contains("keeps no stats"))
    }

    @Test func metricsCountTheTransportsConnections() throws {
        var configuration = ServerConfiguration(port: 0, webRoot: nil)
        configuration.metricsEnabled = true
        let t = TestHub(configuration: configuration)
        _ = t.connect()
        _ = t.connect()
        let response = RecordedResponse()
        t.hub.receivedHTTP(HTTPRequest(method: .get, path: "/metrics", peer: "127.0.0.1"), responder: response)
        let text = String(decoding: try #require(response.response).body, as: UTF8.self)
        #expect(text.contains("pomodoro_connections 2"))
    }
}
