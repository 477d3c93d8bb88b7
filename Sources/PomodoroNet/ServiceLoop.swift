import CLibUV
import CLibWebSockets
import Foundation

/// One libwebsockets context on a libuv loop that we own, and the single thread that runs that loop.
///
/// The loop is libuv's (epoll): a wake-up costs what is ready, not what is open. libwebsockets joins it as a
/// foreign loop (`LWS_SERVER_OPTION_LIBUV` with `foreign_loops`), so what else runs on the thread is ours to
/// put there: the cross-thread wake-up (`uv_async_t`), timers (`LoopTimer`, all on one timerfd: `TimerQueue`),
/// and work run once a turn's callbacks are done (`atEndOfTurn`: a `uv_check_t` and a `uv_prepare_t`).
///
/// Everything the loop owns (connections, timers, the application state behind its delegate) is touched
/// only on the service thread. Other threads hand work in through `post`, the one thread-safe entry point,
/// which queues the closure and wakes the loop with `uv_async_send`.
/// Subclasses inherit the rule (and restate the conformance, as Swift asks).
public class ServiceLoop: @unchecked Sendable {  // safe: state is the service thread's; `post`, `wake` and the finish waits lock `inboxLock`/`joinLock`
    var context: OpaquePointer?
    /// Where the library writes nil once it has wholly destroyed the context (`info.pcontext`), so that the
    /// teardown knows whether another `lws_context_destroy` is due.
    let contextSlot: UnsafeMutablePointer<OpaquePointer?>
    /// The loop and the wake-up live from `init` to the end of the service thread; their memory is freed in
    /// `deinit`, after the loop is closed.
    let loop: UnsafeMutablePointer<uv_loop_t>
    private let wakeup: UnsafeMutablePointer<uv_async_t>
    /// Run after the callbacks of a turn (the check phase) and before the loop waits (the prepare phase, for
    /// work queued by libuv's own timers, which run before it): `atEndOfTurn`'s work.
    private let turnEnd: UnsafeMutablePointer<uv_check_t>
    private let beforeWaiting: UnsafeMutablePointer<uv_prepare_t>
    private var turnEndWork: [() -> Void] = []
    /// `foreign_loops` for the context's creation info: one loop, the only service thread.
    let foreignLoops: UnsafeMutablePointer<UnsafeMutableRawPointer?>
    /// Every `LoopTimer` of the loop, and when each is due.
    let timers = TimerQueue()
    /// Work handed in by other threads. An NSLock (a pthread mutex) rather than Synchronization.Mutex, so
    /// ThreadSanitizer sees the ordering it creates (`make test-sanitize`).
    private let inboxLock = NSLock()
    private var inbox: [@Sendable () -> Void] = []
    /// Cleared under `inboxLock` before the wake-up is closed, so no late `post` touches a closed handle.
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
    /// Whether the loop could be closed at the end (the memory of a loop libuv still holds handles in is kept).
    private var loopClosed = false
    /// Set when a library timer was set from outside the library's callbacks: the library re-arms its loop
    /// timer only after its own events, so it is woken once the current callback of ours returns.
    private var libraryTimersNeedCheck = false
    /// Set as the teardown begins: no handle may join the loop from then on.
    private(set) var loopHasEnded = false
    /// The library's event pipe, which it closes twice as the context goes; held between the two closes.
    private var eventPipe = EventPipeHold()

