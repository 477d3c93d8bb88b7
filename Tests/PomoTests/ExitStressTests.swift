import Foundation
import Glibc
import PomodoroTestSupport
import Testing

/// Many short-lived `pomo status` processes at once: each must end with its documented exit status, never
/// by a signal. `pomo` exits as soon as its command is done, so a service thread still tearing down the
/// libwebsockets context at that moment would race the process's own exit (atexit handlers, OpenSSL's
/// cleanup); parallel runs on a loaded machine are where that shows.
@Suite(.onOwnThreads, .serialized, .timeLimit(.minutes(TestTime.minutes(3))))
struct ExitStressTests {
    static let runsPerCase = 300
    static let inFlight = 16

    /// The exit status of each of `count` runs of `pomo` with `arguments`, `inFlight` at a time, tallied. The
    /// runs block, so they get threads of their own: a test holding one of Swift concurrency's few threads
    /// (two on a two-core machine) starves the async tests running beside it.
    static func statuses(_ arguments: [String], count: Int) async -> [Int32: Int] {
        await onOwnThread { blockingStatuses(arguments, count: count) }
    }

    /// `inFlight` threads, each starting the next run as soon as its last one ended, so that `inFlight` runs
    /// are always under way. (`DispatchQueue.concurrentPerform` runs no more at once than there are cores:
    /// two or three runs, not sixteen, on a two-core machine.)
    private static func blockingStatuses(_ arguments: [String], count: Int) -> [Int32: Int] {
        final class Tally: @unchecked Sendable {
            let lock = NSLock()
            var started = 0
            var statuses: [Int32: Int] = [:]
        }
        let tally = Tally()
        let done = DispatchGroup()
        for _ in 0..<min(inFlight, count) {
            done.enter()
            Thread {
                while tally.lock.withLock({ () -> Bool in
                    guard tally.started < count else { return false }
                    tally.started += 1
                    return true
                }) {
                    let status = (try? ProcessLauncher.run(ProcessLauncher.pomo, arguments, output: .discard,
                                                           errors: .discard).status) ?? -1
                    tally.lock.withLock { tally.statuses[status, default: 0] += 1 }
                }
                done.leave()
            }.start()
        }
        done.wait()
        return tally.lock.withLock { tally.statuses }
    }

    /// A loopback port that refuses connections: bound, so nothing else takes it meanwhile, but not listening.
    final class ClosedPort {
        let fd: Int32
        let port: Int

        init() throws {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            self.fd = fd
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let bound = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                    bind(fd, pointer, length) == 0 && getsockname(fd, pointer, &length) == 0
                }
            }
            guard fd >= 0, bound else { throw LiveTestFailure(description: "cannot reserve a loopback port") }
            port = Int(UInt16(bigEndian: address.sin_port))
        }

        deinit { close(fd) }
    }

    @Test func againstAClosedPortEveryRunExitsWith69() async throws {
        let closed = try ClosedPort()
        let tally = await Self.statuses(["status", "stress", "--server", "ws://127.0.0.1:\(closed.port)",
                                         "--timeout", "20"], count: Self.runsPerCase)
        #expect(tally == [69: Self.runsPerCase], "exit statuses (128+N: killed by signal N): \(tally)")
    }

    @Test func againstALiveServerEveryRunExitsWith0() async throws {
        let server = try await ServerProcess.start()
        defer { server.stop() }
        // status observes, and only an open room can be observed: the room is made first, then started.
        try await openRoom("stress", on: server)
        let opened = try await runPomo(["start", "stress", "--server", server.url, "--quiet"])
        #expect(opened.status == 0, "\(opened)")
        let tally = await Self.statuses(["status", "stress", "--server", server.url, "--timeout", "20"],
                                        count: Self.runsPerCase)
        #expect(tally == [0: Self.runsPerCase], "exit statuses (128+N: killed by signal N): \(tally)")
    }
}
