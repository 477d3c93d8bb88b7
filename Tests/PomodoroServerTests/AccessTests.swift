import PomodoroCore
import PomodoroNet
import PomodoroProtocol
import PomodoroServer
import PomodoroTestSupport
import Testing

/// Locked rooms and host-only controls against the real server.
@Suite(.onOwnThreads, .timeLimit(.minutes(TestTime.minutes(1))))
struct AccessTests {
    let server: LiveServer
    let client: WebSocketClient

    init() throws {
        server = try LiveServer()
        client = try WebSocketClient()
        client.start()
    }

    func finish() {
        server.stop()
        client.stop()
        client.waitUntilFinished()
    }

    func error(_ peer: Peer) throws -> (ErrorCode, String?) {
        // Passcode checks are deliberately slow (PBKDF2), more so under a sanitizer or on a loaded machine.
        try peer.expect("error", timeout: 20) { if case let .error(code, _, field, _, _) = $0 { return (code, field) }; return nil }
    }

    @Test func aLockedRoomNeedsItsPasscodeAndRateLimitsWrongOnes() throws {
        defer { finish() }
        let owner = try Peer(client, port: server.port)
        owner.send(.join(room: "vault", name: "Owner", token: nil, passcode: "open sesame"))
        let (you, room) = try owner.expect("welcome", timeout: 20) { message -> (YouPayload, SnapshotPayload)? in
            if case let .welcome(you, room, _, _, _) = message { return (you, room) }
            return nil
        }
        #expect(room.locked && room.host == you.id)

        let guest = try Peer(client, port: server.port)
        guest.send(.join(room: "vault", name: "Guest", token: nil))
        #expect(try error(guest) == (.badPasscode, "passcode"))
        for _ in 0..<5 {
            guest.send(.join(room: "vault", name: "Guest", token: nil, passcode: "guess"))
            #expect(try error(guest) == (.badPasscode, "passcode"))
        }
        // Five wrong guesses a minute from one address, then even the right one waits.
        guest.send(.join(room: "vault", name: "Guest", token: nil, passcode: "open sesame"))
        #expect(try error(guest) == (.rateLimited, "passcode"))

        // The owner's resume token opens the room without the passcode.
        owner.close()
        _ = try owner.expectClose()
        let ownerAgain = try Peer(client, port: server.port)
        let back = try ownerAgain.join("vault", name: "Owner", token: you.token)
        #expect(back.you.id == you.id && back.you.resumed)
    }

    @Test func theRightPasscodeLetsAGuestIn() throws {
        defer { finish() }
        let owner = try Peer(client, port: server.port)
        owner.send(.join(room: "club", name: "Owner", token: nil, passcode: "1234"))
        _ = try owner.expect("welcome") { if case .welcome = $0 { return true }; return nil }
        let guest = try Peer(client, port: server.port)
        guest.send(.join(room: "club", name: "Guest", token: nil, passcode: "1234"))
        let room = try guest.expect("welcome") { if case let .welcome(_, room, _, _, _) = $0 { return room }; return nil }
        #expect(room.members.map(\.name) == ["Owner", "Guest"])
        let short = try Peer(client, port: server.port)
        short.send(.join(room: "tiny-lock", name: "A", token: nil, passcode: "123"))
        #expect(try error(short) == (.badRequest, "passcode"))
    }

    @Test func inHostModeOnlyTheHostPressesTheControls() throws {
        defer { finish() }
        let host = try Peer(client, port: server.port)
        host.send(.join(room: "lecture", name: "Host", token: nil, control: .host))
        let (hostYou, room) = try host.expect("welcome") { message -> (YouPayload, SnapshotPayload)? in
            if case let .welcome(you, room, _, _, _) = message { return (you, room) }
            return nil
        }
        #expect(room.control == .host && room.host == hostYou.id)
        let guest = try Peer(client, port: server.port)
        let (guestYou, _) = try guest.join("lecture", name: "Guest")
        for message: ClientMessage in [.start, .pause, .resume, .skip, .reset, .extend(seconds: 60),
                                       .configure(.standard), .control(mode: .anyone),
                                       .handOff(member: guestYou.id)] {
            guest.send(message)
            #expect(try error(guest).0 == .forbidden, "\(message.type)")
        }
        guest.send(.task(text: "listening"), ref: .number(1))
        _ = try guest.expect("ok") { if case .ok(_, _, .number(1)?) = $0 { return true }; return nil }

        host.send(.handOff(member: guestYou.id))
        let moved = try guest.expect("hostChanged") { message -> String?? in
            if case let .event(_, .hostChanged(member), _) = message { return member }
            return nil
        }
        #expect(moved == guestYou.id)
        guest.send(.start, ref: .number(2))
        _ = try guest.expect("ok") { if case .ok("start", _, .number(2)?) = $0 { return true }; return nil }
        host.send(.pause)
        #expect(try error(host).0 == .forbidden)
    }
}
