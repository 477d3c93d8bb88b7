import Foundation
import Glibc
import PomodoroCluster

/// A real Redis for the tests: Debian's `redis-server`, in a temporary folder, on a free loopback port,
/// without persistence. `timeout` ends it after 20 minutes whatever happens, and `stop()` (or the end of
/// the test process, for `shared`) ends it sooner.
///
/// ```swift
/// let redis = try RedisTestServer()
/// defer { redis.stop() }
/// let url = redis.url  // redis://127.0.0.1:PORT
/// ```
public final class RedisTestServer: @unchecked Sendable {
    public let folder: String
    /// Set once, in `init` (a port another suite's engine took first is given up there for another).
    public private(set) var port: Int
    private let lock = NSLock()
    private var process: LaunchedProcess?
    /// While the server is halted, its port, held so that no other suite's engine is started there before
    /// `start()` starts this one again.
    private var portHeld: LoopbackPort.Held?

    /// The password Redis asks for (`requirepass`), if any.
    public let password: String?

    /// `redis://[:PASSWORD@]127.0.0.1:PORT`, for `--cluster` and `RedisAddress(parsing:)`.
    public var url: String { url(password: password) }

    /// The address with another password (or none): what a node given the wrong one is told.
    public func url(password: String?) -> String {
        "redis://\(password.map { ":\($0)@" } ?? "")127.0.0.1:\(port)"
    }

    /// Starts a server of the caller's own, asking for `password` when one is given; the caller stops it
    /// with `stop()`.
    /// With `replicaOf`, a replica of the Redis on that loopback port (for a Sentinel setup).
    public init(password: String? = nil, replicaOf master: Int? = nil) throws {
        self.password = password
        self.master = master
        guard let binary = Self.binary else {
            throw LaunchFailure("redis-server is not installed (make test installs Debian's redis-server)")
        }
        self.binary = binary
        var template = Array((NSTemporaryDirectory() + "pomodoro-redis-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else { throw LaunchFailure("mkdtemp failed") }
        folder = String(cString: made)
        port = try LoopbackPort.free()
        // A free port is let go before redis-server binds it: another suite's engine, asked for a port in the
        // same moment, may be handed the same one and bind it first. Ours then exits, and the other answers in
        // its place (`ours()` tells them apart): another port is tried.
        for attempt in 1...Self.portTries {
            do {
                try start()
                break
            } catch where attempt < Self.portTries {
                port = try LoopbackPort.free()
            } catch {
                stop()
                throw error
            }
        }
    }

    private static let portTries = 4

    private let binary: String
    private let master: Int?

    private static var binary: String? {
        ["/usr/bin/redis-server", "/usr/local/bin/redis-server"].first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// Starts `redis-server` and waits (10 s at most) until it answers.
    public func start() throws {
        lock.withLock { portHeld = nil }
        let launched = try ProcessLauncher.start(
            "/usr/bin/env",
            ["timeout", "-s", "TERM", "1200", binary, "--port", "\(port)", "--bind", "127.0.0.1",
             "--dir", folder, "--save", "", "--appendonly", "no", "--daemonize", "no", "--loglevel", "warning"]
                + (password.map { ["--requirepass", $0, "--masterauth", $0] } ?? [])
                + (master.map { ["--replicaof", "127.0.0.1", "\($0)"] } ?? []),
            output: .discard, errors: .discard)
        lock.withLock { process = launched }
        let deadline = TestTime.deadline(10)
        while !answers() {
            guard launched.isRunning, Date() < deadline else {
                halt()
                throw LaunchFailure("redis-server did not start on port \(port) within 10 s")
            }
            usleep(20_000)
        }
        guard ours() else {
            halt()
            throw LaunchFailure("port \(port) was taken by another server")
        }
    }

    /// Whether the Redis answering on the port is this one: its working folder is ours.
    private func ours() -> Bool {
        guard let address = try? RedisAddress(parsing: url),
              case .array(let pair)? = try? RedisConnection(address, timeout: 1).command(["CONFIG", "GET", "dir"]),
              let dir = pair.last?.text else { return false }
        return URL(fileURLWithPath: dir).resolvingSymlinksInPath().path
            == URL(fileURLWithPath: folder).resolvingSymlinksInPath().path
    }

    /// Stops the server (its data goes with it: there is no persistence), keeping the folder and the port
    /// for `start()`.
    public func halt() {
        let running = lock.withLock { () -> LaunchedProcess? in
            defer { process = nil }
            return process
        }
        _ = running?.stop(grace: 5)
        let held = try? LoopbackPort.Held(port: port)
        lock.withLock { portHeld = held }
    }

    /// Kills the server at once (`SIGKILL` to `redis-server` itself, as a crash), then reaps it.
    public func crash() throws {
        let info = try RedisConnection(RedisAddress(parsing: url), timeout: 1).command(["INFO", "server"]).text ?? ""
        guard let line = info.split(whereSeparator: \.isNewline).first(where: { $0.hasPrefix("process_id:") }),
              let pid = Int32(line.dropFirst("process_id:".count).trimmingCharacters(in: .whitespaces)) else {
            throw LaunchFailure("redis-server on port \(port) did not say its process id")
        }
        Glibc.kill(pid, SIGKILL)
        halt()
    }

    /// Stops the server and removes its folder.
    public func stop() {
        halt()
        lock.withLock { portHeld = nil }
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// Whether something accepts a TCP connection and answers `PING` on the port.
    private func answers() -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
        guard connected else { return false }
        var limit = timeval(tv_sec: 1, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        let ping = Array(((password.map { "AUTH \($0)\r\n" } ?? "") + "PING\r\n").utf8)
        guard write(fd, ping, ping.count) == ping.count else { return false }
        var buffer = [UInt8](repeating: 0, count: 16)
        let count = read(fd, &buffer, buffer.count)
        let answer = String(decoding: buffer[..<max(count, 0)], as: UTF8.self)
        return count > 0 && answer.hasPrefix(password == nil ? "+PONG" : "+OK")
    }
}
