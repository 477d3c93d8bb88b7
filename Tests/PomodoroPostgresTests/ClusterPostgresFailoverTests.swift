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

/// The cluster's PostgreSQL primary crashes and its synchronous standby is promoted, under three
/// `pomodoro-server` nodes given both hosts in one libpq URL with `target_session_attrs=read-write`, each
/// running a room with members in a focus: no member is closed, a change made while there is no primary is
/// announced once the standby is promoted (within 2 s of it), later changes go on against the new primary,
/// and everything any member was told (each room's last `state`, every member welcomed) is on it.
@Suite(.onOwnThreads, .timeLimit(.minutes(TestTime.minutes(2))))
struct ClusterPostgresFailoverTests {
    let client: WebSocketClient

    init() throws {
        client = try WebSocketClient()
        client.start()
    }

    func finish() {
        client.stop()
        client.waitUntilFinished()
    }

    static func state(_ message: ServerMessage) -> SnapshotPayload? {
        if case .state(let room) = message { room } else { nil }
    }

    @Test func writesFollowAPromotedSynchronousStandbyAndNothingAnnouncedIsLost() async throws {
        defer { finish() }
        let (primary, standby) = try PostgresTestServer.primaryWithSynchronousStandby()
        defer { primary.stop(); standby.stop() }
        let redis = try RedisTestServer()
        defer { redis.stop() }
        let single = try primary.makeDatabase()
        let name = try #require(single.split(separator: "/").last)
        let database = "postgres://pomodoro@127.0.0.1:\(primary.port),127.0.0.1:\(standby.port)/\(name)?target_session_attrs=read-write"
        let nodes = try ["a", "b", "c"].map { try ClusterScheduleTests.Node($0, redis: redis.url, database: database) }
        defer { for node in nodes { node.process.kill() } }

        // A room on each node, two members each, in a running focus; each member's last `state` is what it
        // was told.
        struct Running {
            let room: String
            let members: [Peer]
            var welcomed: [String]
            var told: SnapshotPayload
        }
        var running: [Running] = []
        for (index, node) in nodes.enumerated() {
            let room = "pf-\(index)"
            let ada = try Peer(client, port: node.port)
            let (adaYou, _) = try ada.join(room, name: "Ada")
            let bo = try Peer(client, port: node.port)
            let (boYou, _) = try bo.join(room, name: "Bo")
            ada.send(.start)
            let told = try bo.expect("a running state") { Self.state($0).flatMap { $0.status == .running ? $0 : nil } }
            running.append(Running(room: room, members: [ada, bo], welcomed: [adaYou.id, boYou.id], told: told))
        }

        // The primary crashes; meanwhile a member of the first room pauses (its `state` waits for a primary).
        try primary.crash()
        running[0].members[0].send(.pause)
        usleep(1_000_000)   // the scenario: a second without any primary
        try standby.promote()
        let promoted = Date()
        let paused = try running[0].members[1].expect("the paused state", timeout: 10) {
            Self.state($0).flatMap { $0.status == .paused ? $0 : nil }
        }
        let resumedAfter = Date().timeIntervalSince(promoted)
        running[0].told = paused
        #expect(resumedAfter < 2 * TestTime.scale, "the change made without a primary came \(resumedAfter) s after the promotion")

        // Later changes go on against the new primary (a refusal while a node still counts the outage is
        // tried again): the second room pauses, a newcomer joins the third.
        var pausedSecond: SnapshotPayload?
        let retryUntil = TestTime.deadline(5)
        while pausedSecond == nil && Date() < retryUntil {
            running[1].members[0].send(.pause)
            let answer = try running[1].members[0].expect("an answer to the pause", timeout: 5) { message -> Bool? in
                if let state = Self.state(message), state.status == .paused { pausedSecond = state; return true }
                if case .error(.storeUnavailable, _, _, _, _) = message { return false }
                return nil
            }
            if !answer { usleep(200_000) }
        }
        running[1].told = try #require(pausedSecond)
        let newcomer = try Peer(client, port: nodes[2].port)
        let (newYou, _) = try newcomer.join(running[2].room, name: "Cy")
        running[2].welcomed.append(newYou.id)
        running[2].told = try running[2].members[0].expect("the state with the newcomer") {
            Self.state($0).flatMap { $0.memberCount == 3 ? $0 : nil }
        }

        // No member was closed: the paused rooms run again, and every member hears ticks.
        for index in 0..<2 {
            running[index].members[1].send(.resume)
            let after = running[index].told.seq
            running[index].told = try running[index].members[0].expect("a running state") {
                Self.state($0).flatMap { $0.status == .running && $0.seq > after ? $0 : nil }
            }
        }
        for room in running { for member in room.members { _ = try member.nextTick() } }

        // Everything told is on the new primary.
        let store = try PostgresRoomStore.open(url: standby.url(database: String(name)))
        for room in running {
            let stored = try #require(try store.loadRoom(RoomID(validating: room.room)))
            #expect(stored.record.seq >= room.told.seq, "\(room.room): stored at seq \(stored.record.seq), told \(room.told.seq)")
            #expect(Set(stored.members.map(\.id.rawValue)).isSuperset(of: room.welcomed))
            #expect(stored.record.timer == .running(endsAtMs: room.told.endsAt ?? 0), "\(room.room) is stored as last told")
        }
        print("cluster postgres failover: the primary crashed, the synchronous standby promoted 1 s later; the change made meanwhile was announced \(Int(resumedAfter * 1000)) ms after the promotion; nothing announced missing on the new primary")
    }
}
