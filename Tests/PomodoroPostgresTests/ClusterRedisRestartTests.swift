import Foundation
import Glibc
import PomodoroCluster
import PomodoroCore
import PomodoroNet
import PomodoroPostgres
import PomodoroProtocol
import PomodoroStore
import PomodoroTestSupport
import Testing

/// Redis stopped for a while and started again (it forgets every lease and epoch) under three
/// `pomodoro-server` nodes running six rooms with members in a focus: what docs/CLUSTER.md promises holds.
/// While Redis is away each owner keeps its rooms on the store's fences: no member is closed, every member
/// hears every second, a member's pause is answered and journaled, a newcomer joins on the owner's node,
/// and a join of a room another node owns is refused with `unavailable`; a member and an observer relayed
/// through another node hear every second from their own node's copy of the deadline. Once Redis is back, each owner puts
/// its leases back under the same epochs (the fences never moved), and each room is listed by one node.
/// A seventh room, with a schedule and nobody in it, is run by exactly one node before and after.
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

    /// How long Redis stays away.
    static let outage = 6.0

    /// The ticks `peer` heard until one arrived after `until` (a close or a silence of 3 s fails).
    static func ticks(of peer: Peer, until: Date) throws -> [(tick: TickPayload, arrived: Date)] {
        var heard: [(tick: TickPayload, arrived: Date)] = []
        while heard.last.map({ $0.arrived <= until }) ?? true {
            heard.append(try peer.nextTick(timeout: 3))
        }
        return heard
    }

    @Test func roomsRunOnTheirFencesWhileRedisIsAwayAndKeepTheirOwnersWhenItComesBack() async throws {
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
        for room in running { for member in room.members { _ = try member.peer.nextTick() } }
        // A member of a room owned by another node, relayed through its own.
        let relayed = try Peer(client, port: nodes[(running[1].node + 2) % 3].port)
        let (relayedYou, relayedRoom) = try relayed.join(running[1].room, name: "Ed")
        #expect(relayedRoom.status == .running && relayedRoom.endsAt == running[1].endsAt)
        _ = try relayed.nextTick()
        // And an observer of that room, relayed the same way.
        let watcher = try Peer(client, port: nodes[(running[1].node + 2) % 3].port)
        watcher.send(.observe(room: running[1].room))
        _ = try watcher.expect("observing") { if case .observing = $0 { true } else { nil } }
        _ = try watcher.nextTick()
        let leases = RedisLeases(address: address)
        var before: [String: LeaseHolder] = [:]
        for room in running { before[room.room] = try #require(try leases.holder(room: room.room)) }
        let scheduledOwner = try ClusterScheduleTests.owner(of: "rr-sched", redis: redis.url)

        // Redis goes.
        redis.halt()
        let halted = Date()
        usleep(useconds_t(2_000_000))   // the scenario: two seconds into the outage, past every term's end
        // A member's pause and resume are answered on its owner's node (and written: see the journal below).
        let pauser = running[0].members[0].peer
        pauser.send(.pause)
        _ = try pauser.expect("a paused state") { if case .state(let room) = $0, room.status == .paused { true } else { nil } }
        let pausedAt = Int64(Date().timeIntervalSince1970 * 1000)
        pauser.send(.resume)
        _ = try pauser.expect("a running state", Self.runningEndsAt)
        // A newcomer joins a room on its owner's node.
        let newcomer = try Peer(client, port: nodes[running[2].node].port)
        let (newYou, newRoom) = try newcomer.join(running[2].room, name: "Cy")
        #expect(newRoom.status == .running && newRoom.endsAt == running[2].endsAt)
        // A join of a room another node owns waits for Redis, and says so.
        let elsewhere = try Peer(client, port: nodes[(running[1].node + 1) % 3].port)
        elsewhere.send(.join(room: running[1].room, name: "Di", token: nil))
        let refused = try elsewhere.expect("an error") { if case .error(let code, let message, _, _, _) = $0 { (code, message) } else { nil } }
        #expect(refused.0 == .unavailable)
        #expect(refused.1.contains("coordinator") && refused.1.contains("waits"), "the refusal says takes wait for Redis: \(refused.1)")
        let left = Self.outage - Date().timeIntervalSince(halted)
        if left > 0 { usleep(useconds_t(left * 1_000_000)) }

        // The relayed member and observer heard every second meanwhile: their node counts down from the
        // deadline it holds (nothing reaches it from the owner while the bus is away).
        var relayedDuringOutage = 0
        for peer in [relayed, watcher] {
            let heard = try Self.ticks(of: peer, until: Date()).filter { $0.arrived > halted }
            relayedDuringOutage = heard.count
            #expect(heard.count >= Int(Self.outage) - 1, "\(heard.count) ticks in the \(Self.outage) s outage")
            #expect(heard.allSatisfy { $0.tick.endsAt == running[1].endsAt && $0.tick.phase == .focus })
            for (earlier, later) in zip(heard, heard.dropFirst()) {
                #expect(earlier.tick.remainingMs - later.tick.remainingMs == 1000,
                        "relayed: a second missing or repeated (\(earlier.tick.remainingMs) then \(later.tick.remainingMs))")
                #expect(later.arrived.timeIntervalSince(earlier.arrived) < 1.5)
            }
            for tick in heard {
                let expected = running[1].endsAt - Int64(tick.arrived.timeIntervalSince1970 * 1000)
                #expect(abs(tick.tick.remainingMs - expected) < 1_500, "the relayed second: \(tick.tick.remainingMs) ms, \(expected) expected")
            }
        }

        // Redis comes back empty: each owner puts its leases back, under the same epochs.
        try redis.start()
        let returned = Date()
        var restoredAfter: Double?
        let restoredBy = TestTime.deadline(5)
        while Date() < restoredBy {
            let now = try running.map { try leases.holder(room: $0.room) }
            if zip(running, now).allSatisfy({ before[$0.room] == $1 }) {
                restoredAfter = Date().timeIntervalSince(returned)
                break
            }
            usleep(50_000)
        }
        #expect(restoredAfter != nil, "every owner holds its rooms' leases again under the same epochs")
        let store = try PostgresRoomStore.open(url: database)
        for room in running {
            #expect(try store.fence(room: RoomID(validating: room.room)) == before[room.room]?.epoch, "\(room.room): nobody claimed it")
        }

        // The relayed member is not closed: its node brings it up to date with a `state` once the bus is back,
        // the room as its owner runs it, and its ticks go on with the right second.
        let resynced = try relayed.expect("a state after the bus came back", timeout: 12) { message -> SnapshotPayload? in
            if case .state(let room) = message { room } else { nil }
        }
        let resyncedAfter = Date().timeIntervalSince(returned)
        #expect(resynced.status == .running && resynced.phase == .focus && resynced.endsAt == running[1].endsAt)
        #expect(resynced.members.contains { $0.id == relayedYou.id && $0.connected }, "the relayed member is in the room, connected")
        // The relayed observer too: it observes again and hears the room as a `state`, no close.
        let watched = try watcher.expect("a state after the bus came back", timeout: 12) { message -> SnapshotPayload? in
            if case .state(let room) = message { room } else { nil }
        }
        #expect(watched.status == .running && watched.endsAt == running[1].endsAt)
        _ = try watcher.nextTick()
        let relayedTick = try relayed.nextTick()
        let expectedRemaining = running[1].endsAt - Int64(relayedTick.arrived.timeIntervalSince1970 * 1000)
        #expect(relayedTick.tick.phase == .focus && relayedTick.tick.endsAt == running[1].endsAt)
        #expect(abs(relayedTick.tick.remainingMs - expectedRemaining) < 1_500,
                "the relayed member's second: \(relayedTick.tick.remainingMs) ms left, \(expectedRemaining) expected")

        // No member was closed, and every member heard every second, Redis away or not.
        let heardUntil = Date().addingTimeInterval(1)
        var longestGap = 0.0
        for (index, room) in running.enumerated() {
            for member in room.members {
                let heard = try Self.ticks(of: member.peer, until: heardUntil)
                let gaps = zip(heard, heard.dropFirst()).map { $1.arrived.timeIntervalSince($0.arrived) }
                longestGap = max(longestGap, gaps.max() ?? 0)
                #expect(heard.last!.arrived > returned)
                guard index != 0 else { continue }   // paused meanwhile (the pauser read its ticks while waiting for the answers)
                #expect(heard.first!.arrived < halted.addingTimeInterval(1))
                for (earlier, later) in zip(heard, heard.dropFirst()) {
                    #expect(earlier.tick.remainingMs - later.tick.remainingMs == 1000,
                            "\(room.room): a second missing or repeated (\(earlier.tick.remainingMs) then \(later.tick.remainingMs))")
                }
                #expect(gaps.allSatisfy { $0 < 1.5 }, "\(room.room): a tick came \(gaps.max() ?? 0) s after the one before")
            }
        }
        _ = try newcomer.nextTick()

        // What the owners wrote while Redis was away is in the store.
        let interruptions = try store.interruptions(room: RoomID(validating: running[0].room), from: nil, before: nil)
        #expect(interruptions.contains { abs($0.atMs - pausedAt) < 2_000 }, "the pause made during the outage is journaled")
        let stored = try #require(try store.loadRoom(RoomID(validating: running[2].room)))
        #expect(stored.members.contains { $0.id.rawValue == newYou.id }, "the newcomer is stored")

        // The room with a schedule is run by exactly one node.
        let scheduledHolder = try #require(try {
            let deadline = TestTime.deadline(8)
            while Date() < deadline {
                if let holder = try leases.holder(room: "rr-sched") { return holder }
                usleep(50_000)
            }
            return nil
        }())
        #expect(try store.fence(room: RoomID(validating: "rr-sched")) == scheduledHolder.epoch)
        let listedBy = TestTime.deadline(5)
        while Date() < listedBy {
            let view = try httpGet(port: try #require(nodes.first { $0.name == scheduledHolder.node }).port, path: "/api/cluster")
            if view.body.contains("\"rr-sched\"") { break }
            usleep(50_000)
        }
        // Each room is listed by exactly one node: its owner.
        var listed: [String: [String]] = [:]
        for node in nodes {
            let view = try httpGet(port: node.port, path: "/api/cluster")
            let object = try #require(try JSONSerialization.jsonObject(with: Data(view.body.utf8)) as? [String: Any])
            for room in object["rooms"] as? [String] ?? [] { listed[room, default: []].append(node.name) }
        }
        for room in running {
            #expect(listed[room.room] == [nodes[room.node].name], "\(room.room): \(listed[room.room] ?? [])")
        }
        #expect(listed["rr-sched"] == [scheduledHolder.node], "rr-sched: \(listed["rr-sched"] ?? [])")
        print("cluster redis outage: Redis away \(Int(Self.outage)) s; 13 members on their owners' nodes, none closed, longest gap between ticks \(Int(longestGap * 1000)) ms; a relayed member and observer heard \(relayedDuringOutage) ticks during it from their own node, and were brought up to date \(Int(resyncedAfter * 1000)) ms after Redis returned, not closed; leases back under the same epochs \(Int((restoredAfter ?? -1) * 1000)) ms after Redis returned (the scheduled room on \(scheduledOwner), then \(scheduledHolder.node))")
    }
}
