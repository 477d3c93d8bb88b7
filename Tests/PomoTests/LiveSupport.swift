import Foundation
import PomodoroTestSupport
import Testing

/// Runs the built `pomo` with `arguments` to its end, waiting on a thread of its own.
@discardableResult
func runPomo(_ arguments: [String], environment: [String: String]? = nil) async throws -> ProcessResult {
    try await ProcessLauncher.running(ProcessLauncher.pomo, arguments, environment: environment)
}

/// `pomo join`'s own connect timeout (10 s unless told) stretched as every bound of the live tests is
/// (`TestTime`): under a sanitizer the server may take longer than 10 s to welcome a join.
let joinTimeout = ["--timeout", "\(TestTime.seconds(10))"]
/// `joinTimeout` as it is typed into a shell.
var joinTimeoutTyped: String { joinTimeout.joined(separator: " ") }

/// The real `pomodoro-server` executable on a free loopback port.
final class ServerProcess: Sendable {
    let process: LaunchedProcess
    let port: Int
    let webRoot: String

    /// A server started (and waited for until it serves) on a thread of its own.
    static func start() async throws -> ServerProcess { try await onOwnThread { try ServerProcess() } }

    /// `arguments` go after the usual ones (`--reconnect-grace 2`, say).
    init(arguments: [String] = []) throws {
        webRoot = NSTemporaryDirectory() + "pomo-web-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: webRoot, withIntermediateDirectories: true)
        process = try ProcessLauncher.start(ProcessLauncher.server,
                                            ["--port", "0", "--host", "127.0.0.1", "--web-root", webRoot,
                                             "--log-level", "warning", "--db", webRoot + "/pomodoro.sqlite",
                                             "--min-focus", "1"] + arguments,
                                            errors: .discard)
        port = try process.waitUntilServing()
    }

    var url: String { "ws://127.0.0.1:\(port)" }

    func stop() {
        process.stop()
        try? FileManager.default.removeItem(atPath: webRoot)
    }
}

/// A tmux server of its own (private socket), with one 80×24 (or other) session running a plain shell.
final class TmuxSession: Sendable {
    let socket: String
    let session = "pomo"

    /// A session started on a thread of its own.
    static func start(columns: Int = 80, rows: Int = 24, environment: [String: String]) async throws -> TmuxSession {
        try await onOwnThread { try TmuxSession(columns: columns, rows: rows, environment: environment) }
    }

    init(columns: Int = 80, rows: Int = 24, environment: [String: String]) throws {
        socket = "pomo-test-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let exports = environment.map { "export \($0.key)='\($0.value)'" }.joined(separator: "; ")
        let shell = "\(exports); export PS1='shell$ '; exec bash --norc --noprofile"
        // `new-session` forks the tmux server, which keeps every descriptor its client had: it gets nothing but
        // /dev/null, or the launcher would wait for the server to close a pipe it never closes.
        guard let path = Self.tmuxPath else { throw Self.notInstalled }
        let started = try ProcessLauncher.run(path, ["-L", socket, "-f", "/dev/null", "new-session", "-d",
                                                     "-x", "\(columns)", "-y", "\(rows)", "-s", session,
                                                     "bash", "--norc", "--noprofile", "-c", shell],
                                              output: .discard, errors: .discard)
        guard started.status == 0 else {
            throw LiveTestFailure(description: "tmux new-session failed with status \(started.status)")
        }
    }

    static let notInstalled = LiveTestFailure(description: "tmux is not installed (make test installs it)")

    static var tmuxPath: String? {
        ["/usr/bin/tmux", "/usr/local/bin/tmux", "/bin/tmux"].first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    @discardableResult
    func tmux(_ arguments: [String]) throws -> ProcessResult {
        guard let path = Self.tmuxPath else { throw Self.notInstalled }
        return try ProcessLauncher.run(path, ["-L", socket, "-f", "/dev/null"] + arguments)
    }

    /// Types text (literally) into the session.
    func type(_ text: String) throws { try tmux(["send-keys", "-t", session, "-l", text]) }

    /// Presses named keys ("Enter", "Space", "q").
    func press(_ keys: String...) throws { try tmux(["send-keys", "-t", session] + keys) }

    /// What the pane shows now, as text.
    func capture() throws -> String { try tmux(["capture-pane", "-p", "-t", session]).output }

    /// Polls the pane until `condition` holds, up to `timeout` seconds; returns the matching screen. The polling
    /// blocks, so it runs on a thread of its own.
    @discardableResult
    func waitFor(_ what: String, timeout: Double = 10,
                 _ condition: @escaping @Sendable (String) -> Bool) async throws -> String {
        try await onOwnThread { try self.poll(what, timeout: timeout, condition) }
    }

    private func poll(_ what: String, timeout: Double, _ condition: (String) -> Bool) throws -> String {
        let deadline = TestTime.deadline(timeout)
        var screen = ""
        while Date() < deadline {
            screen = try capture()
            if condition(screen) { return screen }
            usleep(50_000)
        }
        throw LiveTestFailure(description: "no \(what) within \(timeout) s; the screen was:\n\(screen)")
    }

    /// Ends the tmux server and removes its socket file, which tmux leaves behind.
    func kill() {
        _ = try? tmux(["kill-server"])
        let folder = ProcessInfo.processInfo.environment["TMUX_TMPDIR"] ?? "/tmp"
        unlink("\(folder)/tmux-\(getuid())/\(socket)")
    }
}

/// Opens `room` on `server` with nobody in it (`POST /api/rooms`): the control commands press only in a room
/// that is open. Returns the room's first API token.
@discardableResult
func openRoom(_ room: String, on server: ServerProcess, settings: String? = nil) async throws -> String {
    let body = #"{"room":"\#(room)""# + (settings.map { #","settings":\#($0)"# } ?? "") + "}"
    let made = try await onOwnThread {
        try httpRequest("POST", port: server.port, path: "/api/rooms", body: Array(body.utf8))
    }
    guard made.status == 201, let start = made.body.range(of: #""token":"pomo_"#) else {
        throw LiveTestFailure(description: "POST /api/rooms answered \(made.status): \(made.body)")
    }
    return "pomo_" + made.body[start.upperBound...].prefix { $0 != "\"" }
}

/// `pomo join ROOM` as Ada (m1), keeping its token under `environment`'s state folder, and a `pomo watch --json`
/// of the room, both started and waited for until they are in; the caller stops both.
func adaJoinedAndWatched(_ room: String, on server: ServerProcess,
                         environment: [String: String]) async throws -> (join: LaunchedProcess, watch: LaunchedProcess) {
    let join = try ProcessLauncher.start(ProcessLauncher.pomo, ["join", room, "--name", "Ada", "--server", server.url]
                                         + joinTimeout, environment: environment, errors: .discard)
    let first = try await join.line()
    guard first == "Joined \(room) as Ada (m1)" else {
        join.stop()
        throw LiveTestFailure(description: "pomo join said \(first)")
    }
    let watch = try ProcessLauncher.start(ProcessLauncher.pomo, ["watch", room, "--json", "--server", server.url])
    _ = try await lines(of: watch, until: #""type":"observing""#)
    return (join, watch)
}

/// Reads a process's lines until one holds `text`; returns every line read.
func lines(of process: LaunchedProcess, until text: String) async throws -> [String] {
    var read: [String] = []
    while !(read.last?.contains(text) ?? false) { read.append(try await process.line(timeout: 15)) }
    return read
}
