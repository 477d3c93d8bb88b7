import CLibUV
import Glibc
import Synchronization

/// The double close of libwebsockets 4.1.6's event pipe, contained in the teardown where it happens.
///
/// On a libuv loop the library closes its event pipe's descriptor (an eventfd) twice: once while it destroys the
/// context (in `lws_context_destroy`, or in a `lws_create_context` that fails part-way and destroys what it made),
/// and once more when the loop hands back the pipe's poll handle, in a later run of the loop. In between the
/// number is free: a descriptor another thread opens meanwhile may be given it, and the second close would take
/// that descriptor from its owner (libuv then aborts in `epoll_ctl`, or a socket vanishes mid-request).
///
/// That later run of the loop is ours: it happens in the teardown, on the service thread. So right after the
/// first close the number is taken back by a placeholder put on exactly that number (`F_DUPFD` from it gives it
/// only while it is free), and the second close closes the placeholder. Should another thread have been given the
/// number first, the hold waits a little for it to be closed and free again (most such descriptors are short-lived
/// sockets); failing that, the loop is not run again: the context's last handles stay unfinished (some memory and
/// a few descriptors kept until the process ends) rather than another's descriptor closed.
package struct EventPipeHold {
    /// The pipe's number, noted once the context exists.
    private var number: Int32?
    /// The placeholder on `number` (its device and inode), while it may still be there.
    private var placeholder: (device: dev_t, inode: ino_t)?
    /// False once another thread was given the number between the library's two closes: the loop must not run
    /// the closes left.
    package private(set) var mayFinish = true
    /// Take-backs in this process that found the number given to another thread and had to wait for it.
    package static let contestedTakeBacks = Atomic<Int>(0)
    /// Teardowns left unfinished in this process to spare another's descriptor.
    package static let unfinishedTeardowns = Atomic<Int>(0)
    /// How long a take-back waits for a number another thread holds to be free again.
    package static let longestWait: Duration = .seconds(2)

    /// A hold on `number` (tests), or on nothing until `note(on:)` finds the pipe.
    package init(number: Int32? = nil) { self.number = number }

    /// Notes the library's event pipe among the poll handles on `loop`, right after `lws_create_context`: the
    /// handle on an eventfd, or, when the creation failed part-way and the library has closed the pipe already,
    /// the poll handle it is closing (the only one a context that could not listen has).
    mutating func note(on loop: UnsafeMutablePointer<uv_loop_t>) {
        var found = PollHandles()
        withUnsafeMutablePointer(to: &found) { uv_walk(loop, collectPollHandle, $0) }
        number = found.eventfds.first ?? found.closing.first
    }

    /// Right after the library's first close of the pipe: puts the placeholder on its number, waiting up to
    /// `longest` for it while another thread holds it.
    package mutating func takeBack(waitingUpTo longest: Duration = longestWait) {
        guard number != nil, mayFinish, placeholder == nil else { return }
        if placeOnNumber() { return }
        Self.contestedTakeBacks.add(1, ordering: .relaxed)
        let clock = ContinuousClock()
        let giveUp = clock.now + longest
        while clock.now < giveUp {
            usleep(1_000)
            if placeOnNumber() { return }
        }
        mayFinish = false
        Self.unfinishedTeardowns.add(1, ordering: .relaxed)
    }

    /// One try at putting the placeholder on the number; false when another thread holds it.
    private mutating func placeOnNumber() -> Bool {
        guard let number else { return false }
        // A new descriptor takes the lowest free number, often the pipe's own; otherwise it is copied onto
        // the pipe's number, which `F_DUPFD` gives only while it is free.
        let spare = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var onNumber = spare
        if spare >= 0 && spare != number {
            onNumber = fcntl(spare, F_DUPFD_CLOEXEC, number)
            close(spare)
        }
        var identity = stat()
        guard onNumber == number, fstat(number, &identity) == 0 else {
            // The number was not free: another thread holds it now, and the second close would be its loss.
            if onNumber >= 0 { close(onNumber) }
            return false
        }
        placeholder = (identity.st_dev, identity.st_ino)
        return true
    }

    /// Once the loop has run the library's closes: closes the placeholder if the library did not close it a
    /// second time (whatever else now sits on the number is left alone).
    package mutating func release() {
        defer { placeholder = nil }
        guard let number, let placeholder else { return }
        var now = stat()
        if fstat(number, &now) == 0 && now.st_dev == placeholder.device && now.st_ino == placeholder.inode {
            close(number)
        }
    }
}

/// The numbers of a loop's poll handles, as `uv_walk` finds them.
private struct PollHandles {
    /// Those on an eventfd.
    var eventfds: [Int32] = []
    /// Those being closed (their number may already be closed).
    var closing: [Int32] = []
}

private func collectPollHandle(_ handle: UnsafeMutablePointer<uv_handle_t>?, _ argument: UnsafeMutableRawPointer?) {
    guard let handle, let argument, handle.pointee.type == UV_POLL else { return }
    let found = argument.assumingMemoryBound(to: PollHandles.self)
    let number = UnsafeMutableRawPointer(handle).assumingMemoryBound(to: uv_poll_t.self).pointee.io_watcher.fd
    if uv_is_closing(handle) != 0 {
        found.pointee.closing.append(number)
    } else if isEventfd(number) {
        found.pointee.eventfds.append(number)
    }
}

private func isEventfd(_ number: Int32) -> Bool {
    var target = [CChar](repeating: 0, count: 64)
    let length = readlink("/proc/self/fd/\(number)", &target, target.count - 1)
    guard length > 0 else { return false }
    return String(decoding: target[0..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self) == "anon_inode:[eventfd]"
}
