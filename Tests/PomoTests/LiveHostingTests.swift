import Foundation
import PomodoroClient
import PomodoroTestSupport
import Testing

/// The host's commands of the built `pomo` against a live server, with people in `pomo join` in tmux: a new
/// passcode (the old one refused, the new one accepted), host-only controls, removing a member (whose
/// `pomo join` ends, told why, and who is refused on the way back with their token), the role handed on,
/// and the passcode removed.
@Suite(.serialized) struct LiveHostingTests {
    /// A state folder of its own, as each person's home would have.
    static func stateFolder(_ who: String) -> String {
        NSTemporaryDirectory() + "pomo-host-\(who)-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
    }

    static func environment(_ state: String) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_STATE_HOME"] = state
        environment["LANG"] = "C.UTF-8"
        environment.removeValue(forKey: "POMO_PASSCODE")
        return environment
    }

    /// `pomo join` in tmux until it is live, then (unless `stay`) quit: the member keeps its place for the
    /// grace period, and the host's commands act as it.
    static func joined(_ name: String, room: String, passcode: String, server: ServerProcess, state: String,
                       stay: Bool = false) throws -> TmuxSession {
        let tmux = try TmuxSession(columns: 80, rows: 24, environment: ["XDG_STATE_HOME": state, "LANG": "C.UTF-8"])
        try tmux.type("\(ProcessLauncher.pomo) join \(room) --name \(name) --passcode '\(passcode)' --server \(server.url) "
                      + "--no-notify; echo pomo-exited-$?")
        try tmux.press("Enter")
        try tmux.waitFor("\(name) live") { $0.contains("● live") && $0.contains("\(name) (you)") }
        if !stay {
            try tmux.press("q")
            try tmux.waitFor("\(name)'s pomo to exit") { $0.contains("pomo-exited-0") }
        }
        return tmux
    }

    @Test func theHostChangesThePasscodeRemovesAMemberHandsOnAndUnlocks() throws {
        let server = try ServerProcess()
        defer { server.stop() }
        let room = "hosted-\(UInt16.random(in: 0...UInt16.max))"
        let hana = Self.stateFolder("hana"), ivo = Self.stateFolder("ivo"), jun = Self.stateFolder("jun")
        defer { for folder in [hana, ivo, jun] { try? FileManager.default.removeItem(atPath: folder) } }
        func pomo(_ arguments: [String], as state: String) throws -> ProcessResult {
            try runPomo(arguments + ["--server", server.url], environment: Self.environment(state))
        }

        let hanaView = try Self.joined("Hana", room: room, passcode: "old soup", server: server, state: hana)
        defer { hanaView.kill() }
        let ivoView = try Self.joined("Ivo", room: room, passcode: "old soup", server: server, state: ivo, stay: true)
        defer { ivoView.kill() }
        let junView = try Self.joined("Jun", room: room, passcode: "old soup", server: server, state: jun)
        defer { junView.kill() }

        // Not the host: refused, and nothing changes.
        let notHost = try pomo(["kick", room, "Ivo"], as: jun)
        #expect(notHost.status == 1 && notHost.errors.contains("only the host may") && notHost.errors.contains("Hana is"),
                "\(notHost)")
        // Nobody of that name: a usage error before anything is sent.
        let nobody = try pomo(["handoff", room, "Zed"], as: hana)
        #expect(nobody.status == 64 && nobody.errors.contains("nobody called 'Zed'"), "\(nobody)")

        // A new passcode: new joins need it, the old one is refused, Ivo stays in.
        let change = try pomo(["passcode", room, "new soup"], as: hana)
        #expect(change.status == 0 && change.output.contains("locked"), "\(change)")
        #expect(try ivoView.capture().contains("● live"), "Ivo was put out by the new passcode")
        let old = try pomo(["status", room, "--passcode", "old soup"], as: jun)
        #expect(old.status == 1 && old.errors.contains("bad_passcode"), "\(old)")
        let new = try pomo(["status", room, "--passcode", "new soup"], as: jun)
        #expect(new.status == 0, "\(new)")

        // Ivo, not the host, with pomo join running: refused after a look, and the running view is not taken over.
        let notHostRunning = try pomo(["kick", room, "Hana", "--passcode", "new soup"], as: ivo)
        #expect(notHostRunning.status == 1 && notHostRunning.errors.contains("is not the host (Hana is)"), "\(notHostRunning)")
        #expect(try ivoView.capture().contains("● live"), "Ivo's pomo join was taken over")

        // Host-only controls.
        let control = try pomo(["control", room, "host"], as: hana)
        #expect(control.status == 0 && control.output.contains("controls host"), "\(control)")

        // Ivo removed: their pomo join ends, told why, and does not reconnect.
        let kick = try pomo(["kick", room, "ivo"], as: hana)
        #expect(kick.status == 0 && !kick.output.contains("Ivo"), "\(kick)")
        let ended = try ivoView.waitFor("Ivo's pomo to end") { $0.contains("pomo-exited-1") }
        let said = ended.replacingOccurrences(of: "\n", with: "")
        #expect(said.contains("pomo: removed from \(room): the host removed you from this room; you may join again in 10 minutes"),
                "\(ended)")
        // Back with the stored token: refused until the ban ends (a join let in would run on: `timeout`
        // ends it, with 124).
        let back = try ProcessLauncher.run("/usr/bin/timeout", ["10", ProcessLauncher.pomo, "join", room, "--name", "Ivo",
                                                                "--passcode", "new soup", "--plain", "--server", server.url],
                                           environment: Self.environment(ivo))
        #expect(back.status == 1 && back.errors.contains("[banned]") && back.errors.contains("minutes"), "\(back)")

        // The role handed to Jun, who opens the controls again; Hana may no longer.
        let handoff = try pomo(["handoff", room, "Jun"], as: hana)
        #expect(handoff.status == 0 && handoff.output.contains("host Jun"), "\(handoff)")
        let hanaAgain = try pomo(["control", room, "anyone"], as: hana)
        #expect(hanaAgain.status == 1, "\(hanaAgain)")
        let open = try pomo(["control", room, "anyone"], as: jun)
        #expect(open.status == 0 && open.output.contains("controls anyone"), "\(open)")

        // No passcode: anyone joins without one.
        let unlock = try pomo(["passcode", room, "--remove"], as: jun)
        #expect(unlock.status == 0 && unlock.output.contains("open"), "\(unlock)")
        let anyone = try pomo(["status", room], as: ivo)
        #expect(anyone.status == 0, "\(anyone)")
    }
}
