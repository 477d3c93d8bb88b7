import Foundation
import PomodoroClient
import PomodoroTestSupport
import Testing

/// The host's commands of the built `pomo` against a live server, with people in `pomo join` in tmux: a new
/// passcode (the old one refused, the new one accepted), host-only controls, removing a member (whose
/// `pomo join` ends, told why, and who is refused on the way back with their token), the role handed on,
/// the passcode removed, and the host's member found when `pomo join` went through another address.
@Suite(.onOwnThreads, .serialized) struct LiveHostingTests {
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

    /// A one-shot `pomo` to `server`'s own address, as the person whose state folder is `state`.
    static func pomo(_ arguments: [String], as state: String, on server: ServerProcess) async throws -> ProcessResult {
        // Stretched like `pomo join`'s: under a sanitizer a passcode's hash alone takes seconds.
        try await runPomo(arguments + ["--server", server.url] + joinTimeout, environment: environment(state))
    }

    /// `pomo join` in tmux until it is live, then (unless `stay`) quit: the member keeps its place for the
    /// grace period, and the host's commands act as it. `through`: another address of the server than its own.
    static func joined(_ name: String, room: String, passcode: String, server: ServerProcess, state: String,
                       through url: String? = nil, stay: Bool = false) async throws -> TmuxSession {
        let tmux = try TmuxSession(columns: 80, rows: 24, environment: ["XDG_STATE_HOME": state, "LANG": "C.UTF-8"])
        // The caller ends the session once it has it; a step that fails before then ends it here, or its tmux
        // server (and the pomo in it) would outlive the test.
        do {
            try await Self.join(tmux, name, room: room, passcode: passcode, url: url ?? server.url, stay: stay)
        } catch {
            tmux.kill()
            throw error
        }
        return tmux
    }

    private static func join(_ tmux: TmuxSession, _ name: String, room: String, passcode: String, url: String,
                             stay: Bool) async throws {
        try tmux.type("\(ProcessLauncher.pomo) join \(room) --name \(name) --passcode '\(passcode)' --server \(url) "
                      + "--no-notify \(joinTimeoutTyped); echo pomo-exited-$?")
        try tmux.press("Enter")
        try await tmux.waitFor("\(name) live") { $0.contains("● live") && $0.contains("\(name) (you)") }
        if !stay {
            // A member who never sent anything keeps their place for the server's short silent grace only
            // (10 s): a task said first gives them the whole grace period, however slow the machine.
            try tmux.press("t")
            try tmux.type("on call")
            try tmux.press("Enter")
            try await tmux.waitFor("\(name)'s task") { $0.contains("\(name) (you)  on call") }
            try tmux.press("q")
            try await tmux.waitFor("\(name)'s pomo to exit") { $0.contains("pomo-exited-0") }
        }
    }

    @Test func theHostChangesThePasscodeRemovesAMemberHandsOnAndUnlocks() async throws {
        let server = try ServerProcess()
        defer { server.stop() }
        let room = "hosted-\(UInt16.random(in: 0...UInt16.max))"
        let hana = Self.stateFolder("hana"), ivo = Self.stateFolder("ivo"), jun = Self.stateFolder("jun")
        defer { for folder in [hana, ivo, jun] { try? FileManager.default.removeItem(atPath: folder) } }
        func pomo(_ arguments: [String], as state: String) async throws -> ProcessResult {
            try await Self.pomo(arguments, as: state, on: server)
        }

        let hanaView = try await Self.joined("Hana", room: room, passcode: "old soup", server: server, state: hana)
        defer { hanaView.kill() }
        let ivoView = try await Self.joined("Ivo", room: room, passcode: "old soup", server: server, state: ivo, stay: true)
        defer { ivoView.kill() }
        let junView = try await Self.joined("Jun", room: room, passcode: "old soup", server: server, state: jun)
        defer { junView.kill() }

        // Not the host: refused, and nothing changes.
        let notHost = try await pomo(["kick", room, "Ivo"], as: jun)
        #expect(notHost.status == 1 && notHost.errors.contains("only the host may") && notHost.errors.contains("Hana is"),
                "\(notHost)")
        // Nobody of that name: a usage error before anything is sent.
        let nobody = try await pomo(["handoff", room, "Zed"], as: hana)
        #expect(nobody.status == 64 && nobody.errors.contains("nobody called 'Zed'"), "\(nobody)")

