import Foundation
import Testing
import PomodoroCore
@testable import PomodoroStore
@testable import PomodoroSQLite
import PomodoroTestSupport

/// A store that records what it is asked to apply, can hold the writer inside `apply` until released,
/// and fails any batch that removes member "fail".
final class RecordingStore: RoomStore, @unchecked Sendable {
    static let failing = StoreChange.removeMember(Sample.room, MemberID("fail"))

    private let lock = NSLock()
    private var attemptsSoFar: [[StoreChange]] = []
    private var committedSoFar: [StoreChange] = []
    private var holdNext = false
    /// Signalled when a held `apply` has started.
    let entered = DispatchSemaphore(value: 0)
    /// Signalled by the test to let a held `apply` go on.
    let release = DispatchSemaphore(value: 0)

    /// Every `apply` call, in order, failed ones included.
    var attempts: [[StoreChange]] { lock.withLock { attemptsSoFar } }
    /// The changes of the calls that succeeded, in order.
    var committed: [StoreChange] { lock.withLock { committedSoFar } }

    /// The next `apply` waits, once started, until `release` is signalled.
    func holdNextApply() { lock.withLock { holdNext = true } }

    /// The next `count` calls fail as if the database could not be reached.
    func beUnreachable(for count: Int) { lock.withLock { unreachableCalls = count } }
    private var unreachableCalls = 0

    func apply(_ changes: [StoreChange]) throws(StoreError) {
        let hold = lock.withLock { () -> Bool in
            attemptsSoFar.append(changes)
            defer { holdNext = false }
            return holdNext
        }
        if hold {
            entered.signal()
            _ = waitFor(release)
        }
        if changes.contains(Self.failing) { throw StoreError("marked to fail") }
        let unreachable = lock.withLock { () -> Bool in
            defer { unreachableCalls = max(0, unreachableCalls - 1) }
            return unreachableCalls > 0
        }
        if unreachable { throw StoreError("could not connect", isTransient: true) }
        lock.withLock { committedSoFar += changes }
    }

    func loadRooms() throws(StoreError) -> [StoredRoom] { [] }
    func loadRoom(_ id: RoomID) throws(StoreError) -> StoredRoom? { nil }
    func loadSchedules() throws(StoreError) -> [RoomID: [Schedule]] { [:] }
    func loadSchedules(room: RoomID) throws(StoreError) -> [Schedule] { [] }
    func sessions(room: RoomID, endedFrom from: Int64?, before: Int64?, limit: Int?) throws(StoreError)
        -> [FocusSessionRecord] { [] }
    func interruptions(room: RoomID, from: Int64?, before: Int64?) throws(StoreError) -> [InterruptionRecord] { [] }
}

/// A distinct change per number.
func change(_ n: Int) -> StoreChange {
    .interrupted(InterruptionRecord(room: Sample.room, member: nil, name: nil, atMs: Int64(n)))
}

@Suite(.onOwnThreads) struct StoreWriterTests {
    /// A database that cannot be reached is waited out: the batch is tried again until it lands, the ones
    /// behind it keep their order, and the outage shows until then.
    @Test func anUnreachableDatabaseIsWaitedOutInOrder() throws {
        let store = RecordingStore()
        let writer = StoreWriter(store: store)
        store.beUnreachable(for: 3)
        let done = DispatchSemaphore(value: 0)
        let order = Locked<[Int]>([])
        let first = StoreChange.removeMember(Sample.room, MemberID("m1"))
        let second = StoreChange.removeMember(Sample.room, MemberID("m2"))
        writer.enqueue([first]) { error in
            #expect(error == nil)
            order.update { $0.append(1) }
            done.signal()
        }
        writer.enqueue([second]) { error in
            #expect(error == nil)
            order.update { $0.append(2) }
            done.signal()
        }
        #expect(waitFor(done) && waitFor(done))
        #expect(order.current == [1, 2])
        #expect(store.committed == [first, second])
        #expect(store.attempts.count >= 4, "three unreachable tries, then the commit")
        #expect(writer.outage == nil, "a batch landed: the outage is over")
    }

    @Test func batchesWaitingTogetherGoInOneTransactionAndCompleteInOrder() throws {
        let store = RecordingStore()
        let writer = StoreWriter(store: store)
        let completed = Locked<[Int]>([])
        store.holdNextApply()
        writer.enqueue([change(1)]) { error in completed.update { $0.append(error == nil ? 1 : -1) } }
        #expect(waitFor(store.entered), "the writer took the first batch")
        for n in 2...4 {
            writer.enqueue([change(n), change(n * 10)]) { error in completed.update { $0.append(error == nil ? n : -n) } }
        }
        store.release.signal()
        writer.flush()

        #expect(store.attempts == [[change(1)], [change(2), change(20), change(3), change(30), change(4), change(40)]])
        #expect(completed.current == [1, 2, 3, 4])
    }