    init() {
        loop = .allocate(capacity: 1)
        loop.initialize(to: uv_loop_t())
        let status = uv_loop_init(loop)
        guard status == 0 else { fatalError("cannot create an event loop: \(String(cString: uv_strerror(status)))") }
        wakeup = .allocate(capacity: 1)
        wakeup.initialize(to: uv_async_t())
        uv_async_init(loop, wakeup, wakeupFired)
        contextSlot = .allocate(capacity: 1)
        contextSlot.initialize(to: nil)
        foreignLoops = .allocate(capacity: 1)
        foreignLoops.initialize(to: UnsafeMutableRawPointer(loop))
        turnEnd = .allocate(capacity: 1)
        turnEnd.initialize(to: uv_check_t())
        uv_check_init(loop, turnEnd)
        beforeWaiting = .allocate(capacity: 1)
        beforeWaiting.initialize(to: uv_prepare_t())
        uv_prepare_init(loop, beforeWaiting)
        wakeup.pointee.data = Unmanaged.passUnretained(self).toOpaque()
        timers.start(on: loop, owner: Unmanaged.passUnretained(self).toOpaque(), fired: timersFired)
        turnEnd.pointee.data = Unmanaged.passUnretained(self).toOpaque()
        uv_check_start(turnEnd, turnEndFired)
        uv_unref(pomodoro_uv_check_handle(turnEnd))
        beforeWaiting.pointee.data = Unmanaged.passUnretained(self).toOpaque()
        uv_prepare_start(beforeWaiting, beforeWaitingFired)
        uv_unref(pomodoro_uv_prepare_handle(beforeWaiting))
    }

    /// A service thread nobody waited for is detached, so its stack is given back. Runs only once the thread's
    /// body, which holds the loop, has returned.
    deinit {
        if let thread, !joined { pthread_detach(thread) }
        contextSlot.deallocate()
        foreignLoops.deallocate()
        // A loop that was never run still has its wake-up and timers open: close them and let libuv finish.
        if !loopHasEnded {
            loopHasEnded = true
            closeOwnHandles()
            uv_run(loop, UV_RUN_NOWAIT)
            loopClosed = uv_loop_close(loop) == 0
        }
        if loopClosed {
            wakeup.deallocate()
            turnEnd.deallocate()
            beforeWaiting.deallocate()
            loop.deallocate()
        }
    }

    /// The options every context on this loop is created with: the libuv event library, joined to our loop.
    /// The creation info's `foreign_loops` and `pcontext` must point at `foreignLoops` and `contextSlot`.
    static let eventLibraryOptions = UInt64(LWS_SERVER_OPTION_LIBUV)

    /// Fills the creation info's loop fields (`options`, `foreign_loops`, `pcontext`).
    func joinLoop(_ info: inout lws_context_creation_info) {
        info.options |= Self.eventLibraryOptions
        info.foreign_loops = foreignLoops
        info.pcontext = contextSlot
    }

    /// Creates the context for `info` (filled by `joinLoop`) and notes its event pipe. A creation that fails
    /// part-way destroys what it made, closing the event pipe once as a destruction does (see `abandonContext`).
    func createContext(_ info: inout lws_context_creation_info) -> OpaquePointer? {
        let created = lws_create_context(&info)
        eventPipe.note(on: loop)
        return created
    }

    /// Keeps the context the library created, as `context` and where the library clears it.
    func adopt(_ created: OpaquePointer) {
        context = created
        contextSlot.pointee = created
    }

    /// Runs `work` on the service thread soon. Safe from any thread, also once the loop has ended (the work
    /// then never runs).
    public func post(_ work: @escaping @Sendable () -> Void) {
        inboxLock.withLock {
            inbox.append(work)
            if wakeable { uv_async_send(wakeup) }
        }
    }

    /// Wakes the loop from any thread without work: it then looks at `exitRequested`.
    func wake() {
        inboxLock.withLock {
            if wakeable { uv_async_send(wakeup) }
        }
    }

    /// True when called on the service thread.
    public var isOnServiceThread: Bool {
        guard let id = serviceThreadID else { return false }
        return pthread_equal(id, pthread_self()) != 0
    }

    /// Leaves the loop after the current callback. Service thread only.
    func requestExit() {
        exitRequested = true
        uv_stop(loop)
    }

