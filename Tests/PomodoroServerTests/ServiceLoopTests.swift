import Dispatch
import Foundation
import Glibc
import PomodoroNet
import PomodoroTestSupport
import Testing

/// The service loop on its own: the libuv loop under a WebSocketServer, its timers and its end.
@Suite(.onOwnThreads, .timeLimit(.minutes(TestTime.minutes(1))))
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

    /// Work queued for the end of a turn (`atEndOfTurn`, how the Redis clients write what a turn sent in one
    /// go) runs once the callback that queued it has returned, in the order queued, with what it queues in
    /// turn, before the loop handles anything posted meanwhile; from a timer's callback too; and at once
    /// once the loop has ended.
    @Test func workQueuedForTheEndOfATurnRunsOnceTheTurnsCallbacksAreDone() throws {
        let server = try WebSocketServer(options: WebSocketServerOptions(host: "127.0.0.1", port: 0))
        server.start()
        let order = LoopTestCell<[String]>([])
        let done = DispatchSemaphore(value: 0)
        let kept = LoopTestCell<[LoopTimer]>([])
        server.post {
            server.atEndOfTurn {
                order.value.append("end 1")
                server.atEndOfTurn { order.value.append("end 3") }
            }
            server.atEndOfTurn { order.value.append("end 2") }
            server.post {
                order.value.append("posted")
                let timer = server.makeTimer {
                    server.atEndOfTurn {
                        order.value.append("timer's end")
                        done.signal()
                    }
                    order.value.append("timer")
                }
                timer.schedule(afterNanoseconds: 1_000_000)
                kept.value.append(timer)
            }
            order.value.append("callback")
        }
        #expect(done.wait(timeout: .now() + 5) == .success)
        server.post { kept.value.removeAll() }
        server.post { server.shutdown() }
        server.waitUntilFinished()
        #expect(order.value == ["callback", "end 1", "end 2", "end 3", "posted", "timer", "timer's end"])
        var ranAtOnce = false
        server.atEndOfTurn { ranAtOnce = true }
        #expect(ranAtOnce, "the loop has ended: nothing else would run it")
    }

    /// The loop's timers share one timerfd: each fires at its own moment, in the order of those moments; one
    /// cancelled, re-armed or freed before its moment does not fire then (a re-armed one fires at its new one).
    @Test func timersFireInTheOrderOfTheirMomentsAndOnlyWhileArmed() throws {
        let server = try WebSocketServer(options: WebSocketServerOptions(host: "127.0.0.1", port: 0))
        server.start()
        defer {
            server.post { server.shutdown() }
            server.waitUntilFinished()
        }
        let order = LoopTestCell<[String]>([])
        let fired = DispatchSemaphore(value: 0)
        let kept = LoopTestCell<[LoopTimer]>([])
        server.post {
            func timer(_ name: String, after milliseconds: Double) -> LoopTimer {
                let timer = server.makeTimer {
                    order.value.append(name)
                    fired.signal()
                }
                timer.schedule(afterNanoseconds: Int64(milliseconds * 1_000_000))
                return timer
            }
            let a = timer("a", after: 30), b = timer("b", after: 10), c = timer("c", after: 20)
            let cancelled = timer("cancelled", after: 15)
            cancelled.cancel()
            let rearmed = timer("rearmed", after: 5)
            rearmed.schedule(afterNanoseconds: 40_000_000)
            var freed: LoopTimer? = timer("freed", after: 25)
            freed = nil
            kept.value = [a, b, c, cancelled, rearmed] + (freed.map { [$0] } ?? [])
        }
        for _ in 0..<4 { #expect(fired.wait(timeout: .now() + 5) == .success, "every armed timer fired") }
        let seen = DispatchSemaphore(value: 0)
        let final = LoopTestCell<[String]>([])
        server.post {
            final.value = order.value
            kept.value.removeAll()
            seen.signal()
        }
        #expect(seen.wait(timeout: .now() + 5) == .success)
        #expect(final.value == ["b", "c", "a", "rearmed"])
    }

    /// Work handed in together (a group commit's completions, each sending a room's held broadcasts) is run
    /// in one wake-up; a timer that comes due while it runs (a room's tick) fires between its items, not
    /// after the last of them.
    @Test func aTimerDueDuringABurstOfPostedWorkFiresBetweenItsItems() throws {
        let server = try WebSocketServer(options: WebSocketServerOptions(host: "127.0.0.1", port: 0))
        server.start()
        defer {
            server.post { server.shutdown() }
            server.waitUntilFinished()
        }
        let order = LoopTestCell<[String]>([])
        let kept = LoopTestCell<LoopTimer?>(nil)
        let done = DispatchSemaphore(value: 0)
        server.post {
            // Posted from the service thread, the three wait for its next wake-up and are run in one go.
            server.post {
                order.value.append("first")
                let timer = server.makeTimer { order.value.append("timer") }
                timer.schedule(afterNanoseconds: 0)   // due by the time this item returns
                kept.value = timer
            }
            server.post { order.value.append("second") }
            server.post {
                order.value.append("third")
                done.signal()
            }
        }
        #expect(done.wait(timeout: .now() + 5) == .success)
        let seen = DispatchSemaphore(value: 0)
        let final = LoopTestCell<[String]>([])
        server.post {
            final.value = order.value
            kept.value = nil
            seen.signal()
        }
        #expect(seen.wait(timeout: .now() + 5) == .success)
        #expect(final.value == ["first", "timer", "second", "third"])
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

/// Contexts created and destroyed on many threads while other threads keep opening and closing descriptors
/// against a server that stays up. libwebsockets 4.1.6 on libuv closes its event pipe's descriptor twice
/// when a context is destroyed, and also when its creation fails (a port already taken); a second close that
/// lands on a number another thread was given meanwhile takes that descriptor away from its owner: the
/// long-lived server's loop then aborts in `epoll_ctl`, or a client loses its socket mid-request.
///
/// `POMODORO_LOOP_STRESS_ROUNDS` sets the rounds (a few by default, so the suite stays quick); the abort it
/// guards against took hundreds of rounds to show.
@Suite(.onOwnThreads, .timeLimit(.minutes(TestTime.minutes(10))))
struct ServiceLoopStressTests {
    @Test func contextsComeAndGoWhileDescriptorsChurn() throws {
        let rounds = ProcessInfo.processInfo.environment["POMODORO_LOOP_STRESS_ROUNDS"].flatMap(Int.init) ?? 8
        let width = 3
        let steady = try WebSocketServer(options: WebSocketServerOptions(host: "127.0.0.1", port: 0))
        steady.start()
        defer {
            steady.post { steady.shutdown() }
            steady.waitUntilFinished()
        }
        let stop = StressFlag()
        let failures = StressTally()
        let churners = DispatchGroup()
        for _ in 0..<2 {
            DispatchQueue.global().async(group: churners) {
                while !stop.isSet {
                    do {
                        let reply = try RawHTTP.get("/nothing-here", port: steady.port)
                        if reply.status != 404 && reply.status != 403 { failures.add("status \(reply.status)") }
                    } catch {
                        failures.add("\(error)")
                    }
                }
            }
        }
        for _ in 0..<rounds {
            DispatchQueue.concurrentPerform(iterations: width) { index in
                do {
                    let server = try WebSocketServer(options: WebSocketServerOptions(host: "127.0.0.1", port: 0))
                    server.start()
                    _ = try? RawHTTP.get("/nothing-here", port: server.port)
                    if index == 0 {
                        // A creation that fails part-way: the library closes its event pipe in it, and again
                        // when the half-destroyed context is finished.
                        do {
                            _ = try WebSocketServer(options: WebSocketServerOptions(host: "127.0.0.1", port: server.port))
                            failures.add("a second server listened on a taken port")
                        } catch {}
                    }
                    server.post { server.shutdown() }
                    server.waitUntilFinished()
                } catch {
                    failures.add("\(error)")
                }
            }
        }
        stop.set()
        churners.wait()
        #expect(failures.all.isEmpty, "\(failures.all.prefix(5))")
        // How often another thread was given a pipe's number between the library's two closes (the teardown
        // then left that context unfinished): for the record, not a bound.
        let contested = EventPipeHold.contestedTakeBacks.load(ordering: .relaxed)
        let unfinished = EventPipeHold.unfinishedTeardowns.load(ordering: .relaxed)
        print("contextsComeAndGoWhileDescriptorsChurn: \(rounds) rounds, \(contested) take-backs contested, "
              + "\(unfinished) teardowns left unfinished")
        let reply = try RawHTTP.get("/nothing-here", port: steady.port)
        #expect(reply.status == 404 || reply.status == 403)
    }
}

private final class StressFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    var isSet: Bool { lock.withLock { value } }
    func set() { lock.withLock { value = true } }
}

private final class StressTally: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [String] = []
    var all: [String] { lock.withLock { items } }
    func add(_ item: String) { lock.withLock { items.append(item) } }
}

