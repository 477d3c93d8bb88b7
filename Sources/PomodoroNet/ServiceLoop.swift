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
    private let finished = DispatchSemaphore(value: 0)
    /// Set under `inboxLock` once the context is destroyed; `finished()` callers wait for it.
    private var ended = false
    private var finishWaiters: [CheckedContinuation<Void, Never>] = []
    /// The service thread, joined once it has ended (under `joinLock`).
    private let joinLock = NSLock()
    private var thread: pthread_t?
    private var joined = false
    private var serviceThreadID: pthread_t?
    /// Set on the service thread to leave the loop after the current turn.
    var exitRequested = false

    init() {}

    /// A service thread nobody waited for is detached, so its stack is given back. Runs only once the thread's
    /// body, which holds the loop, has returned.
    deinit {
        if let thread, !joined { pthread_detach(thread) }
    }

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
        let body = ThreadBody { [self] in
            serviceThreadID = pthread_self()
            name.withCString { pomodoro_name_this_thread($0) }
            while !exitRequested {
                if lws_service(context, 0) < 0 { break }
            }
            willDestroyContext()
            inboxLock.withLock { wakeable = false }
            lws_context_destroy(context)
            context = nil
            let waiters = inboxLock.withLock { () -> [CheckedContinuation<Void, Never>] in
                ended = true
                defer { finishWaiters.removeAll() }
                return finishWaiters
            }
            finished.signal()
            for waiter in waiters { waiter.resume() }
        }
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setstacksize(&attributes, 1 << 20)
        var thread = pthread_t()
        let argument = Unmanaged.passRetained(body).toOpaque()
        let created = pthread_create(&thread, &attributes, runThreadBody, argument)
        guard created == 0 else {
            Unmanaged<ThreadBody>.fromOpaque(argument).release()
            fatalError("cannot start the \(name) thread: \(String(cString: strerror(created)))")
        }
        joinLock.withLock { self.thread = thread }
    }

    /// Blocks the calling thread until the service thread has ended: the context is destroyed and the
    /// thread itself has exited (joined), so nothing of the loop's runs any more, also not while the process
    /// exits. Returns at once when the loop was never started.
    public func waitUntilFinished() {
        guard joinLock.withLock({ thread != nil || joined }) else { return }
        finished.wait()
        finished.signal()
        join()
    }

    /// The same without blocking a thread: suspends until the service thread has ended and is joined.
    /// Call it after `stop()` and before the process may exit; `exit()` while the library is still tearing
    /// its context down races the process's own teardown (atexit handlers, OpenSSL's cleanup).
    public func finished() async {
        guard joinLock.withLock({ thread != nil || joined }) else { return }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let alreadyEnded = inboxLock.withLock { () -> Bool in
                if !ended { finishWaiters.append(continuation) }
                return ended
            }
            if alreadyEnded { continuation.resume() }
        }
        join()
    }

    /// Joins the ended service thread, once; the thread has at most to return by then.
    private func join() {
        joinLock.withLock {
            guard let thread, !joined else { return }
            pthread_join(thread, nil)
            joined = true
        }
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

/// The closure a service thread runs, handed to `pthread_create` retained.
private final class ThreadBody {
    let run: () -> Void
    init(_ run: @escaping () -> Void) { self.run = run }
}

private func runThreadBody(_ argument: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? {
    guard let argument else { return nil }
    let body = Unmanaged<ThreadBody>.fromOpaque(argument).takeRetainedValue()
    body.run()
    return nil
}

/// Reads the loop object back from a context's user pointer.
func serviceLoop<T: ServiceLoop>(of wsi: OpaquePointer?, as: T.Type) -> T? {
    guard let wsi, let context = lws_get_context(wsi), let user = lws_context_user(context) else { return nil }
    return Unmanaged<T>.fromOpaque(user).takeUnretainedValue()
}
