import Foundation
import Testing
import PomodoroCluster
import PomodoroCore
import PomodoroStore
@testable import PomodoroPostgres
import PomodoroTestSupport

/// Redis restarted (without persistence) while one node owns many rooms and another wants them: what
/// docs/CLUSTER.md promises holds. No room ever has two owners at one instant; the first owner lets go on its
/// own clock; the second owns every room, under epochs above the store's fences, and only it can write.
@Suite(.onOwnThreads, .timeLimit(.minutes(TestTime.minutes(1))))
struct RedisRestartTests {
    let server: PostgresTestServer
    init() async throws { server = try await PostgresTestServer.shared }

    @Test func noRoomHasTwoOwnersAcrossARestartAndTheSurvivorTakesThemAll() throws {
        let redis = try RedisTestServer()
        defer { redis.stop() }
        let address = try RedisAddress(parsing: redis.url)
        let database = try server.makeDatabase()
        let rooms = (0..<20).map { roomID("room-\($0)") }
        let a = try FailoverTests.Node("a", redis: address, database: database)
        let b = try FailoverTests.Node("b", redis: address, database: database)
        a.keeper.start()
        b.keeper.start()
        defer { a.keeper.stop(); b.keeper.stop() }
        for room in rooms {
            guard case .owned = try a.take(room) else { Issue.record("a could not take \(room)"); return }
            try a.store.apply([.saveRoom(Sample.roomRecord(room, timer: .running(endsAtMs: 1_795_000_000_000),
                                                           phase: .focus), passcode: nil)])
        }

        // A watcher samples both nodes at one instant, again and again, until told to stop.
        let doubleOwned = Locked<Set<RoomID>>([])
        let watching = Locked(true)
        let watcherDone = DispatchSemaphore(value: 0)
        Thread {
            while watching.current {
                let now = monotonic()
                for room in rooms where a.keeper.isValid(room, at: now) && b.keeper.isValid(room, at: now) {
                    doubleOwned.update { _ = $0.insert(room) }
                }
                usleep(1_000)
            }
            watcherDone.signal()
        }.start()
        defer { watching.update { $0 = false }; _ = waitFor(watcherDone) }

        redis.halt()
        try redis.start()
        // Node b asks for every room it does not own yet, as a node with members of them does.
        let started = monotonic()
        var owned: Set<RoomID> = []
        while owned.count < rooms.count && monotonic() - started < .seconds(10) {
            for room in rooms where !owned.contains(room) {
                if case .owned = try b.take(room) { owned.insert(room) }
            }
            usleep(20_000)
        }
        #expect(owned.count == rooms.count)
        // Its terms begin once a's have surely ended.
        let settled = monotonic() + LeaseTerm.timeToLive
        while monotonic() < settled { usleep(20_000) }
        for room in rooms {
            #expect(b.keeper.isValid(room, at: monotonic()))
            #expect(!a.keeper.isValid(room, at: monotonic()))
        }
        #expect(doubleOwned.current.isEmpty)
        #expect(a.losses.current.count == rooms.count)
        // Every room's fence moved past a's epoch: only b writes.
        for room in rooms {
            #expect(try b.store.base.fence(room: room) == 2)
            #expect(throws: StoreError.self) { try a.store.base.apply([.saveRoom(Sample.roomRecord(room), passcode: nil)],
                                                                     fences: [room: 1]) }
        }
        try b.store.apply(rooms.map { .saveRoom(Sample.roomRecord($0, seq: 99), passcode: nil) })
        #expect(try b.store.loadRoom(rooms[0])?.record.seq == 99)
    }
}
