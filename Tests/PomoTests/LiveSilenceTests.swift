import Foundation
import PomodoroClient
import PomodoroTestSupport
import Testing

/// The built `pomo` in tmux, as a person uses it: `m` silences the bell, and the next run still is silent;
/// the view in Traditional Chinese at 40 columns, from `LANG`.
@Suite(.onOwnThreads, .serialized) struct LiveSilenceTests {
    /// Whether tmux saw the terminal bell in the session's window since the flag was last cleared.
    func rang(_ tmux: TmuxSession) throws -> Bool {
        try tmux.tmux(["display-message", "-p", "-t", tmux.session, "#{window_bell_flag}"]).output
            .trimmingCharacters(in: .whitespacesAndNewlines) == "1"
    }

    @Test func theSilenceKeyIsKeptAcrossRunsAndTheViewSpeaksTheLocale() async throws {
        let server = try await ServerProcess.start()
        defer { server.stop() }
        let state = NSTemporaryDirectory() + "pomo-silence-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        defer { try? FileManager.default.removeItem(atPath: state) }
        let join = "\(ProcessLauncher.pomo) join quiet --name Ada --server \(server.url) --no-notify \(joinTimeoutTyped); echo pomo-exited-$?"
        // Two-second phases that run one after another, so each run sees a phase end soon. The room is made
        // with nobody in it, so Ada, the first to join, hosts it.
        try await openRoom("quiet", on: server)
        let configure = try await runPomo(["configure", "quiet", "--focus", "2s", "--short-break", "2s",
                                     "--long-break", "2s", "--auto-start", "--server", server.url, "-q"])
        #expect(configure.status == 0, "\(configure.errors)")

        // First run, in Traditional Chinese at 40 columns: m silences, and the view says so.
        do {
            let tmux = try await TmuxSession.start(columns: 40, rows: 24, environment: ["XDG_STATE_HOME": state, "LANG": "zh_TW.UTF-8"])
            defer { tmux.kill() }
            try tmux.type(join)
            try tmux.press("Enter")
            let screen = try await tmux.waitFor("the view in Traditional Chinese") {
                $0.contains("● 已連線") && $0.contains("Ada（你）") && $0.contains("成員")
            }
            for line in screen.split(separator: "\n") {
                #expect(TextWidth.of(String(line)) <= 40, "\(line)")
            }
            // Ada made the room, so she is its host: her keys take the labels' room at 40 columns.
            #expect(screen.contains("space 開始 s r ± 135 t a m q p k c h"), "\(screen)")
            try tmux.press("Space")
            try await tmux.waitFor("a phase's end with the bell") { _ in (try? rang(tmux)) == true }
            try tmux.press("m")
            try await tmux.waitFor("the silence said") { $0.contains("鈴聲和通知已關閉") }
            try tmux.press("q")
            try await tmux.waitFor("pomo to exit") { $0.contains("pomo-exited-0") }
        }
        let kept = try String(contentsOfFile: state + "/pomo/preferences.json", encoding: .utf8)
        #expect(kept == #"{"silenced":true}"#)

        // Second run, in English at 80 columns: still silent, the phases go on ending and nothing rings.
        let tmux = try await TmuxSession.start(columns: 80, rows: 24, environment: ["XDG_STATE_HOME": state, "LANG": "C.UTF-8"])
        defer { tmux.kill() }
        try tmux.type(join)
        try tmux.press("Enter")
        let silenced = try await tmux.waitFor("the view, silenced") { $0.contains("● live") && $0.contains("m unmute") }
        // The room auto-starts its next phase only while someone is there to see it: when the first run's exit
        // and this join are more than a phase apart (a slow machine), it waits, ready, and Ada starts it again.
        if silenced.contains(" ready") { try tmux.press("Space") }
        // Two phase ends go by (each line names the phase that ended), with no bell.
        try await tmux.waitFor("a phase's end", timeout: 30) { $0.contains(" done · ") }
        let first = try tmux.capture().split(separator: "\n").first { $0.contains(" done · ") }.map(String.init)
        try await tmux.waitFor("another phase's end", timeout: 30) { screen in
            screen.split(separator: "\n").contains { $0.contains(" done · ") && String($0) != first }
        }
        #expect(try !rang(tmux), "the bell rang while silenced")
        // m again: the bell is back for the next end, and the file says so.
        try tmux.press("m")
        try await tmux.waitFor("the sound back") { $0.contains("m mute") && $0.contains("Bell and notifications on") }
        try await tmux.waitFor("the bell at the next end") { _ in (try? rang(tmux)) == true }
        try tmux.press("q")
        try await tmux.waitFor("pomo to exit") { $0.contains("pomo-exited-0") }
        #expect(try String(contentsOfFile: state + "/pomo/preferences.json", encoding: .utf8) == #"{"silenced":false}"#)
    }
}
