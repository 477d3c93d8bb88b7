import Foundation
import Glibc
import PomodoroCluster
import PomodoroCore
import PomodoroNet
import PomodoroProtocol
import PomodoroTestSupport
import Testing

/// A rolling restart from an earlier build (leases one key per room, renewed room by room) to this one
/// (leases held by a liveness key per node), on two `pomodoro-server` processes: the earlier build's binary
/// comes from `EARLIER_SERVER_BIN` (e.g. a release build of the branch before the change); without it the
/// test is skipped, saying so.
@Suite(.onOwnThreads, .timeLimit(.minutes(TestTime.minutes(2))))
struct ClusterMixedVersionTests {
    static let earlier: String? = {
        guard let path = ProcessInfo.processInfo.environment["EARLIER_SERVER_BIN"], !path.isEmpty else { return nil }
        return path
    }()

    let client: WebSocketClient

    init() throws {
        client = try WebSocketClient()
        client.start()
    }

    static func node(_ name: String, binary: String, redis: String, database: String) throws -> (LaunchedProcess, Int) {
        let process = try ProcessLauncher.start(binary, [
            "--host", "127.0.0.1", "--port", "0", "--db", database, "--cluster", redis, "--node-id", name,
            "--min-focus", "1", "--log-level", "warning",
        ], errors: .discard)
        return (process, try process.waitUntilServing())
    }

    static func running(_ message: ServerMessage) -> Int64? {
        if case .state(let room) = message, room.status == .running { room.endsAt } else { nil }
    }

    @Test(.enabled(if: ClusterMixedVersionTests.earlier != nil,
                   "EARLIER_SERVER_BIN (a pomodoro-server of the per-room lease layout) is not set"))
    func aRollingRestartFromTheEarlierLayoutKeepsOneOwnerPerRoom() async throws {
        defer { client.stop(); client.waitUntilFinished() }
        let redis = try RedisTestServer()
        defer { redis.stop() }
        let database = try await PostgresTestServer.makeDatabase()
        let raw = RedisLeases(address: try RedisAddress(parsing: redis.url))
        func stored(_ room: String) throws -> (value: String?, ttl: Int64) {
            let ttl: Int64 = if case .integer(let ttl) = try raw.command(["PTTL", "pomodoro:lease:\(room)"]) { ttl } else { -3 }
            return (try raw.command(["GET", "pomodoro:lease:\(room)"]).text, ttl)
        }

        let (old, oldPort) = try Self.node("a", binary: try #require(Self.earlier), redis: redis.url, database: database)
        defer { old.kill() }
        let (b, bPort) = try Self.node("b", binary: ProcessLauncher.server, redis: redis.url, database: database)
        defer { _ = b.stop() }

        // The earlier node owns one room, the new one another; each one's members on the other are relayed.
        let ada = try Peer(client, port: oldPort)
        _ = try ada.join("older", name: "Ada")
        ada.send(.start)
        let endsAt = try ada.expect("a running state", Self.running)
        let bob = try Peer(client, port: bPort)
        let bobIn = try bob.join("older", name: "Bob")
        #expect(bobIn.room.endsAt == endsAt && bobIn.room.members.count == 2)
        // The registry tells the earlier node apart (b writes per room from its start until it reads it).
        #expect(TestTime.waitUntil(3) {
            (try? NodeRegistry().nodes(on: raw))?.contains { $0.node == "a" && !$0.readsLiveness } == true
        })
        let cy = try Peer(client, port: bPort)
        _ = try cy.join("newer", name: "Cy")
        let dee = try Peer(client, port: oldPort)
        let deeIn = try dee.join("newer", name: "Dee")
        #expect(deeIn.room.members.map(\.name).sorted() == ["Cy", "Dee"], "the earlier node did not follow b's lease")

        // While the earlier node is listed, b writes what it reads: EPOCH|NODE with an expiry, renewed per room.
        let watched = Date()
        while Date().timeIntervalSince(watched) < 2 {
            let (value, ttl) = try stored("newer")
            #expect(value?.hasSuffix("|b") == true && value?.hasPrefix("@") == false, "\(value ?? "none")")
            #expect(ttl > 0 && ttl <= LeaseTerm.timeToLive.milliseconds)
            #expect(try stored("older").value?.hasSuffix("|a") == true)
            usleep(100_000)
        }

        // The rolling restart: the earlier node drains (its room handed to b) and comes back as this build.
        #expect(old.stop()?.status == 0)
        let (a, aPort) = try Self.node("a", binary: ProcessLauncher.server, redis: redis.url, database: database)
        defer { _ = a.stop() }
        // No earlier node listed any more: the keys move to the liveness layout, with no expiry of their own.
        let moved = try TestTime.waitUntil(5) {
            let (older, newer) = (try stored("older"), try stored("newer"))
            return older.value?.hasPrefix("@") == true && older.ttl == -1 && newer.value?.hasPrefix("@") == true
                && newer.ttl == -1
        }
        let (older, newer) = (try stored("older"), try stored("newer"))
        #expect(moved, "older: \(older), newer: \(newer)")
        #expect(try raw.holder(room: "older")?.node == "b")
        #expect(try raw.holder(room: "newer")?.node == "b")

        // One owner: Bob hears one tick a second with the focus's end, and Ada, back on the new a, is relayed.
        var last = Int64.max
        for _ in 0..<2 {
            let tick = try bob.nextTick().tick
            #expect(tick.endsAt == endsAt && tick.remainingMs < last)
            last = tick.remainingMs
        }
        let adaBack = try Peer(client, port: aPort)
        let adaIn = try adaBack.join("older", name: "Ada")
        #expect(adaIn.room.endsAt == endsAt && adaIn.room.status == .running)
        #expect(try raw.holder(room: "older")?.node == "b")
    }
}
