import Foundation
import Glibc
import PomodoroCluster
import PomodoroCore
import PomodoroNet
import PomodoroProtocol
import PomodoroTestSupport
import Testing

/// `pomodoro-server` processes as nodes of one cluster on loopback, with a real Redis and PostgreSQL started
/// here: the owner killed mid-focus, and the owner stopped past its lease and resumed.
@Suite(.onOwnThreads, .timeLimit(.minutes(2)))
struct ClusterProcessTests {
    let client: WebSocketClient

    init() throws {
        client = try WebSocketClient()
        client.start()
    }

    func finish() {
        client.stop()
        client.waitUntilFinished()
    }

    /// A node on a free loopback port; its first line gives the port.
    static func node(_ name: String, redis: String, database: String) throws -> (LaunchedProcess, Int) {
        let process = try ProcessLauncher.start(ProcessLauncher.server, [
            "--host", "127.0.0.1", "--port", "0", "--db", database, "--cluster", redis, "--node-id", name,
            "--min-focus", "1", "--log-level", "warning",
        ], errors: .discard)
        return (process, try process.waitUntilServing())
    }

    static func running(_ message: ServerMessage) -> Int64? {
        if case .state(let room) = message, room.status == .running { room.endsAt } else { nil }
    }

    @Test func theOwnerKilledMidFocusTheRoomGoesOnOnASurvivorWithTheSameDeadline() async throws {
        defer { finish() }
        let redis = try RedisTestServer()
        defer { redis.stop() }
        let database = try await PostgresTestServer.makeDatabase()
        let (a, aPort) = try Self.node("a", redis: redis.url, database: database)
        defer { a.kill() }
        let (b, bPort) = try Self.node("b", redis: redis.url, database: database)
        defer { _ = b.stop() }

        let ada = try Peer(client, port: aPort)
        let joined = try ada.join("failover", name: "Ada")
        ada.send(.start)
        let endsAt = try #require(try ada.expect("a running state", Self.running))

        // While a lives, b does not run the room: its joiner is relayed to a, at once.
        let bob = try Peer(client, port: bPort)
        bob.send(.join(room: "failover", name: "Bob", token: nil), ref: .string("j"))
        let welcomed = try bob.expect("a welcome", timeout: 10) {
            if case .welcome(_, let room, _, _, let ref) = $0 { (room, ref) } else { nil }
        }
        #expect(welcomed.1 == .string("j") && welcomed.0.endsAt == endsAt && welcomed.0.members.count == 2)

        a.kill()
        let killed = Date()
        _ = try ada.expectClose()   // no close frame from a killed process
        let back = try Peer(client, port: bPort)
        let resumed = try back.join("failover", name: "Ada", token: joined.you.token)
        let welcomedAfter = Date().timeIntervalSince(killed)
        #expect(resumed.you.resumed && resumed.you.id == joined.you.id)
        #expect(resumed.room.status == .running && resumed.room.endsAt == endsAt)
        let tick = try back.nextTick(timeout: 3)
        #expect(tick.tick.endsAt == endsAt)
        let ticking = tick.arrived.timeIntervalSince(killed)
        print("cluster failover: welcome on the survivor \(Int(welcomedAfter * 1000)) ms after kill -9, first tick \(Int(ticking * 1000)) ms")
        #expect(welcomedAfter < 5)
        // Bob, welcomed through a, is told the room moved (4005) once b has taken it, and resumes.
        #expect(try bob.expectClose() == 4005)
        #expect(try RedisLeases(address: RedisAddress(parsing: redis.url)).holder(room: "failover")?.node == "b")
    }

    @Test func anOwnerStoppedPastItsLeaseNeverActsAsOwnerAgain() async throws {
        defer { finish() }
        let redis = try RedisTestServer()
        defer { redis.stop() }
        let database = try await PostgresTestServer.makeDatabase()
        let (a, aPort) = try Self.node("a", redis: redis.url, database: database)
        defer { a.send(SIGCONT); a.kill() }
        let (b, bPort) = try Self.node("b", redis: redis.url, database: database)
        defer { _ = b.stop() }

        let ada = try Peer(client, port: aPort)
        _ = try ada.join("stalled", name: "Ada")
        ada.send(.start)
        let endsAt = try #require(try ada.expect("a running state", Self.running))
        _ = try ada.nextTick()

        a.send(SIGSTOP)
        // b's joiner waits for a's lease to lapse, then b takes the room from the store.
        let bob = try Peer(client, port: bPort)
        let welcome = try bob.join("stalled", name: "Bob")
        #expect(welcome.room.status == .running && welcome.room.endsAt == endsAt)
        #expect(welcome.room.members.count == 2)
        _ = try bob.nextTick()

        let resumedAt = Date()
        a.send(SIGCONT)
        // a finds its term over: it closes Ada (to reconnect to the owner) without a tick or state as owner.
        var heardAsOwner: [String] = []
        var closeCode: UInt16?
        let deadline = Date().addingTimeInterval(5)
        while closeCode == nil, let (event, arrived) = ada.inbox.nextWithArrival(timeout: max(0, deadline.timeIntervalSinceNow)) {
            switch event {
            case .closed(let code, _): closeCode = code
            case .text(let bytes) where arrived > resumedAt:
                heardAsOwner.append(try WireCodec.decodeServerMessage(bytes).label)
            default: break
            }
        }
        #expect(heardAsOwner.isEmpty)
        #expect(closeCode == 4005)
        // b still owns and ticks the room.
        _ = try bob.nextTick()
        #expect(try RedisLeases(address: RedisAddress(parsing: redis.url)).holder(room: "stalled")?.node == "b")
    }
}
