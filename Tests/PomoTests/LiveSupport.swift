import Foundation
import Testing

/// Why a live test gave up.
struct LiveFailure: Error, CustomStringConvertible {
    let description: String
}

/// The built executables, which sit beside the test bundle in the build folder.
enum Built {
    static var folder: URL { URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent() }
    static var pomo: String { folder.appendingPathComponent("pomo").path }
    static var server: String { folder.appendingPathComponent("pomodoro-server").path }
}

/// Runs a program to its end and returns its status and output.
@discardableResult
func runProgram(_ path: String, _ arguments: [String], environment: [String: String]? = nil)
    throws -> (status: Int32, out: String, err: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: path)
    process.arguments = arguments
    if let environment { process.environment = environment }
    let out = Pipe(), err = Pipe()
    process.standardOutput = out
    process.standardError = err
    process.standardInput = FileHandle.nullDevice
    try process.run()
    // Read both pipes to their ends before waiting, so a full pipe cannot block the program.
    let group = DispatchGroup()
    nonisolated(unsafe) var errData = Data()
    group.enter()
    DispatchQueue.global().async {
        errData = err.fileHandleForReading.readDataToEndOfFile()
        group.leave()
    }
    let outData = out.fileHandleForReading.readDataToEndOfFile()
    group.wait()
    process.waitUntilExit()
    return (process.terminationStatus, String(decoding: outData, as: UTF8.self), String(decoding: errData, as: UTF8.self))
}

/// Runs a program with standard streams on /dev/null and no other inherited descriptors; waits for it.
func spawnAndWait(_ path: String, _ arguments: [String]) throws -> Int32 {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    for fd: Int32 in 0...2 {
        posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", fd == 0 ? O_RDONLY : O_WRONLY, 0)
    }
    // glibc 2.34+ has posix_spawn_file_actions_addclosefrom_np; Swift's Glibc module does not show it.
    typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
    if let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np") {
        _ = unsafeBitCast(symbol, to: CloseFrom.self)(&actions, 3)
    }
    // Test threads block signals; the tmux server must not inherit that, or kill-server cannot end it.
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    var none = sigset_t(), defaults = sigset_t()
    sigemptyset(&none)
    sigemptyset(&defaults)
    for signo in [SIGTERM, SIGINT, SIGHUP, SIGPIPE, SIGCHLD] { sigaddset(&defaults, signo) }
    posix_spawnattr_setsigmask(&attributes, &none)
    posix_spawnattr_setsigdefault(&attributes, &defaults)
    posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
    let argv = ([path] + arguments).map { strdup($0) } + [nil]
    defer { for p in argv { free(p) } }
    var pid: pid_t = 0
    let spawned = posix_spawn(&pid, path, &actions, &attributes, argv, environ)
    guard spawned == 0 else { throw LiveFailure(description: "cannot run \(path): error \(spawned)") }
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    return (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
}

/// The real `pomodoro-server` executable on a free loopback port.
final class ServerProcess: Sendable {
    let process: Process
    let port: Int
    let webRoot: String

    init() throws {
        webRoot = NSTemporaryDirectory() + "pomo-web-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: webRoot, withIntermediateDirectories: true)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Built.server)
        process.arguments = ["--port", "0", "--host", "127.0.0.1", "--web-root", webRoot, "--log-level", "warning",
                             "--db", webRoot + "/pomodoro.sqlite", "--min-focus", "1"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        self.process = process
        // The first line names the port it bound: "pomodoro-server listening on http://127.0.0.1:PORT/".
        var line = [UInt8]()
        while let byte = try output.fileHandleForReading.read(upToCount: 1)?.first, byte != UInt8(ascii: "\n") {
            line.append(byte)
        }
        let text = String(decoding: line, as: UTF8.self)
        guard let port = Int(text.split(separator: ":").last?.trimmingCharacters(in: .init(charactersIn: "/")) ?? "")
        else {
            process.terminate()
            throw LiveFailure(description: "unexpected first line from the server: \(text)")
        }
        self.port = port
    }

    var url: String { "ws://127.0.0.1:\(port)" }

    func stop() {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(atPath: webRoot)
    }
}

/// A tmux server of its own (private socket), with one 80×24 (or other) session running a plain shell.
final class TmuxSession: Sendable {
    let socket: String
    let session = "pomo"

    init(columns: Int = 80, rows: Int = 24, environment: [String: String]) throws {
        socket = "pomo-test-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let exports = environment.map { "export \($0.key)='\($0.value)'" }.joined(separator: "; ")
        let shell = "\(exports); export PS1='shell$ '; exec bash --norc --noprofile"
        // `new-session` forks the tmux server, which keeps every descriptor its client had. Foundation's
        // Process watches a socket it hands each child to learn that the child ended, so a tmux client started
        // through it never looks finished. Spawn it directly instead, with nothing but /dev/null inherited.
        guard let path = Self.tmuxPath else { throw LiveFailure(description: "tmux is not installed (make test installs it)") }
        let status = try spawnAndWait(path, ["-L", socket, "-f", "/dev/null", "new-session", "-d",
                                             "-x", "\(columns)", "-y", "\(rows)", "-s", session,
                                             "bash", "--norc", "--noprofile", "-c", shell])
        guard status == 0 else { throw LiveFailure(description: "tmux new-session failed with status \(status)") }
    }

    static var tmuxPath: String? {
        ["/usr/bin/tmux", "/usr/local/bin/tmux", "/bin/tmux"].first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    @discardableResult
    func tmux(_ arguments: [String]) throws -> (status: Int32, out: String, err: String) {
        guard let path = Self.tmuxPath else { throw LiveFailure(description: "tmux is not installed (make test installs it)") }
        return try runProgram(path, ["-L", socket, "-f", "/dev/null"] + arguments)
    }

    /// Types text (literally) into the session.
    func type(_ text: String) throws { try tmux(["send-keys", "-t", session, "-l", text]) }

    /// Presses named keys ("Enter", "Space", "q").
    func press(_ keys: String...) throws { try tmux(["send-keys", "-t", session] + keys) }

    /// What the pane shows now, as text.
    func capture() throws -> String { try tmux(["capture-pane", "-p", "-t", session]).out }

    /// Polls the pane until `condition` holds, up to `timeout` seconds; returns the matching screen.
    @discardableResult
    func waitFor(_ what: String, timeout: Double = 10, _ condition: (String) -> Bool) throws -> String {
        let deadline = Date().addingTimeInterval(timeout)
        var screen = ""
        while Date() < deadline {
            screen = try capture()
            if condition(screen) { return screen }
            usleep(50_000)
        }
        throw LiveFailure(description: "no \(what) within \(timeout) s; the screen was:\n\(screen)")
    }

    /// Ends the tmux server and removes its socket file, which tmux leaves behind.
    func kill() {
        _ = try? tmux(["kill-server"])
        let folder = ProcessInfo.processInfo.environment["TMUX_TMPDIR"] ?? "/tmp"
        unlink("\(folder)/tmux-\(getuid())/\(socket)")
    }
}
