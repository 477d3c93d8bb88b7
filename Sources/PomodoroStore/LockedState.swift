import Foundation

/// State several threads share, reached only inside `withLock`: the contract of `Synchronization.Mutex` (the
/// state goes in and results come out as `sending`, so nothing reachable from it leaves the lock unguarded),
/// with a wait for a change as well.
///
/// It holds an `NSCondition` (a pthread mutex and condition variable) rather than a `Mutex`: ThreadSanitizer
/// does not see the ordering a `Mutex` creates on Linux (it waits on a futex inside the uninstrumented runtime)
/// and would report every guarded access as a race in `make test-sanitize`.
///
/// ```swift
/// let pool = LockedState(Pool())
/// let connection = pool.withLock(when: { $0.hasRoom }) { $0.checkOut() }
/// pool.withLock { $0.checkIn(connection) }
/// pool.signal()
/// ```
public final class LockedState<State>: @unchecked Sendable {  // safe: `state` is touched only with `condition` held, and crosses it only as `sending`
    private let condition = NSCondition()
    private var state: State

    public init(_ state: consuming sending State) { self.state = state }

    /// Runs `body` on the state with the lock held.
    public func withLock<Result, Failure: Error>(
        _ body: (inout sending State) throws(Failure) -> sending Result
    ) throws(Failure) -> sending Result {
        condition.lock()
        defer { condition.unlock() }
        return try body(&state)
    }

    /// Waits, with the lock released meanwhile, until `ready` holds of the state, then runs `body` on it with the
    /// lock held from the check to its end. Whoever changes what `ready` looks at calls `signal` or `broadcast`.
    public func withLock<Result, Failure: Error>(
        when ready: (borrowing State) -> Bool,
        _ body: (inout sending State) throws(Failure) -> sending Result
    ) throws(Failure) -> sending Result {
        condition.lock()
        defer { condition.unlock() }
        while !ready(state) { condition.wait() }
        return try body(&state)
    }

    /// As `withLock(when:_:)`, waiting until `deadline` at most: `body` then runs whether `ready` holds or not.
    public func withLock<Result, Failure: Error>(
        when ready: (borrowing State) -> Bool, orUntil deadline: Date,
        _ body: (inout sending State) throws(Failure) -> sending Result
    ) throws(Failure) -> sending Result {
        condition.lock()
        defer { condition.unlock() }
        while !ready(state), condition.wait(until: deadline) {}
        return try body(&state)
    }

    /// Wakes one thread waiting in `withLock(when:_:)`.
    public func signal() {
        condition.lock()
        condition.signal()
        condition.unlock()
    }

    /// Wakes every thread waiting in `withLock(when:_:)`.
    public func broadcast() {
        condition.lock()
        condition.broadcast()
        condition.unlock()
    }
}
