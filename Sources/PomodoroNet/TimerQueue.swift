import CLibUV
import Glibc

/// Every `LoopTimer` of one service loop, on one timerfd. Service thread only.
///
/// libuv keeps its timers in whole milliseconds of a loop time read once per turn, and its `epoll_wait` sleeps
/// in whole milliseconds too: a timer armed for a whole-second boundary woke one to two milliseconds after it,
/// and every tick of a room went out that much late. Here each timer's moment is an absolute reading of the
/// monotonic clock in nanoseconds (`uv_hrtime`), the earliest of them is what the timerfd is armed for, and
/// the loop wakes when the kernel says the moment has come (tens of microseconds after it on an idle core).
///
/// The queue is a binary heap of armings. Re-arming or cancelling a timer leaves its old entry behind, to be
/// skipped when it comes up (each arming has a number of its own); the heap is rebuilt from the live armings
/// when stale entries outnumber them.
final class TimerQueue {
    private struct Entry {
        var due: UInt64
        var arming: UInt64
        var serial: UInt64
        func precedes(_ other: Entry) -> Bool { due != other.due ? due < other.due : arming < other.arming }
    }

    private struct Live {
        let timer: Unmanaged<LoopTimer>
        /// The arming in force, 0 when the timer is not armed.
        var arming: UInt64 = 0
        var due: UInt64 = 0
    }

    private var heap: [Entry] = []
    private var live: [UInt64: Live] = [:]
    private var nextSerial: UInt64 = 1
    private var nextArming: UInt64 = 1
    private var descriptor: Int32 = -1
    private var poll: UnsafeMutablePointer<uv_poll_t>?
    /// The moment the timerfd is armed for, if any.
    private var armedFor: UInt64?

    /// Opens the timerfd and watches it on `loop`; `fired` (given `owner` as the handle's data) is to call
    /// `runDue`. A queue that cannot have its descriptor falls back to nothing firing, so it is fatal.
    func start(on loop: UnsafeMutablePointer<uv_loop_t>, owner: UnsafeMutableRawPointer, fired: uv_poll_cb) {
        descriptor = pomodoro_timerfd_create()
        guard descriptor >= 0 else { fatalError("cannot create the loop's timer: \(String(cString: strerror(errno)))") }
        let poll = UnsafeMutablePointer<uv_poll_t>.allocate(capacity: 1)
        poll.initialize(to: uv_poll_t())
        uv_poll_init(loop, poll, descriptor)
        poll.pointee.data = owner
        uv_poll_start(poll, Int32(UV_READABLE.rawValue), fired)
        // The timers alone must not keep the loop running: the wake-up and the library's handles do.
        uv_unref(pomodoro_uv_poll_handle(poll))
        self.poll = poll
    }

    /// Stops watching and closes the descriptor; every timer forgets the queue and never fires again.
    func close() {
        for entry in live.values { entry.timer.takeUnretainedValue().serial = nil }
        live.removeAll()
        heap.removeAll()
        guard let poll else { return }
        self.poll = nil
        // Closing the handle takes the descriptor out of epoll at once; its memory is libuv's until the callback.
        uv_close(pomodoro_uv_poll_handle(poll)) { handle in
            handle?.withMemoryRebound(to: uv_poll_t.self, capacity: 1) { poll in
                poll.deinitialize(count: 1)
                poll.deallocate()
            }
        }
        Glibc.close(descriptor)
        descriptor = -1
    }

    func add(_ timer: LoopTimer) -> UInt64 {
        defer { nextSerial += 1 }
        live[nextSerial] = Live(timer: .passUnretained(timer))
        return nextSerial
    }

    func remove(_ serial: UInt64) {
        live[serial] = nil
    }

    /// Arms the timer for `due` (monotonic nanoseconds), replacing any earlier arming.
    func arm(_ serial: UInt64, at due: UInt64) {
        guard live[serial] != nil else { return }
        let arming = nextArming
        nextArming += 1
        live[serial]!.arming = arming
        live[serial]!.due = due
        push(Entry(due: due, arming: arming, serial: serial))
        if heap.count > 64 && heap.count > 2 * live.count { rebuild() }
        if armedFor.map({ due < $0 }) ?? true { setDescriptor(due) }
    }

    func disarm(_ serial: UInt64) {
        live[serial]?.arming = 0
    }

    /// Whether the earliest arming is due by `now` (monotonic nanoseconds): one look at the heap's top, which
    /// may be a stale arming (then `runDue` fires nothing and drops it).
    func anyDue(at now: UInt64) -> Bool {
        heap.first.map { $0.due <= now } ?? false
    }

    /// Fires every timer due by now, earliest first; timers armed by those callbacks wait for the next wake-up
    /// (even if due at once), so that none can keep the loop here.
    ///
    /// The descriptor's expiration is cleared by arming it again for the next timer (`timerfd_settime` sets
    /// its count back to zero, so it is no longer readable), and read only when no timer is left: one
    /// system call per wake-up rather than two.
    func runDue() {
        guard descriptor >= 0 else { return }
        armedFor = nil
        let now = uv_hrtime()
        var due: [Entry] = []
        while let top = heap.first, top.due <= now {
            due.append(pop())
        }
        for entry in due {
            // Cancelled, re-armed or freed by a timer fired before it in this pass: skipped.
            guard var current = live[entry.serial], current.arming == entry.arming else { continue }
            current.arming = 0
            live[entry.serial] = current
            let timer = current.timer.takeUnretainedValue()
            timer.fire()
        }
        while let top = heap.first, live[top.serial]?.arming != top.arming { _ = pop() }
        if let top = heap.first {
            setDescriptor(top.due)
        } else {
            pomodoro_timerfd_clear(descriptor)
        }
    }

    private func setDescriptor(_ due: UInt64) {
        guard descriptor >= 0 else { return }
        armedFor = due
        _ = pomodoro_timerfd_arm(descriptor, due)
    }

    private func rebuild() {
        heap = live.compactMap { serial, entry in
            entry.arming == 0 ? nil : Entry(due: entry.due, arming: entry.arming, serial: serial)
        }
        heap.sort { $0.precedes($1) }   // a sorted array is a heap
    }

    private func push(_ entry: Entry) {
        heap.append(entry)
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].precedes(heap[parent]) else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    private func pop() -> Entry {
        let first = heap[0]
        let last = heap.removeLast()
        guard !heap.isEmpty else { return first }
        heap[0] = last
        var parent = 0
        while true {
            let left = 2 * parent + 1, right = left + 1
            var smallest = parent
            if left < heap.count && heap[left].precedes(heap[smallest]) { smallest = left }
            if right < heap.count && heap[right].precedes(heap[smallest]) { smallest = right }
            if smallest == parent { break }
            heap.swapAt(parent, smallest)
            parent = smallest
        }
        return first
    }
}
