import Foundation
import Glibc
import PomodoroNet
import PomodoroProtocol
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

    static let reconnects = "pomodoro_cluster_bus_reconnects_total"

    /// Redis away long enough for the nodes' heartbeats and buses to find it so, then back, empty: returns
    /// when it was started again, once each node's bus has subscribed again (or 5 s later, recorded).
    static func restart(_ redis: RedisTestServer, under nodes: [ClusterScheduleTests.Node]) throws -> Date {
        redis.halt()
        usleep(useconds_t(2_500_000 * TestTime.scale))
        try redis.start()
        let returned = Date()
        let back = try TestTime.waitUntil(5) {
            try nodes.allSatisfy { try metric(reconnects, port: $0.port) ?? 0 >= 1 }
        }
        #expect(back, "each node's bus subscribed again")
        return returned
    }

    /// What `peer` heard until `until`, decoded; a close is recorded as an issue.
    static func heard(by peer: Peer, until: Date, who: String) throws -> [ServerMessage] {
        var heard: [ServerMessage] = []
        while let event = peer.inbox.next(timeout: max(0, until.timeIntervalSinceNow)) {
            switch event {
            case .text(let bytes): heard.append(try WireCodec.decodeServerMessage(bytes))
            case .closed(let code, _): Issue.record("\(who) was closed (\(String(describing: code)))")
            default: break
            }
        }
        return heard
    }

    /// Runs `body` with a client, a Redis and two nodes on one new database, all stopped whatever happens.
    static func withTwoNodes(_ body: (WebSocketClient, RedisTestServer, [ClusterScheduleTests.Node]) async throws -> Void)
        async throws {
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
        try await body(client, redis, nodes)
    }

    @Test func aRestartedRedisBringsRelayedMembersUpToDateOnceAndClosesNone() async throws {
        try await Self.withTwoNodes { client, redis, nodes in
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

            let returned = try Self.restart(redis, under: nodes)
            let reconnects = Self.reconnects

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

    /// The owner takes back a relayed member whose node opens its connection again after the outage (the join
    /// with its token) without a presence change: before, it dropped the member's session first, and every
    /// member heard "Bo lost the connection", then "Bo is back", the relayed member about itself.
    @Test func aRelayedMemberResumedAfterRedisReturnedNeverShowsAsGone() async throws {
        try await Self.withTwoNodes { client, redis, nodes in
            // A room on node a in a running focus: Ada on a, Bo relayed through b, with a task.
            let ada = try Peer(client, port: nodes[0].port)
            _ = try ada.join("bus-resume", name: "Ada")
            ada.send(.start)
            _ = try ada.expect("a running state", ClusterRedisRestartTests.runningEndsAt)
            let bo = try Peer(client, port: nodes[1].port)
            let boID = try bo.join("bus-resume", name: "Bo").you.id
            bo.send(.task(text: "write the report"))
            for peer in [ada, bo] {
                _ = try peer.expect("Bo's task") { message -> Bool? in
                    guard case .state(let room) = message else { return nil }
                    return room.members.contains { $0.id == boID && $0.task == "write the report" } ? true : nil
                }
            }
            for peer in [ada, bo] { _ = try peer.nextTick() }

            let returned = try Self.restart(redis, under: nodes)
            // Past the owner's wait for the connections opened again (5 s), a beat (1 s) and a margin.
            let until = returned.addingTimeInterval(8 * TestTime.scale)
            for (who, peer) in [("Ada", ada), ("Bo", bo)] {
                let messages = try Self.heard(by: peer, until: until, who: who)
                var states = 0
                for message in messages {
                    switch message {
                    case .state(let room), .welcome(_, let room, _, _, _):
                        states += 1
                        guard let shown = room.members.first(where: { $0.id == boID }) else {
                            Issue.record("\(who) was shown a room without Bo")
                            continue
                        }
                        #expect(shown.connected && shown.present, "\(who) was shown Bo gone: \(shown)")
                        #expect(shown.task == "write the report", "\(who) was shown Bo's task lost")
                        #expect(shown.stats.interruptions == 0, "\(who) was shown Bo's focus interrupted")
                    case .event(_, let event, _):
                        switch event {
                        case .memberLeft(boID, _), .memberReturned(boID), .memberAway(boID, _, _), .memberBack(boID):
                            Issue.record("\(who) heard of Bo's presence: \(event)")
                        default: break
                        }
                    case .error(let code, let text, _, _, _):
                        Issue.record("\(who) was sent an error: \(code) \(text)")
                    default: break
                    }
                }
                #expect(messages.contains { if case .tick = $0 { true } else { false } }, "\(who) hears the room's ticks")
                if who == "Bo" { #expect(states >= 1, "Bo was brought up to date with a state") }
            }
            for node in nodes {
                #expect(try Self.metric(Self.reconnects, port: node.port) == 1, "node \(node.name): one resubscription")
            }
        }
    }
}
