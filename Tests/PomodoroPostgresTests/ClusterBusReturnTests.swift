import Foundation
import Glibc
import PomodoroNet
import PomodoroTestSupport
import Testing

/// Redis stopped and started again (empty) under two `pomodoro-server` nodes, each owning a room with a
/// member of its own and one relayed through the other node. When Redis is back, each node's bus subscribes
/// again once, by itself, and brings its relayed members up to date once (docs/CLUSTER.md, "Failure modes").
/// A second subscription forced by the node's heartbeat (made for a master that was only paused) made every
/// node do it all again, each at its own moment: the owner whose bus came back last took the connections the
/// other node had opened again before it for lost, and closed them with 4005 five seconds later
/// (`ClusterRooms.resyncLimit`): 639 members of 3,000 in one round of `CLUSTER_OUTAGE=30`.
@Suite(.onOwnThreads, .timeLimit(.minutes(TestTime.minutes(2))))
struct ClusterBusReturnTests {
    static func metric(_ name: String, port: Int) throws -> Double? {
        try httpGet(port: port, path: "/metrics").body.split(separator: "\n")
            .first { $0.hasPrefix(name + " ") }.flatMap { Double($0.split(separator: " ").last!) }
    }

    @Test func aRestartedRedisBringsRelayedMembersUpToDateOnceAndClosesNone() async throws {
        let client = try WebSocketClient()
        client.start()
        defer {
            client.stop()
            client.waitUntilFinished()
        }
        let redis = try RedisTestServer()
        defer { redis.stop() }
        let database = try await PostgresTestServer.makeDatabase()
        let nodes = try ["a", "b"].map { try ClusterScheduleTests.Node($0, redis: redis.url, database: database) }
        defer { for node in nodes { node.process.kill() } }

        // Each node owns a room in a running focus, with a member on it and one relayed through the other
        // node: whichever node's bus comes back last, one owner has another node's connections.
        var members: [(room: String, who: String, peer: Peer)] = []
        for (index, node) in nodes.enumerated() {
            let room = "bus-return-\(index)"
            let owner = try Peer(client, port: node.port)
            _ = try owner.join(room, name: "Ada")
            owner.send(.start)
            _ = try owner.expect("a running state", ClusterRedisRestartTests.runningEndsAt)
            let relayed = try Peer(client, port: nodes[1 - index].port)
            _ = try relayed.join(room, name: "Bo")
            members += [(room, "on its owner's node", owner), (room, "relayed", relayed)]
        }
        for member in members { _ = try member.peer.nextTick() }

        // Redis away long enough for both nodes' heartbeats and buses to find it so, then back, empty.
        redis.halt()
        usleep(useconds_t(2_500_000 * TestTime.scale))
        try redis.start()
        let returned = Date()
        let reconnects = "pomodoro_cluster_bus_reconnects_total"
        let back = try TestTime.waitUntil(5) {
            try nodes.allSatisfy { try Self.metric(reconnects, port: $0.port) ?? 0 >= 1 }
        }
        #expect(back, "each node's bus subscribed again")

        // Past the owners' wait for the connections opened again (5 s), a beat (1 s) and a margin: every
        // member still hears its room's ticks, none is closed.
        let until = returned.addingTimeInterval(8 * TestTime.scale)
        for member in members {
            do {
                _ = try ClusterRedisRestartTests.ticks(of: member.peer, until: until)
            } catch {
                Issue.record("\(member.room), the member \(member.who): \(error) (closed: \(String(describing: try? member.peer.expectClose(timeout: 0.1))))")
            }
        }
        for node in nodes {
            #expect(try Self.metric(reconnects, port: node.port) == 1,
                    "node \(node.name): its bus subscribed again once, not once more at its heartbeat's moment")
        }
    }
}
