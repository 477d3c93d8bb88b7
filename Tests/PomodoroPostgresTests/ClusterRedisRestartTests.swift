import Foundation
import Glibc
import PomodoroCluster
import PomodoroCore
import PomodoroNet
import PomodoroPostgres
import PomodoroProtocol
import PomodoroTestSupport
import Testing

/// Redis stopped and started again (it forgets every lease and epoch) under three `pomodoro-server` nodes
/// running six rooms with members in a focus: what docs/CLUSTER.md promises holds. Every node stops its rooms
/// when its terms end (members closed with 4005), nobody takes a room while Redis is away, and once it is
/// back, two members of each room reconnecting at once to two different nodes find one owner: the one on
/// the owner is welcomed by it, the other is relayed to it by its node, and both resume the same focus with
/// the same `endsAt`.
/// The store's fence is at the new owner's epoch, and each room is listed by exactly one node. A seventh
/// room, with a schedule and nobody in it, is run by one node before and after, without anyone joining it.
@Suite(.onOwnThreads, .timeLimit(.minutes(TestTime.minutes(2))))
struct ClusterRedisRestartTests {
    let client: WebSocketClient

    init() throws {
        client = try WebSocketClient()
        client.start()
    }

    func finish() {
        client.stop()
        client.waitUntilFinished()
    }

    static func runningEndsAt(_ message: ServerMessage) -> Int64? {
        if case .state(let room) = message, room.status == .running { room.endsAt } else { nil }
    }

    /// A join's answer: the welcome, or the error's code.
    static func answer(_ message: ServerMessage) -> Result<(YouPayload, SnapshotPayload), ProtocolError>? {
        switch message {
        case let .welcome(you, room, _, _, _): .success((you, room))
        case let .error(code, text, field, ref): .failure(ProtocolError(code: code, message: text, field: field, ref: ref))
        default: nil
        }
    }