/// The hold on libwebsockets' event pipe on its own (`EventPipeHold`): what the library's second close of the
/// pipe meets once the first has been made. Other suites open descriptors meanwhile, so a number is never asserted
/// closed: only that it no longer holds the object it held (sockets have inodes of their own).
@Suite(.onOwnThreads)
struct EventPipeHoldTests {
    private static func inode(_ fd: Int32) -> ino_t? {
        var status = stat()
        return fstat(fd, &status) == 0 ? status.st_ino : nil
    }

    private static func isSocket(_ fd: Int32) -> Bool {
        var status = stat()
        return fstat(fd, &status) == 0 && (status.st_mode & S_IFMT) == S_IFSOCK
    }

    /// A descriptor standing for the library's event pipe (any will do: the hold only looks at the number).
    private static func pipe() throws -> Int32 {
        let pipe = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        try #require(pipe >= 0)
        return pipe
    }

    /// Taken back after the first close, the number holds a placeholder until the second: what another thread
    /// opens meanwhile gets another number, and the second close closes the placeholder, not it.
    @Test func theSecondCloseClosesThePlaceholder() throws {
        let pipe = try Self.pipe()
        var hold = EventPipeHold(number: pipe)
        close(pipe)  // the library's first close
        hold.takeBack()
        // A parallel suite may have been given the number between the close and the take-back; then the hold
        // must not let the loop finish (the next test covers that case).
        guard hold.mayFinish else { return }
        #expect(Self.isSocket(pipe), "the number holds the placeholder")
        let placeholder = try #require(Self.inode(pipe))
        let other = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        try #require(other >= 0)
        defer { close(other) }
        #expect(other != pipe)
        let otherInode = Self.inode(other)
        close(pipe)  // the library's second close
        #expect(Self.inode(pipe) != placeholder)
        #expect(Self.inode(other) == otherInode, "what was opened meanwhile is untouched")
        hold.release()
        #expect(Self.inode(other) == otherInode)
    }

