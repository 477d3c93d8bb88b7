import Foundation
import PomodoroCluster
import PomodoroCore
import PomodoroStore
@testable import PomodoroPostgres
import PomodoroTestSupport
import Testing

/// The batched hand-off (docs/CLUSTER.md, "Draining a node"): a draining node gives many leases back in one
/// script, and the node asked takes them all in one Redis script and one PostgreSQL claim, on a real Redis
/// and PostgreSQL started here.
@Suite(.onOwnThreads, .timeLimit(.minutes(TestTime.minutes(2))))
struct HandOffBatchTests {
    let server: PostgresTestServer
    init() async throws { server = try await PostgresTestServer.shared }

    /// Node a takes `room` as a join would and keeps its lease for a minute: nothing renews leases here, and
    /// each is made to outlast the set-up however slow the machine (under a sanitizer, the thirty takes and
    /// writes outlast a term), so that the release finds them. A lease that lapsed between the grant and the
    /// renewal (the store's claim alone can outlast its term there) is taken again, under a higher epoch.
    static func takeAndKeep(_ room: RoomID, leases: RedisLeases, store: FencedRoomStore, now: Instant) throws -> LeaseTerm? {
        for _ in 0..<3 {
            guard case .owned(let term, nil, _) = try RoomTakeover(node: "a").take(room, leases: leases, store: store, now: { now }) else {
                Issue.record("a could not take \(room)"); return nil
            }
            if try leases.renew(room: room.rawValue, holder: LeaseHolder(node: "a", epoch: term.epoch), timeToLive: .seconds(60)) {
                return term
            }
            store.disown(room)
        }
        Issue.record("a's lease on \(room) lapsed before its renewal three times")
        return nil
    }

