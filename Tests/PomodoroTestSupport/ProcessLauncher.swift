import Foundation
import Glibc

/// Why a launched program did not do what a test needed of it.
public struct LaunchFailure: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// The one way the tests start a program: a built executable (`pomodoro-server`, `pomo`) or a tool
/// (`openssl`, `curl`, `tmux`, PostgreSQL's), with its arguments, environment and working directory; its output
/// captured or discarded; waited for with a bounded timeout; ended whatever happens.
///
/// ```swift
/// let result = try ProcessLauncher.run(ProcessLauncher.server, ["--help"])
/// #expect(result.status == 0 && result.output.contains("--port"))
///
/// let server = try ProcessLauncher.start(ProcessLauncher.server, ["--port", "0", "--db", "none"])
/// let port = try server.waitUntilServing()
/// server.terminate()
/// #expect(try server.wait().status == 0)
/// ```
///
/// Built on `posix_spawn` rather than Foundation's `Process`: the child inherits no descriptor but the three it
/// is given (Foundation's `Process` hands each child a socket it watches to learn that the child ended, so a
/// program that forks a daemon, as `tmux new-session` does, never looks finished through it), and it starts with
/// no signal blocked (test threads block some, and a child would keep the mask).
public enum ProcessLauncher {
    /// What becomes of a child's standard output or standard error.
    public enum Stream: Sendable {
        /// Kept, for `nextLine` and the result.
        case capture
        /// Sent to /dev/null.
        case discard
    }

    /// The build folder, where the built executables sit beside the test bundle.
    public static var buildFolder: URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    }

    /// The path of the built executable `name`.
    public static func built(_ name: String) -> String { buildFolder.appendingPathComponent(name).path }

    /// The built `pomodoro-server`.
    public static var server: String { built("pomodoro-server") }
    /// The built `pomo`.
    public static var pomo: String { built("pomo") }

    /// Starts `path` with `arguments`. Standard input is /dev/null.
    /// - Parameters:
    ///   - environment: the child's whole environment; nil passes on the test process's own.
    ///   - directory: the child's working directory; nil keeps the test process's own.
    /// - Throws: `LaunchFailure` when the program cannot be started.
    public static func start(_ path: String, _ arguments: [String] = [], environment: [String: String]? = nil,
                             directory: String? = nil, output: Stream = .capture,
                             errors: Stream = .capture) throws -> LaunchedProcess {
        try LaunchedProcess(path: path, arguments: arguments, environment: environment, directory: directory,
                            output: output, errors: errors)
    }

    /// Runs `path` with `arguments` to its end, at most `timeout` seconds (then it is killed and this throws).
    @discardableResult
    public static func run(_ path: String, _ arguments: [String] = [], environment: [String: String]? = nil,
                           directory: String? = nil, output: Stream = .capture, errors: Stream = .capture,
                           timeout: Double = 60) throws -> ProcessResult {
        try start(path, arguments, environment: environment, directory: directory, output: output, errors: errors)
            .wait(timeout: timeout)
    }
}

/// How a program ended and what it wrote.
public struct ProcessResult: Sendable, CustomStringConvertible {
    /// The exit status, or 128 + the number of the signal that ended it (as a shell reports it).
    public let status: Int32
    /// It exited by itself, rather than being ended by a signal.
    public let exited: Bool
    /// Standard output and standard error, empty when discarded.
    public let output: String
    public let errors: String

    public var description: String { "status \(status)\(exited ? "" : " (signal)"), out: \(output), err: \(errors)" }
}

/// A program the tests started: read its output, signal it, wait for it. A child still running when this is
/// released is killed (SIGKILL), so a test that fails half-way leaves nothing behind.
public final class LaunchedProcess: @unchecked Sendable {
    public let pid: pid_t
    public let path: String
    private let state = ChildState()

