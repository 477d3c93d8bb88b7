import Foundation
import PomodoroTestSupport
import Testing

/// `pomo join` for screen readers and plain terminals, against the real server: one sentence per change on
/// `TERM=dumb` (in tmux, in Korean), with `--plain` on a real terminal, and into a pipe; no escape codes.
@Suite(.serialized) struct LiveSpokenTests {
    static func state() -> String { NSTemporaryDirectory() + "pomo-spoken-\(getpid())-\(UInt32.random(in: 0...UInt32.max))" }

    /// A one-shot command (it visits as pomo-cli, then leaves).
    static func command(_ arguments: [String], server: ServerProcess) async throws {
        let result = try await runPomo(arguments + ["--server", server.url],
                                       environment: ["PATH": "/usr/bin:/bin", "HOME": NSTemporaryDirectory(),
                                                     "XDG_STATE_HOME": state()])
        #expect(result.status == 0, "\(result)")
    }

    @Test func dumbTerminalGetsSentencesInItsLanguage() async throws {
        let server = try await ServerProcess.start()
        defer { server.stop() }
        let state = Self.state()
        defer { try? FileManager.default.removeItem(atPath: state) }
        let tmux = try await TmuxSession.start(environment: ["XDG_STATE_HOME": state, "LANG": "ko_KR.UTF-8",
                                                             "TERM": "dumb"])
        defer { tmux.kill() }
        try tmux.type("\(ProcessLauncher.pomo) join spoken --name Ada --server \(server.url) \(joinTimeoutTyped); echo pomo-exited-$?")
        try tmux.press("Enter")
        try await tmux.waitFor("the Korean sentences") {
            $0.contains("Ada(m1) 이름으로 spoken에 참여했어요") && $0.contains("타이머가 아직 시작되지 않았어요, 1명 참여 중")
        }
        try await Self.command(["start", "spoken"], server: server)
        let screen = try await tmux.waitFor("the start, said") { $0.contains("집중 시작, 25분, ") }
        // No full screen: no big digits, no members' box; the countdown is not printed every second.
        #expect(!screen.contains("█") && !screen.contains("25:00"), "\(screen)")
        try tmux.press("C-c")
        try await tmux.waitFor("pomo to end") { $0.contains("pomo-exited-0") }
    }

    @Test func plainOnARealTerminalWithNoColor() async throws {
        let server = try await ServerProcess.start()
        defer { server.stop() }
        let state = Self.state()
        defer { try? FileManager.default.removeItem(atPath: state) }
        let tmux = try await TmuxSession.start(environment: ["XDG_STATE_HOME": state, "LANG": "C.UTF-8",
                                                             "TERM": "xterm-256color", "NO_COLOR": "1"])
        defer { tmux.kill() }
        try tmux.type("\(ProcessLauncher.pomo) join plain-room --plain --name Lin --server \(server.url) \(joinTimeoutTyped); echo pomo-exited-$?")
        try tmux.press("Enter")
        try await tmux.waitFor("the plain lines") { $0.contains("Joined plain-room as Lin (m1)") }
        try await Self.command(["start", "plain-room"], server: server)
        try await tmux.waitFor("the start") { $0.contains("Focus started, 25 minutes, ends ") }
        let colours = try tmux.tmux(["capture-pane", "-p", "-e", "-t", tmux.session]).output
        #expect(!colours.contains("\u{1B}["), "escape codes in a --plain, NO_COLOR view: \(colours)")
        try tmux.press("C-c")
        try await tmux.waitFor("pomo to end") { $0.contains("pomo-exited-0") }
    }

    @Test func intoAPipeEveryChangeIsOneLine() async throws {
        let server = try await ServerProcess.start()
        defer { server.stop() }
        let state = Self.state()
        defer { try? FileManager.default.removeItem(atPath: state) }
        let join = try ProcessLauncher.start(ProcessLauncher.pomo, ["join", "piped", "--name", "Ada", "--server", server.url] + joinTimeout,
                                             environment: ["XDG_STATE_HOME": state, "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"],
                                             errors: .discard)
        defer { join.stop() }
        #expect(try await join.line() == "Joined piped as Ada (m1)")
        #expect(try await join.line() == "The timer has not started, 1 person here")
        try await Self.command(["start", "piped"], server: server)
        var read = try await lines(of: join, until: "Focus started, 25 minutes, ends ")
        try await Self.command(["pause", "piped"], server: server)
        read += try await lines(of: join, until: "Focus paused, ")
        try await Self.command(["resume", "piped"], server: server)
        read += try await lines(of: join, until: "Focus resumed, ")
        #expect(read.allSatisfy { !$0.contains("\u{1B}") }, "\(read)")
        // The visitor's comings and goings are lines of their own; no line repeats the countdown.
        #expect(read.contains("pomo-cli joined"), "\(read)")
        #expect(!read.contains { $0.contains("24:5") }, "\(read)")
    }
}
