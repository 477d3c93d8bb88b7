import Foundation
@testable import PomodoroCluster
import PomodoroCore
import PomodoroNet
import PomodoroProtocol
@testable import PomodoroServer
import PomodoroTestSupport
import Testing

/// The control API on two nodes in one process (`HubRelayTests.Pair`: the owner "o" runs the room, "r" sees
/// its lease held by "o"; the test hands the bus across): a command sent to "r" goes to the owner, which
/// judges the token and whose answer comes back to the request; an owner that does not answer costs the
/// request 3 s, then 503; a room made over HTTP on "r" is taken there; a snapshot read on "r" is answered by
/// the owner; a command for a room nobody made takes nothing. Three real processes:
/// `ClusterControlAPITests`.
struct HubClusterControlAPITests {
    static func post(_ t: TestHub, _ path: String, _ body: String, token: String? = nil) -> RecordedResponse {
        var request = HTTPRequest(method: .post, path: path, authorization: token.map { "Bearer \($0)" }, peer: "198.51.100.9")
        request.body = Array(body.utf8)
        let response = RecordedResponse()
        t.hub.receivedHTTP(request, responder: response)
        t.settle()
        return response
    }

    static func get(_ t: TestHub, _ path: String, bearer: String? = nil) -> RecordedResponse {
        let response = RecordedResponse()
        t.hub.receivedHTTP(HTTPRequest(method: .get, path: path, authorization: bearer.map { "Bearer \($0)" },
                                       peer: "198.51.100.9"), responder: response)
        t.settle()
        return response
    }

    static func text(_ response: HTTPResponse?) -> String { String(decoding: response?.body ?? [], as: UTF8.self) }

