import Foundation
import PomodoroNet
import PomodoroServer
import PomodoroTestSupport
import Testing

/// Behind a trusted proxy the server counts and serves clients by the address the proxy forwards; from anyone
/// else the forwarding headers change nothing. Hand-written handshakes over loopback (the test is the proxy).
@Suite(.onOwnThreads, .timeLimit(.minutes(TestTime.minutes(1))))
struct ForwardedAddressTests {
    static let loopbackProxy = TrustedProxies([AddressRange("127.0.0.1/32")!])

    /// True if the session answers a ping, false if the server closed it with 1008.
    private func admitted(_ socket: RawWebSocket) throws -> Bool {
        try socket.send(opcode: 1, Array(#"{"type":"ping","ref":"p"}"#.utf8))
        while let (opcode, payload) = socket.readFrame() {
            if opcode == 8 { return payload.count >= 2 && (UInt16(payload[0]) << 8 | UInt16(payload[1])) != 1008 }
            if opcode == 1, String(decoding: payload, as: UTF8.self).contains("pong") { return true }
        }
        return false
    }

    @Test func aTrustedProxysClientsAreCountedApart() throws {
        let server = try LiveServer {
            $0.trustedProxies = Self.loopbackProxy
            $0.limits.maxConnectionsPerAddress = 2
        }
        defer { server.stop() }
        let first = "X-Forwarded-For: 198.51.100.7\r\n"
        let a = try (0..<3).map { _ in try RawWebSocket(port: server.port, headers: first) }
        #expect(try admitted(a[0]) && admitted(a[1]))
        #expect(try !admitted(a[2]), "the third from 198.51.100.7 is one too many")
        // Another client of the same proxy, while 198.51.100.7 holds its two: what it forged on the left and
        // the trusted hop on the right are passed over.
        let b = try RawWebSocket(port: server.port, headers: "X-Forwarded-For: 198.51.100.7, 203.0.113.9, 127.0.0.1\r\n")
        #expect(try admitted(b))
        let c = try RawWebSocket(port: server.port, headers: "Forwarded: for=\"[2001:db8::7]:4711\";proto=https\r\n")
        #expect(try admitted(c))
        // A header that does not parse counts the connection as the proxy's own.
        let d = try (0..<3).map { _ in try RawWebSocket(port: server.port, headers: "X-Forwarded-For: unknown\r\n") }
        #expect(try admitted(d[0]) && admitted(d[1]) && !admitted(d[2]))
    }

    @Test func anUntrustedPeersForwardingHeadersChangeNothing() throws {
        let server = try LiveServer {
            $0.trustedProxies = TrustedProxies([AddressRange("10.0.0.0/8")!])
            $0.limits.maxConnectionsPerAddress = 2
        }
        defer { server.stop() }
        let forged = ["X-Forwarded-For: 198.51.100.1\r\n", "X-Forwarded-For: 198.51.100.2\r\n",
                      "Forwarded: for=198.51.100.3\r\n"]
        let sockets = try forged.map { try RawWebSocket(port: server.port, headers: $0) }
        #expect(try admitted(sockets[0]) && admitted(sockets[1]))
        #expect(try !admitted(sockets[2]), "all three are 127.0.0.1, whatever they claim")
    }

    @Test func httpRequestsCarryTheClientAddress() throws {
        let trusted = try HTTPTestServer(trustedProxies: Self.loopbackProxy) { _ in .answer(HTTPResponse(status: 204, body: [])) }
        defer { trusted.stop() }
        let cases = [("X-Forwarded-For: 1.1.1.1, 198.51.100.7\r\n", "198.51.100.7"),
                     ("Forwarded: for=\"[2001:db8::7]\"\r\n", "2001:db8::7"),
                     ("X-Forwarded-For: nonsense\r\n", "127.0.0.1"),
                     ("", "127.0.0.1")]
        for (headers, peer) in cases {
            _ = try RawHTTP(port: trusted.port).exchange("GET /api/x HTTP/1.1\r\nHost: x\r\n\(headers)\r\n")
            #expect(try #require(trusted.delegate.next()).request.peer == peer, "\(headers)")
        }

        let untrusted = try HTTPTestServer { _ in .answer(HTTPResponse(status: 204, body: [])) }
        defer { untrusted.stop() }
        _ = try RawHTTP(port: untrusted.port).exchange("GET /api/x HTTP/1.1\r\nHost: x\r\nX-Forwarded-For: 198.51.100.7\r\n\r\n")
        #expect(try #require(untrusted.delegate.next()).request.peer == "127.0.0.1")
    }
}
