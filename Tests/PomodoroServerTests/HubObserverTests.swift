@testable import PomodoroServer
import PomodoroCore
import PomodoroNet
import PomodoroProtocol
import PomodoroTestSupport
import Testing

/// Observers through the hub with no socket: they hear what members hear, and nobody hears of them.
@Suite struct HubObserverTests {
    static func join(_ name: String, room: String = "team") -> ClientMessage { .join(room: room, name: name, token: nil) }

    @Test func observingARoomThatIsNotOpenIsAnErrorAndCreatesNothing() throws {
        let t = TestHub()
        let watcher = t.connect()
        t.send(.observe(room: "nobody-here"), ref: "o", from: watcher)
        let answer = try #require(try t.messages(to: watcher).first?.failure)
        #expect(answer.code == .notFound)
        #expect(t.hub.roomCount == 0)
    }

    @Test func anObserverGetsTheSnapshotTicksAndEventsButIsNoMember() throws {
        let t = TestHub()
        let ada = t.connect(peer: "203.0.113.1"), watcher = t.connect(peer: "203.0.113.9")
        t.send(Self.join("Ada"), from: ada)
        let beforeWatching = t.transport.sent[ada]
        t.send(.observe(room: "team"), ref: "o", from: watcher)
        let first = try #require(try t.messages(to: watcher).first)
        #expect(first.label == "observing")
        #expect(first.snapshot?.members.map(\.name) == ["Ada"])
        #expect(first.snapshot?.memberCount == 1)
        // Ada heard nothing of it.
        #expect(t.transport.sent[ada] == beforeWatching)

        t.transport.clearSent()
        t.send(.start, from: ada)
        t.pass(.seconds(2))
        let heard = try t.messages(to: watcher).map(\.label)
        #expect(heard.contains("event control") && heard.contains("state") && heard.filter { $0 == "tick" }.count >= 2)
        // The same bytes as the member's broadcasts (the reply to Ada aside).
        #expect(t.transport.sent[watcher] == t.transport.sent[ada]?.filter { !String(decoding: $0, as: UTF8.self).contains("\"type\":\"ok\"") })

        // The observer goes: Ada hears nothing, and the room is as it was.
        t.transport.clearSent()
        t.disconnect(watcher)
        #expect(try t.messages(to: ada).isEmpty)
    }

    @Test func anObserverThatSendsAControlIsRefusedAndNothingChanges() throws {
        let t = TestHub()
        let ada = t.connect(peer: "203.0.113.1"), watcher = t.connect(peer: "203.0.113.9")
        t.send(Self.join("Ada"), from: ada)
        t.send(.observe(room: "team"), from: watcher)
        t.transport.clearSent()
        for message: ClientMessage in [.start, .task(text: "lurking"), .presence(away: true), .skip,
                                       Self.join("Eve")] {
            t.send(message, ref: "c", from: watcher)
        }
        let codes = try t.messages(to: watcher).compactMap(\.failure?.code)
        #expect(codes == [.observer, .observer, .observer, .observer, .alreadyJoined])
        #expect(try t.messages(to: ada).isEmpty)
        // ping still answers; leave ends the watch.
        t.send(.ping, from: watcher)
        t.send(.leave, ref: "l", from: watcher)
        #expect(try t.messages(to: watcher).suffix(2).map(\.label) == ["pong", "ok leave"])
        t.send(.start, from: ada)
        #expect(try t.messages(to: watcher).suffix(1).map(\.label) == ["ok leave"])
    }

    /// The `control` events in what `connection` heard: what was pressed, and by whom.
    static func controls(_ t: TestHub, to connection: ConnectionID) throws -> [String] {
        try t.messages(to: connection).compactMap {
            if case .event(_, .control(let action, let by, _), _) = $0 { "\(action.rawValue) by \(by)" } else { nil }
        }
    }