    @Test func roomsComeBackWithOneOwnerAndTheSameDeadlineAfterRedisRestarts() async throws {
        defer { finish() }
        let redis = try RedisTestServer()
        defer { redis.stop() }
        let address = try RedisAddress(parsing: redis.url)
        let database = try await PostgresTestServer.makeDatabase()
        // A set under way all through the test (due at the last whole minute, started late by the first sweep,
        // a 15-minute focus): a room with schedules is run by some node at all times only while its set may run
        // or its start is near (docs/CLUSTER.md).
        var due = Int64(Date().timeIntervalSince1970) / 60 * 60
        if Int64(Date().timeIntervalSince1970) - due < 2 { due -= 60 }
        try ClusterScheduleTests.seed("rr-sched", at: due, sessions: 1, focus: 900, pause: 60, database: database)
        let nodes = try ["a", "b", "c"].map { try ClusterScheduleTests.Node($0, redis: redis.url, database: database) }
        defer { for node in nodes { node.process.kill() } }

        // Six rooms, two on each node, two members each, every one in a running focus.
        struct Running {
            let room: String
            let node: Int
            let members: [(peer: Peer, you: YouPayload)]
            let endsAt: Int64
        }
        var running: [Running] = []
        for index in 0..<6 {
            let room = "rr-\(index)", node = index % 3
            let ada = try Peer(client, port: nodes[node].port)
            let (adaYou, _) = try ada.join(room, name: "Ada")
            let bo = try Peer(client, port: nodes[node].port)
            let (boYou, _) = try bo.join(room, name: "Bo")
            ada.send(.start)
            let endsAt = try ada.expect("a running state", Self.runningEndsAt)
            running.append(Running(room: room, node: node, members: [(ada, adaYou), (bo, boYou)], endsAt: endsAt))
        }
        for room in running { _ = try room.members[1].peer.nextTick() }
        let leases = RedisLeases(address: address)
        let scheduledOwner = try ClusterScheduleTests.owner(of: "rr-sched", redis: redis.url)

        // Redis goes: every node stops its rooms at the end of its terms.
        redis.halt()
        let halted = Date()
        for room in running {
            for member in room.members { #expect(try member.peer.expectClose(timeout: 6) == 4005) }
        }
        let allClosed = Date().timeIntervalSince(halted)
        #expect(allClosed < 6)
        // Nobody takes a room without Redis.
        let meanwhile = try Peer(client, port: nodes[1].port)
        meanwhile.send(.join(room: "rr-0", name: "Ada", token: running[0].members[0].you.token))
        let refused = try meanwhile.expect("an error") { if case .error(let code, _, _, _) = $0 { code } else { nil } }
        #expect(refused == .unavailable)

        // Redis comes back empty. Each room's two members reconnect at once, to two other nodes.
        try redis.start()
        let returned = Date()
        var backs: [[Peer]] = []
        for room in running {
            var peers: [Peer] = []
            for (offset, member) in room.members.enumerated() {
                let node = nodes[(room.node + 1 + offset) % 3]
                let peer = try Peer(client, port: node.port)
                peer.send(.join(room: room.room, name: "again", token: member.you.token))
                peers.append(peer)
            }
            backs.append(peers)
        }
        let store = try PostgresRoomStore.open(url: database)
        var owners: [String: String] = [:]
        for (room, peers) in zip(running, backs) {
            let answers = try peers.map { try $0.expect("an answer to the join of \(room.room)", timeout: 10, Self.answer) }
            let welcomed = answers.filter { if case .success = $0 { true } else { false } }.count
            #expect(welcomed == 2, "\(room.room): the owner welcomes both, one through the other node, got \(welcomed) welcomes")
            let holder = try #require(try leases.holder(room: room.room))
            owners[room.room] = holder.node
            #expect(holder.epoch >= 2, "an epoch above every one before the restart")
            #expect(try store.fence(room: RoomID(validating: room.room)) == holder.epoch, "only the new owner writes")
            let ownerPort = try #require(nodes.first { $0.name == holder.node }).port
            // Both have the same focus, ending when it always would (one turned away would resume on the owner).
            for (index, answer) in answers.enumerated() {
                var resumed: (YouPayload, SnapshotPayload)
                switch answer {
                case .success(let welcome):
                    resumed = welcome
                case .failure(let error):
                    #expect(error.code == .unavailable && error.message.contains(holder.node))
                    resumed = try Peer(client, port: ownerPort).join(room.room, name: "again",
                                                                      token: room.members[index].you.token)
                }
                #expect(resumed.0.resumed && resumed.0.id == room.members[index].you.id)
                #expect(resumed.1.status == .running && resumed.1.endsAt == room.endsAt)
            }
        }
        let resumedAfter = Date().timeIntervalSince(returned)
        // The room with a schedule is taken again by a node's sweep, nobody asking for it.
        let scheduledHolder = try #require(try {
            let deadline = TestTime.deadline(8)
            while Date() < deadline {
                if let holder = try leases.holder(room: "rr-sched"), holder.epoch >= 2 { return holder }
                usleep(50_000)
            }
            return nil
        }())
        owners["rr-sched"] = scheduledHolder.node
        #expect(try store.fence(room: RoomID(validating: "rr-sched")) == scheduledHolder.epoch)
        // Its term starts one time to live after its take (Redis forgot): wait until it is listed.
        let listedBy = TestTime.deadline(5)
        while Date() < listedBy {
            let view = try httpGet(port: try #require(nodes.first { $0.name == scheduledHolder.node }).port, path: "/api/cluster")
            if view.body.contains("\"rr-sched\"") { break }
            usleep(50_000)
        }
        // Each room is listed by exactly one node.
        var listed: [String: [String]] = [:]
        for node in nodes {
            let view = try httpGet(port: node.port, path: "/api/cluster")
            let object = try #require(try JSONSerialization.jsonObject(with: Data(view.body.utf8)) as? [String: Any])
            for room in object["rooms"] as? [String] ?? [] { listed[room, default: []].append(node.name) }
        }
        for room in running.map(\.room) + ["rr-sched"] {
            #expect(listed[room] == [owners[room]!], "\(room): \(listed[room] ?? [])")
        }
        print("cluster redis restart: 12 members closed with 4005 within \(Int(allClosed * 1000)) ms of Redis stopping; 6 rooms resumed on one owner each (the scheduled room on \(scheduledOwner), then \(scheduledHolder.node)) \(Int(resumedAfter * 1000)) ms after it returned")
    }
}
