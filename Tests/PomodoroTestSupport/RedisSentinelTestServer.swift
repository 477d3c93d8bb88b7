import Foundation
import Glibc
import PomodoroCluster

/// A real Redis Sentinel for the tests: Debian's `redis-sentinel`, in a temporary folder (its config file,
/// which it rewrites), on a free loopback port, watching the master on `masterPort` under `name` with a
/// quorum of two and a down-after of `downAfterMs`. With `password`, it asks for that password itself
/// (`requirepass`) and gives it to the master and replicas (`sentinel auth-pass`), as for a Redis started
/// with `RedisTestServer(password:)`. `timeout` ends it after 20 minutes whatever happens; `stop()` sooner.
///
/// ```swift
/// let master = try RedisTestServer()
/// let replica = try RedisTestServer(replicaOf: master.port)
/// let sentinels = try (0..<3).map { _ in try RedisSentinelTestServer(watching: master.port) }
/// let url = RedisSentinelTestServer.url(sentinels)   // redis-sentinel://127.0.0.1:P1,…/pomodoro
/// ```
public final class RedisSentinelTestServer: @unchecked Sendable {
    public let folder: String
    public let port: Int
    public let name: String
    /// The password this sentinel asks for and gives the master, if any.
    public let password: String?
    private var process: LaunchedProcess?

    public init(watching masterPort: Int, name: String = "pomodoro", downAfterMs: Int = 1_000,
                password: String? = nil) throws {
        self.password = password
        guard let binary = ["/usr/bin/redis-sentinel", "/usr/local/bin/redis-sentinel"]
            .first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw LaunchFailure("redis-sentinel is not installed (make test installs Debian's redis-sentinel)")
        }
        self.name = name
        var template = Array((NSTemporaryDirectory() + "pomodoro-sentinel-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else { throw LaunchFailure("mkdtemp failed") }
        folder = String(cString: made)
        port = try LoopbackPort.free()
        let config = """
            port \(port)
            bind 127.0.0.1
            daemonize no
            dir \(folder)
            loglevel warning
            sentinel monitor \(name) 127.0.0.1 \(masterPort) 2
            sentinel down-after-milliseconds \(name) \(downAfterMs)
            sentinel failover-timeout \(name) 10000
            sentinel parallel-syncs \(name) 1

            """ + (password.map { "requirepass \($0)\nsentinel auth-pass \(name) \($0)\n" } ?? "")
        try config.write(toFile: "\(folder)/sentinel.conf", atomically: true, encoding: .utf8)
        process = try ProcessLauncher.start("/usr/bin/env", ["timeout", "-s", "TERM", "1200", binary, "\(folder)/sentinel.conf"],
                                            output: .discard, errors: .discard)
        let deadline = TestTime.deadline(10)
        while (try? command(["PING"]))?.text != "PONG" {
            guard process?.isRunning == true, Date() < deadline else {
                stop()
                throw LaunchFailure("redis-sentinel did not start on port \(port) within 10 s")
            }
            usleep(20_000)
        }
    }

    /// The address a node is given: every sentinel, then the master's name.
    /// With `password`, the credentials in it (`:PASSWORD@`): the master's, and the sentinels' when they ask.
    public static func url(_ sentinels: [RedisSentinelTestServer], password: String? = nil) -> String {
        "redis-sentinel://" + (password.map { ":\($0)@" } ?? "") + sentinels.map { "127.0.0.1:\($0.port)" }.joined(separator: ",") + "/" + (sentinels.first?.name ?? "")
    }

    /// One command to this sentinel.
    public func command(_ arguments: [String]) throws -> RedisValue {
        try RedisConnection(RedisAddress(host: "127.0.0.1", port: port, password: password), timeout: 1).command(arguments)
    }

    /// The master's port as this sentinel names it now.
    public func masterPort() throws -> Int? {
        guard case .array(let parts) = try command(["SENTINEL", "get-master-addr-by-name", name]), parts.count == 2 else {
            return nil
        }
        return parts[1].text.flatMap { Int($0) }
    }

    /// A field of `SENTINEL master NAME` (`num-slaves`, `num-other-sentinels`, `flags`…).
    public func masterField(_ field: String) throws -> String? {
        guard case .array(let items) = try command(["SENTINEL", "master", name]),
              let index = items.firstIndex(where: { $0.text == field }), index + 1 < items.count else { return nil }
        return items[index + 1].text
    }

    public func stop() {
        _ = process?.stop(grace: 5)
        process = nil
        try? FileManager.default.removeItem(atPath: folder)
    }
}

