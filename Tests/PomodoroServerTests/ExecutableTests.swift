import Foundation
import Glibc
import PomodoroNet
import PomodoroProtocol
import PomodoroTestSupport
import Testing

/// The built `pomodoro-server` executable, run as an admin would.
@Suite(.onOwnThreads, .timeLimit(.minutes(TestTime.minutes(1))))
struct ExecutableTests {
    @Test(arguments: ["SIGINT", "SIGTERM"])
    func aSignalClosesConnectionsWith1012AndExitsZero(signal: String) throws {
        let process = try ProcessLauncher.start(ProcessLauncher.server,
                                                ["--port", "0", "--host", "127.0.0.1", "--web-root", LiveServer.webRoot,
                                                 "--db", "none", "--log-level", "warning"])
        let port = try process.waitUntilServing()

        #expect(try httpGet(port: port, path: "/healthz").status == 200)
        let client = try WebSocketClient()
        client.start()
        defer { client.stop(); client.waitUntilFinished() }
        let peer = try Peer(client, port: port)
        _ = try peer.join("exe", name: "Ana")

        if signal == "SIGINT" { process.interrupt() } else { process.terminate() }
        // 1012 (service restart): the client comes back at once (docs/PROTOCOL.md §11).
        #expect(try peer.expectClose() == 1012)
        let ended = try process.wait()
        #expect(ended.exited && ended.status == 0)
    }

    @Test func helpExplainsEveryOption() throws {
        let run = try ProcessLauncher.run(ProcessLauncher.server, ["--help"])
        let help = run.output
        #expect(run.status == 0)
        for option in ["--port", "--host", "--web-root", "--log-level", "--reconnect-grace", "--empty-room-lifetime",
                       "--max-message-bytes", "--metrics"] {
            #expect(help.contains(option), "help mentions \(option)")
        }
        #expect(help.contains("status 78") && help.contains("status 69"), "help explains the exit statuses")
    }

    /// Issue 27, finding 12: `migrate --help` names everything the copy carries, schedules, bans, API tokens and
    /// webhooks too.
    @Test func migrateHelpNamesEverythingItCopies() throws {
        let run = try ProcessLauncher.run(ProcessLauncher.server, ["migrate", "--help"])
        #expect(run.status == 0)
        let help = run.output.lowercased()
        for part in ["rooms", "members", "schedules", "bans", "api tokens", "webhooks", "focus journal", "--from", "--to"] {
            #expect(help.contains(part), "migrate --help mentions \(part)")
        }
    }

    @Test func aTakenPortIsAClearErrorNotACrash() throws {
        let server = try LiveServer()
        defer { server.stop() }
        let run = try ProcessLauncher.run(ProcessLauncher.server, ["--port", "\(server.port)", "--host", "127.0.0.1",
                                                                   "--web-root", LiveServer.webRoot, "--db", "none"])
        #expect(run.status == 1)
        #expect(run.errors.contains("cannot listen"))
    }

    @Test func withJSONLogsEveryLineIsJSONTheLibrarysOwnToo() throws {
        let server = try LiveServer()
        defer { server.stop() }
        // A taken port makes libwebsockets itself log errors before the server gives up.
        let run = try ProcessLauncher.run(ProcessLauncher.server, ["--port", "\(server.port)", "--host", "127.0.0.1",
                                                                   "--web-root", LiveServer.webRoot, "--db", "none",
                                                                   "--log-format", "json"])
        let lines = run.errors.split(separator: "\n")
        let objects = lines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        #expect(!lines.isEmpty && objects.count == lines.count, "non-JSON lines: \(lines)")
        #expect(objects.contains { $0["source"] as? String == "libwebsockets" && $0["level"] as? String == "error" })
    }

