import CLibUV

/// A loop whose thread can watch descriptors of its own (a Redis connection read and written on the service
/// thread, never blocking it) and keep timers.
public protocol DescriptorWatching: LoopThread {
    /// Watches `descriptor` for reading (always) and writing (while `LoopWatch.wantsWritable`): `ready` runs
    /// on the service thread with what it may do now. Nil once the loop has ended. Service thread only.
    func watch(_ descriptor: Int32, ready: @escaping (_ readable: Bool, _ writable: Bool) -> Void) -> LoopWatch?
    /// A one-shot timer on the service thread. Service thread only.
    func makeTimer(_ fire: @escaping () -> Void) -> LoopTimer
    /// Runs `work` once the callbacks of this turn of the loop are done (`ServiceLoop.atEndOfTurn`).
    func atEndOfTurn(_ work: @escaping () -> Void)
}

extension ServiceLoop: DescriptorWatching {
    public func watch(_ descriptor: Int32, ready: @escaping (Bool, Bool) -> Void) -> LoopWatch? {
        guard !loopHasEnded else { return nil }
        return LoopWatch(loop: self, descriptor: descriptor, ready: ready)
    }
}

/// One descriptor watched on the service loop (libuv's `uv_poll_t`). It does not keep the loop running, and
/// never closes the descriptor: its owner does, after `close`. Service thread only.
public final class LoopWatch {
    private unowned let loop: ServiceLoop
    private var poll: UnsafeMutablePointer<uv_poll_t>?
    fileprivate let ready: (Bool, Bool) -> Void
    /// Whether `ready` is also called when the descriptor can be written.
    public var wantsWritable = false {
        didSet { if wantsWritable != oldValue { start() } }
    }

    init(loop: ServiceLoop, descriptor: Int32, ready: @escaping (Bool, Bool) -> Void) {
        self.loop = loop
        self.ready = ready
        let poll = UnsafeMutablePointer<uv_poll_t>.allocate(capacity: 1)
        poll.initialize(to: uv_poll_t())
        uv_poll_init(loop.loop, poll, descriptor)
        poll.pointee.data = Unmanaged.passUnretained(self).toOpaque()
        uv_unref(pomodoro_uv_poll_handle(poll))
        self.poll = poll
        start()
    }

    deinit { close() }

    private func start() {
        guard let poll, !loop.loopHasEnded else { return }
        let events = UV_READABLE.rawValue | (wantsWritable ? UV_WRITABLE.rawValue : 0)
        uv_poll_start(poll, Int32(events), watchFired)
    }

    /// Stops watching (at once: the descriptor leaves epoll); `ready` is not called again.
    public func close() {
        guard let poll else { return }
        self.poll = nil
        poll.pointee.data = nil
        // A loop that has ended closed its handles already, and runs no callback any more: its memory is kept.
        guard !loop.loopHasEnded else { return }
        uv_close(pomodoro_uv_poll_handle(poll)) { handle in
            handle?.withMemoryRebound(to: uv_poll_t.self, capacity: 1) { poll in
                poll.deinitialize(count: 1)
                poll.deallocate()
            }
        }
    }

    fileprivate func fired(status: Int32, events: Int32) {
        // An error on the descriptor is reported as readable: the read finds it.
        let readable = status < 0 || events & Int32(UV_READABLE.rawValue) != 0
        let writable = status >= 0 && events & Int32(UV_WRITABLE.rawValue) != 0
        withExtendedLifetime(self) {
            ready(readable, writable)
            loop.checkLibraryTimers()
        }
    }
}

private func watchFired(_ poll: UnsafeMutablePointer<uv_poll_t>?, _ status: Int32, _ events: Int32) {
    guard let owner = poll?.pointee.data else { return }
    Unmanaged<LoopWatch>.fromOpaque(owner).takeUnretainedValue().fired(status: status, events: events)
}
