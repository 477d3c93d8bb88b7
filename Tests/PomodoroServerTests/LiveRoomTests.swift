import PomodoroCore
import PomodoroNet
import PomodoroProtocol
import PomodoroServer
import PomodoroTestSupport
import Testing

/// The real server on a loopback port with real WebSocket clients.
@Suite(.onOwnThreads, .timeLimit(.minutes(TestTime.minutes(1))))
struct LiveRoomTests {
    let server: LiveServer
    let client: WebSocketClient

    init() throws {
        server = try LiveServer()
        client = try WebSocketClient()
        client.start()
    }

    func shutDown() {
        server.stop()
        client.stop()
        client.waitUntilFinished()
    }

    @Test func twoMembersSeeTheSameRoom() throws {
        defer { shutDown() }
        let ana = try Peer(client, port: server.port)
        let bo = try Peer(client, port: server.port)
        let (anaYou, first) = try ana.join("team-alpha", name: "Ana")
        #expect(first.members.map(\.name) == ["Ana"])
        #expect(first.phase == .idle && first.status == .idle && first.cycle == 1)
        #expect(first.settings == .standard)

        let (boYou, second) = try bo.join("team-alpha", name: "Bo")
        #expect(boYou.id != anaYou.id)
        #expect(anaYou.token != boYou.token && anaYou.token.count == 32)
        #expect(second.members.map(\.name) == ["Ana", "Bo"])

        // Ana hears Bo arrive, then gets the same state Bo was welcomed with.
        let joined = try ana.expect("Bo's memberJoined") { message -> String? in
            if case let .event(_, .memberJoined(member, name), _) = message, member != anaYou.id { return "\(member) \(name)" }
            return nil
        }
        #expect(joined == "\(boYou.id) Bo")
        let anaView = try ana.expect("state") { if case .state(let s) = $0 { return s }; return nil }
        #expect(anaView.seq == second.seq)
        #expect(anaView.members == second.members)
        // Nobody else's token ever reaches a member.
        #expect(!String(describing: anaView).contains(boYou.token))
    }