    @Test func anObserverWithAMembersTokenPressesTheControlsAsThatMemberAndNobodySeesIt() throws {
        let t = TestHub()
        let ada = t.connect(peer: "203.0.113.1"), bob = t.connect(peer: "203.0.113.2")
        let watcher = t.connect(peer: "203.0.113.9")
        t.send(Self.join("Ada"), from: ada)
        let token = try #require(try t.messages(to: ada).first?.you?.token)
        t.send(Self.join("Bob"), from: bob)
        t.send(.observe(room: "team", token: token), ref: "o", from: watcher)
        t.transport.clearSent()

        t.send(.start, ref: "s", from: watcher)
        t.pass(.seconds(3))
        t.send(.pause, ref: "p", from: watcher)
        t.send(.extend(seconds: 60), ref: "e", from: watcher)
        let answers = try t.messages(to: watcher).filter { $0.label.hasPrefix("ok") || $0.label.hasPrefix("error") }
        #expect(answers.map(\.label) == ["ok start", "ok pause", "ok extend"])
        // Bob hears the presses as Ada's, and nobody coming or going.
        #expect(try Self.controls(t, to: bob) == ["start by m1", "pause by m1", "extend by m1"])
        #expect(try !t.messages(to: bob).map(\.label).contains { $0.hasPrefix("event member") })
        let room = try #require(t.hub.rooms[try RoomID(validating: "team")]?.room)
        #expect(room.memberCount == 2)
        let snapshot = try #require(try t.messages(to: bob).last { $0.snapshot != nil }?.snapshot)
        #expect(snapshot.members.map(\.name) == ["Ada", "Bob"] && snapshot.status == .paused)

        // Only the controls: a member's own task and presence, and the host's tools, are not pressed through a watch.
        t.transport.clearSent()
        t.send(.task(text: "lurking"), ref: "t", from: watcher)
        t.send(.presence(away: true), ref: "a", from: watcher)
        t.send(.control(mode: .host), ref: "c", from: watcher)
        t.send(.kick(member: "m2"), ref: "k", from: watcher)
        #expect(try t.messages(to: watcher).compactMap(\.failure?.code) == [.observer, .observer, .observer, .observer])
        #expect(try t.messages(to: bob).isEmpty)
    }

    /// A host-only room of Hana (host, m1) and Bob (m2), each with a watch that showed their resume token.
    static func hostOnlyRoomWatched(_ t: TestHub) throws -> (hana: ConnectionID, bob: ConnectionID,
                                                              asHana: ConnectionID, asBob: ConnectionID) {
        let hana = t.connect(peer: "203.0.113.1"), bob = t.connect(peer: "203.0.113.2")
        t.send(.join(room: "team", name: "Hana", token: nil, control: .host), from: hana)
        let hanaToken = try #require(try t.messages(to: hana).first?.you?.token)
        t.send(Self.join("Bob"), from: bob)
        let bobToken = try #require(try t.messages(to: bob).first?.you?.token)
        let asBob = t.connect(peer: "203.0.113.8"), asHana = t.connect(peer: "203.0.113.9")
        t.send(.observe(room: "team", token: bobToken), from: asBob)
        t.send(.observe(room: "team", token: hanaToken), from: asHana)
        t.transport.clearSent()
        return (hana, bob, asHana, asBob)
    }

    @Test func inAHostOnlyRoomOnlyTheHostsTokenPressesAndTheRuleFollowsTheRole() throws {
        let t = TestHub()
        let (hana, bob, asHana, asBob) = try Self.hostOnlyRoomWatched(t)

        t.send(.start, ref: "s", from: asBob)
        #expect(try t.messages(to: asBob).compactMap(\.failure?.code) == [.forbidden])
        t.send(.start, ref: "s", from: asHana)
        #expect(try t.messages(to: asHana).map(\.label).contains("ok start"))
        #expect(try Self.controls(t, to: bob) == ["start by m1"])

        // The host hands the role to Bob: judged when pressed, Bob's watch now may, Hana's may not.
        t.send(.handOff(member: "m2"), from: hana)
        t.transport.clearSent()
        t.send(.pause, ref: "p", from: asHana)
        t.send(.pause, ref: "p", from: asBob)
        #expect(try t.messages(to: asHana).compactMap(\.failure?.code) == [.forbidden])
        #expect(try t.messages(to: asBob).map(\.label).contains("ok pause"))
        #expect(try Self.controls(t, to: hana) == ["pause by m2"])
    }

