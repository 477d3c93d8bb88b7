import Foundation
import PomodoroCluster
import PomodoroNet
import PomodoroProtocol
import PomodoroTestSupport
import Testing

/// The node running a room is killed and started again at once under the same node id (systemd's
/// `Restart=always`, a container restarted in place), and takes the room back under a new epoch: the members
/// relayed to it through another node are joined to the new process by their node, without reconnecting
/// (docs/CLUSTER.md, "Failover"). Three `pomodoro-server` processes on a real Redis and PostgreSQL.
@Suite(.onOwnThreads, .timeLimit(.minutes(TestTime.minutes(2))))
struct ClusterOwnerRestartTests {
    @Test func membersRelayedToAnOwnerRestartedUnderItsIdAreJoinedToItAgain() async throws {
        let client = try WebSocketClient()
        client.start()
        defer {
            client.stop()
            client.waitUntilFinished()
        }
        let redis = try RedisTestServer()
        defer { redis.stop() }
        let leases = try RedisLeases(address: RedisAddress(parsing: redis.url))
        let database = try await PostgresTestServer.makeDatabase()
        var (a, aPort) = try ClusterProcessTests.node("a", redis: redis.url, database: database)
        defer { a.kill() }
        let (b, bPort) = try ClusterProcessTests.node("b", redis: redis.url, database: database)
        defer { _ = b.stop() }

        // Bo's room runs on a; Ada, on b, is relayed there.
        let bo = try Peer(client, port: aPort)
        let boIn = try bo.join("desk", name: "Bo")
        let ada = try Peer(client, port: bPort)
        let adaIn = try ada.join("desk", name: "Ada")
        bo.send(.start, ref: .string("go"))
        let endsAt = try #require(try ada.expect("the running state", ClusterProcessTests.running))
        let before = try #require(try leases.holder(room: "desk"))
        #expect(before.node == "a")

        // a dies and is back at once under its id; Bo's rejoin there takes the room again under a new epoch.
        a.kill()
        _ = try a.wait(timeout: 10)
        (a, aPort) = try ClusterProcessTests.node("a", redis: redis.url, database: database)
        let boBack = try Peer(client, port: aPort)
        let boAgain = try boBack.join("desk", name: "Bo", token: boIn.you.token)
        #expect(boAgain.you.id == boIn.you.id && boAgain.room.endsAt == endsAt)
        let after = try #require(try leases.holder(room: "desk"))
        #expect(after.node == "a" && after.epoch > before.epoch, "\(after)")

        // Ada, never closed, is in the room the new a runs: her task is taken and Bo sees it.
        _ = try ada.expect("a state from the new process") { message -> Bool? in
            if case .state(let room) = message, room.seq >= boAgain.room.seq,
               room.members.contains(where: { $0.id == adaIn.you.id && $0.connected }) { return true }
            return nil
        }
        ada.send(.task(text: "after the crash"), ref: .string("t"))
        #expect(ClusterProcessTests.isOK(try ada.expect("the task's answer", ClusterProcessTests.answer(to: "t"))))
        _ = try boBack.expect("Ada's task") { message -> Bool? in
            if case .state(let room) = message,
               room.members.contains(where: { $0.id == adaIn.you.id && $0.task == "after the crash" }) { return true }
            return nil
        }
        let (tick, _) = try ada.nextTick(timeout: 5)
        #expect(tick.endsAt == endsAt)
    }
}
