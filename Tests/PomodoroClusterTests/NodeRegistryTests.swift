import Foundation
import PomodoroCluster
import PomodoroTestSupport
import Testing

/// The nodes seen, against a real `redis-server` started by the test on loopback.
@Suite(.onOwnThreads, .timeLimit(.minutes(TestTime.minutes(1))))
final class NodeRegistryTests {
    let redis: RedisTestServer
    let leases: RedisLeases

    init() throws {
        redis = try RedisTestServer()
        leases = RedisLeases(address: try RedisAddress(parsing: redis.url))
    }

    deinit { redis.stop() }

    @Test func aNodeThatLeavesIsOffTheListAtOnce() throws {
        let registry = NodeRegistry()
        try registry.heartbeat(node: "a", roomsOwned: 2, on: leases)
        try registry.heartbeat(node: "b", roomsOwned: 1, on: leases)
        try registry.leave(node: "a", on: leases)
        #expect(try registry.nodes(on: leases).map(\.node) == ["b"])
        try registry.leave(node: "gone", on: leases)   // one never listed: nothing happens
        #expect(try registry.nodes(on: leases).map(\.node) == ["b"])
    }

    @Test func manyNodesAreListedEachWithItsOwnRoomCountInOneCommand() throws {
        let registry = NodeRegistry()
        for index in 0..<12 { try registry.heartbeat(node: "n\(index)", roomsOwned: index * 10, on: leases) }
        // A node listed without a room count (its count removed by hand) is listed with none.
        try leases.command(["HDEL", "pomodoro:node-rooms", "n3"])
        _ = try leases.command(["CONFIG", "RESETSTAT"])
        let seen = try registry.nodes(on: leases)
        #expect(seen.map(\.node) == (0..<12).map { "n\($0)" }.sorted())
        #expect(Dictionary(uniqueKeysWithValues: seen.map { ($0.node, $0.roomsOwned) })
                == Dictionary(uniqueKeysWithValues: (0..<12).map { ("n\($0)", $0 == 3 ? 0 : $0 * 10) }))
        // One listing: the script, TIME, ZRANGEBYSCORE and one HMGET, whatever the number of nodes.
        guard case .string(let stats) = try leases.command(["INFO", "commandstats"]) else {
            Issue.record("INFO commandstats did not answer a text"); return
        }
        #expect(stats.contains("cmdstat_hmget:calls=1,"))
        #expect(!stats.contains("cmdstat_hget:"))
    }

    @Test func nodesAreListedWithTheRoomsTheyOwnUntilTheyFallSilent() throws {
        let registry = NodeRegistry(window: .milliseconds(400))
        #expect(try registry.nodes(on: leases) == [])
        try registry.heartbeat(node: "b:8080", roomsOwned: 3, on: leases)
        try registry.heartbeat(node: "a:8080", roomsOwned: 0, on: leases)
        try registry.heartbeat(node: "b:8080", roomsOwned: 4, on: leases)
        let seen = try registry.nodes(on: leases)
        #expect(seen.map(\.node) == ["a:8080", "b:8080"])
        #expect(seen.map(\.roomsOwned) == [0, 4])
        #expect(seen.allSatisfy { (0..<400).contains($0.silentForMs) })

        // a keeps beating, b falls silent: b leaves the list once the window has passed.
        let started = Date()
        var listed = seen.map(\.node)
        while listed.contains("b:8080") && Date().timeIntervalSince(started) < 3 {
            try registry.heartbeat(node: "a:8080", roomsOwned: 1, on: leases)
            listed = try registry.nodes(on: leases).map(\.node)
            usleep(50_000)
        }
        #expect(listed == ["a:8080"])
        #expect(Date().timeIntervalSince(started) >= 0.3)
        #expect(try registry.nodes(on: leases).first?.roomsOwned == 1)
        // The next heartbeat of any node also forgets b's room count.
        try registry.heartbeat(node: "a:8080", roomsOwned: 1, on: leases)
        #expect(try leases.command(["HGET", "pomodoro:node-rooms", "b:8080"]) == .null)
    }
}
