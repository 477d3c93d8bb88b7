import Foundation
import Glibc
import PomodoroCluster
import PomodoroNet
import PomodoroProtocol
import PomodoroTestSupport
import Testing

/// The bus and the relay under attack, with `pomodoro-server` processes on a real Redis that asks for a
/// password and a real PostgreSQL: what a member relayed through a node that does not run its room can make
/// that node publish, what `/api/cluster` tells a stranger, whether epoch keys expire, and what a node says
/// when Redis refuses its password (docs/SECURITY.md, "Redis").
@Suite(.onOwnThreads, .timeLimit(.minutes(TestTime.minutes(3))))
struct ClusterRelayAttackTests {
    let client: WebSocketClient

    init() throws {
        client = try WebSocketClient()
        client.start()
    }

    func finish() {
        client.stop()
        client.waitUntilFinished()
    }

    static let password = "s3cret-bus"

    static func node(_ name: String, redis: String, database: String, _ more: [String] = [],
                     errors: ProcessLauncher.Stream = .discard) throws -> (LaunchedProcess, Int) {
        let process = try ProcessLauncher.start(ProcessLauncher.server, [
            "--host", "127.0.0.1", "--port", "0", "--db", database, "--cluster", redis, "--node-id", name,
            "--log-level", "warning",
        ] + more, errors: .capture)
        do {
            return (process, try process.waitUntilServing())
        } catch {
            throw LaunchFailure("node \(name) did not start: \(error); \(process.stop(grace: 1)?.errors ?? "")")
        }
    }

    /// Two nodes on a Redis with a password; Ada's join makes a the owner of `room`, Bob joins it through b.
    struct Pair {
        let redis: RedisTestServer
        let a: LaunchedProcess, aPort: Int
        let b: LaunchedProcess, bPort: Int
        let ada: Peer, bob: Peer

        func stop() {
            a.kill()
            b.kill()
            redis.stop()
        }
    }

    func pair(_ room: String, bArguments: [String] = []) async throws -> Pair {
        let redis = try RedisTestServer(password: Self.password)
        let database = try await PostgresTestServer.makeDatabase()
        let (a, aPort) = try Self.node("a", redis: redis.url, database: database)
        let (b, bPort) = try Self.node("b", redis: redis.url, database: database, bArguments)
        let ada = try Peer(client, port: aPort)
        _ = try ada.join(room, name: "Ada")
        let bob = try Peer(client, port: bPort)
        _ = try bob.join(room, name: "Bob")
        return Pair(redis: redis, a: a, aPort: aPort, b: b, bPort: bPort, ada: ada, bob: bob)
    }

    /// A subscriber on a node's bus channel, as anyone on Redis could be: what was published there.
    final class Listener {
        let connection: RedisConnection

        init(_ redis: RedisTestServer, node: String) throws {
            connection = try RedisConnection(try RedisAddress(parsing: redis.url), timeout: 2)
            try connection.send(["SUBSCRIBE", BusMessage.nodeChannel(node)])
            try connection.flush()
            _ = try connection.nextReply()   // the confirmation
        }

        /// Every message published since, until none comes for half a second.
        func drain() throws -> [String] {
            var heard: [String] = []
            while let reply = try connection.nextReply(within: 0.5) {
                if case .array(let parts) = reply, parts.count == 3, let payload = parts[2].text { heard.append(payload) }
            }
            return heard
        }
    }

    static func metric(_ name: String, port: Int) throws -> Double? {
        try httpGet(port: port, path: "/metrics").body.split(separator: "\n")
            .first { $0.hasPrefix(name + " ") }.flatMap { Double($0.split(separator: " ").last!) }
    }

    static func error(_ message: ServerMessage) -> ErrorCode? {
        if case .error(let code, _, _, _, _) = message { code } else { nil }
    }

    // MARK: Finding 1: a NUL byte in a relayed frame