    fileprivate init(path: String, arguments: [String], environment: [String: String]?, directory: String?,
                     output: ProcessLauncher.Stream, errors: ProcessLauncher.Stream) throws {
        self.path = path
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if let directory {
            typealias ChangeDirectory = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>,
                                                         UnsafePointer<CChar>) -> Int32
            guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addchdir_np")
            else { throw LaunchFailure("cannot start \(path) in \(directory): no posix_spawn_file_actions_addchdir_np") }
            _ = directory.withCString { unsafeBitCast(symbol, to: ChangeDirectory.self)(&actions, $0) }
        }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        // Each captured stream is a pipe whose ends close on exec; the child's copy (dup2) stays open.
        var readEnds: [(fd: Int32, stream: ChildState.Output)] = []
        var writeEnds: [Int32] = []
        defer { for fd in writeEnds { close(fd) } }
        for (target, stream, kind) in [(Int32(1), output, ChildState.Output.standardOutput),
                                       (Int32(2), errors, ChildState.Output.standardError)] {
            switch stream {
            case .discard:
                posix_spawn_file_actions_addopen(&actions, target, "/dev/null", O_WRONLY, 0)
            case .capture:
                var ends: [Int32] = [0, 0]
                guard pipe(&ends) == 0 else {
                    for (fd, _) in readEnds { close(fd) }
                    throw LaunchFailure("cannot make a pipe for \(path): errno \(errno)")
                }
                // (Glibc does not show pipe2; the moment before FD_CLOEXEC is harmless, as every child this
                // launcher starts closes all but its three descriptors.)
                _ = fcntl(ends[0], F_SETFD, FD_CLOEXEC)
                _ = fcntl(ends[1], F_SETFD, FD_CLOEXEC)
                readEnds.append((ends[0], kind))
                writeEnds.append(ends[1])
                posix_spawn_file_actions_adddup2(&actions, ends[1], target)
            }
        }
        // Nothing else is inherited (glibc 2.34+; Swift's Glibc module does not show the function).
        typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
        if let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np") {
            _ = unsafeBitCast(symbol, to: CloseFrom.self)(&actions, 3)
        }
        // No signal blocked, every signal at its default, whatever the test thread had.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t(), defaults = sigset_t()
        sigemptyset(&none)
        sigemptyset(&defaults)
        for signo in [SIGTERM, SIGINT, SIGHUP, SIGPIPE, SIGCHLD, SIGQUIT] { sigaddset(&defaults, signo) }
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        let envp = environment.map { $0.map { strdup("\($0.key)=\($0.value)") } + [nil] }
        defer { for pointer in envp ?? [] { free(pointer) } }
        var pid: pid_t = 0
        let spawned = envp.map { posix_spawnp(&pid, path, &actions, &attributes, argv, $0) }
            ?? posix_spawnp(&pid, path, &actions, &attributes, argv, environ)
        guard spawned == 0 else {
            for (fd, _) in readEnds { close(fd) }
            throw LaunchFailure("cannot start \(path): \(String(cString: strerror(spawned)))")
        }
        self.pid = pid
        state.watch(pid: pid, outputs: readEnds)
    }

    deinit { if isRunning { kill() } }

    /// Whether the child has not ended yet.
    public var isRunning: Bool { state.isRunning }

    /// Sends `signal` to the child, if it is still running.
    public func send(_ signal: Int32) { state.signal(pid: pid, signal) }
    /// SIGTERM.
    public func terminate() { send(SIGTERM) }
    /// SIGINT, as Ctrl-C.
    public func interrupt() { send(SIGINT) }
    /// SIGKILL.
    public func kill() { send(SIGKILL) }

    /// SIGSTOP, returning once every thread of the process has stopped (or `timeout` seconds have passed:
    /// false). A stop is not done when `kill` returns: the kernel hands the signal to one thread, which stops
    /// the others only once it is scheduled, and until then they run on. On a busy machine that is milliseconds
    /// in which a stalled server still answers.
    @discardableResult
    public func suspend(timeout: Double = 5) -> Bool {
        send(SIGSTOP)
        let deadline = TestTime.deadline(timeout)
        repeat {
            if threadsStopped() { return true }
            usleep(200)
        } while Date() < deadline
        return false
    }

    /// SIGCONT.
    public func resume() { send(SIGCONT) }

    /// Whether every thread of the process is stopped, by the state `/proc` gives each (`T`).
    private func threadsStopped() -> Bool {
        let folder = "/proc/\(pid)/task"
        guard let threads = try? FileManager.default.contentsOfDirectory(atPath: folder), !threads.isEmpty else {
            return false
        }
        return threads.allSatisfy { thread in
            // "pid (name) S ...": the state is the first field after the name's closing parenthesis.
            guard let stat = try? String(contentsOfFile: "\(folder)/\(thread)/stat", encoding: .utf8),
                  let close = stat.lastIndex(of: ")") else { return false }
            return stat[stat.index(after: close)...].trimmingPrefix(" ").first == "T"
        }
    }

    /// The next line the child writes to its (captured) standard output, without the newline.
    /// - Throws: `LaunchFailure` when no whole line comes within `timeout` seconds or the output ends first.
    public func nextLine(timeout: Double = 10) throws -> String {
        guard let line = state.nextLine(deadline: TestTime.deadline(timeout)) else {
            throw LaunchFailure("\(path) wrote no line within \(timeout) s\(isRunning ? "" : " (it ended)")")
        }
        return line
    }

    /// Waits for the first line of a server (`… listening on http://127.0.0.1:PORT/`) and returns the port it
    /// names. A child that writes anything else is killed.
    public func waitUntilServing(timeout: Double = 30) throws -> Int {
        let line: String
        do { line = try nextLine(timeout: timeout) } catch {
            kill()
            throw error
        }
        guard let port = Int(line.split(separator: ":").last?.trimmingCharacters(in: .init(charactersIn: "/")) ?? "")
        else {
            kill()
            throw LaunchFailure("no port in the first line of \(path): \(line)")
        }
        return port
    }

    /// Waits, at most `timeout` seconds, for the child to end and for its captured output to close.
    /// - Throws: `LaunchFailure` when the child is still running then; it has been killed.
    @discardableResult
    public func wait(timeout: Double = 30) throws -> ProcessResult {
        if let result = state.result(deadline: TestTime.deadline(timeout)) { return result }
        kill()
        _ = state.result(deadline: TestTime.deadline(10))
        throw LaunchFailure("\(path) did not end within \(timeout) s and was killed")
    }

    /// Ends the child whatever it is doing: SIGTERM, then SIGKILL if it has not ended within `grace` seconds.
    /// Returns how it ended.
    @discardableResult
    public func stop(grace: Double = 10) -> ProcessResult? {
        terminate()
        if let result = state.result(deadline: TestTime.deadline(grace)) { return result }
        kill()
        return state.result(deadline: TestTime.deadline(10))
    }
}