    /// A fresh empty folder, removed by the caller.
    static func temporaryFolder() throws -> URL {
        let url = URL(fileURLWithPath: NSTemporaryDirectory())
            .appendingPathComponent("pomodoro-exe-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// Starts `executable` in `directory` on a free loopback port, without --web-root; returns it and its port.
    static func startWithoutWebRoot(_ executable: String, in directory: URL) throws -> (LaunchedProcess, Int) {
        let process = try ProcessLauncher.start(executable, ["--port", "0", "--host", "127.0.0.1", "--db", "none",
                                                             "--log-level", "warning"],
                                                directory: directory.path, errors: .discard)
        return (process, try process.waitUntilServing())
    }

    /// Started where there is no ./web and nothing installed beside it: the API and WebSocket work, the page 404s.
    @Test func outsideTheCheckoutTheAPIIsServedAndThePageAnswers404() throws {
        let elsewhere = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: elsewhere) }
        let (process, port) = try Self.startWithoutWebRoot(ProcessLauncher.server, in: elsewhere)
        defer { process.stop() }

        #expect(try httpGet(port: port, path: "/healthz").status == 200)
        #expect(try httpGet(port: port, path: "/").status == 404)
        #expect(try httpGet(port: port, path: "/metrics").status == 200)
        let client = try WebSocketClient()
        client.start()
        defer { client.stop(); client.waitUntilFinished() }
        _ = try Peer(client, port: port).join("elsewhere", name: "Ana")
    }

    /// `make install`'s layout: PREFIX/bin/pomodoro-server finds PREFIX/share/pomodoro/web by itself.
    @Test func anInstalledServerFindsItsInstalledPage() throws {
        let prefix = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: prefix) }
        let bin = prefix.appendingPathComponent("bin"), web = prefix.appendingPathComponent("share/pomodoro/web")
        try FileManager.default.createDirectory(at: bin, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: web, withIntermediateDirectories: true)
        let installed = bin.appendingPathComponent("pomodoro-server")
        try FileManager.default.copyItem(at: URL(fileURLWithPath: ProcessLauncher.server), to: installed)
        try Data("<!doctype html><title>the installed page</title>\n".utf8).write(to: web.appendingPathComponent("index.html"))
        let elsewhere = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: elsewhere) }

        let (process, port) = try Self.startWithoutWebRoot(installed.path, in: elsewhere)
        defer { process.stop() }
        let page = try httpGet(port: port, path: "/")
        #expect(page.status == 200 && page.body.contains("the installed page"), "\(page)")
    }

    /// A web root the admin named but that is not there: one line that says so and names --web-root.
    @Test func aNamedWebRootThatIsMissingIsAOneLineConfigurationError() throws {
        let run = try ProcessLauncher.run(ProcessLauncher.server, ["--port", "0", "--host", "127.0.0.1", "--db", "none",
                                                                   "--web-root", "/nonexistent/web"])
        let text = run.errors
        #expect(run.status == 78)
        let lines = text.split(separator: "\n")
        #expect(lines.count == 1 && text.contains("--web-root") && text.contains("/nonexistent/web"), "\(text)")
    }

    /// PostgreSQL out of reach at start-up: status 69 (EX_UNAVAILABLE, which systemd retries, unlike 78) and
    /// one line that names the database without its password and says why, with libpq's hint folded in.
    @Test func anUnreachableDatabaseIsOneLineAndStatus69() throws {
        // A loopback port bound but not listening: connecting to it is refused, and nobody else can take it.
        let held = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { Glibc.close(held) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(held, $0, length) == 0 && getsockname(held, $0, &length) == 0 }
        }
        try #require(bound)
        let port = Int(UInt16(bigEndian: address.sin_port))

        let run = try ProcessLauncher.run(ProcessLauncher.server,
                                          ["--port", "0", "--host", "127.0.0.1", "--web-root", LiveServer.webRoot,
                                           "--db", "postgres://focus:s3cr%40t-pw@127.0.0.1:\(port)/pomodoro"])
        let text = run.errors
        #expect(run.exited && run.status == 69)
        #expect(text.split(separator: "\n").count == 1 && text.hasSuffix("\n"), "\(text)")
        #expect(text.hasPrefix("pomodoro-server: cannot open the database postgres://focus:***@127.0.0.1:\(port)/pomodoro: "
                               + "could not connect"), "\(text)")
        #expect(text.contains("Connection refused"), "\(text)")
        #expect(!text.contains("s3cr"), "\(text)")
    }
}
