import Foundation
import PomodoroProtocol
import Testing

/// Runs blocking `work` (waiting for a process, polling a terminal, starting a server, waiting on a semaphore)
/// on a thread of its own, and suspends the calling task until it is done.
///
/// Swift Testing runs tests on Swift concurrency's cooperative pool, which has one thread per core: two on a
/// two-core machine. A test that blocks one of those threads for seconds holds it from every other test, and
/// when two do, no async test's continuation runs at all: tests that take seconds alone then exceed their time
/// limits. Awaiting the work here leaves the pool's threads free while it waits.
///
/// ```swift
/// let result = try await onOwnThread { try server.wait(timeout: 20) }
/// ```
public func onOwnThread<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread { continuation.resume(with: Result(catching: work)) }
        thread.start()
    }
}

/// `onOwnThread` for work that cannot fail.
public func onOwnThread<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        let thread = Thread { continuation.resume(returning: work()) }
        thread.start()
    }
}

extension LaunchedProcess {
    /// `wait(timeout:)`, awaited on a thread of its own.
    @discardableResult
    public func ended(timeout: Double = 30) async throws -> ProcessResult {
        try await onOwnThread { try self.wait(timeout: timeout) }
    }

    /// `nextLine(timeout:)`, awaited on a thread of its own.
    public func line(timeout: Double = 10) async throws -> String {
        try await onOwnThread { try self.nextLine(timeout: timeout) }
    }

    /// `waitUntilServing(timeout:)`, awaited on a thread of its own.
    public func serving(timeout: Double = 30) async throws -> Int {
        try await onOwnThread { try self.waitUntilServing(timeout: timeout) }
    }

    /// `stop(grace:)`, awaited on a thread of its own.
    @discardableResult
    public func stopped(grace: Double = 10) async -> ProcessResult? {
        await onOwnThread { self.stop(grace: grace) }
    }
}

extension ProcessLauncher {
    /// `run`, awaited on a thread of its own: the program runs to its end, at most `timeout` seconds.
    @discardableResult
    public static func running(_ path: String, _ arguments: [String] = [], environment: [String: String]? = nil,
                               directory: String? = nil, output: Stream = .capture, errors: Stream = .capture,
                               timeout: Double = 60) async throws -> ProcessResult {
        try await onOwnThread {
            try run(path, arguments, environment: environment, directory: directory, output: output,
                    errors: errors, timeout: timeout)
        }
    }
}

extension Peer {
    /// `expect`, awaited on a thread of its own: for a wait as long as a phase.
    public func awaitMessage<T: Sendable>(_ what: String, timeout: Double = 5,
                                          _ match: @escaping @Sendable (ServerMessage) -> T?) async throws -> T {
        try await onOwnThread { try self.expect(what, timeout: timeout, match) }
    }
}

/// A task executor that runs every job it is given on a new thread of its own.
///
/// A task that prefers it (`withTaskExecutorPreference`, or the `.onOwnThreads` trait) runs its synchronous
/// code there, however long it blocks, and keeps its task-local values, so `#expect` and `#require` are still
/// recorded against the test that runs them.
public final class OwnThreadExecutor: TaskExecutor {
    public static let shared = OwnThreadExecutor()

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        let thread = Thread { job.runSynchronously(on: executor) }
        thread.start()
    }
}

/// Runs each test of a suite (or one test) on threads of its own rather than on Swift concurrency's
/// cooperative pool, for tests that block: waiting for a server's answer, a process, a phase to end.
///
/// The pool has one thread per core (two on a two-core machine), and Swift Testing runs every test on it: a
/// few synchronous tests blocked in waits hold all of it, and every other test, its time limit running,
/// waits for a thread. Tests with this trait leave the pool to the tests that compute.
///
/// ```swift
/// @Suite(.onOwnThreads, .timeLimit(.minutes(TestTime.minutes(1)))) struct LiveRoomTests { … }
/// ```
///
/// Off the pool nothing would bound how many of them run at once, and each starts servers and programs: a
/// suite with this trait waits, suspended, until fewer than `width` such suites are running (twice the
/// cores). The wait is the suite's, before any of its tests starts, so it is not counted against their time
/// limits.
public struct OnOwnThreads: SuiteTrait, TestTrait, TestScoping {
    public var isRecursive: Bool { true }

    /// How many suites with this trait run at once.
    public static let width = 2 * ProcessInfo.processInfo.activeProcessorCount
    static let turns = Turns(width)
    @TaskLocal static var hasTurn = false

    /// A scope around each suite (its turn) and around each test case (threads of its own).
    public func scopeProvider(for test: Test, testCase: Test.Case?) -> Self? {
        test.isSuite || testCase != nil ? self : nil
    }

    public func provideScope(for test: Test, testCase: Test.Case?,
                             performing function: @Sendable () async throws -> Void) async throws {
        guard test.isSuite else {
            try await withTaskExecutorPreference(OwnThreadExecutor.shared) { try await function() }
            return
        }
        // A suite inside one that has a turn runs in its turn.
        guard !Self.hasTurn else { return try await function() }
        try await Self.turns.holding { try await Self.$hasTurn.withValue(true) { try await function() } }
    }
}

/// At most `width` holders at a time; the others wait, suspended, in order.
actor Turns {
    private var free: Int
    private var waiting: [CheckedContinuation<Void, Never>] = []

    init(_ width: Int) { free = width }

    func take() async {
        if free > 0 {
            free -= 1
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    func give() {
        if waiting.isEmpty { free += 1 } else { waiting.removeFirst().resume() }
    }

    /// Runs `body` holding a turn, given back however `body` ends.
    nonisolated func holding(_ body: () async throws -> Void) async throws {
        await take()
        do { try await body() } catch {
            await give()
            throw error
        }
        await give()
    }
}

extension Trait where Self == OnOwnThreads {
    /// Runs the tests on threads of their own: see `OnOwnThreads`.
    public static var onOwnThreads: Self { Self() }
}

/// Runs each test case of a suite (or one test) on a thread of its own, one case at a time across every test
/// with this trait: for tests that compute for seconds rather than wait (in a debug build, each resolution of
/// the command line is a tenth of a second of ArgumentParser's reflection, and a suite does hundreds).
///
/// On Swift concurrency's pool such tests hold its threads (two on a two-core machine) for as long as they
/// compute, and every other test, its time limit running, waits for one: at the start of a run, nothing else
/// finished for the first 28 s. `.onOwnThreads` would free the pool but start every parameterized case at
/// once, each a thread taking a processor from the live servers. Here they share one lane: at most one of them
/// computes at a time, off the pool, and the others wait suspended, holding no thread.
///
/// Not for tests with a time limit: a case's wait for the lane counts against its limit, and the lane holds
/// minutes of work under a sanitizer or beside other builds.
///
/// ```swift
/// @Suite(.computing) struct PrecedenceTests { … }
/// ```
public struct Computing: SuiteTrait, TestTrait, TestScoping {
    public var isRecursive: Bool { true }

    static let lane = Turns(1)

    public func scopeProvider(for test: Test, testCase: Test.Case?) -> Self? {
        testCase != nil ? self : nil
    }

    public func provideScope(for test: Test, testCase: Test.Case?,
                             performing function: @Sendable () async throws -> Void) async throws {
        try await Self.lane.holding {
            try await withTaskExecutorPreference(OwnThreadExecutor.shared) { try await function() }
        }
    }
}

extension Trait where Self == Computing {
    /// One case at a time across every test with this trait, each on a thread of its own: see `Computing`.
    public static var computing: Self { Self() }
}
