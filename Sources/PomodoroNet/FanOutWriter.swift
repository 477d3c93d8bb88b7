import Foundation
import Synchronization

/// Writes the same bytes to many sockets on two threads: the caller's and a writer thread of its own.
///
/// A room of thousands hears each second as one pass of thousands of `send`s, each of which on loopback
/// also runs the receiving side's TCP work; on one thread the last member hears the second a whole pass
/// after the first. Here the caller and the writer take the sockets in slices from one counter, so the pass
/// takes about half as long when a second core is free, and no longer than one thread's when it is not (a
/// writer that has not woken by the time the caller has taken every slice takes none, and is not waited for).
///
/// It knows only descriptors and bytes: the caller decides which sockets may be written directly (nothing of
/// theirs waiting in the library) and what to do with what a socket did not take. While `write` runs the
/// caller's thread is inside it, so no socket of the job can be closed under the writer.
final class FanOutWriter: @unchecked Sendable {  // safe: `job` and `phase` under `condition`; a job's slices are shared through `next`, one atomic counter; `sendInstead` set before any job
    /// Sockets taken per turn by either thread: small enough to share a pass evenly, large enough that the
    /// counter is not contended.
    static let slice = 32

    private struct Job {
        let sockets: UnsafeBufferPointer<Int32>
        let bytes: UnsafeRawBufferPointer
        let results: UnsafeMutableBufferPointer<Int>
    }

    private enum Phase { case idle, posted, running, done }

    private let condition = NSCondition()
    private var job: Job?
    private var phase = Phase.idle
    private var stopping = false
    private var started = false
    private let next = Atomic<Int>(0)
    /// In place of the socket's `send` (tests: a socket that takes part of a frame, none of it, or fails, on
    /// demand). Set before the first `write`, never after.
    var sendInstead: (@Sendable (Int32, UnsafeRawBufferPointer) -> Int)?

    /// Writes `bytes` to each of `sockets` once, without blocking: `results[i]` is how many bytes socket `i`
    /// took (0 when its buffer was full), or -1 when it failed (the peer is gone). Returns when both threads
    /// are done with the job.
    func write(_ bytes: UnsafeRawBufferPointer, to sockets: UnsafeBufferPointer<Int32>,
               results: UnsafeMutableBufferPointer<Int>) {
        precondition(results.count == sockets.count)
        let job = Job(sockets: sockets, bytes: bytes, results: results)
        next.store(0, ordering: .relaxed)
        condition.lock()
        if !started { startThread() }
        self.job = job
        phase = .posted
        condition.signal()
        condition.unlock()

        takeSlices(of: job)

        condition.lock()
        if phase == .posted {
            // The writer has not woken yet and every slice is taken: it is told there is nothing to do.
            phase = .idle
            self.job = nil
        } else {
            while phase != .done { condition.wait() }
            phase = .idle
        }
        condition.unlock()
    }

    /// Ends the writer thread (it holds no job between calls to `write`).
    func stop() {
        condition.lock()
        stopping = true
        condition.broadcast()
        condition.unlock()
    }

    private func startThread() {
        started = true
        let thread = Thread { [self] in
            ThreadName.set("pomodoro-fanout")  // on Linux a name given before `start` is lost
            run()
        }
        thread.stackSize = 1 << 18
        thread.start()
    }

    private func run() {
        condition.lock()
        while true {
            while phase != .posted && !stopping { condition.wait() }
            if stopping { break }
            guard let job else { continue }
            phase = .running
            condition.unlock()
            takeSlices(of: job)
            condition.lock()
            self.job = nil
            phase = .done
            condition.broadcast()
        }
        condition.unlock()
    }

    private func takeSlices(of job: Job) {
        let count = job.sockets.count
        while true {
            let start = next.wrappingAdd(Self.slice, ordering: .relaxed).oldValue
            guard start < count else { return }
            for index in start..<min(count, start + Self.slice) {
                job.results[index] = sendInstead?(job.sockets[index], job.bytes) ?? Self.sendAll(job.bytes, to: job.sockets[index])
            }
        }
    }

    /// One non-blocking send (retried only when a signal interrupted it).
    static func sendAll(_ bytes: UnsafeRawBufferPointer, to socket: Int32) -> Int {
        while true {
            let written = send(socket, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT))
            if written >= 0 { return written }
            switch errno {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK: return 0
            default: return -1
            }
        }
    }
}
