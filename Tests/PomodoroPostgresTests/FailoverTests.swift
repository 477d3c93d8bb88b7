import Foundation
import Glibc
import Testing
import PomodoroCluster
import PomodoroCore
import PomodoroStore
@testable import PomodoroPostgres
import PomodoroTestSupport

/// Failover of one room between two nodes' cluster parts (leases, keeper, fenced store) on a real Redis and
/// a real PostgreSQL, without the servers around them: the owner stops renewing mid-focus, the other node
/// takes the room within the lease's time to live and finds the same running phase; when the old owner runs
/// again, it has lost the room on its own clock and the store refuses what it still sends.
@Suite(.onOwnThreads, .timeLimit(.minutes(TestTime.minutes(1))))
struct FailoverTests {
    let server: PostgresTestServer
    init() async throws { server = try await PostgresTestServer.shared }

    /// One node's cluster parts.
    final class Node: @unchecked Sendable {
        let name: String
        let leases: RedisLeases
        let store: FencedRoomStore
        let keeper: LeaseKeeper
        let losses = Locked<[LeaseKeeper.Loss]>([])

        init(_ name: String, redis: RedisAddress, database: String) throws {
            self.name = name
            leases = RedisLeases(address: redis)
            store = FencedRoomStore(base: try PostgresRoomStore.open(url: database))
            let losses = losses, store = store
            keeper = LeaseKeeper(leases: RedisLeases(address: redis, timeout: 0.3), node: name, clock: monotonic) {
                room, _, loss in
                store.disown(room)
                losses.update { $0.append(loss) }
            }
        }

        func take(_ room: RoomID) throws -> RoomTakeover.Outcome {
            let outcome = try RoomTakeover(node: name).take(room, leases: leases, store: store, now: monotonic)
            if case .owned(let term, _, _) = outcome { keeper.hold(room, term: term) }
            return outcome
        }
    }

    @Test func theRoomMovesToASurvivorWithTheSameDeadlineAndTheOldOwnerIsFencedOff() throws {
        let redis = try RedisTestServer()
        defer { redis.stop() }
        let address = try RedisAddress(parsing: redis.url)
        let database = try server.makeDatabase()
        let room = Sample.room
        let a = try Node("a", redis: address, database: database)
        let b = try Node("b", redis: address, database: database)
        a.keeper.start()
        b.keeper.start()
        defer { a.keeper.stop(); b.keeper.stop() }

        // Node a owns the room and starts a focus that ends at a fixed wall-clock moment.
        guard case .owned = try a.take(room) else { Issue.record("a could not take a free room"); return }
        let endsAtMs: Int64 = 1_795_000_000_000
        try a.store.apply([.saveRoom(Sample.roomRecord(timer: .running(endsAtMs: endsAtMs), phase: .focus, seq: 20),
                                     passcode: nil),
                           .saveMember(room, Sample.member(1, name: "Ann"))])
        #expect(try b.take(room) == .ownedElsewhere(LeaseHolder(node: "a", epoch: 1)))

        // Node a stops renewing (as if killed or stopped): b keeps trying, as a node with members of the
        // room does, and owns it within the lease's time to live.
        a.keeper.stop()
        let stopped = monotonic()
        var taken: (term: LeaseTerm, stored: StoredRoom?)?
        while taken == nil && monotonic() - stopped < .seconds(5) {
            if case .owned(let term, let stored, _) = try b.take(room) { taken = (term, stored) } else { usleep(20_000) }
        }
        let waited = monotonic() - stopped
        let (term, stored) = try #require(taken)
        #expect(term.epoch == 2)
        #expect(waited < .seconds(2))
        #expect(stored?.record.timer == .running(endsAtMs: endsAtMs))
        #expect(stored?.record.phase == .focus)
        #expect(stored?.record.seq == 20)
        #expect(stored?.members.map(\.name) == ["Ann"])

        // Node a runs again: whatever it still holds of the room is refused by the fence.
        do {
            try a.store.apply([.saveRoom(Sample.roomRecord(timer: .running(endsAtMs: endsAtMs + 60_000), phase: .focus,
                                                           seq: 21), passcode: nil)])
            Issue.record("the old owner's write landed")
        } catch {
            #expect(error.isFenced)
        }
        #expect(!a.keeper.isValid(room, at: monotonic()))
        try b.store.apply([.saveRoom(Sample.roomRecord(timer: .running(endsAtMs: endsAtMs), phase: .focus, seq: 21),
                                     passcode: nil)])
        #expect(try b.store.loadRoom(room)?.record.seq == 21)
        #expect(b.keeper.isValid(room, at: monotonic()))
        #expect(b.losses.current.isEmpty)
    }
}

/// CLOCK_MONOTONIC as an `Instant`.
@Sendable func monotonic() -> Instant {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return Instant(nanoseconds: Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec))
}
