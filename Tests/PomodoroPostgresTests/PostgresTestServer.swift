import Foundation
import Glibc
import PomodoroPostgres
import PomodoroTestSupport

/// A real PostgreSQL server for the tests: Debian's `postgres`, in a temporary folder, on a free loopback
/// port, run as the unprivileged `postgres` user when the tests run as root (PostgreSQL refuses root).
///
/// One server serves the whole test process (each test takes a database of its own with `makeDatabase`);
/// it is stopped when the process exits, and `timeout` ends it after 20 minutes whatever happens, so a
/// test process that dies leaves nothing running for long.
final class PostgresTestServer: @unchecked Sendable {
    let folder: String
    let port: Int
    private var process: LaunchedProcess?
    private let binaries: String
    private let lock = NSLock()
    private var databases = 0

    /// The server every test shares, started on first use.
    ///
    /// It is started on a thread of its own, and the tests await it: starting PostgreSQL takes seconds (far
    /// more on a busy machine), and tests blocked on a lazily started global would each hold one of Swift
    /// concurrency's few threads meanwhile.
    static var shared: PostgresTestServer {
        get async throws { try await starting.value.get() }
    }

    private static let starting = Task { await onOwnThread { Result { try startShared() } } }

    /// A new, empty database on the shared server, made on a thread of its own; see `makeDatabase`.
    static func makeDatabase(icuLocale: String? = nil) async throws -> String {
        let server = try await shared
        return try await onOwnThread { try server.makeDatabase(icuLocale: icuLocale) }
    }

    /// The shared server once started, for the process's end.
    private static let started = NSLock()
    nonisolated(unsafe) private static var running: PostgresTestServer?

    /// A server of the caller's own, for a test that stops and starts it (`pause`, `resume`); the caller
    /// stops it for good with `stop()`.
    static func own() throws -> PostgresTestServer { try PostgresTestServer() }

    /// A URL for database `name` as the tests' superuser.
    func url(database name: String) -> String { "postgres://pomodoro@127.0.0.1:\(port)/\(name)" }

    /// A new, empty database and its URL; with `icuLocale`, one that sorts text by that ICU locale's rules
    /// (as a production database created with a language's locale does) rather than byte by byte.
    func makeDatabase(icuLocale: String? = nil) throws -> String {
        let name = lock.withLock { () -> String in
            databases += 1
            return "test_\(getpid())_\(databases)"
        }
        let collation = icuLocale.map { " TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE '\($0)' LOCALE 'C.UTF-8'" } ?? ""
        try PostgresConnection(url(database: "postgres")).execute("CREATE DATABASE \(name)\(collation)")
        return url(database: name)
    }

    /// A primary that waits for a synchronous standby named `standby` before a commit returns, and that
    /// standby, streaming from it (made with `pg_basebackup`), each a server of the caller's own: a test of a
    /// failover stops the primary (`crash`) and promotes the standby (`promote`). Both stopped with `stop()`.
    static func primaryWithSynchronousStandby() throws -> (primary: PostgresTestServer, standby: PostgresTestServer) {
        let primary = try PostgresTestServer(settings: ["synchronous_standby_names=standby", "wal_level=replica",
                                                        "max_wal_senders=4"])
        do {
            let standby = try PostgresTestServer(standbyOf: primary, name: "standby")
            return (primary, standby)
        } catch {
            primary.stop()
            throw error
        }
    }

    /// Settings given to `postgres` besides the tests' usual ones.
    private let settings: [String]