    /// Starts the service thread.
    func startThread(name: String) {
        let body = ThreadBody { [self] in
            serviceThreadID = pthread_self()
            name.withCString { pomodoro_name_this_thread($0) }
            while !exitRequested {
                uv_run(loop, UV_RUN_DEFAULT)
            }
            tearDown()
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

    /// Ends the loop on the service thread: our handles closed, the context destroyed, libuv's closing
    /// callbacks run to their end, the loop closed. Bounded in time: a handle that never finishes closing
    /// leaves the loop unclosed (and its memory kept) rather than the thread stuck.
    private func tearDown() {
        willDestroyContext()
        loopHasEnded = true
        closeOwnHandles()
        // The library closes its event pipe's descriptor here, and again once libuv hands the pipe's handle
        // back (in `finishDestroying`): in between, a placeholder holds the number (`EventPipeHold`).
        if let context {
            lws_context_destroy(context)
            eventPipe.takeBack()
        }
        finishDestroying()
    }

    /// For a context whose creation failed: with a foreign loop the library returns it half destroyed, and
    /// its handles must close on the loop before it can be freed. Before the service thread starts.
    func abandonContext() {
        loopHasEnded = true
        // The failed creation closed the event pipe once already.
        eventPipe.takeBack()
        closeOwnHandles()
        finishDestroying()
    }

    /// Runs the loop until every handle has closed (within a bound), finishes the library's destruction of
    /// the context, and closes the loop.
    private func finishDestroying() {
        // Another thread was given the event pipe's number between the library's two closes: the loop is not run
        // again, so the second close never reaches it (the loop and the rest of the context are kept).
        guard eventPipe.mayFinish else {
            context = nil
            return
        }
        // A guard that wakes the loop now and then without keeping it alive, so the bound below is checked.
        let guardTimer = UnsafeMutablePointer<uv_timer_t>.allocate(capacity: 1)
        guardTimer.initialize(to: uv_timer_t())
        uv_timer_init(loop, guardTimer)
        uv_timer_start(guardTimer, { _ in }, 50, 50)
        uv_unref(pomodoro_uv_timer_handle(guardTimer))
        let giveUp = uv_hrtime() + 5_000_000_000
        while uv_run(loop, UV_RUN_ONCE) != 0 && uv_hrtime() < giveUp {}
        // With a foreign loop the library finishes its destruction only when asked again, once every handle
        // of its own has closed; it clears `contextSlot` when it is wholly done.
        if let remaining = contextSlot.pointee {
            lws_context_destroy(remaining)
            uv_run(loop, UV_RUN_NOWAIT)
        }
        context = nil
        uv_close(pomodoro_uv_timer_handle(guardTimer), freeTimerHandle)
        uv_run(loop, UV_RUN_NOWAIT)
        loopClosed = uv_loop_close(loop) == 0
        // Had the library not closed the number a second time, the placeholder is still ours to close.
        eventPipe.release()
    }

    /// Closes the wake-up, the turn's end and the timers' descriptor (the work queued for the turn's end runs
    /// first); the timers forget the loop.
    private func closeOwnHandles() {
        inboxLock.withLock { wakeable = false }
        uv_close(pomodoro_uv_async_handle(wakeup), nil)
        runTurnEnd()
        uv_close(pomodoro_uv_check_handle(turnEnd), nil)
        uv_close(pomodoro_uv_prepare_handle(beforeWaiting), nil)
        timers.close()
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
        for item in work {
            item()
            // A burst handed in at once (a group commit's completions, each releasing a room's held broadcasts)
            // must not hold back a timer that came due meanwhile: a room's tick goes out between the items.
            if timers.anyDue(at: uv_hrtime()) { runDueTimers() }
        }
        if exitRequested { uv_stop(loop) }
        checkLibraryTimers()
    }

    /// Runs `work` once on the service thread when the callbacks of this turn of the loop are done, before it
    /// waits for anything again: what several callbacks of one turn queue (commands to one socket) goes out
    /// together. Work queued while that work runs runs in the same pass. Service thread only.
    /// Once the loop has ended (its handles closed: the context's destruction runs its last callbacks), the
    /// work runs at once.
    public func atEndOfTurn(_ work: @escaping () -> Void) {
        if loopHasEnded { return work() }
        turnEndWork.append(work)
    }

    /// Runs the work queued for the end of the turn.
    fileprivate func runTurnEnd() {
        guard !turnEndWork.isEmpty else { return }
        while !turnEndWork.isEmpty {
            let work = turnEndWork
            turnEndWork.removeAll(keepingCapacity: true)
            for item in work { item() }
        }
        checkLibraryTimers()
    }

    /// Notes that a library timer (`lws_set_timeout`, `lws_sul_schedule`) was set, possibly outside the
    /// library's callbacks. Service thread only.
    func libraryTimersChanged() { libraryTimersNeedCheck = true }

    /// After a callback of ours: if library timers changed, the library is woken (through its own cancel
    /// pipe) so it looks at them; without, a timeout set from a timer of ours waits for the next network event.
    func checkLibraryTimers() {
        guard libraryTimersNeedCheck else { return }
        libraryTimersNeedCheck = false
        if let context { lws_cancel_service(context) }
    }

    /// Makes a timer that runs `fire` on the service thread. Service thread only (or before the thread starts).
    public func makeTimer(_ fire: @escaping () -> Void) -> LoopTimer {
        LoopTimer(loop: self, fire: fire)
    }

    /// The timers' descriptor is readable: runs every timer due, then checks the library's timers.
    fileprivate func runDueTimers() {
        timers.runDue()
        checkLibraryTimers()
    }
}

/// A one-shot timer on the service thread, re-armed with `schedule(afterNanoseconds:)`. Use only on the
/// service thread.
///
/// Its moment is kept to the nanosecond on the monotonic clock (`TimerQueue`): it never fires before it, and
/// after it by what the kernel takes to wake the thread, not by libuv's rounding to whole milliseconds.
public final class LoopTimer {
    private unowned let loop: ServiceLoop
    let fire: () -> Void
    /// Its place in the loop's `TimerQueue`; nil once the loop has ended (the timer then never fires).
    var serial: UInt64?

    init(loop: ServiceLoop, fire: @escaping () -> Void) {
        self.loop = loop
        self.fire = fire
        if !loop.loopHasEnded { serial = loop.timers.add(self) }
    }

    deinit {
        if let serial { loop.timers.remove(serial) }
    }

    /// Fires once after `nanoseconds`; replaces any earlier schedule.
    public func schedule(afterNanoseconds nanoseconds: Int64) {
        guard let serial else { return }
        loop.timers.arm(serial, at: uv_hrtime() + UInt64(max(0, nanoseconds)))
    }

    public func cancel() {
        guard let serial else { return }
        loop.timers.disarm(serial)
    }
}

private func timersFired(_ poll: UnsafeMutablePointer<uv_poll_t>?, _ status: Int32, _ events: Int32) {
    guard let owner = poll?.pointee.data else { return }
    Unmanaged<ServiceLoop>.fromOpaque(owner).takeUnretainedValue().runDueTimers()
}

private func freeTimerHandle(_ handle: UnsafeMutablePointer<uv_handle_t>?) {
    guard let handle else { return }
    handle.withMemoryRebound(to: uv_timer_t.self, capacity: 1) { timer in
        timer.deinitialize(count: 1)
        timer.deallocate()
    }
}

private func turnEndFired(_ check: UnsafeMutablePointer<uv_check_t>?) {
    guard let owner = check?.pointee.data else { return }
    Unmanaged<ServiceLoop>.fromOpaque(owner).takeUnretainedValue().runTurnEnd()
}

private func beforeWaitingFired(_ prepare: UnsafeMutablePointer<uv_prepare_t>?) {
    guard let owner = prepare?.pointee.data else { return }
    Unmanaged<ServiceLoop>.fromOpaque(owner).takeUnretainedValue().runTurnEnd()
}

private func wakeupFired(_ async: UnsafeMutablePointer<uv_async_t>?) {
    guard let owner = async?.pointee.data else { return }
    Unmanaged<ServiceLoop>.fromOpaque(owner).takeUnretainedValue().drainInbox()
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
