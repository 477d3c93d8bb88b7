import Foundation
import PomodoroCluster
import PomodoroCore
import PomodoroNet
import PomodoroProtocol
import PomodoroServer
import PomodoroTestSupport
import Testing

/// Two real servers as nodes of one cluster, on a real Redis and a real PostgreSQL: a room runs on the node
/// that took its lease, the other node relays its joiners to it while the lease is held, and once the owner
/// stops (giving its leases back) the other node takes the room from the store with the same deadline and
/// its members resume with their tokens.
@Suite(.onOwnThreads, .timeLimit(.minutes(TestTime.minutes(2))))
struct ClusterNodeTests {
    let client: WebSocketClient

    init() throws {
        client = try WebSocketClient()
        client.start()
    }

    func finish() {
        client.stop()
        client.waitUntilFinished()
    }

    static func node(_ name: String, redis: RedisAddress, database: String) throws -> LiveServer {
        try LiveServer {
            $0.database = .postgres(url: database)
            $0.routing = ClusterConfiguration(redis: redis, node: name)
        }
    }

    static func runningEndsAt(_ message: ServerMessage) -> Int64? {
        if case .state(let room) = message, room.status == .running { room.endsAt } else { nil }
    }

    @Test func aRoomRunsOnTheNodeHoldingItsLeaseAndMovesWhenThatNodeStops() async throws {
        defer { finish() }
        let redis = try RedisTestServer()
        defer { redis.stop() }
        let address = try RedisAddress(parsing: redis.url)
        let database = try await PostgresTestServer.makeDatabase()
        let a = try Self.node("a", redis: address, database: database)
        var aStopped = false
        defer { if !aStopped { a.stop() } }
        let b = try Self.node("b", redis: address, database: database)
        defer { b.stop() }

        // Node a takes the room's lease on the first join and runs it.
        let ada = try Peer(client, port: a.port)
        let joined = try ada.join("cl-room", name: "Ada")
        ada.send(.start)
        let endsAt = try #require(try ada.expect("a running state", Self.runningEndsAt))
        let leases = RedisLeases(address: address)
        #expect(try leases.holder(room: "cl-room")?.node == "a")

        // The operators' view, from either node.
        let room = try httpGet(port: b.port, path: "/api/cluster/rooms/cl-room")
        #expect(room.status == 200 && room.body == #"{"room":"cl-room","owner":"a","epoch":1}"#)
        let view = try httpGet(port: a.port, path: "/api/cluster")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(view.body.utf8)) as? [String: Any])
        #expect(object["node"] as? String == "a")
        #expect(object["rooms"] as? [String] == ["cl-room"])
        let nodes = (object["nodes"] as? [[String: Any]] ?? []).compactMap { $0["node"] as? String }
        #expect(Set(nodes).isSubset(of: ["a", "b"]) && nodes.contains("a"))
        // Read paths, as the rest: another method is answered 405.
        for path in ["/api/cluster", "/api/cluster/rooms/cl-room"] {
            let posted = try httpRequest("POST", port: a.port, path: path)
            #expect(posted.status == 405 && posted.body.contains(#""field":"method""#), "\(path): \(posted)")
        }

        // Node b does not run a second copy: its joiner is relayed to a, which runs the room for both.
        let bob = try Peer(client, port: b.port)
        let bobIn = try bob.join("cl-room", name: "Bob")
        #expect(bobIn.room.status == .running && bobIn.room.endsAt == endsAt && bobIn.room.members.count == 2)
        #expect(try leases.holder(room: "cl-room")?.node == "a")
        #expect(try httpGet(port: b.port, path: "/api/cluster").body.contains(#""rooms":[]"#))

        // Node a stops and gives its lease back: node b takes the room from the store, same deadline. Bob,
        // welcomed through a, goes on on b without reconnecting: he hears the room as it is now.
        a.stop()
        aStopped = true
        let moved = try bob.expect("the room on b", timeout: 5) { message -> SnapshotPayload? in
            if case .state(let room) = message { room } else { nil }
        }
        #expect(moved.status == .running && moved.endsAt == endsAt)
        let back = try Peer(client, port: b.port).join("cl-room", name: "Ada", token: joined.you.token)
        #expect(back.you.resumed && back.you.id == joined.you.id)
        #expect(back.room.status == .running)
        #expect(back.room.endsAt == endsAt)
        #expect(try leases.holder(room: "cl-room")?.node == "b")
    }

    /// Redis goes away under a running room: the node keeps running it on the store's fence (its member
    /// hears every second and is never closed, a member resuming on this node is welcomed), and once Redis
    /// returns, having forgotten every lease and epoch, the node puts the room's lease back under the same
    /// epoch (docs/CLUSTER.md, "Failure modes").
    @Test func aNodeThatLosesRedisKeepsItsRoomsOnTheFenceAndPutsTheLeaseBack() async throws {
        defer { finish() }
        let redis = try RedisTestServer()
        defer { redis.stop() }
        let address = try RedisAddress(parsing: redis.url)
        let database = try await PostgresTestServer.makeDatabase()
        let a = try Self.node("a", redis: address, database: database)
        defer { a.stop() }

        let ada = try Peer(client, port: a.port)
        let joined = try ada.join("no-redis", name: "Ada")
        ada.send(.start)
        let endsAt = try #require(try ada.expect("a running state", Self.runningEndsAt))
        #expect(try RedisLeases(address: address).holder(room: "no-redis") == LeaseHolder(node: "a", epoch: 1))

        redis.halt()
        let halted = Date()
        // Three seconds without Redis, twice a term: a tick every second all along.
        var last = try ada.nextTick().tick
        while Date().timeIntervalSince(halted) < 3 {
            let next = try ada.nextTick(timeout: 2).tick
            #expect(last.remainingMs - next.remainingMs == 1000 && next.endsAt == endsAt)
            last = next
        }
        // A member resuming on the node that runs the room is welcomed without Redis.
        let again = try Peer(client, port: a.port)
        let back = try again.join("no-redis", name: "Ada", token: joined.you.token)
        #expect(back.you.resumed && back.room.status == .running && back.room.endsAt == endsAt)

        try redis.start()
        let restoredBy = TestTime.deadline(5)
        var holder: LeaseHolder?
        while Date() < restoredBy {
            holder = try RedisLeases(address: address).holder(room: "no-redis")
            if holder != nil { break }
            usleep(50_000)
        }
        // Redis forgot; the fence still holds epoch 1, so the node put its lease back as it was.
        #expect(holder == LeaseHolder(node: "a", epoch: 1))
        #expect(try again.nextTick(timeout: 2).tick.endsAt == endsAt)
    }
}
