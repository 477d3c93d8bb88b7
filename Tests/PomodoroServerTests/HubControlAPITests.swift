@testable import PomodoroServer
import Foundation
import PomodoroCore
import PomodoroNet
import PomodoroProtocol
import PomodoroStore
import PomodoroTestSupport
import Testing

/// API tokens over the wire and the control API over HTTP, through the hub on the fake transport, the manual
/// clock and a held SQLite store: who may make tokens, that a token is shown once and kept hashed, that a
/// command with one takes a member's path, and that a revocation, a removal or a lock reaches the API at once.
@Suite struct HubControlAPITests {
    static func join(_ t: TestHub, _ name: String, room: String = "team", passcode: String? = nil,
                     control: ControlMode? = nil, peer: String) throws -> (ConnectionID, YouPayload) {
        let c = t.connect(peer: peer)
        t.send(.join(room: room, name: name, token: nil, passcode: passcode, control: control), ref: "j", from: c)
        t.settle()
        return (c, try #require(try t.messages(to: c).first?.you))
    }

    static func tokens(_ t: TestHub, _ c: ConnectionID) throws -> APITokensPayload? {
        try t.messages(to: c).compactMap { if case .apiTokens(let p, _) = $0 { p } else { nil } }.last
    }

    static func post(_ t: TestHub, _ path: String, _ body: String, token: String? = nil,
                     peer: String = "198.51.100.9") -> HTTPResponse? {
        var request = HTTPRequest(method: .post, path: path, authorization: token.map { "Bearer \($0)" }, peer: peer)
        request.body = Array(body.utf8)
        let response = RecordedResponse()
        t.hub.receivedHTTP(request, responder: response)
        t.settle()
        return response.response
    }

    static func text(_ response: HTTPResponse?) -> String { String(decoding: response?.body ?? [], as: UTF8.self) }

    @Test func aTokenIsShownOnceKeptHashedAndCarriesCommandsAsAMembersWould() throws {
        let store = try HeldStore()
        let t = TestHub(store: store)
        let (ada, _) = try Self.join(t, "Ada", peer: "203.0.113.1")
        t.send(.apiToken(.create(name: "deploy bot")), ref: "c", from: ada)
        t.settle()
        let made = try #require(try Self.tokens(t, ada))
        let created = try #require(made.created)
        #expect(created.token.hasPrefix("pomo_") && created.token.count == 69)
        #expect(made.tokens.map(\.name) == ["deploy bot"] && made.tokens.first?.lastUsedAt == nil)

        // The store has its SHA-256, never the token.
        let stored = try #require(try store.store.loadRoom(RoomID(validating: "team")))
        #expect(stored.apiTokens.map(\.tokenHash) == [ResumeToken(created.token).hash])
        #expect(stored.apiTokens.first?.createdBy == stored.members.first?.id)

        // A list afterwards shows it without the token.
        t.send(.apiToken(.list), ref: "l", from: ada)
        t.settle()
        #expect(try Self.tokens(t, ada)?.created == nil)

        // The command goes the member's way: everyone hears the event, by the token's name.
        t.transport.clearSent()
        let ok = try #require(Self.post(t, "/api/rooms/team/commands", #"{"type":"start","ref":"go"}"#, token: created.token))
        #expect(ok.status == 200)
        #expect(Self.text(ok) == #"{"type":"ok","command":"start","ref":"go"}"#)
        let heard = try t.messages(to: ada)
        #expect(heard.contains { if case .event(_, .control(.start, "api:deploy bot", nil), _) = $0 { true } else { false } })
        #expect(heard.contains { if case .state(let room) = $0 { room.status == .running } else { false } })
        // Answers as the wire does: start while running is refused with invalid_state.
        let again = try #require(Self.post(t, "/api/rooms/team/commands", #"{"type":"start"}"#, token: created.token))
        #expect(again.status == 409 && Self.text(again).contains(#""code":"invalid_state""#))
        // A member's own task and presence are not the API's.
        let task = try #require(Self.post(t, "/api/rooms/team/commands", #"{"type":"task","text":"x"}"#, token: created.token))
        #expect(task.status == 400 && Self.text(task).contains(#""field":"type""#))
        // Its use is noted, to the minute.
        t.send(.apiToken(.list), ref: "l", from: ada)
        t.settle()
        #expect(try Self.tokens(t, ada)?.tokens.first?.lastUsedAt != nil)
    }

    @Test func aRevokedTokenCarriesNothingFromThatMoment() throws {
        let t = TestHub(store: try HeldStore())
        let (ada, _) = try Self.join(t, "Ada", peer: "203.0.113.1")
        t.send(.apiToken(.create(name: "ci")), from: ada)
        t.settle()
        let created = try #require(try Self.tokens(t, ada)?.created)
        t.send(.apiToken(.revoke(id: created.id)), from: ada)
        t.settle()
        #expect(try Self.tokens(t, ada)?.tokens.isEmpty == true)
        let refused = try #require(Self.post(t, "/api/rooms/team/commands", #"{"type":"start"}"#, token: created.token))
        #expect(refused.status == 401)
        #expect(refused.headers.contains { $0.name == "WWW-Authenticate" })
        #expect(try t.messages(to: ada).contains { if case .state(let room) = $0 { room.status == .running } else { false } } == false)
    }

    @Test func inAHostOnlyRoomOnlyTheHostMakesTokensAndRemovingTheMakerRevokesTheirs() throws {
        let t = TestHub(store: try HeldStore())
        let (hana, _) = try Self.join(t, "Hana", control: .host, peer: "203.0.113.1")
        let (ivo, ivoYou) = try Self.join(t, "Ivo", peer: "203.0.113.2")
        t.send(.apiToken(.create(name: "mine")), from: ivo)
        t.settle()
        #expect(try t.messages(to: ivo).last.map { if case .error(.forbidden, _, _, _, _) = $0 { true } else { false } } == true)
        // The room opens its controls to anyone: Ivo makes one; then the host removes Ivo.
        t.send(.control(mode: .anyone), from: hana)
        t.settle()
        t.send(.apiToken(.create(name: "ivo's")), from: ivo)
        t.settle()
        let ivos = try #require(try Self.tokens(t, ivo)?.created)
        t.send(.kick(member: ivoYou.id), from: hana)
        t.settle()
        let refused = try #require(Self.post(t, "/api/rooms/team/commands", #"{"type":"start"}"#, token: ivos.token))
        #expect(refused.status == 401)
        t.send(.apiToken(.list), from: hana)
        t.settle()
        #expect(try Self.tokens(t, hana)?.tokens.isEmpty == true)
    }

    @Test func aTokenKeepsWorkingInALockedRoomAndWithoutOneTheAPIIsRefused() throws {
        let t = TestHub(store: try HeldStore())
        let (ada, _) = try Self.join(t, "Ada", peer: "203.0.113.1")
        t.send(.apiToken(.create(name: "bot")), from: ada)
        t.settle()
        let created = try #require(try Self.tokens(t, ada)?.created)
        t.send(.passcode("open sesame"), from: ada)
        t.settle()
        #expect(Self.post(t, "/api/rooms/team/commands", #"{"type":"start"}"#)?.status == 401)
        #expect(Self.post(t, "/api/rooms/team/commands", #"{"type":"start"}"#, token: "open sesame")?.status == 401)
        #expect(Self.post(t, "/api/rooms/team/commands", #"{"type":"start"}"#, token: created.token)?.status == 200)
        #expect(Self.post(t, "/api/rooms/nobody/commands", #"{"type":"start"}"#, token: created.token)?.status == 404)
        #expect(Self.post(t, "/api/rooms/team/commands", "not json", token: created.token)?.status == 400)
    }

    @Test func aRoomMadeOverHTTPComesWithItsFirstTokenAndIsBroughtBackForIt() throws {
        let store = try HeldStore()
        let t = TestHub(store: store)
        let made = try #require(Self.post(t, "/api/rooms", #"{"room":"standup","settings":{"focus":900,"shortBreak":300,"longBreak":900,"longBreakEvery":4,"autoStart":false},"control":"host","passcode":"let me in"}"#))
        #expect(made.status == 201, "\(Self.text(made))")
        let body = Self.text(made)
        #expect(body.contains(#""control":"host""#) && body.contains(#""locked":true"#) && body.contains(#""focus":900"#))
        let token = try #require(body.range(of: #"pomo_[0-9a-f]{64}"#, options: .regularExpression).map { String(body[$0]) })
        #expect(Self.post(t, "/api/rooms", #"{"room":"standup"}"#)?.status == 409)
        #expect(Self.post(t, "/api/rooms", #"{"room":"x","settings":{"focus":1,"shortBreak":300,"longBreak":900,"longBreakEvery":4,"autoStart":false}}"#)?.status == 400)

        // Nobody comes: the room leaves memory after its lifetime; a command with the token brings it back.
        t.pass(.seconds(3600))
        #expect(t.hub.roomCount == 0)
        let started = try #require(Self.post(t, "/api/rooms/standup/commands", #"{"type":"start"}"#, token: token))
        #expect(started.status == 200, "\(Self.text(started))")
        #expect(t.hub.roomCount == 1)
        // A joiner sees it running, host-only, with its settings.
        let (lin, _) = try Self.join(t, "Lin", room: "standup", passcode: "let me in", peer: "203.0.113.5")
        guard case .welcome(_, let room, _, _, _) = try #require(try t.messages(to: lin).first) else {
            Issue.record("no welcome")
            return
        }
        #expect(room.status == .running && room.control == .host && room.settings.focus == 900 && room.locked)
    }