    /// A number another thread holds only briefly is taken back once that thread has closed it: the teardown then
    /// finishes.
    @Test func aNumberFreedAgainIsTakenBack() throws {
        let pipe = try Self.pipe()
        var hold = EventPipeHold(number: pipe)
        close(pipe)
        var brief = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        try #require(brief >= 0)
        if brief != pipe {
            let moved = fcntl(brief, F_DUPFD_CLOEXEC, pipe)
            close(brief)
            brief = moved
        }
        guard brief == pipe else { return }  // a parallel suite holds it: the test above covers that
        let contested = EventPipeHold.contestedTakeBacks.load(ordering: .relaxed)
        // The other thread closes its descriptor a moment later, while the hold waits.
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(50)) { [brief] in close(brief) }
        hold.takeBack(waitingUpTo: .seconds(TestTime.seconds(10)))
        #expect(hold.mayFinish)
        #expect(EventPipeHold.contestedTakeBacks.load(ordering: .relaxed) > contested)
        #expect(Self.isSocket(pipe), "the placeholder is on the number")
        hold.release()
    }

    /// A placeholder the library never closed a second time is closed by the release.
    @Test func aPlaceholderLeftOverIsReleased() throws {
        let pipe = try Self.pipe()
        var hold = EventPipeHold(number: pipe)
        close(pipe)
        hold.takeBack()
        guard hold.mayFinish else { return }
        let placeholder = try #require(Self.inode(pipe))
        hold.release()
        #expect(Self.inode(pipe) != placeholder)
    }

    /// A number another thread was given between the two closes is left to it: the hold says the loop must not
    /// run the second close, and the descriptor on the number is untouched.
    @Test func aNumberAnotherGotFirstIsLeftAlone() throws {
        let pipe = try Self.pipe()
        var hold = EventPipeHold(number: pipe)
        let before = EventPipeHold.unfinishedTeardowns.load(ordering: .relaxed)
        close(pipe)
        // Another thread's socket on the number: a new descriptor takes the lowest free number, or is moved there.
        var mine = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        try #require(mine >= 0)
        if mine != pipe {
            let moved = fcntl(mine, F_DUPFD_CLOEXEC, pipe)
            close(mine)
            mine = moved
        }
        defer { if mine >= 0 { close(mine) } }
        // A parallel suite was given the number first and may close it at any moment: nothing to assert then.
        guard mine == pipe else { return }
        let occupant = Self.inode(pipe)
        hold.takeBack(waitingUpTo: .milliseconds(20))
        #expect(!hold.mayFinish)
        #expect(EventPipeHold.unfinishedTeardowns.load(ordering: .relaxed) > before)
        #expect(Self.inode(pipe) == occupant, "the occupant keeps its descriptor")
        hold.release()
        #expect(Self.inode(pipe) == occupant)
    }
}