    /// `{"type":"ping","ref":"marker"}`, a NUL and 4,000 `A`: refused `bad_json` as on one server, through the
    /// relay too, and not one byte of it (nor any byte past it) reaches Redis.
    @Test func aFrameWithANulIsRefusedBeforeRedisAndNothingElseIsPublished() async throws {
        defer { finish() }
        let cluster = try await pair("nul-room")
        defer { cluster.stop() }
        let listener = try Listener(cluster.redis, node: "a")
        cluster.bob.sendRaw(#"{"type":"ping","ref":"marker"}"# + "\u{0}" + String(repeating: "A", count: 4_000))
        cluster.bob.send(.ping, ref: .string("after"))
        // Its answer comes first, as on one server: bad_json (trailing data after the object), then the pong.
        let first = try cluster.bob.expect("an answer to the NUL frame") { message -> ServerMessage? in
            if case .error = message { return message }
            return message.isPong ? message : nil
        }
        #expect(Self.error(first) == .badJSON, "\(first)")
        _ = try cluster.bob.expect("the pong after it") { if case .pong(_, .string("after")?) = $0 { true } else { nil } }
        let published = try listener.drain()
        #expect(!published.isEmpty, "the ping after it went to the owner")
        for payload in published {
            #expect(!payload.contains("AAAA"), "published: \(payload.prefix(200))")
            #expect(!payload.utf8.contains(0), "a NUL was published: \(payload.prefix(200))")
            #expect(payload.utf8.count < 1_000, "\(payload.utf8.count) bytes published")
        }
    }

    // MARK: Finding 8: a relaying node forwards before any limit

    /// 300 frames of 15 KB through the relaying node: it refuses what the owner would (rate_limited, then 1008
    /// after 40 refused in a row), so at most the burst and what the rate refills reach Redis.
    @Test func aRelayingNodeAppliesTheConnectionsLimitsBeforePublishing() async throws {
        defer { finish() }
        let cluster = try await pair("flood-room")
        defer { cluster.stop() }
        let before = try #require(try Self.metric("pomodoro_cluster_forwarded_commands_total", port: cluster.bPort))
        let pad = String(repeating: "x", count: 15_000)
        let started = Date()
        let frames = 300
        for index in 0..<frames { cluster.bob.sendRaw(#"{"type":"ping","ref":"f\#(index)","pad":"\#(pad)"}"#) }
        var limited = 0, ponged = 0
        var code: UInt16?
        // Every frame is answered (its pong from the owner, or rate_limited) until the 1008. A node that reads
        // the flood slower than 800 frames a second (under a sanitizer, beside the whole suite) takes a frame
        // the rate refilled (one every 50 ms) before 40 are refused in a row (an accepted frame starts the
        // count again), and answers all 300 instead.
        func readAnswers(until count: Int) -> Bool {
            while code == nil && limited + ponged < count {
                switch cluster.bob.inbox.next(timeout: 10) {
                case .text(let bytes)?:
                    switch try? WireCodec.decodeServerMessage(bytes) {
                    case .error(.rateLimited, _, _, _, _)?: limited += 1
                    case .pong(_, .string(let ref)?)?: if ref.hasPrefix("f") || ref.hasPrefix("g") { ponged += 1 }
                    default: break
                    }
                case .closed(let closeCode, _)?: code = closeCode
                case let other?: Issue.record("unexpected \(other)"); return false
                case nil: Issue.record("neither closed nor answered within 10 s (\(ponged) pongs, \(limited) refused)"); return false
                }
            }
            return true
        }
        guard readAnswers(until: frames) else { return }
        let elapsed = Date().timeIntervalSince(started)
        let forwarded = try #require(try Self.metric("pomodoro_cluster_forwarded_commands_total", port: cluster.bPort)) - before
        // The burst (40) and 20 a second for as long as it took, and one for luck.
        #expect(forwarded <= 41 + 20 * elapsed.rounded(.up), "forwarded \(forwarded) in \(elapsed) s")
        if code == nil {
            // Answered whole: as many small frames, read far faster, bring the 40 refused in a row.
            for index in 0..<frames { cluster.bob.sendRaw(#"{"type":"ping","ref":"g\#(index)"}"#) }
            guard readAnswers(until: 2 * frames) else { return }
        }
        #expect(code == 1008, "\(ponged) pongs, \(limited) refused, then \(String(describing: code))")
        #expect(limited >= 30)
    }

    // MARK: Finding 9: a long leave

    /// A `leave` of more than 256 bytes ends the relay like a short one: the next `join`, of another room,
    /// is this node's, not the old owner's.
    @Test func aLongLeaveEndsTheRelay() async throws {
        defer { finish() }
        let cluster = try await pair("leave-room")
        defer { cluster.stop() }
        cluster.bob.sendRaw(#"{"type":"leave","ref":"bye","pad":"\#(String(repeating: "y", count: 400))"}"#)
        _ = try cluster.bob.expect("ok to the leave") { if case .ok("leave", _, .string("bye")?) = $0 { true } else { nil } }
        _ = try cluster.bob.expect("the welcome to the next room") {
            if case .welcome(_, let room, _, _, _) = $0, room.room == "other-room" { true } else { nil }
        } sending: { cluster.bob.send(.join(room: "other-room", name: "Bob", token: nil), ref: nil) }
        let holder = try RedisLeases(address: RedisAddress(parsing: cluster.redis.url)).holder(room: "other-room")
        #expect(holder?.node == "b")
        #expect(try Self.metric("pomodoro_cluster_relayed_members", port: cluster.bPort) == 0)
    }

    // MARK: Finding 10: epoch keys

    /// The epoch counter of a room expires (a day after its last take), so that a room name used once does
    /// not keep a key in Redis for ever.
    @Test func epochKeysExpire() async throws {
        defer { finish() }
        let cluster = try await pair("epoch-room")
        defer { cluster.stop() }
        let redis = try RedisConnection(try RedisAddress(parsing: cluster.redis.url), timeout: 2)
        let ttl = try redis.command(["PTTL", "pomodoro:epoch:epoch-room"])
        guard case .integer(let milliseconds) = ttl else { Issue.record("PTTL answered \(ttl)"); return }
        #expect(milliseconds > 0 && milliseconds <= RedisLeases.epochTimeToLive.milliseconds, "PTTL \(milliseconds)")
    }

    // MARK: Finding 6: /api/cluster

    /// `/api/cluster` names every room a node runs: only a client on the node's own host reads it. Through a
    /// trusted proxy a client elsewhere gets 404, as it does on a single server; with `--metrics off`, so does
    /// everyone.
    @Test func theClusterReportIsForTheNodesOwnHostOnly() async throws {
        defer { finish() }
        let redis = try RedisTestServer(password: Self.password)
        defer { redis.stop() }
        let database = try await PostgresTestServer.makeDatabase()
        let (a, aPort) = try Self.node("a", redis: redis.url, database: database, ["--trusted-proxy", "127.0.0.1"])
        defer { a.kill() }
        let (b, bPort) = try Self.node("b", redis: redis.url, database: database, ["--metrics", "off"])
        defer { b.kill() }
        let ada = try Peer(client, port: aPort)
        _ = try ada.join("secret-room-name", name: "Ada")

        let local = try httpGet(port: aPort, path: "/api/cluster")
        #expect(local.status == 200 && local.body.contains("secret-room-name"))
        for path in ["/api/cluster", "/api/cluster/rooms/secret-room-name"] {
            let remote = try httpGet(port: aPort, path: path, headers: ["X-Forwarded-For: 203.0.113.9"])
            #expect(remote.status == 404, "\(path): \(remote)")
            #expect(!remote.body.contains("secret-room-name") && !remote.body.contains("\"a\""))
            #expect(try httpGet(port: bPort, path: path).status == 404)
        }
        #expect(try httpGet(port: aPort, path: "/api/cluster/rooms/secret-room-name").body.contains(#""owner":"a""#))
    }

    // MARK: Finding 11: a wrong Redis password

    /// A node given the wrong password stops at once with one line (no password in it) and status 69.
    @Test func aWrongPasswordIsOneLineAndStatus69AtStart() async throws {
        let redis = try RedisTestServer(password: Self.password)
        defer { redis.stop() }
        let database = try await PostgresTestServer.makeDatabase()
        for wrong in [redis.url(password: "not-the-password"), redis.url(password: nil)] {
            let process = try ProcessLauncher.start(ProcessLauncher.server, [
                "--host", "127.0.0.1", "--port", "0", "--db", database, "--cluster", wrong, "--node-id", "w",
            ], output: .capture, errors: .capture)
            let result = try process.wait(timeout: 20)
            #expect(result.exited && result.status == 69, "\(result)")
            let lines = result.errors.split(separator: "\n")
            #expect(lines.count == 1, "\(result.errors)")
            #expect(result.errors.contains("refuses this node's credentials"))
            #expect(!result.errors.contains("not-the-password") && !result.output.contains("listening"))
        }
    }

    /// Redis's password changed under a running node: once it reconnects, a line in its log and `/healthz`
    /// 503; the password back, 200 again.
    @Test func aPasswordChangedAtRunTimeIsALogLineAndUnhealthy() async throws {
        let redis = try RedisTestServer(password: Self.password)
        defer { redis.stop() }
        let database = try await PostgresTestServer.makeDatabase()
        let (a, aPort) = try Self.node("a", redis: redis.url, database: database, errors: .capture)
        defer { a.kill() }
        #expect(try httpGet(port: aPort, path: "/healthz").status == 200)
        let admin = try RedisConnection(try RedisAddress(parsing: redis.url), timeout: 2)
        try admin.command(["CONFIG", "SET", "requirepass", "changed-password"])
        try admin.command(["CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes"])
        try admin.command(["CLIENT", "KILL", "TYPE", "pubsub"])
        let deadline = TestTime.deadline(10)
        var health = try httpGet(port: aPort, path: "/healthz")
        while health.status != 503, Date() < deadline {
            usleep(100_000)
            health = try httpGet(port: aPort, path: "/healthz")
        }
        #expect(health.status == 503 && health.body.contains("credentials"), "\(health)")
        #expect(!health.body.contains(Self.password))
        try admin.command(["CONFIG", "SET", "requirepass", Self.password])
        let back = TestTime.deadline(10)
        while try httpGet(port: aPort, path: "/healthz").status != 200, Date() < back { usleep(100_000) }
        #expect(try httpGet(port: aPort, path: "/healthz").status == 200)
        let log = a.stop()?.errors ?? ""
        #expect(log.contains("refuses this node's credentials"), "\(log)")
        #expect(!log.contains(Self.password))
    }
}

private extension ServerMessage {
    var isPong: Bool { if case .pong = self { true } else { false } }
}

private extension Peer {
    /// Sends, then waits for a match.
    func expect<T>(_ what: String, _ match: (ServerMessage) -> T?, sending: () -> Void) throws -> T {
        sending()
        return try expect(what, match)
    }
}
