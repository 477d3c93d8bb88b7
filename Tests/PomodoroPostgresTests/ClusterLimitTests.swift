import Foundation
import PomodoroNet
import PomodoroProtocol
import PomodoroTestSupport
import Testing

/// Per-address limits across `pomodoro-server` processes on one real Redis and PostgreSQL, all from one
/// address (127.0.0.1), spread over the nodes as an attacker picking its node through the proxy would: the
/// cluster allows what one server allows, not that times the nodes.
@Suite(.onOwnThreads, .timeLimit(.minutes(TestTime.minutes(2))))
struct ClusterLimitTests {
    let client: WebSocketClient

    init() throws {
        client = try WebSocketClient()
        client.start()
    }

    func finish() {
        client.stop()
        client.waitUntilFinished()
    }

    /// The answer to the frame sent with `ref`: nil for `ok`/a report, else its error code.
    static func outcome(of ref: String) -> (ServerMessage) -> ErrorCode?? {
        { message in
            switch message {
            case .error(let code, _, _, .string(ref)?, _): .some(code)
            case .stats(_, .string(ref)?), .ok(_, _, .string(ref)?): .some(nil)
            default: nil
            }
        }
    }

    /// Whether a new connection to `port` is admitted: it answers a ping, or is closed with 1008.
    func admitted(port: Int) throws -> (Bool, Peer) {
        let peer = try Peer(client, port: port)
        peer.send(.ping, ref: .string("p"))
        while let event = peer.inbox.next(timeout: 5) {
            switch event {
            case .text(let bytes):
                if case .pong = try WireCodec.decodeServerMessage(bytes) { return (true, peer) }
            case .closed(let code, _):
                #expect(code == 1008)
                return (false, peer)
            default: continue
            }
        }
        throw LiveTestFailure(description: "neither a pong nor a close")
    }

    /// Wrong passcodes for a locked room's stats, six on each of three nodes: five are checked in all, the
    /// others refused `rate_limited`, as on one server.
    @Test func wrongPasscodesSpreadOverNodesAreRefusedAfterFive() async throws {
        defer { finish() }
        let redis = try RedisTestServer()
        defer { redis.stop() }
        let database = try await PostgresTestServer.makeDatabase()
        let (a, aPort) = try ClusterProcessTests.node("a", redis: redis.url, database: database)
        defer { _ = a.stop() }
        let (b, bPort) = try ClusterProcessTests.node("b", redis: redis.url, database: database)
        defer { _ = b.stop() }
        let (c, cPort) = try ClusterProcessTests.node("c", redis: redis.url, database: database)
        defer { _ = c.stop() }

        let owner = try Peer(client, port: aPort)
        owner.send(.join(room: "vault", name: "Owner", token: nil, passcode: "open sesame"))
        _ = try owner.expect("welcome", timeout: 30) { if case .welcome = $0 { true } else { nil } }
        let guessers = try [aPort, bPort, cPort].map { try Peer(client, port: $0) }
        // The lock is in the store before anyone guesses: a node that does not run the room reads it there.
        let deadline = TestTime.deadline(10)
        var locked = false
        while !locked && Date() < deadline {
            guessers[2].send(.stats(room: "vault", days: nil, tz: nil, passcode: nil), ref: .string("look"))
            locked = try guessers[2].expect("look", Self.outcome(of: "look")) == .badPasscode
        }
        #expect(locked)

        var codes: [ErrorCode?] = []
        for round in 0..<6 {
            for (index, guesser) in guessers.enumerated() {
                let ref = "g\(round)-\(index)"
                guesser.send(.stats(room: "vault", days: nil, tz: nil, passcode: "wrong-\(ref)"), ref: .string(ref))
                codes.append(try guesser.expect(ref, timeout: 30, Self.outcome(of: ref)))
            }
        }
        #expect(codes.filter { $0 == .badPasscode }.count == 5, "\(codes)")
        #expect(codes.filter { $0 == .rateLimited }.count == 13, "\(codes)")
        // The right passcode, from the same address, waits for the minute too: the limit is the address's.
        guessers[1].send(.stats(room: "vault", days: nil, tz: nil, passcode: "open sesame"), ref: .string("right"))
        #expect(try guessers[1].expect("right", timeout: 30, Self.outcome(of: "right")) == .rateLimited)
    }