    @Test func theScheduleCommandsGoThroughTheMembersHandlerWithItsLimits() throws {
        var configuration = HubRoomLifetimeTests.configuration()
        configuration.limits.maxScheduledRooms = 1
        let store = try HeldStore()
        let t = TestHub(configuration: configuration, store: store)
        // A host-only room: the token speaks as the host would; Ivo, a member, may not change schedules.
        let (hana, _) = try Self.join(t, "Hana", control: .host, peer: "203.0.113.1")
        let (ivo, _) = try Self.join(t, "Ivo", peer: "203.0.113.2")
        t.send(.apiToken(.create(name: "planner")), from: hana)
        t.settle()
        let created = try #require(try Self.tokens(t, hana)?.created)
        let add = #"{"type":"addSchedule","schedule":{"name":"Standup","time":"09:30","zone":"UTC","date":null,"days":["mon"],"settings":null,"sessions":1},"ref":7}"#

        t.transport.clearSent()
        let added = try #require(Self.post(t, "/api/rooms/team/commands", add, token: created.token))
        #expect(added.status == 200, "\(Self.text(added))")
        #expect(Self.text(added) == #"{"type":"ok","command":"addSchedule","ref":7}"#)
        // Every member hears the new list, as after a member's change; the store has it.
        #expect(try t.messages(to: ivo).contains { if case .schedules(let p, nil) = $0 { p.schedules.map(\.id) == ["s1"] } else { false } })
        #expect(try store.store.loadRoom(RoomID(validating: "team"))?.schedules.count == 1)

        let listed = try #require(Self.post(t, "/api/rooms/team/commands", #"{"type":"schedules","ref":"l"}"#, token: created.token))
        #expect(listed.status == 200)
        #expect(Self.text(listed).hasPrefix(#"{"type":"schedules","room":"team","schedules":[{"id":"s1""#), "\(Self.text(listed))")

        // The member's checks answer as the wire does: a time out of bounds, an unknown id.
        let bad = try #require(Self.post(t, "/api/rooms/team/commands", add.replacingOccurrences(of: "09:30", with: "25:00"), token: created.token))
        #expect(bad.status == 400 && Self.text(bad).contains(#""code":"bad_request""#), "\(Self.text(bad))")
        let unknown = try #require(Self.post(t, "/api/rooms/team/commands", #"{"type":"switchSchedule","id":"s9","enabled":false}"#, token: created.token))
        #expect(unknown.status == 404 || unknown.status == 400, "\(Self.text(unknown))")
        let off = try #require(Self.post(t, "/api/rooms/team/commands", #"{"type":"switchSchedule","id":"s1","enabled":false}"#, token: created.token))
        #expect(off.status == 200 && Self.text(off).contains(#""command":"switchSchedule""#))

        // --max-scheduled-rooms counts the API's schedules as a member's: a second room's first one is refused.
        let (eve, _) = try Self.join(t, "Eve", room: "other", peer: "203.0.113.3")
        t.send(.apiToken(.create(name: "eve's")), from: eve)
        t.settle()
        let eves = try #require(try Self.tokens(t, eve)?.created)
        let limited = try #require(Self.post(t, "/api/rooms/other/commands", add, token: eves.token))
        #expect(limited.status == 429 && Self.text(limited).contains(#""code":"room_limit""#), "\(Self.text(limited))")

        // Deleted over the API; a revoked token changes nothing.
        let deleted = try #require(Self.post(t, "/api/rooms/team/commands", #"{"type":"deleteSchedule","id":"s1"}"#, token: created.token))
        #expect(deleted.status == 200)
        t.send(.apiToken(.revoke(id: created.id)), from: hana)
        t.settle()
        #expect(Self.post(t, "/api/rooms/team/commands", add, token: created.token)?.status == 401)
        #expect(try store.store.loadRoom(RoomID(validating: "team"))?.schedules.isEmpty == true)
    }
}
