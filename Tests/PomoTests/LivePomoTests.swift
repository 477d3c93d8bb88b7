import Foundation
import PomodoroClient
import PomodoroCore
import PomodoroProtocol
import PomodoroTestSupport
import Testing

/// The built `pomo` against the built `pomodoro-server`: in tmux as a person uses it, and as scripts do.
@Suite(.onOwnThreads, .serialized, .timeLimit(.minutes(TestTime.minutes(1))))
struct LivePomoTests {
    /// A second member in the room, through the client library: configures, sets a task.
    final class OtherMember: Sendable {
        let session: RoomSession
        let task: Task<Void, Never>
        let welcomed: AsyncStream<Void>

        init(url: String, room: String, name: String) throws {
            session = try RoomSession(address: try ServerAddress(parsing: url),
                                      configuration: SessionConfiguration(room: room, name: name, reconnect: nil))
            let (welcomed, signal) = AsyncStream.makeStream(of: Void.self)
            self.welcomed = welcomed
            let session = self.session
            task = Task {
                async let run: Void = session.run()
                for await event in session.events {
                    if case .message(.welcome, _, _) = event { signal.yield() }
                }
                signal.finish()
                await run
            }
        }

        func waitForWelcome() async throws {
            for await _ in welcomed { return }
            throw LiveTestFailure(description: "the second member was not welcomed")
        }

        func stop() async {
            session.stop()
            await task.value
        }
    }

    /// Which of `candidates` the big digits show, read by drawing each one and looking for its rows.
    static func bigTime(on screen: String, candidates: [String]) -> String? {
        let lines = screen.split(separator: "\n", omittingEmptySubsequences: false)
            .map { $0.trimmingCharacters(in: .whitespaces) }
        return candidates.first { text in
            let rows = BigDigits.render(text, scale: 2).map { $0.trimmingCharacters(in: .whitespaces) }
            guard let first = lines.firstIndex(of: rows[0]), first + rows.count <= lines.count else { return false }
            return Array(lines[first..<(first + rows.count)]) == rows
        }
    }