    @Test func withoutAMembersTokenOrOnceThatMemberIsGoneAWatchPressesNothing() throws {
        let t = TestHub()
        let ada = t.connect(peer: "203.0.113.1"), bob = t.connect(peer: "203.0.113.2")
        t.send(Self.join("Ada"), from: ada)
        t.send(Self.join("Bob"), from: bob)
        let bobToken = try #require(try t.messages(to: bob).first?.you?.token)
        let plain = t.connect(peer: "203.0.113.7"), stranger = t.connect(peer: "203.0.113.8")
        let asBob = t.connect(peer: "203.0.113.9")
        t.send(.observe(room: "team"), from: plain)
        t.send(.observe(room: "team", token: "not-a-token-of-anyone"), from: stranger)
        t.send(.observe(room: "team", token: bobToken), from: asBob)
        t.transport.clearSent()

        t.send(.start, ref: "s", from: plain)
        t.send(.start, ref: "s", from: stranger)
        #expect(try t.messages(to: plain).compactMap(\.failure?.code) == [.observer])
        #expect(try t.messages(to: stranger).compactMap(\.failure?.code) == [.observer])

        // Bob's connection drops: away within his grace, nobody presses as him.
        t.disconnect(bob)
        t.transport.clearSent()
        t.send(.start, ref: "s", from: asBob)
        let away = try #require(try t.messages(to: asBob).compactMap(\.failure).first)
        #expect(away.code == .observer && away.message.contains("m2"))

        // Back, he may; removed by the host (an open room: the watch goes on), he may not.
        let back = t.connect(peer: "203.0.113.2")
        t.send(.join(room: "team", name: "Bob", token: bobToken), from: back)
        t.transport.clearSent()
        t.send(.start, ref: "s", from: asBob)
        #expect(try t.messages(to: asBob).map(\.label).contains("ok start"))
        t.send(.kick(member: "m2"), from: ada)
        t.settle()
        t.transport.clearSent()
        t.send(.pause, ref: "p", from: asBob)
        #expect(try t.messages(to: asBob).compactMap(\.failure?.code) == [.observer])
        #expect(try Self.controls(t, to: ada).isEmpty)
        #expect(t.hub.rooms[try RoomID(validating: "team")]?.room.status == .running)
    }

    @Test func aWatchWithAMembersTokenManagesTheAPITokensAsThatMemberUnderTheControlsRule() throws {
        let t = TestHub()
        let (hana, bob, asHana, asBob) = try Self.hostOnlyRoomWatched(t)
        let plain = t.connect(peer: "203.0.113.7")
        t.send(.observe(room: "team"), from: plain)
        t.transport.clearSent()
        func tokens(_ c: ConnectionID) throws -> APITokensPayload? {
            try t.messages(to: c).compactMap { if case .apiTokens(let p, _) = $0 { p } else { nil } }.last
        }

        // The host's watch makes a token as Hana; nobody in the room hears of the watch.
        t.send(.apiToken(.create(name: "ci")), ref: "c", from: asHana)
        t.settle()
        let made = try #require(try tokens(asHana)?.created)
        #expect(made.token.hasPrefix("pomo_"))
        let record = try #require(t.hub.rooms[try RoomID(validating: "team")]?.room.apiTokens.first)
        #expect(record.id == made.id && record.createdBy == MemberID("m1"))
        #expect(try !t.messages(to: bob).map(\.label).contains { $0.hasPrefix("event member") })

        // A host-only room: Bob's watch may not, as Bob himself may not; a watch without a token is an observer.
        t.send(.apiToken(.list), ref: "l", from: asBob)
        t.send(.apiToken(.list), ref: "l", from: plain)
        #expect(try t.messages(to: asBob).compactMap(\.failure?.code) == [.forbidden])
        let refused = try #require(try t.messages(to: plain).compactMap(\.failure).first)
        #expect(refused.code == .observer && refused.message.contains("resume token"))

        // Hana's connection drops: her watch speaks for nobody connected, and lists nothing.
        t.disconnect(hana)
        t.transport.clearSent()
        t.send(.apiToken(.revoke(id: made.id)), ref: "r", from: asHana)
        let gone = try #require(try t.messages(to: asHana).compactMap(\.failure).first)
        #expect(gone.code == .observer && gone.message.contains("m1"))
        #expect(t.hub.rooms[try RoomID(validating: "team")]?.room.apiTokens.map(\.id) == [made.id])
    }

