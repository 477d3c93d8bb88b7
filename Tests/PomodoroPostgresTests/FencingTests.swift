import Foundation
import Testing
import PomodoroCluster
import PomodoroCore
import PomodoroStore
@testable import PomodoroPostgres
import PomodoroTestSupport

/// A room's fence: once a node has claimed a room under an epoch, nothing written under an older epoch lands.
@Suite(.onOwnThreads, .timeLimit(.minutes(TestTime.minutes(2))))
struct FencingTests {
    let server: PostgresTestServer
    init() async throws { server = try await PostgresTestServer.shared }

    @Test func aNewerClaimTurnsAwayTheOlderOwnersWrites() throws {
        let url = try server.makeDatabase()
        let old = try PostgresRoomStore.open(url: url), new = try PostgresRoomStore.open(url: url)
        let room = Sample.room
        #expect(try old.claim(room: room, epoch: 1) == nil)
        try old.apply([.saveRoom(Sample.roomRecord(seq: 10), passcode: nil), .saveMember(room, Sample.member(1, name: "Ann"))],
                      fences: [room: 1])
        #expect(try old.fence(room: room) == 1)

        let claimed = try #require(try new.claim(room: room, epoch: 2))
        #expect(claimed.record.seq == 10)
        #expect(claimed.members.map(\.name) == ["Ann"])
        #expect(try new.fence(room: room) == 2)

        // The stalled owner wakes up and writes what it had queued: refused, and nothing of it lands.
        do {
            try old.apply([.saveRoom(Sample.roomRecord(seq: 11), passcode: nil),
                           .focusCompleted(Sample.session(endedAtMs: 1_795_000_000_000))], fences: [room: 1])
            Issue.record("a write under epoch 1 landed after a claim under epoch 2")
        } catch {
            #expect(error.isFenced)
            #expect(!error.isTransient)
            #expect(error.message.contains("epoch 1"))
        }
        #expect(try new.loadRoom(room)?.record.seq == 10)
        #expect(try new.sessions(room: room, endedFrom: nil, before: nil, limit: nil).isEmpty)
        // It cannot claim the room back under its old epoch either.
        #expect(throws: StoreError.self) { try old.claim(room: room, epoch: 1) }

        // The new owner writes under its own epoch, again and again.
        try new.apply([.saveRoom(Sample.roomRecord(seq: 12), passcode: nil)], fences: [room: 2])
        try new.apply([.saveRoom(Sample.roomRecord(seq: 13), passcode: nil)], fences: [room: 2])
        #expect(try old.loadRoom(room)?.record.seq == 13)
    }

    @Test func aFencedRoomFailsItsWholeBatchAndLeavesOtherRoomsToOtherBatches() throws {
        let url = try server.makeDatabase()
        let store = try PostgresRoomStore.open(url: url)
        let a = roomID("room-a"), b = roomID("room-b")
        _ = try store.claim(room: b, epoch: 5)
        #expect(throws: StoreError.self) {
            try store.apply([.saveRoom(Sample.roomRecord(a), passcode: nil), .saveRoom(Sample.roomRecord(b), passcode: nil)],
                            fences: [a: 1, b: 4])
        }
        #expect(try store.loadRoom(a) == nil)
        #expect(try store.fence(room: a) == nil)