    @Test func aCommandOnAnotherNodeIsJudgedAndCarriedOutByTheOwner() throws {
        let pair = try HubRelayTests.Pair()
        let ada = pair.owner.connect()
        pair.owner.send(.join(room: "team", name: "Ada", token: nil), from: ada)
        pair.owner.send(.apiToken(.create(name: "bot")), from: ada)
        pair.owner.settle()
        let created = try #require(try HubControlAPITests.tokens(pair.owner, ada)?.created)

        let start = Self.post(pair.relay, "/api/rooms/team/commands", #"{"type":"start","ref":1}"#, token: created.token)
        #expect(start.response == nil, "answered by the owner, not by the node the request reached")
        // What crosses the bus: the body as sent and the token's hash, never the token.
        guard case .controlAPI(.command(let from, _, let room, let hash, let body))? = pair.relayCluster.published.last?.message else {
            Issue.record("no command on the bus: \(pair.relayCluster.published)")
            return
        }
        #expect(from == "r" && room == "team" && hash == ResumeToken(created.token).hash && body == #"{"type":"start","ref":1}"#)
        #expect(!pair.relayCluster.published.map(\.message.encoded).joined().contains(created.token))
        pair.pump()
        #expect(start.response?.status == 200)
        #expect(Self.text(start.response) == #"{"type":"ok","command":"start","ref":1}"#)
        #expect(try pair.owner.messages(to: ada).contains { if case .event(_, .control(.start, "api:bot", nil), _) = $0 { true } else { false } })

        // Revoked on the owner: refused there, and the refusal (401, with its header) comes back.
        pair.owner.send(.apiToken(.revoke(id: created.id)), from: ada)
        pair.owner.settle()
        let revoked = Self.post(pair.relay, "/api/rooms/team/commands", #"{"type":"pause"}"#, token: created.token)
        pair.pump()
        #expect(revoked.response?.status == 401)
        #expect(revoked.response?.headers.contains { $0.name == "WWW-Authenticate" } == true)
        // A body the API does not carry is answered where it arrived: nothing goes on the bus.
        let task = Self.post(pair.relay, "/api/rooms/team/commands", #"{"type":"task","text":"x"}"#, token: created.token)
        #expect(task.response?.status == 400 && pair.relayCluster.published.isEmpty)
    }

    @Test func anOwnerThatDoesNotAnswerCostsTheRequestItsPatienceThen503() throws {
        let pair = try HubRelayTests.Pair()
        let waiting = Self.post(pair.relay, "/api/rooms/team/commands", #"{"type":"start"}"#, token: "pomo_x")
        pair.relayCluster.clearPublished()   // lost on the bus
        pair.relay.pass(.milliseconds(2_900))
        #expect(waiting.response == nil)
        pair.relay.pass(.milliseconds(200))
        #expect(waiting.response?.status == 503)
        #expect(Self.text(waiting.response).contains(#""code":"unavailable""#))
        #expect(waiting.response?.headers.contains { $0.name == "Retry-After" && $0.value == "1" } == true)
    }

    @Test func aRoomMadeOverHTTPOnANodeIsTakenThere() throws {
        let pair = try HubRelayTests.Pair()
        let made = Self.post(pair.relay, "/api/rooms", #"{"room":"fresh"}"#)
        #expect(made.response?.status == 201, "\(Self.text(made.response))")
        #expect(pair.relayCluster.holding.contains(try RoomID(validating: "fresh")))
        // "team" runs on the owner: taken is refused as a name in use.
        #expect(Self.post(pair.relay, "/api/rooms", #"{"room":"team"}"#).response?.status == 409)
    }

    @Test func aSnapshotReadOnAnotherNodeIsAnsweredByTheOwnerWhichJudgesTheCredential() throws {
        let pair = try HubRelayTests.Pair()
        let ada = pair.owner.connect()
        pair.owner.send(.join(room: "team", name: "Ada", token: nil, passcode: "open sesame"), from: ada)
        pair.owner.settle()

        let locked = Self.get(pair.relay, "/api/rooms/team")
        #expect(locked.response == nil, "answered by the owner, not by the node the request reached")
        guard case .controlAPI(.read(let from, _, let room, let address, let bearer))? = pair.relayCluster.published.last?.message else {
            Issue.record("no read on the bus: \(pair.relayCluster.published)")
            return
        }
        #expect(from == "r" && room == "team" && address.contains("198.51.100.9") && bearer.isEmpty)
        pair.pump()
        #expect(locked.response?.status == 401, "\(Self.text(locked.response))")
        #expect(locked.response?.headers.contains { $0.name == "WWW-Authenticate" } == true)
        let wrong = Self.get(pair.relay, "/api/rooms/team", bearer: "not it")
        pair.pump()
        #expect(wrong.response?.status == 401 && Self.text(wrong.response).contains("wrong passcode"), "\(Self.text(wrong.response))")
        let opened = Self.get(pair.relay, "/api/rooms/team", bearer: "open sesame")
        pair.pump()
        #expect(opened.response?.status == 200, "\(Self.text(opened.response))")
        #expect(Self.text(opened.response).contains(#""name":"Ada""#) && Self.text(opened.response).contains(#""locked":true"#))
        #expect(!pair.relayCluster.holding.contains(HubRelayTests.team), "a read takes nothing")

        // No node runs "nowhere": 404 at once, nothing asked, nothing taken.
        let nowhere = Self.get(pair.relay, "/api/rooms/nowhere")
        #expect(nowhere.response?.status == 404 && pair.relayCluster.published.isEmpty, "\(Self.text(nowhere.response))")
        #expect(pair.relayCluster.holding.isEmpty)
    }

    @Test func aCommandForARoomNobodyMadeOrWithATokenTheStoredRoomLacksTakesNothing() throws {
        let pair = try HubRelayTests.Pair()
        let junk = Self.post(pair.relay, "/api/rooms/junk1/commands", #"{"type":"start"}"#, token: "pomo_bogus")
        #expect(junk.response?.status == 404 && Self.text(junk.response).contains(#""code":"not_found""#), "\(Self.text(junk.response))")
        #expect(pair.relayCluster.holding.isEmpty && pair.relayCluster.published.isEmpty)

        // A room made on the owner and stored, whose lease then lapsed: a token it does not hold is 401, and the
        // room stays untaken; its own token takes it here and is carried out.
        let made = Self.post(pair.owner, "/api/rooms", #"{"room":"kept"}"#)
        #expect(made.response?.status == 201, "\(Self.text(made.response))")
        let token = try #require(Self.text(made.response).range(of: #"pomo_[0-9a-f]{64}"#, options: .regularExpression)
            .map { String(Self.text(made.response)[$0]) })
        let kept = try RoomID(validating: "kept")
        let stranger = Self.post(pair.relay, "/api/rooms/kept/commands", #"{"type":"start"}"#, token: "pomo_" + String(repeating: "0", count: 64))
        #expect(stranger.response?.status == 401, "\(Self.text(stranger.response))")
        #expect(!pair.relayCluster.holding.contains(kept))
        let start = Self.post(pair.relay, "/api/rooms/kept/commands", #"{"type":"start"}"#, token: token)
        #expect(start.response?.status == 200, "\(Self.text(start.response))")
        #expect(pair.relayCluster.holding.contains(kept))
    }
}
