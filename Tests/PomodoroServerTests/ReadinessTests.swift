@testable import PomodoroServer
import PomodoroCore
import PomodoroNet
import PomodoroProtocol
import PomodoroTestSupport
import Testing

/// `/readyz` next to `/healthz`: alive is not the same as ready. Each reason to take a server out of rotation
/// (its database, its cluster's Redis, a shutdown under way) turns `/readyz` to 503 with that reason, and
/// `/healthz` says only what it said before. (The database's part is tried on a real PostgreSQL that stops:
/// `LivePostgresTests.aDatabaseOutageIsWaitedOut`.)
@Suite struct ReadinessTests {
    static func get(_ path: String, from t: TestHub) throws -> (status: Int, text: String) {
        let response = RecordedResponse()
        t.hub.receivedHTTP(HTTPRequest(method: .get, path: path, peer: "127.0.0.1"), responder: response)
        t.settle()
        let answer = try #require(response.response, "\(path) was not answered")
        return (answer.status, String(decoding: answer.body, as: UTF8.self))
    }

    @Test func readyWithoutAStoreUntilTheShutdownBegins() throws {
        let t = TestHub()
        #expect(try Self.get("/readyz", from: t) == (200, "ready\n"))
        #expect(!t.transport.upgradesRefused)
        t.hub.beginDraining()
        #expect(try Self.get("/readyz", from: t) == (503, "not ready: shutting down\n"))
        #expect(try Self.get("/healthz", from: t) == (200, "ok\n"), "a draining server is still alive")
        #expect(t.transport.upgradesRefused, "no new WebSocket once the shutdown has begun")
    }

    @Test func aClusterNodeIsNotReadyWhileItsRedisCannotBeRead() throws {
        let store = try HeldStore()
        let clock = ManualServerClock()
        let cluster = ManualCluster(store: store.store, now: { clock.now().monotonic })
        let t = TestHub(clock: clock, store: store, cluster: cluster)
        #expect(try Self.get("/readyz", from: t) == (200, "ready\n"))
        cluster.redisDown = "Connection refused"
        #expect(try Self.get("/readyz", from: t) == (503, "not ready: Redis unavailable: Connection refused\n"))
        cluster.redisDown = nil
        #expect(try Self.get("/readyz", from: t) == (200, "ready\n"))
        t.hub.beginDraining()
        #expect(try Self.get("/readyz", from: t).status == 503)
    }

    /// Through the real transport: `/readyz` is one of the server's dynamic paths, and `shutdown()` begins
    /// by turning it to 503, and a WebSocket upgrade with it (a proxy may send that client to another
    /// server: deploy/nginx-cluster.conf), while a member already in stays and the rest is served.
    @Test func theServerAnswersReadyzOverHTTP() throws {
        let server = try PomodoroServer(configuration: ServerConfiguration(port: 0, webRoot: nil))
        server.start()
        defer { server.shutdown(); server.waitUntilFinished() }
        let port = server.port, host = "127.0.0.1:\(server.port)"
        let ready = try httpGet(port: port, path: "/readyz")
        #expect(ready.status == 200 && ready.body == "ready\n")
        #expect(try RawWebSocket.handshakeStatus(port: port, host: host, origin: nil) == 101)
        let client = try WebSocketClient()
        client.start()
        defer { client.stop() }
        let ada = try Peer(client, port: port)
        _ = try ada.join("drain-room", name: "Ada")

        server.beginDraining()
        let draining = try httpGet(port: port, path: "/readyz")
        #expect(draining.status == 503 && draining.body == "not ready: shutting down\n")
        #expect(try httpGet(port: port, path: "/healthz").status == 200)
        #expect(try httpGet(port: port, path: "/api/rooms/drain-room").status == 200)
        #expect(try RawWebSocket.handshakeStatus(port: port, host: host, origin: nil) == 503)
        // The client says what the refusal was (`pomo` shows it as a restart, not as a server of another kind).
        let failure = Inbox()
        _ = client.connect(host: "127.0.0.1", port: port) { event in failure.add(event) }
        let event = failure.next(timeout: 10)
        guard case .failed(let why)? = event else { Issue.record("no failure but \(String(describing: event))"); return }
        #expect(why.contains("answered 503"), "\(why)")
        ada.send(.ping, ref: .number(1))
        _ = try ada.expect("pong") { if case .pong(_, .number(1)?) = $0 { true } else { nil } }
    }
}