    @Test func anObserverMayListTheSchedulesButNotChangeThem() throws {
        let t = TestHub()
        let ada = t.connect(peer: "203.0.113.1"), watcher = t.connect(peer: "203.0.113.9")
        t.send(Self.join("Ada"), from: ada)
        t.send(.schedule(.add(ScheduleFields(name: "Standup", time: "09:30", zone: "UTC", days: ["mon"]))), from: ada)
        t.settle()
        t.send(.observe(room: "team"), from: watcher)
        t.transport.clearSent()
        let fields = ScheduleFields(name: "Lurking", time: "10:00", zone: "UTC", days: ["tue"])
        for request: ScheduleRequest in [.add(fields), .change(id: "s1", fields), .setEnabled(id: "s1", enabled: false),
                                         .delete(id: "s1")] {
            t.send(.schedule(request), ref: "s", from: watcher)
        }
        t.send(.passcode("sesame-seed"), ref: "p", from: watcher)
        t.send(.kick(member: "m1"), ref: "k", from: watcher)
        t.settle()
        let codes = try t.messages(to: watcher).compactMap(\.failure?.code)
        #expect(codes == Array(repeating: .observer, count: 6))
        #expect(try t.messages(to: ada).isEmpty)

        // Listing is looking: allowed, and the list is the room's.
        t.transport.clearSent()
        t.send(.schedule(.list), ref: "l", from: watcher)
        let listed = try #require(try t.messages(to: watcher).first)
        guard case let .schedules(payload, ref) = listed else {
            Issue.record("expected schedules, got \(listed.label)")
            return
        }
        #expect(ref == .string("l") && payload.schedules.map(\.fields.name) == ["Standup"])
        #expect(try t.messages(to: ada).isEmpty)

        // A member's change reaches the observer as it reaches the members.
        t.transport.clearSent()
        t.send(.schedule(.delete(id: "s1")), from: ada)
        t.settle()
        #expect(try t.messages(to: watcher).map(\.label).contains("schedules"))
    }

    @Test func aLockedRoomNeedsItsPasscodeOrAMembersToken() throws {
        let t = TestHub()
        let ada = t.connect(peer: "203.0.113.1")
        t.send(.join(room: "vault", name: "Ada", token: nil, passcode: "open sesame"), from: ada)
        t.settle()
        let token = try #require(try t.messages(to: ada).first?.you?.token)

        func observe(token: String? = nil, passcode: String? = nil) throws -> ServerMessage? {
            let watcher = t.connect(peer: "198.51.100.4")
            t.send(.observe(room: "vault", token: token, passcode: passcode), from: watcher)
            t.settle()
            return try t.messages(to: watcher).first
        }
        #expect(try observe()?.failure?.code == .badPasscode)
        #expect(try observe(passcode: "guess")?.failure?.code == .badPasscode)
        #expect(try observe(passcode: "open sesame")?.label == "observing")
        #expect(try observe(token: token)?.label == "observing")
        // Still one member.
        #expect(t.hub.rooms[try RoomID(validating: "vault")]?.room.memberCount == 1)
    }

    @Test func aCrowdsObserverGetsTheCrowdsThrottledStates() throws {
        var configuration = ServerConfiguration(port: 0, webRoot: nil)
        configuration.roomPolicy.memberListLimit = 2
        configuration.limits.membersPerAddressPerRoom = 0
        let t = TestHub(configuration: configuration)
        let first = t.connect(), watcher = t.connect()
        t.send(Self.join("M0"), from: first)
        t.send(Self.join("M1"), from: t.connect())
        t.send(.observe(room: "team"), from: watcher)
        t.transport.clearSent()
        for i in 2...5 { t.send(Self.join("M\(i)"), from: t.connect()) }
        #expect(try t.messages(to: watcher).isEmpty)
        t.pass(.seconds(1))
        let heard = try t.messages(to: watcher)
        #expect(heard.map(\.label) == ["state"])
        #expect(heard.first?.snapshot?.memberCount == 6)
        #expect(heard.first?.snapshot?.membersTruncated == true)
    }

    @Test func aRoomThatExpiresClosesItsObservers() throws {
        let t = TestHub()
        let ada = t.connect(peer: "203.0.113.1"), watcher = t.connect(peer: "203.0.113.9")
        t.send(Self.join("Ada"), from: ada)
        t.send(.observe(room: "team"), from: watcher)
        t.send(.leave, from: ada)
        t.pass(.seconds(3600))
        #expect(t.hub.roomCount == 0)
        #expect(t.transport.closes[watcher]?.code == 4004)
    }