        // Through the writer, the fenced batch fails alone; the one queued beside it lands.
        let fenced = FencedRoomStore(base: store)
        fenced.own(a, epoch: 1)
        fenced.own(b, epoch: 4)
        let writer = StoreWriter(store: fenced)
        let results = Locked<[String: StoreError?]>([:])
        writer.enqueue([.saveRoom(Sample.roomRecord(a), passcode: nil)]) { error in results.update { $0["a"] = error } }
        writer.enqueue([.saveRoom(Sample.roomRecord(b), passcode: nil)]) { error in results.update { $0["b"] = error } }
        writer.flush()
        #expect(results.current["a"] == .some(nil))
        #expect(results.current["b"]??.isFenced == true)
        #expect(try store.loadRoom(a) != nil)
        #expect(try store.loadRoom(b) == nil)
    }

    /// A batch's fences are raised by one statement sent ahead of its changes: one room fenced among many
    /// refuses the whole batch (sessions or none), names that room, and raises no other room's fence.
    @Test func oneFencedRoomAmongManyRefusesTheBatchAndRaisesNoFence() throws {
        let store = try PostgresRoomStore.open(url: try server.makeDatabase())
        let rooms = (0..<5).map { roomID("room-\($0)") }
        for room in rooms { _ = try store.claim(room: room, epoch: 3) }
        _ = try store.claim(room: rooms[2], epoch: 7)   // a newer owner took room-2
        for withSession in [false, true] {
            var changes: [StoreChange] = rooms.map { .saveRoom(Sample.roomRecord($0, seq: 9), passcode: nil) }
            if withSession { changes.append(.focusCompleted(Sample.session(rooms[4], endedAtMs: 1_795_000_000_000))) }
            // room-0 under its own epoch again, room-1 and room-3 higher, room-4 higher still: all would pass alone.
            let fences: [RoomID: Int64] = [rooms[0]: 3, rooms[1]: 4, rooms[2]: 6, rooms[3]: 4, rooms[4]: 5]
            do {
                try store.apply(changes, fences: fences)
                Issue.record("a batch with a fenced room landed")
            } catch {
                #expect(error.isFenced)
                #expect(!error.isTransient)
                #expect(error.message.contains("room-2") && error.message.contains("epoch 6"))
            }
            #expect(try rooms.map { try store.fence(room: $0) } == [3, 3, 7, 3, 3])
            #expect(try rooms.allSatisfy { try store.loadRoom($0) == nil })
            #expect(try store.sessions(room: rooms[4], endedFrom: nil, before: nil, limit: nil).isEmpty)
        }
        // Without the fenced room the same batch lands, and raises each fence to its epoch; a fence already at
        // its epoch is locked, not written again (its row version stays the same).
        let version = { (room: RoomID) throws -> [String] in
            try store.column(sql: "SELECT xmin::text FROM room_fence WHERE room_id = '\(room.rawValue)'")
        }
        let before = (try version(rooms[0]), try version(rooms[1]))
        try store.apply([.saveRoom(Sample.roomRecord(rooms[0], seq: 9), passcode: nil),
                         .saveRoom(Sample.roomRecord(rooms[4], seq: 9), passcode: nil),
                         .focusCompleted(Sample.session(rooms[4], endedAtMs: 1_795_000_000_000))],
                        fences: [rooms[0]: 3, rooms[1]: 4, rooms[4]: 5])
        #expect(try rooms.map { try store.fence(room: $0) } == [3, 4, 7, 3, 5])
        #expect(try version(rooms[0]) == before.0)
        #expect(try version(rooms[1]) != before.1)
        #expect(try store.loadRoom(rooms[4])?.record.seq == 9)
        #expect(try store.sessions(room: rooms[4], endedFrom: nil, before: nil, limit: nil).count == 1)
    }

    @Test func aNodeWritesNothingForARoomItDoesNotOwn() throws {
        let store = FencedRoomStore(base: try PostgresRoomStore.open(url: try server.makeDatabase()))
        let room = Sample.room
        #expect(throws: StoreError.self) { try store.apply([.saveRoom(Sample.roomRecord(), passcode: nil)]) }
        #expect(try store.claim(room, epoch: 3) == nil)
        #expect(store.epoch(of: room) == 3)
        try store.apply([.saveRoom(Sample.roomRecord(), passcode: nil)])
        store.disown(room)
        do {
            try store.apply([.saveMember(room, Sample.member(1, name: "Ann"))])
            Issue.record("a disowned room was written")
        } catch {
            #expect(error.isFenced)
        }
        #expect(try store.loadRoom(room)?.members.isEmpty == true)
    }

    @Test func concurrentOwnersNeverBothWriteAfterTheNewerClaim() throws {
        let url = try server.makeDatabase()
        let room = Sample.room
        let old = try PostgresRoomStore.open(url: url), new = try PostgresRoomStore.open(url: url)
        _ = try old.claim(room: room, epoch: 1)
        try old.apply([.saveRoom(Sample.roomRecord(seq: 0), passcode: nil)], fences: [room: 1])
        // The old owner keeps writing on a thread of its own while the new one claims the room.
        let landedAfterClaim = Locked(0)
        let claimed = Locked(false)
        let done = DispatchSemaphore(value: 0)
        Thread {
            for seq in 1...200 {
                do {
                    try old.apply([.saveRoom(Sample.roomRecord(seq: UInt64(seq)), passcode: nil)], fences: [room: 1])
                    // Counted only when the claim had committed before this write began.
                    if claimed.current { landedAfterClaim.update { $0 += 1 } }
                } catch {
                    break
                }
            }
            done.signal()
        }.start()
        usleep(20_000)
        _ = try new.claim(room: room, epoch: 2)
        claimed.update { $0 = true }
        #expect(waitFor(done))
        // At most the one write that was already past its fence when the claim committed.
        #expect(landedAfterClaim.current <= 1)
        let seq = try #require(try new.loadRoom(room)?.record.seq)
        try new.apply([.saveRoom(Sample.roomRecord(seq: seq + 1000), passcode: nil)], fences: [room: 2])
        #expect(try old.loadRoom(room)?.record.seq == seq + 1000)
    }

    /// Redis restarted without persistence forgets epochs the store's fence remembers: a node that takes the
    /// room then raises Redis's counter above the fence, and waits one time to live before acting.
    @Test func takingARoomAfterRedisForgotItsEpochs() throws {
        let redis = try RedisTestServer()
        defer { redis.stop() }
        let address = try RedisAddress(parsing: redis.url)
        let url = try server.makeDatabase()
        let room = Sample.room
        var clock = Instant(nanoseconds: 1_000_000_000)
        let a = FencedRoomStore(base: try PostgresRoomStore.open(url: url))
        let b = FencedRoomStore(base: try PostgresRoomStore.open(url: url))
        let leasesA = RedisLeases(address: address), leasesB = RedisLeases(address: address)

        guard case .owned(let term, nil, let startsAt) = try RoomTakeover(node: "a").take(room, leases: leasesA,
                                                                                         store: a, now: { clock }) else {
            Issue.record("node a could not take a free room"); return
        }
        #expect(term.epoch == 1 && startsAt == clock)
        try a.apply([.saveRoom(Sample.roomRecord(seq: 3), passcode: nil)])
        #expect(try RoomTakeover(node: "b").take(room, leases: leasesB, store: b, now: { clock })
                == .ownedElsewhere(LeaseHolder(node: "a", epoch: 1)))

        redis.halt()
        try redis.start()
        clock = clock + .milliseconds(100)
        guard case .owned(let termB, let stored, let startsB) = try RoomTakeover(node: "b").take(
            room, leases: leasesB, store: b, now: { clock }) else {
            Issue.record("node b could not take the room from a Redis that forgot it"); return
        }
        #expect(termB.epoch == 2)
        #expect(stored?.record.seq == 3)
        #expect(startsB == clock + LeaseTerm.timeToLive)
        #expect(startsB >= term.validUntil)
        #expect(try leasesA.holder(room: room.rawValue) == LeaseHolder(node: "b", epoch: 2))
        // Node a still believes it holds epoch 1: its writes are refused all the same.
        #expect(throws: StoreError.self) { try a.apply([.saveRoom(Sample.roomRecord(seq: 4), passcode: nil)]) }
        try b.apply([.saveRoom(Sample.roomRecord(seq: 5), passcode: nil)])
        #expect(try b.loadRoom(room)?.record.seq == 5)
    }
}
