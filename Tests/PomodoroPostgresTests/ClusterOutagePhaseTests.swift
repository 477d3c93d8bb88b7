import Foundation
import PomodoroCluster
import PomodoroCore
import PomodoroNet
import PomodoroProtocol
import PomodoroTestSupport
import Testing

/// A phase ends while Redis is away, in a room whose settings say what follows (auto-start on): a member
/// relayed through another node goes on hearing the right second, the next phase's, computed by its own
/// node (docs/CLUSTER.md, "Failure modes"), the same ticks as a member on the owner's node; once Redis is
/// back its node brings it up to date with a `state`, and nobody is closed. Two `pomodoro-server` nodes on
/// a real Redis and PostgreSQL.
@Suite(.onOwnThreads, .timeLimit(.minutes(TestTime.minutes(2))))
struct ClusterOutagePhaseTests {
    let client: WebSocketClient

    init() throws {
        client = try WebSocketClient()
        client.start()
    }

    func finish() {
        client.stop()
        client.waitUntilFinished()
    }

    @Test func aRelayedMemberHearsThePhaseThatFollowsWhileRedisIsAway() async throws {
        defer { finish() }
        let redis = try RedisTestServer()
        defer { redis.stop() }
        let database = try await PostgresTestServer.makeDatabase()
        let nodes = try ["a", "b"].map { try ClusterScheduleTests.Node($0, redis: redis.url, database: database) }
        defer { for node in nodes { node.process.kill() } }

        let ada = try Peer(client, port: nodes[0].port)
        _ = try ada.join("op-room", name: "Ada")
        ada.send(.configure(RoomSettings(focus: 4, shortBreak: 2, longBreak: 5, longBreakEvery: 4, autoStart: true)))
        _ = try ada.expect("the settings") { if case .state(let room) = $0, room.settings.focus == 4 { true } else { nil } }
        ada.send(.start)
        _ = try ada.expect("a running state", ClusterRedisRestartTests.runningEndsAt)
        let ed = try Peer(client, port: nodes[1].port)
        let (_, joined) = try ed.join("op-room", name: "Ed")
        #expect(joined.status == .running && joined.phase == .focus)
        _ = try ed.nextTick()

        // Redis goes; the focus ends about 3 s later, the short break runs by itself on the owner, then the
        // next focus.
        redis.halt()
        let until = Date().addingTimeInterval(8)
        let owners = try ClusterRedisRestartTests.ticks(of: ada, until: until)
        let relayed = try ClusterRedisRestartTests.ticks(of: ed, until: until)
        func seconds(_ heard: [(tick: TickPayload, arrived: Date)]) -> [String] {
            heard.map { "\($0.tick.phase) \($0.tick.remainingMs) \($0.tick.endsAt) \($0.tick.cycle)" }
        }
        let first = try #require(owners.firstIndex { $0.tick.phase == .shortBreak }, "the owner's member heard the break: \(seconds(owners))")
        let breaks = Array(owners[first...])
        #expect(breaks.contains { $0.tick.phase == .focus && $0.tick.cycle == 2 }, "and the next focus: \(seconds(owners))")
        // Every second of the break and the next focus the owner's member heard, the relayed member heard too
        // (same phase, second, endsAt and cycle).
        let relayedSeconds = Set(seconds(relayed))
        for second in seconds(breaks) { #expect(relayedSeconds.contains(second), "relayed: \(seconds(relayed))") }
        #expect(Set(seconds(relayed)).count == relayed.count, "no second twice")

        // Redis is back: the relayed member is brought up to date (a state), not closed.
        try redis.start()
        let resynced = try ed.expect("a state after the bus came back", timeout: 12) { message -> SnapshotPayload? in
            if case .state(let room) = message { room } else { nil }
        }
        #expect(resynced.phase != .idle && resynced.running)
        _ = try ed.nextTick()
        _ = try ada.nextTick()
        print("cluster outage phase: a relayed member heard \(relayed.filter { breaks.map(\.tick.endsAt).contains($0.tick.endsAt) }.count) ticks of the break and the focus that began while Redis was away, the owner's member \(breaks.count)")
    }
}
