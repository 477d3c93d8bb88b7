import Foundation
import PomodoroCluster
import PomodoroCore
import PomodoroPostgres
import PomodoroTestSupport
import Testing

/// Two cluster nodes on a real Redis and PostgreSQL: node a owns rooms and keeps them on the store's fences
/// while Redis is stopped; Redis starts again empty and node b, at once, asks for every room (as a node
/// whose relayed members join again, or a joiner, does). The rooms stay with a under the same epochs: b is
/// answered that a runs them, a loses none (docs/CLUSTER.md, "Without Redis": a take leaves a fence to its
/// owner, and the owner's restore wins over a moment's lease).
@Suite(.onOwnThreads, .timeLimit(.minutes(TestTime.minutes(1))))
struct RedisOutageTakeTests {
    static func node(_ name: String, redis: RedisAddress, database: String) throws -> ClusterNode {
        ClusterNode(configuration: ClusterConfiguration(redis: redis, node: name),
                    store: try PostgresRoomStore.open(url: database), monotonic: monotonic)
    }

    /// Takes `room` on `node` and waits (bounded) for the answer.
    static func take(_ room: RoomID, on node: ClusterNode) -> ClusterTake? {
        let answer = Locked<ClusterTake?>(nil)
        let done = DispatchSemaphore(value: 0)
        node.take(room) { taken in
            answer.update { $0 = taken }
            done.signal()
        }
        return waitFor(done, seconds: 10) ? answer.current : nil
    }

    @Test func takesRightAfterRedisCameBackLeaveTheRoomsToTheirOwnerOnTheFence() async throws {
        let redis = try RedisTestServer()
        defer { redis.stop() }
        let address = try RedisAddress(parsing: redis.url)
        let database = try await PostgresTestServer.makeDatabase()
        let a = try Self.node("a", redis: address, database: database)
        let b = try Self.node("b", redis: address, database: database)
        let lost = Locked<[RoomID]>([])
        a.whenLost { room in lost.update { $0.append(room) } }
        a.start()
        b.start()
        defer { a.stop(); b.stop() }
        let rooms = try (0..<12).map { try RoomID(validating: "outage-\($0)") }
        for room in rooms {
            guard case .owned? = Self.take(room, on: a) else { Issue.record("a could not take \(room)"); return }
        }
        let epochs = rooms.reduce(into: [RoomID: Int64]()) { $0[$1] = a.store.epoch(of: $1) }
        #expect(epochs.count == rooms.count)

        // Redis away long enough for every node's heartbeat to find it so; a keeps its rooms on the fences.
        redis.halt()
        let stoppedAt = monotonic()
        let outage = Duration.milliseconds(Int64(2_500 * TestTime.scale))
        while monotonic() - stoppedAt < outage {
            #expect(rooms.allSatisfy { a.owns($0, at: monotonic()) }, "a keeps its rooms on the fences")
            usleep(100_000)
        }
        try redis.start()

        // b asks for every room at once, before a's keeper has had its round.
        let answers = Locked<[RoomID: ClusterTake]>([:])
        let done = DispatchSemaphore(value: 0)
        for room in rooms {
            b.take(room) { taken in
                answers.update { $0[room] = taken }
                done.signal()
            }
        }
        for _ in rooms { #expect(waitFor(done, seconds: 10), "every take answered") }
        for room in rooms {
            guard case .elsewhere(let node)? = answers.current[room] else {
                Issue.record("\(room): b was answered \(String(describing: answers.current[room])), not that a runs it")
                continue
            }
            #expect(node == "a")
        }
        #expect(lost.current.isEmpty, "a lost \(lost.current)")
        #expect(rooms.allSatisfy { a.owns($0, at: monotonic()) && a.store.epoch(of: $0) == epochs[$0] },
                "a keeps every room under the same epoch")
        #expect(rooms.allSatisfy { !b.owns($0, at: monotonic()) && b.store.epoch(of: $0) == nil })
        let onRedis = RedisLeases(address: address)
        for room in rooms {
            #expect(try onRedis.holder(room: room.rawValue) == LeaseHolder(node: "a", epoch: epochs[room]!))
        }
    }
}