    @Test func aFailingBatchInAGroupFailsAloneAndLaterBatchesStillRun() throws {
        let store = RecordingStore()
        let errors = Locked<[StoreError]>([])
        let writer = StoreWriter(store: store) { error in errors.update { $0.append(error) } }
        let completed = Locked<[String]>([])
        func note(_ label: String) -> StoreWriter.Completion {
            { error in completed.update { $0.append(error == nil ? label : "\(label) failed") } }
        }
        store.holdNextApply()
        writer.enqueue([change(1)], completion: note("1"))
        #expect(waitFor(store.entered))
        writer.enqueue([change(2)], completion: note("2"))
        writer.enqueue([change(3), RecordingStore.failing], completion: note("3"))
        writer.enqueue([change(4)], completion: note("4"))
        store.release.signal()
        writer.flush()
        writer.enqueue([change(5)], completion: note("5"))
        writer.flush()

        #expect(completed.current == ["1", "2", "3 failed", "4", "5"])
        #expect(store.committed == [change(1), change(2), change(4), change(5)])
        #expect(store.attempts == [[change(1)], [change(2), change(3), RecordingStore.failing, change(4)],
                                   [change(2)], [change(3), RecordingStore.failing], [change(4)], [change(5)]])
        #expect(errors.current == [StoreError("marked to fail")])
    }

    @Test func flushReturnsOnlyOnceEverythingBeforeItIsWritten() throws {
        let store = RecordingStore()
        let writer = StoreWriter(store: store)
        store.holdNextApply()
        writer.enqueue([change(0)])
        #expect(waitFor(store.entered))
        for n in 1..<200 { writer.enqueue([change(n)]) }
        let flushed = DispatchSemaphore(value: 0)
        let committedWhenFlushReturned = Locked<[StoreChange]?>(nil)
        DispatchQueue.global().async {
            writer.flush()
            committedWhenFlushReturned.update { $0 = store.committed }
            flushed.signal()
        }
        #expect(store.committed == [], "the writer is still held")
        store.release.signal()
        #expect(waitFor(flushed))
        #expect(committedWhenFlushReturned.current == (0..<200).map(change))
    }

    @Test func anEmptyBatchCompletesAfterTheOnesBeforeIt() throws {
        let store = RecordingStore()
        let writer = StoreWriter(store: store)
        let completed = Locked<[Int]>([])
        writer.enqueue([change(1)]) { _ in completed.update { $0.append(1) } }
        writer.enqueue([]) { error in completed.update { $0.append(error == nil ? 2 : -2) } }
        writer.flush()
        #expect(completed.current == [1, 2])
    }

    @Test func readsGoOnWhileTheWriterIsHeld() throws {
        let store = RecordingStore()
        let writer = StoreWriter(store: store)
        store.holdNextApply()
        writer.enqueue([change(1)])
        #expect(waitFor(store.entered))
        let answered = DispatchSemaphore(value: 0)
        let result = Locked<Result<Int, StoreError>?>(nil)
        writer.read({ store throws(StoreError) in try store.loadRooms().count + 41 }) { outcome in
            result.update { $0 = outcome }
            answered.signal()
        }
        #expect(waitFor(answered), "the read did not wait for the held writer")
        #expect(try result.current?.get() == 41)
        store.release.signal()
        writer.flush()
    }

    @Test func aReadThatFailsReportsTheError() throws {
        let writer = StoreWriter(store: RecordingStore())
        let answered = DispatchSemaphore(value: 0)
        let result = Locked<Result<Int, StoreError>?>(nil)
        writer.read({ _ throws(StoreError) -> Int in throw StoreError("no") }) { outcome in
            result.update { $0 = outcome }
            answered.signal()
        }
        #expect(waitFor(answered))
        #expect(result.current == .failure(StoreError("no")))
    }

    // With the real store.

    @Test func batchesReachSQLiteInOrder() throws {
        try withStore { (store, _) throws in
            let writer = StoreWriter(store: store)
            for seq in 1...50 {
                writer.enqueue([.saveRoom(Sample.roomRecord(seq: UInt64(seq)), passcode: nil),
                                .focusCompleted(Sample.session(endedAtMs: 10_000 - Int64(seq)))])
            }
            writer.flush()
            #expect(try store.loadRooms().map(\.record.seq) == [50])
            // Ended times fall as they were written; ties are impossible, so the ids give the write order.
            #expect(try store.column(sql: "SELECT ended_at_ms FROM focus_session ORDER BY id")
                    == (1...50).map { String(10_000 - $0) })
        }
    }

    @Test func aBatchSQLiteRefusesFailsAloneAndIsReported() throws {
        try withStore { (store, _) throws in
            let reported = Locked<[StoreError]>([])
            let writer = StoreWriter(store: store) { error in reported.update { $0.append(error) } }
            let outcome = Locked<[StoreError?]>([])
            writer.enqueue([.saveMember(roomID("no-such-room"), Sample.member(1, name: "Ada"))]) { error in
                outcome.update { $0.append(error) }
            }
            writer.enqueue([.saveRoom(Sample.roomRecord(), passcode: nil)]) { error in outcome.update { $0.append(error) } }
            writer.flush()
            #expect(outcome.current.count == 2)
            #expect(outcome.current.first??.message.contains("FOREIGN KEY") == true)
            #expect(outcome.current.last! == nil)
            #expect(reported.current.count == 1)
            #expect(try store.loadRooms().map(\.record) == [Sample.roomRecord()])
        }
    }

    @Test func aCompletionSeesItsBatchCommitted() throws {
        try withStore { (store, _) throws in
            let writer = StoreWriter(store: store)
            let seen = Locked<[Int]>([])
            for n in 1...5 {
                writer.enqueue([.focusCompleted(Sample.session(endedAtMs: Int64(n) * 1000))]) { _ in
                    // A separate connection: what it sees is on disk, not in the writer's transaction.
                    let sessions = try? store.sessions(room: Sample.room, endedFrom: nil, before: nil, limit: nil)
                    seen.update { $0.append(sessions?.count ?? -1) }
                }
            }
            writer.flush()
            // Grouped or not, each completion comes after its own batch committed.
            let counts = seen.current
            #expect(counts.count == 5)
            #expect(zip(counts, 1...5).allSatisfy { $0 >= $1 })
            #expect(counts == counts.sorted())
        }
    }
}