    @Test func joinStartSeeTheDigitsFallThenQuitRestoresTheShell() async throws {
        let server = try await ServerProcess.start()
        defer { server.stop() }
        let state = NSTemporaryDirectory() + "pomo-live-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        defer { try? FileManager.default.removeItem(atPath: state) }
        let tmux = try await TmuxSession.start(environment: ["XDG_STATE_HOME": state, "LANG": "C.UTF-8"])
        defer { tmux.kill() }

        try tmux.type("\(ProcessLauncher.pomo) join live --name Ada --server \(server.url) --no-notify \(joinTimeoutTyped); echo pomo-exited-$?")
        try tmux.press("Enter")
        try await tmux.waitFor("the view") { $0.contains("● live") && $0.contains("Ada (you)") && $0.contains("IDLE") }

        // A second member makes the focus 3 seconds long and says what they work on.
        let lin = try OtherMember(url: server.url, room: "live", name: "Lin")
        try await lin.waitForWelcome()
        lin.session.send(.configure(RoomSettings(focus: 3, shortBreak: 2, longBreak: 4, longBreakEvery: 2,
                                                 autoStart: false)))
        lin.session.send(.task(text: "Reviewing the codec"))
        try await tmux.waitFor("Lin's task and the new settings") {
            $0.contains("Lin ") && $0.contains("Reviewing the codec") && $0.contains("Focus 3s")
        }
        // The resume token was kept for next time, privately.
        let stored = try #require(StateFile.location(environment: ["XDG_STATE_HOME": state],
                                                     server: try ServerAddress(parsing: server.url), room: "live")?.load())
        #expect(stored.name == "Ada" && stored.member == "m1" && stored.token.count == 32)

        // Space starts the focus; the digits fall second by second to the end of the phase.
        try tmux.press("Space")
        try await tmux.waitFor("the running focus") { $0.contains("FOCUS") && $0.contains("space pause") }
        // Each screen is read as it comes, polling on a thread of its own.
        let (seen, finished) = try await onOwnThread { () throws -> ([String], String) in
            var seen: [String] = []
            let candidates = ["00:03", "00:02", "00:01", "00:00"]
            let deadline = TestTime.deadline(10)
            while Date() < deadline {
                let screen = try tmux.capture()
                if screen.contains("Focus done") { return (seen, screen) }
                if let time = Self.bigTime(on: screen, candidates: candidates), time != seen.last { seen.append(time) }
                usleep(50_000)
            }
            return (seen, "")
        }
        #expect(!finished.isEmpty, "the phase ended in the view")
        #expect(seen.count >= 2, "the digits changed while running: \(seen)")
        #expect(seen == seen.sorted(by: >), "the digits only fell: \(seen)")
        // The phase's end comes as an event and then the room's new state, two messages: a capture between
        // the two redraws shows the first without the second, so the break is waited for.
        let onBreak = try await tmux.waitFor("the short break") { $0.contains("SHORT BREAK") }
        #expect(onBreak.contains("Focus done · Short break next"))
        // Both present members earned the completed focus.
        let counts = onBreak.split(separator: "\n").filter { $0.contains("Ada (you)") || $0.contains("Lin ") }
        #expect(counts.count == 2 && counts.allSatisfy { $0.hasSuffix("1") }, "\(counts)")

        // q leaves the full-screen view: the shell is back as it was, the view is gone.
        try tmux.press("q")
        let shell = try await tmux.waitFor("the shell after quitting") { $0.contains("pomo-exited-0") }
        #expect(!shell.contains("MEMBERS") && !shell.contains("█"))
        #expect(shell.contains("shell$ "))
        await lin.stop()
    }

    @Test func aSecondJoinWithTheSameTokenTakesOverAndTheFirstExitsWithThree() async throws {
        let server = try await ServerProcess.start()
        defer { server.stop() }
        let state = NSTemporaryDirectory() + "pomo-live-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        defer { try? FileManager.default.removeItem(atPath: state) }
        let tmux = try await TmuxSession.start(columns: 40, rows: 24, environment: ["XDG_STATE_HOME": state, "LANG": "C.UTF-8"])
        defer { tmux.kill() }
        try tmux.type("\(ProcessLauncher.pomo) join takeover --name Ada --server \(server.url) \(joinTimeoutTyped); echo pomo-exited-$?")
        try tmux.press("Enter")
        try await tmux.waitFor("the narrow view") { $0.contains("● live") && $0.contains("Ada (you)") }

        // The same person joins again elsewhere (plain lines, into a pipe): same token, same member.
        let second = try ProcessLauncher.start(ProcessLauncher.pomo,
                                               ["join", "takeover", "--name", "Ada", "--server", server.url] + joinTimeout,
                                               environment: ["XDG_STATE_HOME": state, "PATH": "/usr/bin:/bin"],
                                               errors: .discard)
        defer { second.stop() }

        let screen = try await tmux.waitFor("the first join to give up") { $0.contains("pomo-exited-3") }
        #expect(screen.contains("another connection took over"))
        // The second one has the member, resumed.
        #expect(try await second.line().contains("Joined takeover as Ada (m1), place resumed"))
    }

    @Test func scriptsGetOneLineJSONAndHonestExitStatuses() async throws {
        let server = try await ServerProcess.start()
        defer { server.stop() }
        let env = ["PATH": "/usr/bin:/bin", "HOME": NSTemporaryDirectory()]

        // status observes: a room nobody opened is refused, and is not created by asking.
        var result = try await runPomo(["status", "scripted", "--server", server.url], environment: env)
        #expect(result.status == 1 && result.output.isEmpty, "\(result)")
        #expect(result.errors.contains("not_found") || result.errors.contains("no room of that name is open"), "\(result)")

        // A control command makes no room either: it is refused (1), and the room is still not open.
        result = try await runPomo(["start", "scripted", "--server", server.url], environment: env)
        #expect(result.status == 1 && result.errors.hasPrefix("pomo: no room named scripted is open"), "\(result)")
        result = try await runPomo(["status", "scripted", "--server", server.url], environment: env)
        #expect(result.status == 1, "\(result)")
        try await openRoom("scripted", on: server)

        // Refused by the server: nothing runs, so nothing pauses.
        result = try await runPomo(["pause", "scripted", "--server", server.url], environment: env)
        #expect(result.status == 1)
        #expect(result.errors.hasPrefix("pomo: the server refused to pause in scripted:"), "\(result.errors)")
        #expect(result.errors.split(separator: "\n").count == 1)

        result = try await runPomo(["configure", "scripted", "--focus", "10m", "--server", server.url], environment: env)
        #expect(result.status == 0 && result.output.contains("Focus 10m") && result.output.contains("applies now"), "\(result)")
        result = try await runPomo(["status", "scripted", "--server", server.url], environment: env)
        #expect(result.status == 0 && result.output == "Idle 00:00\n", "\(result)")
        result = try await runPomo(["start", "scripted", "--server", server.url], environment: env)
        #expect(result.status == 0 && result.output.hasPrefix("scripted: Focus 1 of 4, running, "), "\(result)")
        result = try await runPomo(["extend", "scripted", "-1m", "--server", server.url], environment: env)
        #expect(result.status == 0 && result.output.contains(", 0") && result.output.contains(" left"), "\(result)")
        // Out of the bounds the server sent in welcome: a usage error, and nothing is sent.
        result = try await runPomo(["extend", "scripted", "2h", "--server", server.url], environment: env)
        #expect(result.status == 64 && result.errors == "pomo: at most 1h either way per call\n", "\(result)")
        result = try await runPomo(["configure", "scripted", "--long-break-every", "13", "--server", server.url],
                                environment: env)
        #expect(result.status == 64 && result.errors == "pomo: --long-break-every must be 1–12\n", "\(result)")

        result = try await runPomo(["status", "scripted", "--format", "%P %s %c/%n %M", "--server", server.url],
                                environment: env)
        #expect(result.output == "focus running 1/4 0\n", "\(result)")

        // --json: the snapshot; the observer is in none of it.
        result = try await runPomo(["status", "scripted", "--json", "--server", server.url], environment: env)
        let json = try #require(try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: Any])
        #expect(json["phase"] as? String == "focus" && json["status"] as? String == "running")
        #expect((json["members"] as? [Any])?.isEmpty == true)
        #expect(result.output.split(separator: "\n").count == 1)

        // Cannot connect: 69 and one line naming the address.
        result = try await runPomo(["status", "scripted", "--server", "ws://127.0.0.1:1"], environment: env)
        #expect(result.status == 69)
        #expect(result.errors.hasPrefix("pomo: cannot reach ws://127.0.0.1:1") && result.errors.split(separator: "\n").count == 1)

        // Bad usage: 64, before any connection.
        for arguments in [["status", "no spaces"], ["status", "r", "--format", "%q"], ["extend", "r", "soon"],
                          ["join", "r", "--name", ""], ["status", "r", "--server", "wss://h"]] {
            result = try await runPomo(arguments, environment: env)
            #expect(result.status == 64, "\(arguments): \(result)")
        }

        // The environment picks the server too.
        result = try await runPomo(["status", "scripted", "--format", "%o %s"],
                                environment: env.merging(["POMO_SERVER": server.url]) { $1 })
        #expect(result.output == "scripted running\n")
    }

    /// `join --timeout`: a server that takes the connection and never answers the join is given up on after
    /// the seconds asked for (the live tests stretch it under a sanitizer this way), not the default 10 s.
    @Test func joinGivesUpOnASilentServerAfterItsOwnTimeout() async throws {
        let silent = try LiveStatsTests.StandIn { _ in nil }
        defer { silent.stop() }
        let state = FileManager.default.temporaryDirectory.appendingPathComponent("pomo-timeout-\(UUID().uuidString)").path
        let began = Date()
        let result = try await runPomo(["join", "quiet", "--name", "Ada", "--plain", "--timeout", "0.5",
                                        "--server", silent.url],
                                       environment: ["PATH": "/usr/bin:/bin", "XDG_STATE_HOME": state, "LANG": "C.UTF-8"])
        let took = Date().timeIntervalSince(began)
        #expect(result.status == 69, "\(result)")
        #expect(result.errors == "pomo: cannot reach \(silent.url): no answer from the server (is pomodoro-server running there?)\n",
                "\(result.errors)")
        #expect(took < 10, "ended after \(took) s: the default timeout, not --timeout's")
        #expect(silent.received.count == 1 && silent.received[0].contains(#""type":"join""#), "\(silent.received)")
        #expect(try await runPomo(["join", "quiet", "--timeout", "0", "--server", silent.url]).status == 64)
    }

    @Test func watchStreamsOneJSONObjectPerLine() async throws {
        let server = try await ServerProcess.start()
        defer { server.stop() }
        // watch observes: the room must be open.
        let host = try OtherMember(url: server.url, room: "streamed", name: "Ada")
        try await host.waitForWelcome()
        let process = try ProcessLauncher.start(ProcessLauncher.pomo,
                                                ["watch", "streamed", "--json", "--server", server.url])
        func nextLine() async throws -> [String: Any] {
            let line = try await process.line()
            return try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        }
        let observing = try await nextLine()
        #expect(observing["type"] as? String == "observing")
        #expect(observing["you"] == nil)
        _ = try await runPomo(["start", "streamed", "--server", server.url, "--quiet"])
        var types: [String] = []
        while !types.contains("tick") {
            types.append(try await nextLine()["type"] as? String ?? "?")
        }
        #expect(types.contains("state") && types.contains("event"))
        // SIGTERM: watch ends and exits 0.
        process.terminate()
        #expect(try await process.ended().status == 0)
        await host.stop()
    }

    @Test func helpIsComplete() async throws {
        let root = try await runPomo(["--help"])
        #expect(root.status == 0)
        for subcommand in ["join", "status", "watch", "stats", "start", "pause", "resume", "skip", "reset", "extend", "configure"] {
            #expect(root.output.contains("  \(subcommand) "), "pomo --help lists \(subcommand)")
            let help = try await runPomo([subcommand, "--help"])
            #expect(help.status == 0 && help.output.contains("OVERVIEW:") && help.output.contains("--server"), "\(subcommand)")
        }
        for words in ["EXIT STATUS", "64", "69", "POMO_SERVER", "XDG_STATE_HOME"] {
            #expect(root.output.contains(words), "pomo --help mentions \(words)")
        }
        let join = try await runPomo(["join", "--help"]).output
        for words in ["--name", "--no-bell", "--no-notify", "--color", "space", "reset", "task", "away", "quit",
                      "notify-send", "NO_COLOR", "THE HOST'S KEYS", "passcode", "remove a member", "host only",
                      "hand the host role", "the list of keys"] {
            #expect(join.contains(words), "pomo join --help mentions \(words)")
        }
        let status = try await runPomo(["status", "--help"]).output
        for spec in ["%p", "%P", "%r", "%R", "%c", "%n", "%s", "%i", "%b", "%e", "%m", "%M", "%o", "%%", "--json"] {
            #expect(status.contains(spec), "pomo status --help documents \(spec)")
        }
    }
}
