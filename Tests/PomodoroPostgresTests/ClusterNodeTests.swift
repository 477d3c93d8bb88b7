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

    /// Redis goes away under a running room: the node stops running it when its term ends (its member is
    /// closed with 4005), takes no room while Redis is away, and takes the room back, same deadline, once
    /// Redis returns, though Redis forgot every lease and epoch (docs/CLUSTER.md, "Redis forgetting").
    @Test func aNodeThatLosesRedisStopsItsRoomsAndTakesThemBackWhenRedisReturns() async throws {
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

        redis.halt()
        let halted = Date()
        #expect(try ada.expectClose() == 4005)
        // The term ends at most 1.35 s after the last renewal, which was at most 0.5 s before Redis went.
        #expect(Date().timeIntervalSince(halted) < 5)

        // Without Redis nobody takes the room.
        let meanwhile = try Peer(client, port: a.port)
        meanwhile.send(.join(room: "no-redis", name: "Ada", token: joined.you.token), ref: .string("j"))
        let refused = try meanwhile.expect("an error") { if case .error(let code, _, _, _) = $0 { code } else { nil } }
        #expect(refused == .unavailable)

        try redis.start()
        let back = try Peer(client, port: a.port).join("no-redis", name: "Ada", token: joined.you.token)
        #expect(back.you.resumed && back.room.status == .running && back.room.endsAt == endsAt)
        // Redis counted epochs from 1 again; the store's fence made the node go above it.
        #expect(try RedisLeases(address: address).holder(room: "no-redis")?.epoch == 2)
    }
}
