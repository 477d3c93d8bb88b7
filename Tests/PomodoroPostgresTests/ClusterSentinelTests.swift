import Foundation
import Glibc
import PomodoroCluster
import PomodoroCore
import PomodoroNet
import PomodoroPostgres
import PomodoroProtocol
import PomodoroTestSupport
import Testing

/// Three `pomodoro-server` nodes given `--cluster redis-sentinel://…/pomodoro`, three sentinels, a Redis
/// master and its replica: the master is killed (`SIGKILL`) under three rooms with members in a focus. The
/// sentinels promote the replica; the nodes find it through them, and the leases (same holders, same
/// epochs) and the bus (every node's channel subscribed) are back on it within the failover's time plus one
/// second. No member is closed, every member hears every second all along, and a new room is taken on the
/// new master.
@Suite(.onOwnThreads, .timeLimit(.minutes(TestTime.minutes(2))))
struct ClusterSentinelTests {
    let client: WebSocketClient

    init() throws {
        client = try WebSocketClient()
        client.start()
    }

    func finish() {
        client.stop()
        client.waitUntilFinished()
    }

    @Test func theNodesFollowASentinelFailoverWithoutStoppingARoom() async throws {
        defer { finish() }
        let master = try RedisTestServer()
        defer { master.stop() }
        let replica = try RedisTestServer(replicaOf: master.port)
        defer { replica.stop() }
        var sentinels: [RedisSentinelTestServer] = []
        defer { for sentinel in sentinels { sentinel.stop() } }
        for _ in 0..<3 { sentinels.append(try RedisSentinelTestServer(watching: master.port)) }
        // Each sentinel knows the replica and the two others before anything fails.
        let ready = TestTime.waitUntil(20) {
            sentinels.allSatisfy { sentinel in
                (try? sentinel.masterField("num-slaves")).flatMap { $0.flatMap { Int($0) } } ?? 0 >= 1
                    && (try? sentinel.masterField("num-other-sentinels")).flatMap { $0.flatMap { Int($0) } } ?? 0 == 2
            }
        }
        try #require(ready, "the sentinels found each other and the replica")
        let url = RedisSentinelTestServer.url(sentinels)
        let database = try await PostgresTestServer.makeDatabase()
        let nodes = try ["a", "b", "c"].map { try ClusterScheduleTests.Node($0, redis: url, database: database) }
        defer { for node in nodes { node.process.kill() } }

        // A room on each node, two members each, in a running focus.
        var members: [(room: String, peer: Peer)] = []
        var rooms: [String] = []
        for (index, node) in nodes.enumerated() {
            let room = "sf-\(index)"
            rooms.append(room)
            let ada = try Peer(client, port: node.port)
            _ = try ada.join(room, name: "Ada")
            let bo = try Peer(client, port: node.port)
            _ = try bo.join(room, name: "Bo")
            ada.send(.start)
            _ = try bo.nextTick()
            members += [(room, ada), (room, bo)]
        }
        let onMaster = RedisLeases(address: try RedisAddress(parsing: master.url))
        let before = try rooms.map { try onMaster.holder(room: $0) }
        #expect(before.map { $0?.node } == ["a", "b", "c"])

        // The master dies; the sentinels promote the replica.
        try master.crash()
        let killed = Date()
        let promoted = TestTime.waitUntil(30) { sentinels.allSatisfy { (try? $0.masterPort()) == replica.port } }
        try #require(promoted, "the sentinels promoted the replica")
        let failover = Date().timeIntervalSince(killed)

        // Leases and bus back on the new master.
        let newMaster = try RedisAddress(parsing: replica.url)
        let onReplica = RedisLeases(address: newMaster)
        var back: Double?
        _ = try TestTime.waitUntil(10) {
            let holders = rooms.map { try? onReplica.holder(room: $0) }
            let listening = try ["a", "b", "c"].allSatisfy { node in
                guard case .array(let parts) = try onReplica.command(["PUBSUB", "NUMSUB", BusMessage.nodeChannel(node)]),
                      parts.count == 2, case .integer(let count) = parts[1] else { return false }
                return count >= 1
            }
            guard listening, holders.map({ $0 ?? nil }) == before else { return false }
            back = Date().timeIntervalSince(killed)
            return true
        }
        let backAfter = try #require(back, "leases and bus back on the new master")
        #expect(backAfter - failover < 1 * TestTime.scale,
                "back \(backAfter) s after the kill, the failover took \(failover) s")

        // A new room is taken on the new master.
        let newcomer = try Peer(client, port: nodes[1].port)
        let (_, room) = try newcomer.join("sf-new", name: "Di")
        #expect(room.memberCount == 1)
        #expect(try onReplica.holder(room: "sf-new")?.node == "b")

        // No member was closed, and each heard every second.
        let until = Date().addingTimeInterval(1)
        var longestGap = 0.0
        for (room, peer) in members {
            var heard: [(tick: TickPayload, arrived: Date)] = []
            while heard.last.map({ $0.arrived <= until }) ?? true { heard.append(try peer.nextTick(timeout: 3)) }
            for (earlier, later) in zip(heard, heard.dropFirst()) {
                #expect(earlier.tick.remainingMs - later.tick.remainingMs == 1000, "\(room): a second missing")
                longestGap = max(longestGap, later.arrived.timeIntervalSince(earlier.arrived))
            }
            #expect(heard.first!.arrived < killed.addingTimeInterval(1.5))
        }
        #expect(longestGap < 1.5)
        print("cluster sentinel failover: master killed; the sentinels promoted the replica \(Int(failover * 1000)) ms later; leases (same holders and epochs) and the bus back \(Int(backAfter * 1000)) ms after the kill; 6 members, none closed, longest gap between ticks \(Int(longestGap * 1000)) ms")
    }
}