    private init(settings: [String] = []) throws {
        self.settings = settings
        binaries = try Self.findBinaries()
        var template = Array((NSTemporaryDirectory() + "pomodoro-pg-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else { throw Failure("mkdtemp failed") }
        folder = String(cString: made)
        port = try LoopbackPort.free()
        if getuid() == 0 {
            guard let user = getpwnam("postgres") else { throw Failure("no postgres user: install Debian's postgresql") }
            chown(folder, user.pointee.pw_uid, user.pointee.pw_gid)
        }
        try run(["\(binaries)/initdb", "-D", "\(folder)/data", "-U", "pomodoro", "-A", "trust", "-E", "UTF8",
                 "--no-sync", "--no-instructions"])
        try launch()
    }

    /// A standby of `primary`, copied from it with `pg_basebackup` and streaming from it under `name`.
    private init(standbyOf primary: PostgresTestServer, name: String) throws {
        settings = ["cluster_name=\(name)"]
        binaries = primary.binaries
        var template = Array((NSTemporaryDirectory() + "pomodoro-pg-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else { throw Failure("mkdtemp failed") }
        folder = String(cString: made)
        port = try LoopbackPort.free()
        if getuid() == 0 {
            guard let user = getpwnam("postgres") else { throw Failure("no postgres user: install Debian's postgresql") }
            chown(folder, user.pointee.pw_uid, user.pointee.pw_gid)
        }
        // -R: the copy starts as a standby of the primary (primary_conninfo, standby.signal); its
        // cluster_name is the name the primary waits for.
        try run(["\(binaries)/pg_basebackup", "-h", "127.0.0.1", "-p", "\(primary.port)", "-U", "pomodoro",
                 "-D", "\(folder)/data", "-R", "-X", "stream", "--no-sync"])
        try launch(standby: true)
    }

    /// Stops the server as a crash would (`pg_ctl stop -m immediate`: no checkpoint, connections cut).
    func crash() throws {
        try run(["\(binaries)/pg_ctl", "-D", "\(folder)/data", "stop", "-m", "immediate", "-w", "-t", "20"])
        _ = try process?.wait()
    }

    /// Promotes a standby to primary and waits until it takes writes.
    func promote() throws {
        try run(["\(binaries)/pg_ctl", "-D", "\(folder)/data", "promote", "-w", "-t", "30"])
    }

    /// The shared server, started: stopped when the process exits.
    private static func startShared() throws -> PostgresTestServer {
        let server = try PostgresTestServer()
        started.withLock { running = server }
        atexit { PostgresTestServer.started.withLock { PostgresTestServer.running }?.stop() }
        return server
    }

    /// Starts `postgres` on the folder and port, and waits (30 s at most) until it accepts connections.
    private func launch(standby: Bool = false) throws {
        let process = try ProcessLauncher.start(
            "/usr/bin/env",
            asServerUser(["timeout", "-s", "INT", "1200", "\(binaries)/postgres", "-D", "\(folder)/data",
                          "-p", "\(port)", "-k", folder, "-c", "listen_addresses=127.0.0.1",
                          "-c", "fsync=off", "-c", "max_connections=200"] + settings.flatMap { ["-c", $0] }),
            output: .discard, errors: .discard)
        self.process = process
        let deadline = TestTime.deadline(30)
        while !PostgresConnection.isAccepting(url(database: "postgres")) {
            guard process.isRunning, Date() < deadline else {
                stop()
                throw Failure("PostgreSQL did not start on port \(port) within 30 s")
            }
            usleep(50_000)
        }
    }

    /// Stops the server as an outage would (open connections are ended), keeping its data for `resume`.
    func pause() throws {
        try run(["\(binaries)/pg_ctl", "-D", "\(folder)/data", "stop", "-m", "fast", "-w", "-t", "20"])
        try process?.wait()
    }

    /// Starts a paused server again, on the same port with the same data.
    func resume() throws { try launch() }

    /// Stops the server (fast shutdown: open connections are ended) and removes its folder.
    func stop() {
        if let process, process.isRunning {
            // pg_ctl signals the postmaster itself: runuser does not pass a signal on to it.
            try? run(["\(binaries)/pg_ctl", "-D", "\(folder)/data", "stop", "-m", "fast", "-w", "-t", "20"])
            process.stop()
        }
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// `arguments` as the unprivileged user when we are root.
    private func asServerUser(_ arguments: [String]) -> [String] {
        getuid() == 0 ? ["runuser", "-u", "postgres", "--"] + arguments : arguments
    }

    private func run(_ arguments: [String]) throws {
        let result = try ProcessLauncher.run("/usr/bin/env", asServerUser(arguments), timeout: 120)
        guard result.status == 0 else { throw Failure("\(arguments[0]) failed: \(result.output)\(result.errors)") }
    }

    /// The newest installed PostgreSQL's bin folder.
    private static func findBinaries() throws -> String {
        let root = "/usr/lib/postgresql"
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []
        guard let newest = versions.compactMap(Int.init).max(),
              FileManager.default.isExecutableFile(atPath: "\(root)/\(newest)/bin/postgres") else {
            throw Failure("PostgreSQL is not installed (make test installs Debian's postgresql)")
        }
        return "\(root)/\(newest)/bin"
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }
}