/// What the threads watching one child share with the test: its output so far, and how it ended.
/// One condition guards it all and wakes whoever waits.
private final class ChildState: @unchecked Sendable {
    enum Output { case standardOutput, standardError }

    private let condition = NSCondition()
    private var output: [UInt8] = []
    private var errors: [UInt8] = []
    /// How far `nextLine` has read `output`.
    private var lineStart = 0
    private var openOutputs = 0
    /// The wait status, once reaped.
    private var waitStatus: Int32?

    /// One thread reaps the child, one reads each captured stream to its end.
    func watch(pid: pid_t, outputs: [(fd: Int32, stream: Output)]) {
        openOutputs = outputs.count
        for (fd, stream) in outputs {
            let reader = Thread { [self] in
                var buffer = [UInt8](repeating: 0, count: 16 * 1024)
                while true {
                    let count = read(fd, &buffer, buffer.count)
                    if count < 0 && errno == EINTR { continue }
                    if count <= 0 { break }
                    condition.withLock {
                        if stream == .standardOutput { output += buffer[0..<count] } else { errors += buffer[0..<count] }
                        condition.broadcast()
                    }
                }
                close(fd)
                condition.withLock {
                    openOutputs -= 1
                    condition.broadcast()
                }
            }
            reader.start()
        }
        let reaper = Thread { [self] in
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
            condition.withLock {
                waitStatus = status
                condition.broadcast()
            }
        }
        reaper.start()
    }

    var isRunning: Bool { condition.withLock { waitStatus == nil } }

    /// Signals the child only while it is unreaped, so that a pid the system has handed on is never signalled.
    func signal(pid: pid_t, _ signal: Int32) {
        condition.withLock { if waitStatus == nil { _ = Glibc.kill(pid, signal) } }
    }

    func nextLine(deadline: Date) -> String? {
        condition.lock()
        defer { condition.unlock() }
        while true {
            if let newline = output[lineStart...].firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: output[lineStart..<newline], as: UTF8.self)
                lineStart = newline + 1
                return line
            }
            // Ended and read to the end: no line will come.
            if waitStatus != nil && openOutputs == 0 { return nil }
            if !condition.wait(until: deadline) { return nil }
        }
    }

    /// How the child ended, once it has and its output is read; nil if that is not so by `deadline`. Output a
    /// descendant still holds open past the child's end is not waited for beyond the deadline.
    func result(deadline: Date) -> ProcessResult? {
        condition.lock()
        defer { condition.unlock() }
        while waitStatus == nil || openOutputs > 0 {
            if !condition.wait(until: deadline) { break }
        }
        guard let status = waitStatus else { return nil }
        let signal = status & 0x7f
        return ProcessResult(status: signal == 0 ? (status >> 8) & 0xff : 128 + signal, exited: signal == 0,
                             output: String(decoding: output, as: UTF8.self),
                             errors: String(decoding: errors, as: UTF8.self))
    }
}