    @Test func aShortFocusTicksEverySecondAndEndsForBoth() throws {
        defer { shutDown() }
        let ana = try Peer(client, port: server.port)
        let bo = try Peer(client, port: server.port)
        _ = try ana.join("ticks", name: "Ana")
        _ = try bo.join("ticks", name: "Bo")
        ana.send(.configure(RoomSettings(focus: 3, shortBreak: 2, longBreak: 4, longBreakEvery: 2, autoStart: false)),
                 ref: .number(1))
        let applies = try ana.expect("ok") { message -> AppliesFrom?? in
            if case let .ok("configure", appliesFrom, .number(1)?) = message { return appliesFrom }
            return nil
        }
        #expect(applies == .now)
        ana.send(.start)

        // Both see the focus start, then ticks at 2 s and 1 s, then the completion: the same bytes for both.
        func run(_ peer: Peer) throws -> (started: SnapshotPayload, ticks: [[UInt8]], tickValues: [TickPayload],
                                           completed: (EventPayload, Int64), after: SnapshotPayload) {
            let started = try peer.expect("running focus") { message -> SnapshotPayload? in
                if case .state(let s) = message, s.phase == .focus, s.running { return s }
                return nil
            }
            var ticks: [[UInt8]] = [], values: [TickPayload] = []
            while true {
                let (bytes, message) = try peer.nextRaw()
                if case .tick(let tick) = message {
                    ticks.append(bytes)
                    values.append(tick)
                } else if case let .event(_, event, serverTime) = message, case .phaseCompleted = event {
                    let after = try peer.expect("state after completion") {
                        if case .state(let s) = $0 { return s }
                        return nil
                    }
                    return (started, ticks, values, (event, serverTime), after)
                }
            }
        }
        let seenByAna = try run(ana)
        let seenByBo = try run(bo)

        #expect(seenByAna.started.remainingMs == 3000)
        #expect(seenByAna.started.phaseLengthMs == 3000)
        let endsAt = try #require(seenByAna.started.endsAt)
        #expect(seenByAna.tickValues.map(\.remainingMs) == [2000, 1000])
        #expect(seenByAna.tickValues.allSatisfy { $0.endsAt == endsAt && $0.phase == .focus && $0.cycle == 1 })
        #expect(seenByAna.ticks == seenByBo.ticks, "every member gets the same tick bytes")
        // The phase never ends early: the completion is sent at or after the end the clients were given.
        #expect(seenByAna.completed.1 >= endsAt)
        #expect(seenByAna.completed.0 == .phaseCompleted(completed: .focus, next: .shortBreak, autoStarted: false,
                                                          cycle: 1))
        #expect(seenByAna.after.phase == .shortBreak && seenByAna.after.status == .ready)
        #expect(seenByAna.after.remainingMs == 2000)
        #expect(seenByAna.after.stats.focusCompleted == 1)
        #expect(seenByAna.after.members.allSatisfy { $0.stats.focusCompleted == 1 })
        #expect(seenByAna.after == seenByBo.after)
    }

    @Test func aMemberReconnectsWithItsTokenAndKeepsItsID() throws {
        defer { shutDown() }
        let ana = try Peer(client, port: server.port)
        let bo = try Peer(client, port: server.port)
        let (anaYou, _) = try ana.join("again", name: "Ana")
        let (boYou, _) = try bo.join("again", name: "Bo")
        ana.close()

        let away = try bo.expect("memberAway") { message -> String? in
            if case let .event(_, .memberAway(member, .disconnected, _), _) = message { return member }
            return nil
        }
        #expect(away == anaYou.id)
        let whileAway = try bo.expect("state") { if case .state(let s) = $0 { return s }; return nil }
        #expect(whileAway.members.first { $0.id == anaYou.id }?.present == false)

        let anaAgain = try Peer(client, port: server.port)
        let (you, room) = try anaAgain.join("again", name: "Ana", token: anaYou.token)
        #expect(you.id == anaYou.id && you.resumed && you.token == anaYou.token)
        #expect(room.members.map(\.id) == [anaYou.id, boYou.id], "never duplicated")
        #expect(room.members.allSatisfy { $0.present })
        let back = try bo.expect("memberReturned") { message -> String? in
            if case let .event(_, .memberReturned(member), _) = message { return member }
            return nil
        }
        #expect(back == anaYou.id)

        // A wrong token makes a new member instead.
        let stranger = try Peer(client, port: server.port)
        let (strangerYou, _) = try stranger.join("again", name: "Eve", token: "00000000000000000000000000000000")
        #expect(!strangerYou.resumed && strangerYou.id != anaYou.id)
    }

    @Test func aSecondConnectionWithTheSameTokenReplacesTheFirst() throws {
        defer { shutDown() }
        let tab1 = try Peer(client, port: server.port)
        let (you, _) = try tab1.join("tabs", name: "Ana")
        let tab2 = try Peer(client, port: server.port)
        let (again, room) = try tab2.join("tabs", name: "Ana", token: you.token)
        #expect(again.id == you.id && room.members.count == 1)
        let code = try tab1.expect("replaced error") { message -> ErrorCode? in
            if case let .error(code, _, _, _, _) = message { return code }
            return nil
        }
        #expect(code == .replaced)
        #expect(try tab1.expectClose() == 4001)
    }

    @Test func badFramesGetTheirErrorsWhileTheRoomGoesOn() throws {
        defer { shutDown() }
        let steady = try Peer(client, port: server.port)
        let rude = try Peer(client, port: server.port)

        func error(_ peer: Peer) throws -> (ErrorCode, String?, Ref?) {
            try peer.expect("error") { message in
                if case let .error(code, _, field, ref, _) = message { return (code, field, ref) }
                return nil
            }
        }
        rude.send(.start, ref: .string("early"))
        #expect(try error(rude) == (.notJoined, nil, .string("early")))

        _ = try steady.join("sturdy", name: "Steady")
        steady.send(.configure(RoomSettings(focus: 60, shortBreak: 60, longBreak: 60, longBreakEvery: 4,
                                            autoStart: false)))
        steady.send(.start)
        _ = try rude.join("sturdy", name: "Rude")

        rude.sendRaw("this is not json")
        #expect(try error(rude).0 == .badJSON)
        rude.sendRaw(#"{"type":"dance"}"#)
        #expect(try error(rude).0 == .unknownType)
        rude.sendRaw(#"{"type":"extend","seconds":"lots","ref":7}"#)
        #expect(try error(rude) == (.badRequest, "seconds", .number(7)))
        rude.sendRaw(String(repeating: "[", count: 200))
        #expect(try error(rude).0 == .badJSON)
        rude.sendBinary([0, 1, 2, 3])
        #expect(try error(rude).0 == .binaryUnsupported)
        rude.sendRaw(#"{"type":"task","text":""# + String(repeating: "x", count: 20_000) + #""}"#)
        #expect(try error(rude).0 == .tooLarge)
        rude.send(.join(room: "other", name: "Rude", token: nil))
        #expect(try error(rude).0 == .alreadyJoined)
        rude.send(.extend(seconds: 100_000))
        #expect(try error(rude) == (.badRequest, "seconds", nil))
        rude.send(.task(text: "\u{202E}evil"))
        #expect(try error(rude) == (.badRequest, "text", nil))
        rude.send(.resume)
        #expect(try error(rude).0 == .invalidState)

        // The connection still works, and the room kept ticking for everyone.
        rude.send(.ping, ref: .number(42))
        _ = try rude.expect("pong") { if case .pong(_, .number(42)?) = $0 { return true }; return nil }
        let tick = try steady.expect("tick") { if case .tick(let t) = $0 { return t }; return nil }
        #expect(tick.phase == .focus && tick.remainingMs % 1000 == 0)
    }

    @Test func badJoinsAreRefusedWithTheirField() throws {
        defer { shutDown() }
        let peer = try Peer(client, port: server.port)
        for (room, name, field) in [("bad room!", "Ana", "room"), ("", "Ana", "room"),
                                    (String(repeating: "r", count: 65), "Ana", "room"),
                                    ("fine", "   ", "name"), ("fine", String(repeating: "n", count: 41), "name"),
                                    ("fine", "a\u{0007}b", "name")] {
            peer.send(.join(room: room, name: name, token: nil))
            let (code, gotField) = try peer.expect("error") { message -> (ErrorCode, String?)? in
                if case let .error(code, _, field, _, _) = message { return (code, field) }
                return nil
            }
            #expect(code == .badRequest && gotField == field, "join(\(room.prefix(10)), \(name.prefix(10)))")
        }
        let (_, room) = try peer.join("fine", name: "  Ana  ")
        #expect(room.members.map(\.name) == ["Ana"])
    }

    @Test func httpServesHealthAndThePage() throws {
        defer { shutDown() }
        let health = try httpGet(port: server.port, path: "/healthz")
        #expect(health.status == 200 && health.body == "ok\n")
        let page = try httpGet(port: server.port, path: "/")
        #expect(page.status == 200 && page.body.contains("<title>Pomodoro</title>"))
        #expect(try httpGet(port: server.port, path: "/no-such-file.txt").status == 404)
        // Nothing outside the web folder is reachable, however the path is spelled.
        for path in ["/../../../../etc/passwd", "/%2e%2e/%2e%2e/%2e%2e/etc/passwd", "/..%2f..%2f..%2fetc/passwd",
                     "//etc/passwd", "/./../Package.swift", "/r/../../Package.swift"] {
            let response = try httpGet(port: server.port, path: path)
            #expect([403, 404].contains(response.status) || (response.status == 200 && response.body == page.body),
                    "\(path) answered \(response.status)")
            #expect(!response.body.contains("root:") && !response.body.contains("PackageDescription"), "\(path)")
        }
        let invite = try httpGet(port: server.port, path: "/r/team-alpha")
        #expect(invite.status == 200 && invite.body == page.body, "an invite link gets the page")
    }

    @Test func onlyTheWebSocketPathUpgrades() throws {
        defer { shutDown() }
        let inbox = Inbox()
        client.connect(host: "127.0.0.1", port: server.port, path: "/elsewhere") { inbox.add($0) }
        let event = try #require(inbox.next(timeout: 5))
        guard case .failed = event else {
            Issue.record("an upgrade on /elsewhere was accepted: \(event)")
            return
        }
        _ = try Peer(client, port: server.port, path: "/ws")
    }

    @Test func shutdownClosesEveryConnectionWithServiceRestart() throws {
        let ana = try Peer(client, port: server.port)
        let bo = try Peer(client, port: server.port)
        _ = try ana.join("closing", name: "Ana")
        server.stop()
        #expect(try ana.expectClose() == 1012)
        #expect(try bo.expectClose() == 1012)
        client.stop()
        client.waitUntilFinished()
    }
}