    /// Node a runs 30 rooms and writes them (members, schedules); it gives every lease back at once and node b
    /// takes them together: each room is b's under the next epoch, its fence moved exactly once to that
    /// epoch, each loaded as a wrote it; a's writes are refused from then on, b's land. A room another node
    /// holds is left to it, and one whose fence is higher than the epoch Redis gives is given back untouched,
    /// to be taken alone.
    @Test func aBatchedTakeKeepsEveryRoomAndMovesEachFenceOnce() throws {
        let redis = try RedisTestServer()
        defer { redis.stop() }
        let address = try RedisAddress(parsing: redis.url)
        let url = try server.makeDatabase()
        let now = Instant(nanoseconds: 5_000_000_000)
        let a = FencedRoomStore(base: try PostgresRoomStore.open(url: url))
        let b = FencedRoomStore(base: try PostgresRoomStore.open(url: url))
        let leasesA = RedisLeases(address: address), leasesB = RedisLeases(address: address)
        let schedules = try StoreConformanceTests.schedules()
        let rooms = (0..<30).map { roomID("batch-\($0)") }

        // Node a takes each room as joins would, some of them twice (a raised epoch), and writes it.
        var epochs: [RoomID: Int64] = [:]
        for (index, room) in rooms.enumerated() {
            if index % 3 == 0 {
                guard case .owned(let first, _, _) = try RoomTakeover(node: "a").take(room, leases: leasesA, store: a, now: { now }) else {
                    Issue.record("a could not take \(room)"); return
                }
                // Given back; a lease that lapsed first (its 1.5 s term can end within a take on a machine
                // busy under a sanitizer) is as good: the next take's epoch is higher either way.
                _ = try leasesA.release(room: room.rawValue, holder: LeaseHolder(node: "a", epoch: first.epoch))
                a.disown(room)
            }
            guard let term = try Self.takeAndKeep(room, leases: leasesA, store: a, now: now) else { return }
            epochs[room] = term.epoch
            try a.apply([.saveRoom(Sample.roomRecord(room, seq: UInt64(100 + index)), passcode: nil),
                         .saveMember(room, Sample.member(1, name: "Ann \(index)")),
                         .saveMember(room, Sample.member(2, name: "Bo \(index)"))]
                        + (index % 5 == 0 ? [.saveSchedules(room, schedules)] : []))
        }
        // "elsewhere" is c's and stays c's; "raised" was claimed in the store under a higher epoch than Redis
        // will give (Redis forgot it).
        let elsewhere = roomID("batch-elsewhere"), raised = roomID("batch-raised")
        #expect(try leasesA.acquire(room: elsewhere.rawValue, node: "c") == .granted(epoch: 1))
        _ = try PostgresRoomStore.open(url: url).claim(room: raised, epoch: 9)

        // a drains: every lease back in one script.
        let released = try leasesA.release(rooms.map { (room: $0.rawValue, holder: LeaseHolder(node: "a", epoch: epochs[$0]!)) })
        #expect(released == Array(repeating: true, count: rooms.count))
        // (a's store still holds the epochs: a node that stalled and believes it owns the rooms.)

        let batch = try RoomTakeover(node: "b").take(all: rooms + [elsewhere, raised], leases: leasesB, store: b,
                                                      now: { now })
        #expect(batch.takeAlone == [raised])
        #expect(batch.outcomes[elsewhere] == .ownedElsewhere(LeaseHolder(node: "c", epoch: 1)))
        #expect(batch.outcomes[raised] == nil)
        #expect(try leasesB.holder(room: raised.rawValue) == nil, "the lease of a room left to a take alone is given back")
        #expect(b.epoch(of: raised) == nil)
        let fences = try PostgresRoomStore.open(url: url)
        for (index, room) in rooms.enumerated() {
            guard case .owned(let term, let stored?, let startsAt)? = batch.outcomes[room] else {
                Issue.record("b did not take \(room): \(String(describing: batch.outcomes[room]))"); continue
            }
            #expect(term.epoch == epochs[room]! + 1, "\(room)")
            #expect(startsAt == now)
            #expect(try fences.fence(room: room) == epochs[room]! + 1, "\(room)'s fence moved once, to b's epoch")
            #expect(try leasesB.holder(room: room.rawValue) == LeaseHolder(node: "b", epoch: epochs[room]! + 1))
            #expect(b.epoch(of: room) == epochs[room]! + 1)
            #expect(stored.record.seq == UInt64(100 + index))
            #expect(stored.members.map(\.name) == ["Ann \(index)", "Bo \(index)"])
            #expect(stored.schedules == (index % 5 == 0 ? schedules : []), "\(room)'s schedules")
        }
        #expect(try fences.fence(room: raised) == 9)

        // The fence rule holds for every room: a's writes are refused, whole, and b's land.
        for room in rooms.prefix(5) {
            #expect(throws: StoreError.self) { try a.apply([.saveRoom(Sample.roomRecord(room, seq: 1), passcode: nil)]) }
        }
        try b.apply(rooms.map { .saveRoom(Sample.roomRecord($0, seq: 500), passcode: nil) })
        for room in rooms { #expect(try fences.loadRoom(room)?.record.seq == 500) }
        // Claiming again under the same epochs is refused: one owner per room per epoch.
        let again = try fences.claim(rooms: Dictionary(uniqueKeysWithValues: rooms.map { ($0, epochs[$0]! + 1) }))
        #expect(again.values.allSatisfy { if case .fenced = $0 { true } else { false } })
    }

    /// Many leases taken in one script each count their room's epoch up once, as one take would; a lease held
    /// is answered with its holder; many released in one script only where they are still the caller's.
    @Test func leasesAreTakenAndGivenBackManyAtOnce() throws {
        let redis = try RedisTestServer()
        defer { redis.stop() }
        let address = try RedisAddress(parsing: redis.url)
        let a = RedisLeases(address: address), b = RedisLeases(address: address)
        #expect(try a.acquire(room: "two", node: "a") == .granted(epoch: 1))
        #expect(try a.release(room: "two", holder: LeaseHolder(node: "a", epoch: 1)))
        #expect(try a.acquire(room: "held", node: "a") == .granted(epoch: 1))
        #expect(try b.acquire(rooms: ["one", "two", "held"], node: "b")
                == [.granted(epoch: 1), .granted(epoch: 2), .held(by: LeaseHolder(node: "a", epoch: 1))])
        #expect(try b.acquire(rooms: [], node: "b").isEmpty)
        guard case .integer(let ttl) = try b.command(["PTTL", "pomodoro:lease:two"]) else {
            Issue.record("no time to live on a lease taken in a batch"); return
        }
        #expect(ttl > 0 && ttl <= LeaseTerm.timeToLive.milliseconds)
        #expect(try b.release([(room: "one", holder: LeaseHolder(node: "b", epoch: 1)),
                               (room: "two", holder: LeaseHolder(node: "b", epoch: 1)),
                               (room: "held", holder: LeaseHolder(node: "b", epoch: 1))]) == [true, false, false])
        #expect(try b.holder(room: "one") == nil)
        #expect(try b.holder(room: "two") == LeaseHolder(node: "b", epoch: 2))
        #expect(try b.holder(room: "held") == LeaseHolder(node: "a", epoch: 1))
    }
}