        // A new passcode: new joins need it, the old one is refused, Ivo stays in.
        let change = try await pomo(["passcode", room, "new soup"], as: hana)
        #expect(change.status == 0 && change.output.contains("locked"), "\(change)")
        #expect(try ivoView.capture().contains("● live"), "Ivo was put out by the new passcode")
        let old = try await pomo(["status", room, "--passcode", "old soup"], as: jun)
        #expect(old.status == 1 && old.errors.contains("bad_passcode"), "\(old)")
        let new = try await pomo(["status", room, "--passcode", "new soup"], as: jun)
        #expect(new.status == 0, "\(new)")

        // Ivo, not the host, with pomo join running: refused after a look, and the running view is not taken over.
        let notHostRunning = try await pomo(["kick", room, "Hana", "--passcode", "new soup"], as: ivo)
        #expect(notHostRunning.status == 1 && notHostRunning.errors.contains("is not the host (Hana is)"), "\(notHostRunning)")
        #expect(try ivoView.capture().contains("● live"), "Ivo's pomo join was taken over")

        // Host-only controls.
        let control = try await pomo(["control", room, "host"], as: hana)
        #expect(control.status == 0 && control.output.contains("controls host"), "\(control)")

        // Ivo removed: their pomo join ends, told why, and does not reconnect.
        let kick = try await pomo(["kick", room, "ivo"], as: hana)
        #expect(kick.status == 0 && !kick.output.contains("Ivo"), "\(kick)")
        let ended = try await ivoView.waitFor("Ivo's pomo to end") { $0.contains("pomo-exited-1") }
        let said = ended.replacingOccurrences(of: "\n", with: "")
        #expect(said.contains("pomo: removed from \(room): the host removed you from this room; you may join again in 10 minutes"),
                "\(ended)")
        // Back with the stored token: refused until the ban ends (a join let in would run on: `timeout`
        // ends it, with 124).
        let back = try ProcessLauncher.run("/usr/bin/timeout", ["\(TestTime.seconds(15))", ProcessLauncher.pomo, "join", room,
                                                                "--name", "Ivo", "--passcode", "new soup", "--plain",
                                                                "--server", server.url] + joinTimeout,
                                           environment: Self.environment(ivo))
        #expect(back.status == 1 && back.errors.contains("[banned]") && back.errors.contains("minutes"), "\(back)")

        // The role handed to Jun, who opens the controls again; Hana may no longer.
        let handoff = try await pomo(["handoff", room, "Jun"], as: hana)
        #expect(handoff.status == 0 && handoff.output.contains("host Jun"), "\(handoff)")
        let hanaAgain = try await pomo(["control", room, "anyone"], as: hana)
        #expect(hanaAgain.status == 1, "\(hanaAgain)")
        let open = try await pomo(["control", room, "anyone"], as: jun)
        #expect(open.status == 0 && open.output.contains("controls anyone"), "\(open)")

        // No passcode: anyone joins without one.
        let unlock = try await pomo(["passcode", room, "--remove"], as: jun)
        #expect(unlock.status == 0 && unlock.output.contains("open"), "\(unlock)")
        let anyone = try await pomo(["status", room], as: ivo)
        #expect(anyone.status == 0, "\(anyone)")
    }

    /// The host's keys in `pomo join` (k, p, c, ?) as a user presses them in tmux, and the one-shot commands
    /// around a running `pomo join` (they name the key instead of taking it over) and after the grace period
    /// (they say the stored membership has ended).
    @Test func theHostUsesTheKeysInPomoJoinAndTheCommandsSayWhatToDo() async throws {
        let server = try ServerProcess(arguments: ["--reconnect-grace", "2"])
        defer { server.stop() }
        let room = "keys-\(UInt16.random(in: 0...UInt16.max))"
        let hana = Self.stateFolder("hana"), ivo = Self.stateFolder("ivo"), jun = Self.stateFolder("jun")
        defer { for folder in [hana, ivo, jun] { try? FileManager.default.removeItem(atPath: folder) } }
        func pomo(_ arguments: [String], as state: String) async throws -> ProcessResult {
            try await Self.pomo(arguments, as: state, on: server)
        }

        let hanaView = try await Self.joined("Hana", room: room, passcode: "old soup", server: server, state: hana, stay: true)
        defer { hanaView.kill() }
        let ivoView = try await Self.joined("Ivo", room: room, passcode: "old soup", server: server, state: ivo, stay: true)
        defer { ivoView.kill() }
        let junView = try await Self.joined("Jun", room: room, passcode: "old soup", server: server, state: jun, stay: true)
        defer { junView.kill() }
        try await hanaView.waitFor("the host's keys") { $0.contains("p k c h host") }

        // A one-shot command while Hana's pomo join runs: it names the key, and the view stays.
        let busy = try await pomo(["kick", room, "Ivo", "--passcode", "old soup"], as: hana)
        #expect(busy.status == 1 && busy.errors.contains("press k in that pomo join instead"), "\(busy)")
        #expect(try hanaView.capture().contains("● live"), "Hana's pomo join was taken over")

        // k: the others numbered, Ivo picked by number; Ivo's pomo join ends, told why.
        try hanaView.press("k")
        let picking = try await hanaView.waitFor("the pick prompt") { $0.contains("remove who? ›") && $0.contains("1 ● Ivo") }
        #expect(picking.contains("2 ● Jun"), "\(picking)")
        try hanaView.type("1")
        try hanaView.press("Enter")
        let ended = try await ivoView.waitFor("Ivo's pomo to end") { $0.contains("pomo-exited-1") }
        #expect(ended.replacingOccurrences(of: "\n", with: "").contains("removed from \(room): the host removed you"), "\(ended)")
        try await hanaView.waitFor("the removal") { $0.contains("the host removed Ivo") }
        try await junView.waitFor("the removal, for Jun") { $0.contains("the host removed Ivo") }

        // p: a new passcode; the old one is refused from then on.
        try hanaView.press("p")
        try await hanaView.waitFor("the passcode prompt") { $0.contains("new passcode ›") }
        try hanaView.type("new soup")
        let typed = try await hanaView.waitFor("the passcode typed, masked") { $0.contains("new passcode › ********") }
        #expect(!typed.contains("new soup"), "the passcode shows in clear: \(typed)")
        try hanaView.press("Enter")
        try await hanaView.waitFor("the new passcode") { $0.contains("You set a new passcode") }
        let old = try await pomo(["status", room, "--passcode", "old soup"], as: jun)
        #expect(old.status == 1 && old.errors.contains("bad_passcode"), "\(old)")

        // c: host-only controls; Jun sees it.
        try hanaView.press("c")
        try await junView.waitFor("host-only controls") { $0.contains("Hana made the controls host-only") }

        // ?: the list of keys, with the host's; any key closes it.
        try hanaView.press("?")
        try await hanaView.waitFor("the list of keys") { $0.contains("HOST ONLY") && $0.contains("remove a member") }
        try hanaView.press("x")
        try await hanaView.waitFor("the list closed") { !$0.contains("HOST ONLY") && $0.contains("p k c h host") }

        // Hana quits; once her grace period (2 s here) has passed, the command says the membership has ended.
        try hanaView.press("q")
        try await hanaView.waitFor("Hana's pomo to exit") { $0.contains("pomo-exited-0") }
        try await junView.waitFor("Hana's membership to end", timeout: 15) {
            $0.contains("Hana timed out") || $0.contains("You are the host now")
        }
        let late = try await pomo(["passcode", room, "--remove", "--passcode", "new soup"], as: hana)
        #expect(late.status == 1 && late.errors.contains("the membership pomo join kept in \(room) (Hana, m1) has ended"),
                "\(late)")
        // Without the passcode nothing can look first, and the stored token no longer opens the locked room.
        let lateLocked = try await pomo(["control", room, "anyone"], as: hana)
        #expect(lateLocked.status == 1 && lateLocked.errors.contains("(Hana, m1) has ended"), "\(lateLocked)")
        let still = try await pomo(["status", room, "--passcode", "new soup"], as: jun)
        #expect(still.status == 0, "the passcode was not removed: \(still)")
    }

    /// The host joined through another address of the server (its proxy, another node, another name): the host's
    /// commands given with the server's own address find the member `pomo join` keeps there, as the control
    /// commands do, also past another server's token kept for the room under the same id; with nothing kept
    /// anywhere they say to join first.
    @Test func theHostsCommandsFindTheMemberPomoJoinKeepsUnderAnotherAddress() async throws {
        let server = try ServerProcess()
        defer { server.stop() }
        // Another way in to the same server, as its proxy or another node of a cluster would be.
        let proxy = try TCPProxy(to: server.port)
        defer { proxy.stop() }
        let room = "proxied-\(UInt16.random(in: 0...UInt16.max))"
        let hana = Self.stateFolder("hana"), ivo = Self.stateFolder("ivo"), jun = Self.stateFolder("jun")
        defer { for folder in [hana, ivo, jun] { try? FileManager.default.removeItem(atPath: folder) } }
        func keptFiles() throws -> [String] {
            try FileManager.default.contentsOfDirectory(atPath: hana + "/pomo").filter { $0.hasSuffix(".json") }.sorted()
        }

        let hanaView = try await Self.joined("Hana", room: room, passcode: "old soup", server: server, state: hana,
                                             through: "ws://127.0.0.1:\(proxy.port)")
        defer { hanaView.kill() }
        let ivoView = try await Self.joined("Ivo", room: room, passcode: "old soup", server: server, state: ivo, stay: true)
        defer { ivoView.kill() }
        #expect(try keptFiles() == ["\(room)@127.0.0.1_\(proxy.port).json"])

        // Nothing kept under any address: the same words as ever.
        let nothing = try await Self.pomo(["kick", room, "Ivo", "--passcode", "old soup"], as: jun, on: server)
        #expect(nothing.status == 1 && nothing.errors.contains(
            "only the host may remove Ivo, as the member pomo join keeps: run pomo join \(room) first"), "\(nothing)")

        // The room cannot be looked at without its passcode: the kept member is resumed straight away.
        let control = try await Self.pomo(["control", room, "host"], as: hana, on: server)
        #expect(control.status == 0 && control.output.contains("controls host") && control.output.contains("host Hana"),
                "\(control)")

        // A newer file of another server keeps an m1 too, whose token this server never gave: tried first, it is
        // not recognised, and Hana's is resumed next.
        let stale = try #require(StateFile.location(environment: ["XDG_STATE_HOME": hana],
                                                    server: try ServerAddress(parsing: "ws://127.0.0.1:1"), room: room))
        try stale.save(StateFile.Contents(server: "ws://127.0.0.1:1", room: room, name: "Hana", member: "m1",
                                          token: "0123456789abcdef0123456789abcdef"))
        let change = try await Self.pomo(["passcode", room, "new soup", "--passcode", "old soup"], as: hana, on: server)
        #expect(change.status == 0 && change.output.contains("locked") && change.output.contains("host Hana"), "\(change)")
        stale.remove()

        let kick = try await Self.pomo(["kick", room, "Ivo", "--passcode", "new soup"], as: hana, on: server)
        #expect(kick.status == 0 && !kick.output.contains("Ivo"), "\(kick)")
        let ended = try await ivoView.waitFor("Ivo's pomo to end") { $0.contains("pomo-exited-1") }
        #expect(ended.replacingOccurrences(of: "\n", with: "").contains("removed from \(room): the host removed you"),
                "\(ended)")
        // Nothing was kept for the server's own address: pomo join's file is the one.
        #expect(try keptFiles() == ["\(room)@127.0.0.1_\(proxy.port).json"])
    }
}
