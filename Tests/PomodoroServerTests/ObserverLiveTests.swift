import PomodoroCore
import PomodoroNet
import PomodoroProtocol
import PomodoroServer
import PomodoroTestSupport
import Testing

/// `observe` against the real server, over real sockets.
@Suite(.onOwnThreads, .timeLimit(.minutes(TestTime.minutes(1))))
struct ObserverLiveTests {
    let client: WebSocketClient

    init() throws {
        client = try WebSocketClient()
        client.start()
    }

    func finish(_ server: LiveServer) {
        server.stop()
        client.stop()
        client.waitUntilFinished()
    }

    func error(_ peer: Peer) throws -> (ErrorCode, String?) {
        try peer.expect("error") { if case let .error(code, _, field, _, _) = $0 { return (code, field) }; return nil }
    }

    func observing(_ peer: Peer) throws -> SnapshotPayload {
        try peer.expect("observing") { if case let .observing(room, _, _) = $0 { return room }; return nil }
    }

    @Test func unknownLockedAndControlsRefusedAndTheMembersSeeNothing() throws {
        let server = try LiveServer()
        defer { finish(server) }
        let watcher = try Peer(client, port: server.port)
        watcher.send(.observe(room: "nobody"), ref: .string("o"))
        #expect(try error(watcher) == (.notFound, "room"))

        let owner = try Peer(client, port: server.port)
        owner.send(.join(room: "vault", name: "Owner", token: nil, passcode: "open sesame"))
        let me = try owner.expect("welcome") { if case let .welcome(you, _, _, _, _) = $0 { return you.id }; return nil }
        /// Anything the owner hears about someone else, or the reply it waits for.
        func heard(_ message: ServerMessage, reply: (ServerMessage) -> String?) -> String? {
            switch message {
            case .event(_, .memberJoined(me, _), _), .event(_, .hostChanged(me), _), .event(_, .control, _): nil
            case .event(_, let event, _): "event \(event.kind)"
            default: reply(message)
            }
        }
        watcher.send(.observe(room: "vault"))
        #expect(try error(watcher) == (.badPasscode, "passcode"))
        watcher.send(.observe(room: "vault", passcode: "open sesame"))
        let room = try observing(watcher)
        #expect(room.members.map(\.name) == ["Owner"] && room.memberCount == 1)

        watcher.send(.start, ref: .number(1))
        #expect(try error(watcher).0 == .observer)
        owner.send(.start, ref: .number(2))
        // The observer hears the member's start; the owner's next message is the reply to its own start.
        _ = try watcher.expect("event control") { if case .event(_, .control(.start, _, _), _) = $0 { return true }; return nil }
        _ = try watcher.nextTick()
        let reply = try owner.expect("ok") { message in
            heard(message) { if case .ok(let command, _, _) = $0 { command } else { nil } }
        }
        #expect(reply == "start")
        watcher.close()
        _ = try watcher.expectClose()
        owner.send(.ping, ref: .number(3))
        let next = try owner.expect("pong") { message in
            heard(message) { if case .pong = $0 { "pong" } else { nil } }
        }
        #expect(next == "pong")
    }

    @Test func observersCountAgainstTheConnectionsOfTheirAddress() throws {
        let server = try LiveServer { $0.limits.maxConnectionsPerAddress = 2 }
        defer { finish(server) }
        let member = try Peer(client, port: server.port)
        _ = try member.join("team", name: "Ada")
        let watcher = try Peer(client, port: server.port)
        watcher.send(.observe(room: "team"))
        _ = try observing(watcher)
        let third = try Peer(client, port: server.port)
        #expect(try third.expectClose() == 1008)
    }
}
