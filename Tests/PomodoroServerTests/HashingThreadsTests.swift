import Foundation
import PomodoroCore
import PomodoroNet
@testable import PomodoroServer
import PomodoroSQLite
import PomodoroStore
import PomodoroTestSupport
import Testing

/// Passcode hashes run on threads of their own: all of them, never more at once than the pool's width, and
/// never in the line the store's reads wait in.
@Suite struct HashingThreadsTests {
    /// What the pieces of work saw, shared with the test.
    private struct Seen {
        var running = 0
        var mostAtOnce = 0
        var done = 0
        var released = false
        var threadNames: Set<String> = []
    }

    /// Work that notes itself, then waits until the test lets every piece go.
    private static func heldWork(_ seen: LockedState<Seen>) -> @Sendable () -> Void {
        {
            seen.withLock {
                $0.running += 1
                $0.mostAtOnce = max($0.mostAtOnce, $0.running)
                $0.threadNames.insert(ThreadName.current ?? "")
            }
            seen.broadcast()
            seen.withLock(when: { $0.released }) {
                $0.running -= 1
                $0.done += 1
            }
            seen.broadcast()
        }
    }

    @Test func everyPieceRunsOnThePoolsThreadsAtMostWidthAtOnce() {
        let pool = HashingThreads(name: "test.hashing", width: 2)
        let seen = LockedState(Seen())
        for _ in 0..<6 { pool.run(Self.heldWork(seen)) }
        let full = seen.withLock(when: { $0.running == 2 }, orUntil: Date() + 10) { $0.running }
        #expect(full == 2, "two pieces run while all are held")
        seen.withLock { $0.released = true }
        seen.broadcast()
        let result = seen.withLock(when: { $0.done == 6 }, orUntil: Date() + 10) { $0 }
        #expect(result.done == 6)
        #expect(result.mostAtOnce == 2)
        #expect(result.threadNames == ["test.hashing"])
        // Idle, the pool starts again for new work.
        seen.withLock { $0.done = 0 }
        pool.run(Self.heldWork(seen))
        let last = seen.withLock(when: { $0.done == 1 }, orUntil: Date() + 10) { $0.done }
        #expect(last == 1)
    }

    /// A room's read from the store is answered while every hashing thread is taken and more hashes wait.
    @Test func aStoreReadIsNotHeldBehindHashes() throws {
        try withTemporaryFolder { folder in
            let writer = StoreWriter(store: try SQLiteRoomStore.open(path: folder.appendingPathComponent("p.sqlite").path))
            let pool = HashingThreads(name: "test.hashing", width: 2)
            let seen = LockedState(Seen())
            for _ in 0..<8 { pool.run(Self.heldWork(seen)) }
            _ = seen.withLock(when: { $0.running == 2 }, orUntil: Date() + 10) { $0.running }
            let answer = LockedState<Result<StoredRoom?, StoreError>?>(nil)
            writer.read({ (store: any RoomStore) throws(StoreError) in try store.loadRoom(Sample.room) }) { result in
                answer.withLock { $0 = result }
                answer.broadcast()
            }
            let read = answer.withLock(when: { $0 != nil }, orUntil: Date() + 10) { $0 }
            let stillHeld = seen.withLock { $0.done }
            seen.withLock { $0.released = true }
            seen.broadcast()
            _ = seen.withLock(when: { $0.done == 8 }, orUntil: Date() + 10) { $0.done }
            #expect(stillHeld == 0, "the read was answered before any hash was let go")
            guard case .success(nil)? = read else {
                Issue.record("the read of a room nobody stored: \(String(describing: read))")
                return
            }
        }
    }
}
