import CLibWebSockets
import Foundation

/// One libwebsockets context and the single thread that services it.
///
/// Everything the loop owns (connections, timers, the application state behind its delegate) is touched
/// only on the service thread. Other threads hand work in through `post`, the one thread-safe entry point,
/// which queues the closure and wakes the loop with `lws_cancel_service`.
public class ServiceLoop: @unchecked Sendable {
    var context: OpaquePointer?
    /// Work handed in by other threads. An NSLock (a pthread mutex) rather than Synchronization.Mutex, so
    /// ThreadSanitizer sees the ordering it creates (`make test-sanitize`).
    private let inboxLock = NSLock()
    private var inbox: [@Sendable () -> Void] = []
    /// Cleared under `inboxLock` before the context is destroyed, so no late `post` wakes a freed context.
    private var wakeable = true
    private var thread: Thread?
    private let finished = DispatchSemaphore(value: 0)
    private var serviceThreadID: pthread_t?
    /// Set on the service thread to leave the loop after the current turn.
    var exitRequested = false

    init() {}

    /// Runs `work` on the service thread soon. Safe from any thread, also once the loop has ended (the work
    /// then never runs).
    public func post(_ work: @escaping @Sendable () -> Void) {
        inboxLock.withLock {
            inbox.append(work)
            if wakeable, let context { lws_cancel_service(context) }
        }
    }

    /// True when called on the service thread.
    public var isOnServiceThread: Bool {
        guard let id = serviceThreadID else { return false }
        return pthread_equal(id, pthread_self()) != 0
    }

    /// Starts the service thread.
    func startThread(name: String) {
        let thread = Thread { [self] in
            serviceThreadID = pthread_self()
            while !exitRequested {
                if lws_service(context, 0) < 0 { break }
            }
            willDestroyContext()
            inboxLock.withLock { wakeable = false }
            lws_context_destroy(context)
            context = nil
            finished.signal()
        }
        thread.name = name
        thread.stackSize = 1 << 20
        self.thread = thread
        thread.start()
    }

    /// Blocks the calling thread until the service thread has ended and the context is destroyed.
    public func waitUntilFinished() {
        finished.wait()
        finished.signal()
    }

    /// Called on the service thread right before the context is destroyed.
    func willDestroyContext() {}

    /// Runs the work other threads posted. Called on the service thread when the loop is woken.
    func drainInbox() {
        let work = inboxLock.withLock { () -> [@Sendable () -> Void] in
            let taken = inbox
            inbox.removeAll(keepingCapacity: true)
            return taken
        }
        for item in work { item() }
    }

    /// Makes a timer that runs `fire` on the service thread.
    public func makeTimer(_ fire: @escaping () -> Void) -> LoopTimer {
        LoopTimer(loop: self, fire: fire)
    }
}

/// A one-shot timer on the service thread, re-armed with `schedule(after:)`. Use only on the service thread.
public final class LoopTimer {
    private unowned let loop: ServiceLoop
    private let fire: () -> Void
    private let storage: UnsafeMutablePointer<pomodoro_timer_t>

    init(loop: ServiceLoop, fire: @escaping () -> Void) {
        self.loop = loop
        self.fire = fire
        storage = .allocate(capacity: 1)
        storage.initialize(to: pomodoro_timer_t())
        storage.pointee.owner = Unmanaged.passUnretained(self).toOpaque()
    }

    deinit {
        cancel()
        storage.deallocate()
    }

    /// Fires once after `nanoseconds` (rounded up to whole microseconds); replaces any earlier schedule.
    public func schedule(afterNanoseconds nanoseconds: Int64) {
        guard let context = loop.context else { return }
        let micros = max(0, (nanoseconds + 999) / 1000)
        storage.withMemoryRebound(to: lws_sorted_usec_list_t.self, capacity: 1) { sul in
            lws_sul_schedule(context, 0, sul, loopTimerFired, lws_usec_t(micros))
        }
    }

    public func cancel() {
        storage.withMemoryRebound(to: lws_sorted_usec_list_t.self, capacity: 1) { sul in
            lws_sul_cancel(sul)
        }
    }

    fileprivate func fired() { fire() }
}

private func loopTimerFired(_ sul: UnsafeMutablePointer<lws_sorted_usec_list_t>?) {
    guard let sul, let owner = pomodoro_timer_owner(sul) else { return }
    Unmanaged<LoopTimer>.fromOpaque(owner).takeUnretainedValue().fired()
}

/// Reads the loop object back from a context's user pointer.
func serviceLoop<T: ServiceLoop>(of wsi: OpaquePointer?, as: T.Type) -> T? {
    guard let wsi, let context = lws_get_context(wsi), let user = lws_context_user(context) else { return nil }
    return Unmanaged<T>.fromOpaque(user).takeUnretainedValue()
}
