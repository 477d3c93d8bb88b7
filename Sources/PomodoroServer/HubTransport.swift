import Foundation
import Dispatch
import PomodoroCore
import PomodoroNet
import PomodoroStore

/// What the hub needs of the network, and nothing more: the narrow dispatcher every side effect goes
/// through. `WebSocketServer` is one (see `WebSocketServer+HubTransport.swift`); tests hand in a fake that
/// records frames and runs posted work and timers only when told, so the hub is tested without sockets.
///
/// All of it is used on the service thread only, except `post`, which any thread may call.
package protocol HubTransport: AnyObject, Sendable {
    /// Queues a frame for a connection; false if the connection is gone, closing, or was just dropped for
    /// being too slow.
    @discardableResult
    func send(_ frame: OutboundFrame, to connection: ConnectionID) -> Bool
    /// Closes a connection with a close frame once what is queued for it has been written.
    func close(_ connection: ConnectionID, code: UInt16, reason: String)
    /// Queues one frame for many connections; returns for how many it was queued.
    func send(_ frame: OutboundFrame, toAll connections: [ConnectionID]) -> Int
    /// Runs `work` on the service thread soon; safe from any thread.
    func post(_ work: @escaping @Sendable () -> Void)
    /// A one-shot timer that runs `fire` on the service thread.
    func timer(firing fire: @escaping () -> Void) -> any HubTimer
    /// From now on new WebSocket connections are refused (503): the server has begun to stop.
    func refuseUpgrades()
    /// The loop whose service thread the hub's state belongs to (`LoopBound`).
    var loop: any LoopThread { get }
    /// For `/metrics`.
    var connectionCount: Int { get }
    var droppedSlowClients: Int { get }
}

extension HubTransport {
    package func send(_ frame: OutboundFrame, toAll connections: [ConnectionID]) -> Int {
        var sent = 0
        for connection in connections where send(frame, to: connection) { sent += 1 }
        return sent
    }
}

/// A one-shot timer, re-armed by `schedule`: each call replaces the one before.
package protocol HubTimer: AnyObject {
    func schedule(afterNanoseconds nanoseconds: Int64)
    func cancel()
}

extension HubTimer {
    /// Arms the timer for `deadline` on `clock`, its delay counted from a reading taken now. A caller's own
    /// `now` is as old as the work it did since: a room's tick reads the clock, then writes to every member
    /// (tens of milliseconds in a room of thousands), and a delay counted from that reading would make the
    /// next tick that much late, and the one after it as late again.
    package func schedule(at deadline: Instant, on clock: any ServerClock) {
        schedule(afterNanoseconds: max(0, (deadline - clock.now().monotonic).nanoseconds))
    }
}

/// Answers one HTTP request, once, from any thread (`HTTPResponder` over a socket; a recorder in tests).
package protocol HTTPAnswering: Sendable {
    @discardableResult
    func respond(_ response: HTTPResponse) -> Bool
    /// Answers with `head` and a body that goes on (Server-Sent Events); service thread only. Nil if the
    /// request was answered already or is gone.
    func stream(_ head: HTTPResponse) -> (any HubEventStream)?
}

/// The body of an answer that goes on, written as the hub hands it pieces (`HTTPStream` over a socket).
package protocol HubEventStream: AnyObject {
    /// Queues a piece; false once the reader has gone or was dropped for not reading.
    @discardableResult
    func send(_ piece: [UInt8]) -> Bool
    /// Ends the answer once what is queued is written.
    func finish()
}

/// What the hub uses of `StoreWriter`: writes in order with a completion, reads off the service thread, and
/// what it knows of an outage. Completions run on another thread; the hub posts back to the service thread.
package protocol HubStore: AnyObject, Sendable {
    func enqueue(_ changes: [StoreChange], completion: StoreWriter.Completion?)
    func read<T: Sendable>(_ body: @escaping @Sendable (any RoomStore) throws(StoreError) -> T,
                           completion: @escaping @Sendable (Result<T, StoreError>) -> Void)
    func probe(completion: @escaping @Sendable (StoreWriter.Outage?) -> Void)
    var outage: StoreWriter.Outage? { get }
    /// Blocks until everything enqueued is durable (at shutdown).
    func flush()
}

/// Where slow work runs off the service thread: passcode hashes, which take tenths of a second of CPU on
/// purpose. Tests run it when they choose.
package protocol BackgroundWork: Sendable {
    func run(_ work: @escaping @Sendable () -> Void)
}

/// Background work on threads of its own, at most one per processor at once; threads start when work is
/// waiting and end when none is.
///
/// Not a concurrent dispatch queue: those share the process's dispatch threads for CPU work, one per
/// processor, with the store's reads and every other queue that does not make threads of its own. A burst
/// of passcode guesses (tenths of a second of CPU each) queued there held a join's read of its room behind
/// every hash before it: seconds on a two-processor machine. On threads of their own, hashes share the
/// processors with everything else, and nothing waits in line behind them.
package final class HashingThreads: BackgroundWork {
    private struct Pool {
        var waiting: [@Sendable () -> Void] = []
        var running = 0
    }
    private let pool = LockedState(Pool())
    /// The threads' name, as `ps -L` and debuggers show it (15 bytes at most show).
    private let name: String
    /// How many of the pool's threads may run at once.
    package let width: Int

    package init(name: String, width: Int = ProcessInfo.processInfo.activeProcessorCount) {
        self.name = name
        self.width = max(1, width)
    }

    package func run(_ work: @escaping @Sendable () -> Void) {
        let starts = pool.withLock { pool -> Bool in
            pool.waiting.append(work)
            guard pool.running < width else { return false }
            pool.running += 1
            return true
        }
        guard starts else { return }
        let thread = Thread { [pool, name] in
            // Named here: a name given before `start` is lost on Linux (the thread keeps its maker's).
            ThreadName.set(name)
            while let work = pool.withLock({ pool -> (@Sendable () -> Void)? in
                guard !pool.waiting.isEmpty else {
                    pool.running -= 1
                    return nil
                }
                return pool.waiting.removeFirst()
            }) {
                work()
            }
        }
        thread.start()
    }
}

extension StoreWriter: HubStore {}