    @Test func theLiveRoomOverHTTPIsTheSnapshotBehindTheSameLock() throws {
        let t = TestHub()
        let ada = t.connect(peer: "203.0.113.1")
        t.send(.join(room: "vault", name: "Ada", token: nil, passcode: "open sesame"), from: ada)
        t.settle()
        t.transport.clearSent()
        func get(_ path: String, _ authorization: String? = nil) -> HTTPResponse? {
            let response = RecordedResponse()
            t.hub.receivedHTTP(HTTPRequest(method: .get, path: path, authorization: authorization,
                                           peer: "198.51.100.4"), responder: response)
            t.settle()
            return response.response
        }
        #expect(try #require(get("/api/rooms/nowhere")).status == 404)
        #expect(try #require(get("/api/rooms/vault")).status == 401)
        #expect(try #require(get("/api/rooms/vault", "Bearer guess")).status == 401)
        let answer = try #require(get("/api/rooms/vault", "Bearer open sesame"))
        #expect(answer.status == 200)
        let room = try WireCodec.decodeSnapshotBody(answer.body)
        #expect(room.room == "vault" && room.members.map(\.name) == ["Ada"] && room.locked)
        #expect(try t.messages(to: ada).isEmpty)
    }
}

/// `GET /api/rooms/{room}/events` through the hub with no socket.
@Suite struct HubEventStreamTests {
    static func open(_ t: TestHub, _ path: String = "/api/rooms/team/events",
                     authorization: String? = nil) -> RecordedResponse {
        let response = RecordedResponse()
        t.hub.receivedHTTP(HTTPRequest(method: .get, path: path, authorization: authorization, peer: "198.51.100.4"),
                           responder: response)
        t.settle()
        return response
    }

    @Test func aStreamStartsWithTheStateThenCarriesTicksWithRisingIDs() throws {
        let t = TestHub()
        let ada = t.connect()
        t.send(.join(room: "team", name: "Ada", token: nil), from: ada)
        let response = Self.open(t)
        let head = try #require(response.response)
        #expect(head.status == 200 && head.contentType == "text/event-stream; charset=utf-8")
        let stream = try #require(response.streamed)
        #expect(stream.pieces.first == "retry: 3000\n\n")
        #expect(stream.events.dropFirst().first == "state")

        t.send(.start, from: ada)
        t.pass(.seconds(3))
        let ticks = stream.pieces.filter { $0.hasPrefix("event: tick\n") }
        #expect(ticks.count >= 3)
        let ids = ticks.compactMap { $0.split(separator: "\n")[1].split(separator: " ").last.flatMap { Int($0) } }
        #expect(ids.count == ticks.count && ids == ids.sorted())
        #expect(stream.pieces.contains { $0.hasPrefix("event: event\n") && $0.contains("\"kind\":\"control\"") })
        // Every piece is one SSE event: lines, then a blank line.
        #expect(stream.pieces.allSatisfy { $0.hasSuffix("\n\n") })
        // Ada heard nothing of the reader.
        #expect(!(try t.messages(to: ada)).contains { $0.label.contains("member") && $0.label != "event memberJoined" })
    }

    @Test func aReaderThatStopsReadingIsDroppedAndTheRoomGoesOn() throws {
        let t = TestHub()
        let ada = t.connect()
        t.send(.join(room: "team", name: "Ada", token: nil), from: ada)
        let slow = try #require(Self.open(t).streamed)
        let steady = try #require(Self.open(t).streamed)
        t.send(.start, from: ada)
        slow.reading = false
        t.pass(.seconds(20))
        #expect(slow.unread == slow.capacity)
        let room = try #require(t.hub.rooms[try RoomID(validating: "team")])
        #expect(room.streams.count == 1 && (room.streams.first as? WatchingStream)?.base === steady)
        #expect(steady.pieces.filter { $0.hasPrefix("event: tick\n") }.count >= 20)
        // The heartbeat reaches the one left.
        #expect(steady.events.contains(":"))
        let ticksToAda = try t.messages(to: ada).filter { $0.label == "tick" }.count
        #expect(ticksToAda >= 20)
    }

    @Test func aStreamHasTheSameLockAndNeedsAnOpenRoom() throws {
        let t = TestHub()
        #expect(Self.open(t, "/api/rooms/nowhere/events").response?.status == 404)
        let ada = t.connect()
        t.send(.join(room: "vault", name: "Ada", token: nil, passcode: "open sesame"), from: ada)
        t.settle()
        #expect(Self.open(t, "/api/rooms/vault/events").response?.status == 401)
        #expect(Self.open(t, "/api/rooms/vault/events", authorization: "Bearer nope").response?.status == 401)
        let opened = Self.open(t, "/api/rooms/vault/events", authorization: "Bearer open sesame")
        #expect(opened.response?.status == 200 && opened.streamed != nil)
    }
}
