import Dispatch
import Foundation
import Glibc
import PomodoroNet
import PomodoroTestSupport
import Testing

/// The service loop on its own: the libuv loop under a WebSocketServer, its timers and its end.
@Suite(.onOwnThreads, .timeLimit(.minutes(1)))
struct ServiceLoopTests {
    private static func monotonicNanoseconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
    }

    /// libuv counts in whole milliseconds of a cached loop time; a timer armed late in a long turn, or for a
    /// delay that is not a whole number of milliseconds, must still not fire before its moment.
    @Test func aTimerNeverFiresBeforeItsDelay() throws {
        let server = try WebSocketServer(options: WebSocketServerOptions(host: "127.0.0.1", port: 0))
        server.start()
        defer {
            server.post { server.shutdown() }
            server.waitUntilFinished()
        }
        let delays: [Int64] = [0, 300_000, 1_000_000, 2_700_000, 7_300_000, 20_000_000]
        let early = LoopTestCell<[Int64]>([])
        let fired = DispatchSemaphore(value: 0)
        let kept = LoopTestCell<[LoopTimer]>([])
        server.post {
            // A turn that runs a while before arming, as a busy one does.
            let busyUntil = Self.monotonicNanoseconds() + 3_000_000
            while Self.monotonicNanoseconds() < busyUntil {}
            for delay in delays {
                let armedAt = Self.monotonicNanoseconds()
                let timer = server.makeTimer {
                    let waited = Self.monotonicNanoseconds() - armedAt
                    if waited < delay { early.value.append(delay - waited) }
                    fired.signal()
                }
                timer.schedule(afterNanoseconds: delay)
                kept.value.append(timer)
            }
        }
        for _ in delays { #expect(fired.wait(timeout: .now() + 5) == .success, "every timer fired") }
        #expect(early.value.isEmpty, "nanoseconds early: \(early.value)")
        server.post { kept.value.removeAll() }
    }

    /// With a loop of ours the library hands back a half-destroyed context when it cannot listen; that is an
    /// error, not a server, and the process goes on.
    @Test func aTakenPortIsAnErrorInProcess() throws {
        let first = try WebSocketServer(options: WebSocketServerOptions(host: "127.0.0.1", port: 0))
        first.start()
        defer {
            first.post { first.shutdown() }
            first.waitUntilFinished()
        }
        #expect(throws: NetError.cannotListen(host: "127.0.0.1", port: first.port)) {
            _ = try WebSocketServer(options: WebSocketServerOptions(host: "127.0.0.1", port: first.port))
        }
        // The first still serves.
        let reply = try RawHTTP.get("/nothing-here", port: first.port)
        #expect(reply.status == 404 || reply.status == 403)
    }

    /// Servers started and stopped on many threads at once, while others open sockets: each stop closes only
    /// its own descriptors (libwebsockets closes its event pipe twice; the second must not land on another's).
    @Test func manyLoopsStartAndStopAtOnce() throws {
        let rounds = 6, width = 4
        for _ in 0..<rounds {
            let servers = try (0..<width).map { _ in
                try WebSocketServer(options: WebSocketServerOptions(host: "127.0.0.1", port: 0))
            }
            for server in servers { server.start() }
            DispatchQueue.concurrentPerform(iterations: width) { index in
                let server = servers[index]
                server.post { server.shutdown() }
                server.waitUntilFinished()
            }
        }
        // A server after all that still works end to end.
        let last = try WebSocketServer(options: WebSocketServerOptions(host: "127.0.0.1", port: 0))
        last.start()
        defer {
            last.post { last.shutdown() }
            last.waitUntilFinished()
        }
        let reply = try RawHTTP.get("/nothing-here", port: last.port)
        #expect(reply.status == 404 || reply.status == 403)
    }
}

/// A value shared between the test's thread and the service thread (the semaphore orders the accesses).
private final class LoopTestCell<Value>: @unchecked Sendable {
    var value: Value
    init(_ value: Value) { self.value = value }
}
