import Foundation
import Glibc
import PomodoroCore
import PomodoroNet
import PomodoroProtocol
import PomodoroServer
import PomodoroTestSupport
import Testing

/// Each limit, hit on purpose against the real server: a clear error or close, and the server goes on.
@Suite(.onOwnThreads, .timeLimit(.minutes(TestTime.minutes(1))))
struct LimitTests {
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

    func errorCode(_ peer: Peer) throws -> ErrorCode {
        try peer.expect("error") { if case let .error(code, _, _, _, _) = $0 { return code }; return nil }
    }

    @Test func aForeignOriginIsRefusedAtTheHandshake() throws {
        let server = try LiveServer { $0.allowedOrigins = ["http://focus.example.com"] }
        defer { finish(server) }
        let inbox = Inbox()
        client.connect(host: "127.0.0.1", port: server.port, origin: "http://evil.example") { inbox.add($0) }
        guard case .failed? = inbox.next(timeout: 5) else {
            Issue.record("a page from another origin was let in")
            return
        }
        // The allowed origin gets in, and so does a client that sends no Origin (not a browser).
        let allowed = Inbox()
        client.connect(host: "127.0.0.1", port: server.port, origin: "http://focus.example.com") { allowed.add($0) }
        #expect(allowed.next(timeout: 5) == .opened)
        _ = try Peer(client, port: server.port)
    }

    @Test func withoutConfiguredOriginsThePageMustComeFromTheHostItTalksTo() throws {
        let server = try LiveServer()
        defer { finish(server) }
        let port = server.port
        #expect(try RawWebSocket.handshakeStatus(port: port, host: "127.0.0.1:\(port)", origin: "http://127.0.0.1:\(port)") == 101)
        #expect(try RawWebSocket.handshakeStatus(port: port, host: "127.0.0.1:\(port)", origin: "http://evil.example") == 403)
        #expect(try RawWebSocket.handshakeStatus(port: port, host: "127.0.0.1:\(port)", origin: "null") == 403)
        #expect(try RawWebSocket.handshakeStatus(port: port, host: "127.0.0.1:\(port)", origin: nil) == 101)
        // What the default cannot tell apart (docs/SECURITY.md): a page on a name rebound to this server.
        #expect(try RawWebSocket.handshakeStatus(port: port, host: "evil.example:\(port)", origin: "http://evil.example:\(port)") == 101)
    }

    @Test func configuredOriginsAreTheOnlyOnesAndRebindingGetsNoFurther() throws {
        let server = try LiveServer { $0.allowedOrigins = ["https://focus.example.com"] }
        defer { finish(server) }
        let port = server.port
        // DNS rebinding: evil.example now resolves to this server; Host and Origin agree, and both are foreign.
        #expect(try RawWebSocket.handshakeStatus(port: port, host: "evil.example:\(port)", origin: "http://evil.example:\(port)") == 403)
        #expect(try RawWebSocket.handshakeStatus(port: port, host: "127.0.0.1:\(port)", origin: "http://127.0.0.1:\(port)") == 403)
        // The scheme counts: the page is served over https, an http page of the same name is another origin.
        #expect(try RawWebSocket.handshakeStatus(port: port, host: "focus.example.com", origin: "http://focus.example.com") == 403)
        #expect(try RawWebSocket.handshakeStatus(port: port, host: "focus.example.com", origin: "https://focus.example.com") == 101)
        #expect(try RawWebSocket.handshakeStatus(port: port, host: "127.0.0.1:\(port)", origin: "https://focus.example.com") == 101)
        #expect(try RawWebSocket.handshakeStatus(port: port, host: "127.0.0.1:\(port)", origin: nil) == 101)
    }

    @Test func oneAddressHoldsAtMostItsConnections() throws {
        let server = try LiveServer { $0.limits.maxConnectionsPerAddress = 3 }
        defer { finish(server) }
        let first = try (0..<3).map { _ in try Peer(client, port: server.port) }
        let fourth = try Peer(client, port: server.port)
        #expect(try fourth.expectClose() == 1008)
        // The ones already in are unaffected, and a place frees up when one leaves.
        first[0].send(.ping, ref: .number(1))
        _ = try first[0].expect("pong") { if case .pong = $0 { return true }; return nil }
        first[1].close()
        _ = try first[1].expectClose()
        let again = try Peer(client, port: server.port)
        again.send(.ping)
        _ = try again.expect("pong") { if case .pong = $0 { return true }; return nil }
    }

    @Test func aFloodIsRateLimitedThenClosed() throws {
        let server = try LiveServer {
            $0.limits.messagesPerSecond = 2
            $0.limits.messageBurst = 5
            $0.limits.rateLimitStrikes = 20
        }
        defer { finish(server) }
        let flooder = try Peer(client, port: server.port)
        let bystander = try Peer(client, port: server.port)
        _ = try bystander.join("calm", name: "Calm")
        let sent = Date()
        for i in 0..<10 { flooder.send(.ping, ref: .number(Int64(i))) }
        var pongs = 0, limited = 0
        for _ in 0..<10 {
            switch try flooder.next() {
            case .pong: pongs += 1
            case .error(.rateLimited, _, _, _, _): limited += 1
            case let other: Issue.record("unexpected \(other)")
            }
        }
        // The burst goes through, and what the rate refilled (one every 500 ms) while the ten were read: one
        // more at most here, more only on a machine that took longer (a sanitizer beside the whole suite).
        let refilled = max(1, Int(2 * Date().timeIntervalSince(sent)))
        #expect(pongs >= 5 && pongs <= 5 + refilled, "the burst goes through: \(pongs) pongs")
        #expect(limited == 10 - pongs)
        for i in 0..<40 { flooder.send(.ping, ref: .number(Int64(i))) }
        #expect(try flooder.expectClose() == 1008)
        // Someone else on the same server is untouched.
        bystander.send(.task(text: "still here"), ref: .number(9))
        _ = try bystander.expect("ok") { if case .ok(_, _, .number(9)?) = $0 { return true }; return nil }
    }