/// A group commit writes each room's and member's row once: the last row, in the first one's place.
struct CompactionTests {
    @Test func rowsWrittenOverAndOverAreWrittenOnce() {
        let other = roomID("team-b")
        let ada = Sample.member(1, name: "Ada"), adaLater = Sample.member(1, name: "Ada L.")
        let session = Sample.session(endedAtMs: 1_000_000)
        let changes: [StoreChange] = [
            .saveRoom(Sample.roomRecord(seq: 1), passcode: nil),
            .saveMember(Sample.room, ada),
            .saveRoom(Sample.roomRecord(other, seq: 1), passcode: nil),
            .focusCompleted(session),
            .saveRoom(Sample.roomRecord(seq: 2), passcode: nil),
            .saveMember(Sample.room, adaLater),
            .saveMember(Sample.room, Sample.member(2, name: "Lin")),
            .removeMember(Sample.room, MemberID("m2")),
            .saveRoom(Sample.roomRecord(seq: 3), passcode: "p"),
        ]
        #expect(changes.compacted() == [
            .saveRoom(Sample.roomRecord(seq: 3), passcode: "p"),
            .saveMember(Sample.room, adaLater),
            .saveRoom(Sample.roomRecord(other, seq: 1), passcode: nil),
            .focusCompleted(session),
            .removeMember(Sample.room, MemberID("m2")),
        ])
        let distinct: [StoreChange] = [.saveRoom(Sample.roomRecord(), passcode: nil), .focusCompleted(session)]
        #expect(distinct.compacted() == distinct)
    }

    @Test func aRoomsBansAreWrittenOnceTheLastListInTheFirstPlace() {
        let first = [BanRecord(nameKey: "ivo", tokenHash: String(repeating: "a", count: 64), untilMs: 600_000)]
        let both = first + [BanRecord(nameKey: "lin", tokenHash: String(repeating: "b", count: 64), untilMs: 700_000)]
        let changes: [StoreChange] = [
            .saveRoom(Sample.roomRecord(seq: 1), passcode: nil), .saveBans(Sample.room, first),
            .saveRoom(Sample.roomRecord(seq: 2), passcode: nil), .saveBans(Sample.room, both),
            .saveBans(roomID("team-b"), first),
        ]
        #expect(changes.compacted() == [
            .saveRoom(Sample.roomRecord(seq: 2), passcode: nil), .saveBans(Sample.room, both),
            .saveBans(roomID("team-b"), first),
        ])
    }

    /// Applied to a real store, the compacted group leaves the same rows as the changes one by one.
    @Test func aCompactedGroupLeavesTheSameRows() throws {
        let changes: [StoreChange] = [
            .saveRoom(Sample.roomRecord(seq: 1), passcode: nil),
            .saveMember(Sample.room, Sample.member(1, name: "Ada")),
            .saveMember(Sample.room, Sample.member(2, name: "Lin")),
            .saveRoom(Sample.roomRecord(seq: 2), passcode: nil),
            .removeMember(Sample.room, MemberID("m2")),
            .saveMember(Sample.room, Sample.member(1, name: "Ada L.")),
            .focusCompleted(Sample.session(endedAtMs: 2_000_000, participants: [Sample.participant("m1", "Ada L.")])),
        ]
        let oneByOne = try withStore { store, _ in
            for change in changes { try store.apply([change]) }
            return try store.loadRooms()
        }
        let compacted = try withStore { store, _ in
            try store.apply(changes.compacted())
            return try store.loadRooms()
        }
        #expect(compacted == oneByOne)
    }
}
