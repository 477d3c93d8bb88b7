import Foundation
import PomodoroCore

/// Hands changes to a `RoomStore` off the service thread, which never waits on disk.
///
/// Batches are applied strictly in the order `enqueue` was called, on one serial queue. When several are
/// waiting by the time the queue gets to them, they go into one `apply`, one transaction (group commit: one
/// commit for all of them, so one append to SQLite's WAL, which `SQLiteRoomStore` fsyncs only at checkpoints,
/// or one WAL flush on PostgreSQL), and then each completion is called, in order. Should that shared
/// transaction fail, the batches are applied again one by one, so a bad batch fails alone and the others
/// still land.
///
/// Queries run on a separate concurrent queue: they read a committed snapshot, never hold up the writer,
/// and never block their caller.
///
/// A database that cannot be reached (a transient `StoreError`: nothing of the batch reached it) is an
/// outage, not a failed batch: the batch is tried again with a growing pause (0.1 s up to 1 s), the ones
/// behind it wait in order, and `outage` says since when, until a batch lands.
public final class StoreWriter: Sendable {
    /// The database has not been reachable since `since`; `reason` is the last error.
    public struct Outage: Equatable, Sendable {
        public let since: Date
        public let reason: String
    }
    /// Called once a batch is durable (nil) or has failed (its whole batch is undone).
    public typealias Completion = @Sendable (StoreError?) -> Void

    private struct Batch {
        var changes: [StoreChange]
        var completion: Completion?
    }

    /// The store the writer writes to and the reader reads from.
    public let store: any RoomStore
    private let onError: (@Sendable (StoreError) -> Void)?
    private let writeQueue = DispatchQueue(label: "pomodoro.store.writer")
    private let readQueue = DispatchQueue(label: "pomodoro.store.reader", attributes: .concurrent)
    /// What the service thread, the writer and the readers share.
    private struct Shared {
        /// Batches handed in and not yet taken by the writer, oldest first.
        var waiting: [Batch] = []
        /// Set while the database cannot be reached.
        var outage: Outage?
        /// While a `flush` waits, a batch the database cannot take fails instead of waiting for it.
        var flushing = 0
        /// Whether a batch is being tried again.
        var retrying = false
    }
    private let shared = LockedState(Shared())
    /// Cuts a retry's pause short (for `flush`).
    private let retryWake = DispatchSemaphore(value: 0)
    static let firstRetryPause = 0.1
    static let longestRetryPause = 1.0   // a failover to a standby is followed within a second of its promotion

    /// - Parameter onError: told of every failed batch (for the log), besides the batch's completion.
    ///   Called on the writer queue.
    public init(store: any RoomStore, onError: (@Sendable (StoreError) -> Void)? = nil) {
        self.store = store
        self.onError = onError
    }

    /// Applies `changes` after everything enqueued before, all or none, then calls `completion` on the
    /// writer queue. Returns at once. An empty batch writes nothing and completes after those before it.
    ///
    /// The completion runs on the writer queue and holds it up: hand the result back to the service thread
    /// and return; never call `flush()` from it.
    public func enqueue(_ changes: [StoreChange], completion: Completion? = nil) {
        shared.withLock { $0.waiting.append(Batch(changes: changes, completion: completion)) }
        // One drain per batch; a drain that finds the list already taken by an earlier one does nothing.
        writeQueue.async { self.writeWaiting() }
    }

    /// Blocks until everything enqueued before this call has been applied (or has failed) and completed.
    /// For shutdown and tests; never from the service thread's hot path, nor from a completion.
    public func flush() {
        dispatchPrecondition(condition: .notOnQueue(writeQueue))
        shared.withLock { $0.flushing += 1 }
        retryWake.signal()
        writeQueue.sync {}
        shared.withLock { $0.flushing -= 1 }
    }

    /// Since when the database has been unreachable, or nil while it answers.
    public var outage: Outage? { shared.withLock { $0.outage } }

    /// Asks the database whether it answers (a read that finds nothing), and calls `completion` on the
    /// reader queue with the outage there is after it: a read that cannot reach the database starts one,
    /// and one that does ends it unless batches still wait to be retried.
    public func probe(completion: @escaping @Sendable (Outage?) -> Void) {
        readQueue.async { [self] in
            do throws(StoreError) {
                _ = try store.loadRoom(Self.probeRoom)
                completion(shared.withLock { shared -> Outage? in
                    if shared.outage != nil && !shared.retrying { shared.outage = nil }
                    return shared.outage
                })
            } catch where error.isTransient {
                completion(shared.withLock { shared -> Outage? in
                    if shared.outage == nil { shared.outage = Outage(since: Date(), reason: error.message) }
                    return shared.outage
                })
            } catch {
                completion(shared.withLock { $0.outage })
            }
        }
    }

    /// A room name no room has: reading it costs the database next to nothing.
    private static let probeRoom = try! RoomID(validating: "healthz-probe")

    /// Applies `changes`, waiting out an outage: a transient error is tried again with a growing pause
    /// until it lands, or until a `flush` is waiting.
    private func applyWaitingOutOutages(_ changes: [StoreChange]) throws(StoreError) {
        var pause = Self.firstRetryPause
        defer { shared.withLock { $0.retrying = false } }
        while true {
            do {
                try store.apply(changes)
                shared.withLock { $0.outage = nil }
                return
            } catch where error.isTransient {
                let (giveUp, first) = shared.withLock { shared -> (Bool, Bool) in
                    let first = shared.outage == nil
                    shared.outage = Outage(since: shared.outage?.since ?? Date(), reason: error.message)
                    shared.retrying = shared.flushing == 0
                    return (shared.flushing > 0, first)
                }
                if first && !giveUp { onError?(error) }
                if giveUp { throw error }
                _ = retryWake.wait(timeout: .now() + pause)
                pause = min(pause * 2, Self.longestRetryPause)
            }
        }
    }

    /// Runs `body` against the store on the reader queue, then `completion` there with its result.
    /// It sees what has been committed when it runs; to read after a given batch, read from that batch's
    /// completion.
    public func read<T: Sendable>(_ body: @escaping @Sendable (any RoomStore) throws(StoreError) -> T,
                                  completion: @escaping @Sendable (Result<T, StoreError>) -> Void) {
        readQueue.async { [store] in
            completion(Result { () throws(StoreError) -> T in try body(store) })
        }
    }

    private func writeWaiting() {
        let batches = shared.withLock { shared -> [Batch] in
            defer { shared.waiting.removeAll(keepingCapacity: true) }
            return shared.waiting
        }
        guard !batches.isEmpty else { return }
        if batches.count > 1 {
            do {
                try applyWaitingOutOutages(batches.flatMap(\.changes).compacted())
                for batch in batches { batch.completion?(nil) }
                return
            } catch {
                // Nothing of the group was written; find the culprit by applying each alone, in order.
            }
        }
        for batch in batches {
            do {
                try applyWaitingOutOutages(batch.changes)
                batch.completion?(nil)
            } catch {
                onError?(error)
                batch.completion?(error)
            }
        }
    }
}
