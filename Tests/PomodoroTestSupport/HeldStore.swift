import Foundation
import PomodoroCore
import PomodoroServer
import PomodoroStore
import PomodoroSQLite

/// The hub's store access for tests: commits and reads wait until the test releases them, then run against
/// a real SQLite store in a folder of its own (removed when this goes), so a test decides exactly when a
/// commit lands or a look-up answers.
///
/// `@unchecked Sendable`: its queues are guarded by a lock.
package final class HeldStore: HubStore, @unchecked Sendable {
    /// Where released commits go and released reads read.
    package let store: any RoomStore
    private let folder: String?
    private let lock = NSLock()
    private var commits: [(changes: [StoreChange], completion: StoreWriter.Completion?)] = []
    private var reads: [() -> Void] = []
    private var currentOutage: StoreWriter.Outage?
    private var readsAsked = 0

    /// A store over `store`, which the caller removes.
    package init(_ store: any RoomStore) {
        self.store = store
        folder = nil
    }

    /// A store over a new SQLite database in a temporary folder.
    package init() throws {
        let folder = NSTemporaryDirectory() + "pomodoro-held-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        store = try SQLiteRoomStore.open(path: folder + "/pomodoro.sqlite")
        self.folder = folder
    }

    deinit {
        if let folder { try? FileManager.default.removeItem(atPath: folder) }
    }

    // MARK: HubStore

    package func enqueue(_ changes: [StoreChange], completion: StoreWriter.Completion?) {
        lock.withLock { commits.append((changes, completion)) }
    }

    package func read<T: Sendable>(_ body: @escaping @Sendable (any RoomStore) throws(StoreError) -> T,
                                   completion: @escaping @Sendable (Result<T, StoreError>) -> Void) {
        let store = store
        lock.withLock {
            readsAsked += 1
            reads.append { completion(Result { () throws(StoreError) -> T in try body(store) }) }
        }
    }

    package func probe(completion: @escaping @Sendable (StoreWriter.Outage?) -> Void) {
        lock.withLock { reads.append { [self] in completion(outage) } }
    }

    package var outage: StoreWriter.Outage? {
        get { lock.withLock { currentOutage } }
        set { lock.withLock { currentOutage = newValue } }
    }

    package func flush() { releaseCommits() }

    // MARK: What the test does

    /// Batches handed in and not yet committed.
    package var pendingCommits: Int { lock.withLock { commits.count } }
    /// Reads (and probes) asked for and not yet answered.
    package var pendingReads: Int { lock.withLock { reads.count } }
    /// Reads asked for over this store's life (probes not counted).
    package var readCount: Int { lock.withLock { readsAsked } }

    /// Commits the oldest `count` batches (all when nil), in order, and calls their completions; returns
    /// how many were committed.
    @discardableResult
    package func releaseCommits(_ count: Int? = nil) -> Int {
        let taken = lock.withLock { () -> [(changes: [StoreChange], completion: StoreWriter.Completion?)] in
            let n = min(count ?? commits.count, commits.count)
            defer { commits.removeFirst(n) }
            return Array(commits.prefix(n))
        }
        for batch in taken {
            do throws(StoreError) {
                try store.apply(batch.changes)
                batch.completion?(nil)
            } catch {
                batch.completion?(error)
            }
        }
        return taken.count
    }

    /// Answers every read waiting, oldest first; returns how many were answered.
    @discardableResult
    package func releaseReads() -> Int {
        let taken = lock.withLock { () -> [() -> Void] in
            defer { reads.removeAll() }
            return reads
        }
        for read in taken { read() }
        return taken.count
    }
}

/// Background work that waits until the test runs it (`runAll()`), on the test's thread.
package final class HeldWork: BackgroundWork, @unchecked Sendable {
    private let lock = NSLock()
    private var waiting: [@Sendable () -> Void] = []

    package init() {}

    package func run(_ work: @escaping @Sendable () -> Void) {
        lock.withLock { waiting.append(work) }
    }

    /// Work handed in and not yet run.
    package var pending: Int { lock.withLock { waiting.count } }

    /// Runs the waiting work, oldest first (and what it hands in meanwhile); returns how much ran.
    @discardableResult
    package func runAll() -> Int {
        var ran = 0
        while true {
            let batch = lock.withLock { () -> [@Sendable () -> Void] in
                defer { waiting.removeAll() }
                return waiting
            }
            if batch.isEmpty { return ran }
            for work in batch { work() }
            ran += batch.count
        }
    }
}