    @Test func roomCreationIsBounded() throws {
        let server = try LiveServer {
            $0.limits.maxRooms = 3
            $0.limits.roomsCreatedPerAddressPerMinute = 2
        }
        defer { finish(server) }
        let peers = try (0..<4).map { _ in try Peer(client, port: server.port) }
        _ = try peers[0].join("one", name: "A")
        _ = try peers[1].join("two", name: "B")
        peers[2].send(.join(room: "three", name: "C", token: nil), ref: .string("j"))
        let refused = try peers[2].expect("error") { message -> (ErrorCode, Ref?)? in
            if case let .error(code, _, _, ref, _) = message { return (code, ref) }
            return nil
        }
        #expect(refused.0 == .roomLimit && refused.1 == .string("j"))
        // Joining a room that exists is not creating one.
        _ = try peers[2].join("one", name: "C")
    }

    @Test func aHandshakeThatNeverFinishesIsCut() throws {
        let server = try LiveServer { $0.limits.handshakeTimeoutSeconds = 1 }
        defer { finish(server) }
        // Half a request, then silence (slow-loris): the server hangs up once the handshake time is over,
        // well before the receive timeout of 5 s set on this socket.
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var timeout = timeval(tv_sec: TestTime.seconds(5), tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(server.port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        try #require(connected == 0)
        let partial = Array("GET /ws HTTP/1.1\r\nHost: 127.0.0.1\r\n".utf8)
        _ = partial.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        var byte: UInt8 = 0
        let n = read(fd, &byte, 1)
        #expect(n == 0, "the server closed the half-open connection (read gave \(n), errno \(errno))")
        #expect(try httpGet(port: server.port, path: "/healthz").status == 200)
    }

    @Test func aPeerThatAnswersNoPingIsHungUpOn() throws {
        let server = try LiveServer {
            $0.limits.pingAfterSeconds = 1
            $0.limits.hangUpAfterSeconds = 2
        }
        defer { finish(server) }
        let silent = try RawWebSocket(port: server.port)
        var pings = 0
        // Read pings without answering until the server gives up on this peer.
        while let (opcode, _) = silent.readFrame() {
            if opcode == 9 { pings += 1 }
        }
        #expect(pings >= 1, "the server pinged the silent peer")
        #expect(silent.closedByPeer, "the server hung up (rather than the test's read timing out)")
        // A peer that answers (our client answers pings by itself) stays.
        let lively = try Peer(client, port: server.port)
        _ = try lively.join("awake", name: "Awake")
        lively.send(.ping, ref: .number(1))
        _ = try lively.expect("pong", timeout: 5) { if case .pong = $0 { return true }; return nil }
    }

    @Test func aWebRootLinkToOutsideIsRefusedAtStart() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("pomodoro-web-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: root) }
        try Data("<!doctype html>".utf8).write(to: root.appendingPathComponent("index.html"))
        try FileManager.default.createSymbolicLink(atPath: root.appendingPathComponent("inside.html").path,
                                                   withDestinationPath: "index.html")
        // A link that stays inside is fine.
        _ = try PomodoroServer(configuration: ServerConfiguration(host: "127.0.0.1", port: 0, webRoot: root.path))
        try FileManager.default.createSymbolicLink(atPath: root.appendingPathComponent("passwd").path,
                                                   withDestinationPath: "/etc/passwd")
        #expect(throws: NetError.webRootLinksOutside(root.path + "/passwd")) {
            _ = try PomodoroServer(configuration: ServerConfiguration(host: "127.0.0.1", port: 0, webRoot: root.path))
        }
    }

    @Test func aFullRoomSaysSo() throws {
        let server = try LiveServer { $0.roomPolicy.maxMembers = 2 }
        defer { finish(server) }
        let peers = try (0..<3).map { _ in try Peer(client, port: server.port) }
        _ = try peers[0].join("small", name: "A")
        _ = try peers[1].join("small", name: "B")
        peers[2].send(.join(room: "small", name: "C", token: nil))
        #expect(try errorCode(peers[2]) == .roomFull)
    }

    /// One character of 16 KB (a letter under 8,150 combining accents) fits in a message; twenty members with
    /// such names made every `state` too big for a member's queue. Refused as a name and as a task.
    @Test func aNameOfOneCharacterAndSixteenKilobytesIsRefused() throws {
        let server = try LiveServer()
        defer { finish(server) }
        let heavy = "a" + String(repeating: "\u{301}", count: 8150)
        #expect(heavy.count == 1 && heavy.utf8.count > 16_000)
        let peer = try Peer(client, port: server.port)
        peer.send(.join(room: "heavy", name: heavy, token: nil))
        let refusal = try peer.expect("error") { if case let .error(code, _, field, _, _) = $0 { (code, field) } else { nil } }
        #expect(refusal == (.badRequest, "name"))
        _ = try peer.join("heavy", name: "Ada")
        peer.send(.task(text: heavy))
        let task = try peer.expect("error") { if case let .error(code, _, field, _, _) = $0 { (code, field) } else { nil } }
        #expect(task == (.badRequest, "text"))
    }
}
