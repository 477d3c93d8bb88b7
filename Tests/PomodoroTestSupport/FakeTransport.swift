import Foundation
import PomodoroCore
import PomodoroNet
import PomodoroProtocol
import PomodoroServer

/// A transport with no sockets: it records what the hub sends and closes, and runs posted work and timers
/// only when the test says (`runPosted()`, `fireDueTimers()`), against a `ManualServerClock`.
///
/// ```swift
/// let transport = FakeTransport(clock: clock)
/// // ... drive the hub ...
/// let frames = transport.messages(to: connection)   // decoded with WireCodec
/// ```
///
/// `@unchecked Sendable`: the posted work is guarded by a lock, as a store's completion may post from
/// another thread; everything else is used on the test's thread, which stands for the service thread.
package final class FakeTransport: HubTransport, @unchecked Sendable {
    /// A close the hub asked for.
    package struct Close: Equatable, Sendable {
        package var code: UInt16
        package var reason: String

        package init(code: UInt16, reason: String) {
            self.code = code
            self.reason = reason
        }
    }

    private let clock: ManualServerClock
    private let lock = NSLock()
    private var posted: [@Sendable () -> Void] = []
    private var timers: [FakeTimer] = []
    /// Connections the hub may send to: opened and not closed.
    package var open: Set<ConnectionID> = []
    /// Every frame queued for each connection, in order.
    package private(set) var sent: [ConnectionID: [[UInt8]]] = [:]
    package private(set) var closes: [ConnectionID: Close] = [:]
    package var connectionCount: Int { open.count }
    package var droppedSlowClients = 0
    /// Whether the hub said to refuse new WebSocket connections (`refuseUpgrades`).
    package private(set) var upgradesRefused = false
    /// How long queuing one frame takes on the clock, as a write to a socket takes the service thread's time:
    /// a broadcast to many members then ends later than it began.
    package var sendTakes: Duration = .zero

    package init(clock: ManualServerClock) {
        self.clock = clock
    }

    /// The test's thread, which stands for the service thread: the one that made this transport.
    package let loop: any LoopThread = TestThreadLoop()

    // MARK: HubTransport

    package func refuseUpgrades() { upgradesRefused = true }

    package func send(_ frame: OutboundFrame, to connection: ConnectionID) -> Bool {
        guard open.contains(connection), closes[connection] == nil else { return false }
        sent[connection, default: []].append(Array(frame.payload))
        if sendTakes > .zero { clock.advance(by: sendTakes) }
        return true
    }

    package func close(_ connection: ConnectionID, code: UInt16, reason: String) {
        guard open.contains(connection), closes[connection] == nil else { return }
        closes[connection] = Close(code: code, reason: reason)
    }

    package func post(_ work: @escaping @Sendable () -> Void) {
        lock.withLock { posted.append(work) }
    }

    package func timer(firing fire: @escaping () -> Void) -> any HubTimer {
        let timer = FakeTimer(clock: clock, fire: fire)
        timers.append(timer)
        return timer
    }

    // MARK: What the test does

    /// Work posted and not yet run.
    package var postedCount: Int { lock.withLock { posted.count } }

    /// Runs posted work, oldest first, including what it posts in turn; returns how much ran.
    @discardableResult
    package func runPosted() -> Int {
        var ran = 0
        while true {
            let batch = lock.withLock { () -> [@Sendable () -> Void] in
                defer { posted.removeAll() }
                return posted
            }
            if batch.isEmpty { return ran }
            for work in batch { work() }
            ran += batch.count
        }
    }

    /// The earliest deadline of an armed timer.
    package var nextDeadline: Instant? { timers.compactMap(\.deadline).min() }

    /// Timers armed now.
    package var armedTimers: Int { timers.filter { $0.deadline != nil }.count }

    /// Fires every timer due by the clock's reading, earliest first, including those re-armed for a
    /// deadline already past; returns how many fired.
    @discardableResult
    package func fireDueTimers() -> Int {
        var fired = 0
        let now = clock.now().monotonic
        while let timer = timers.filter({ $0.deadline.map { $0 <= now } ?? false }).min(by: { $0.deadline! < $1.deadline! }) {
            timer.deadline = nil
            timer.fire()
            fired += 1
        }
        return fired
    }

    /// The frames queued for `connection`, decoded.
    package func messages(to connection: ConnectionID) throws -> [ServerMessage] {
        try (sent[connection] ?? []).map { try WireCodec.decodeServerMessage($0) }
    }

    /// Forgets the frames recorded so far (for every connection).
    package func clearSent() { sent.removeAll() }
}

/// A timer that remembers its deadline on the manual clock; `FakeTransport.fireDueTimers()` fires it.
package final class FakeTimer: HubTimer {
    private let clock: ManualServerClock
    fileprivate let fire: () -> Void
    /// When it fires, or nil when it is not armed.
    package fileprivate(set) var deadline: Instant?

    init(clock: ManualServerClock, fire: @escaping () -> Void) {
        self.clock = clock
        self.fire = fire
    }

    package func schedule(afterNanoseconds nanoseconds: Int64) {
        deadline = Instant(nanoseconds: clock.now().monotonic.nanoseconds + max(0, nanoseconds))
    }

    package func cancel() { deadline = nil }
}

/// The thread that made it stands for a service thread (`LoopBound` checks against it).
package final class TestThreadLoop: LoopThread {
    private let thread = pthread_self()
    package init() {}
    package var isOnServiceThread: Bool { pthread_equal(thread, pthread_self()) != 0 }
}
