import Foundation
import PomodoroNet
import PomodoroProtocol
import PomodoroServer
import PomodoroTestSupport
import Testing

/// TLS on the server itself, with a self-signed certificate made for the test.
@Suite(.onOwnThreads, .timeLimit(.minutes(TestTime.minutes(1))))
struct TLSTests {
    /// Makes a throwaway self-signed certificate and key with the openssl command.
    static func makeCertificate() throws -> (certificate: String, key: String) {
        let folder = FileManager.default.temporaryDirectory
            .appendingPathComponent("pomodoro-tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let certificate = folder.appendingPathComponent("cert.pem").path
        let key = folder.appendingPathComponent("key.pem").path
        let openssl = try ProcessLauncher.run("/usr/bin/openssl",
                                              ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                                               "-subj", "/CN=127.0.0.1", "-keyout", key, "-out", certificate])
        guard openssl.status == 0 else { throw LiveTestFailure(description: "openssl failed: \(openssl.errors)") }
        return (certificate, key)
    }

    @Test func aRoomWorksOverTLS() throws {
        let (certificate, key) = try Self.makeCertificate()
        let server = try LiveServer {
            $0.tlsCertificatePath = certificate
            $0.tlsPrivateKeyPath = key
        }
        let client = try WebSocketClient()
        client.start()
        defer {
            server.stop()
            client.stop()
            client.waitUntilFinished()
        }
        let peer = try Peer(client, port: server.port, security: .tlsAcceptingSelfSigned)
        let (you, room) = try peer.join("secure", name: "Ana")
        #expect(room.members.map(\.id) == [you.id])

        // The same port does not speak plain WebSocket.
        let plain = Inbox()
        client.connect(host: "127.0.0.1", port: server.port) { plain.add($0) }
        guard case .failed? = plain.next(timeout: 5) else {
            Issue.record("a plain connection reached a TLS port")
            return
        }
    }

    @Test func anUnreadableCertificateIsAClearError() throws {
        #expect(throws: NetError.tlsFileUnreadable("/nonexistent/cert.pem")) {
            _ = try PomodoroServer(configuration: ServerConfiguration(
                host: "127.0.0.1", port: 0, webRoot: nil,
                tlsCertificatePath: "/nonexistent/cert.pem", tlsPrivateKeyPath: "/nonexistent/key.pem"))
        }
    }
}