    /// New rooms from one address, two on each of three nodes, with three a minute allowed: three are made.
    @Test func roomsMadeOverNodesCountTogether() async throws {
        defer { finish() }
        let redis = try RedisTestServer()
        defer { redis.stop() }
        let database = try await PostgresTestServer.makeDatabase()
        let limit = ["--rooms-per-address-per-minute", "3"]
        let (a, aPort) = try ClusterProcessTests.node("a", redis: redis.url, database: database, limit)
        defer { _ = a.stop() }
        let (b, bPort) = try ClusterProcessTests.node("b", redis: redis.url, database: database, limit)
        defer { _ = b.stop() }
        let (c, cPort) = try ClusterProcessTests.node("c", redis: redis.url, database: database, limit)
        defer { _ = c.stop() }

        var made = 0, refused: [ErrorCode] = []
        for (index, port) in [aPort, bPort, cPort, aPort, bPort, cPort].enumerated() {
            let peer = try Peer(client, port: port)
            peer.send(.join(room: "room-\(index)", name: "Maker", token: nil), ref: .string("j"))
            let answer = try peer.expect("an answer to the join", timeout: 15) { message -> ErrorCode?? in
                switch message {
                case .welcome: .some(nil)
                case .error(let code, _, _, _, _): .some(code)
                default: nil
                }
            }
            if let code = answer { refused.append(code) } else { made += 1 }
        }
        #expect(made == 3)
        #expect(refused == [.roomLimit, .roomLimit, .roomLimit])
    }

    /// Connections from one address over three nodes, four allowed: the fifth is closed with 1008 wherever
    /// it lands; a place frees up when one closes, and when a node holding some dies.
    @Test func connectionsOverNodesCountTogetherAndADeadNodesLapse() async throws {
        defer { finish() }
        let redis = try RedisTestServer()
        defer { redis.stop() }
        let database = try await PostgresTestServer.makeDatabase()
        let limit = ["--max-connections-per-address", "4"]
        let (a, aPort) = try ClusterProcessTests.node("a", redis: redis.url, database: database, limit)
        defer { a.kill() }
        let (b, bPort) = try ClusterProcessTests.node("b", redis: redis.url, database: database, limit)
        defer { _ = b.stop() }
        let (c, cPort) = try ClusterProcessTests.node("c", redis: redis.url, database: database, limit)
        defer { _ = c.stop() }

        var held: [Peer] = []
        for port in [aPort, aPort, bPort, bPort] {
            let (ok, peer) = try admitted(port: port)
            #expect(ok)
            held.append(peer)
        }
        #expect(try !admitted(port: cPort).0, "a fifth connection, on a node holding none")
        #expect(try !admitted(port: aPort).0)

        // One closes on b: its place is free on c.
        held[2].close()
        _ = try held[2].expectClose()
        var freed = false
        for _ in 0..<20 where !freed {
            let (ok, peer) = try admitted(port: cPort)
            if ok { freed = true; held.append(peer) }
        }
        #expect(freed)
        #expect(try !admitted(port: bPort).0)

        // a dies holding two: within a few seconds (its beat is 5 s old) they no longer count.
        a.kill()
        _ = try? a.wait(timeout: 10)
        let killed = Date()
        var back = 0
        while back < 2 && Date().timeIntervalSince(killed) < 30 {
            let (ok, peer) = try admitted(port: back == 0 ? bPort : cPort)
            if ok { back += 1; held.append(peer) } else { try await Task.sleep(for: .milliseconds(500)) }
        }
        print("cluster limits: the dead node's two places came free \(String(format: "%.1f", Date().timeIntervalSince(killed))) s after its kill")
        #expect(back == 2, "the dead node's two places came free")
        #expect(try !admitted(port: cPort).0, "and no more than those")
    }
}
