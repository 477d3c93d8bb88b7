import Foundation
import PomodoroClient
import PomodoroCore
import PomodoroProtocol
import PomodoroTestSupport
import Testing

/// `pomo join --on-phase`: which events fire a hook, what it is told, and that nothing waits for it.
@Suite struct PhaseHookTriggerTests {
    static func message(_ message: ServerMessage, at ms: Int64) -> SessionEvent {
        .message(message, raw: [], receivedAt: Fixture.local(ms))
    }

    func trigger() -> PhaseHookTrigger { PhaseHookTrigger(room: "team-alpha", name: "Ada", server: "ws://127.0.0.1:8080") }

    @Test func theFirstStateFiresThenOnlyChangesOfPhaseOrStatus() throws {
        var hooks = trigger()
        let me = Fixture.member("m1", "Ada", task: "Reviewing the codec")
        let idle = Fixture.snapshot(members: [me], seq: 2, serverTime: Fixture.serverEpoch)
        let firstSeen = hooks.observe(Self.message(Fixture.welcome(idle), at: 0))
        let first = try #require(firstSeen)
        #expect(first.phase == .idle && first.status == .idle && first.previousPhase == nil && first.endsAtMs == nil)
        #expect(first.environment["POMO_ENDS_AT"] == "" && first.environment["POMO_FOCUS"] == "0")

        // Someone joins: a new state, the same phase and status: nothing.
        let crowd = Fixture.snapshot(members: [me, Fixture.member("m2", "Bo")], seq: 3)
        let quiet1 = hooks.observe(Self.message(.state(crowd), at: 100))
        #expect(quiet1 == nil)

        // The focus starts: fired, with its end on this machine's wall clock.
        var focus = Fixture.runningFocus(lengthMs: 1_500_000, at: Fixture.serverEpoch, members: [me], seq: 4)
        focus.members = [me]
        let startedSeen = hooks.observe(Self.message(.state(focus), at: 0))
        let started = try #require(startedSeen)
        #expect(started.phase == .focus && started.status == .running && started.previousPhase == .idle)
        #expect(started.endsAtMs == Fixture.local(0).wallMs + 1_500_000)
        #expect(started.remainingSeconds == 1500)
        let environment = started.environment
        #expect(environment["POMO_PHASE"] == "focus")
        #expect(environment["POMO_STATUS"] == "running")
        #expect(environment["POMO_FOCUS"] == "1")
        #expect(environment["POMO_ROOM"] == "team-alpha")
        #expect(environment["POMO_TASK"] == "Reviewing the codec")
        #expect(environment["POMO_NAME"] == "Ada")
        #expect(environment["POMO_ENDS_AT"] == "2026-01-01T00:25:00Z")
        #expect(environment["POMO_ENDS_AT_EPOCH"] == String((Fixture.local(0).wallMs + 1_500_000) / 1000))

        // Ticks of the same phase fire nothing.
        let quiet2 = hooks.observe(Self.message(Fixture.tick(remainingMs: 1_499_000, endsAt: Fixture.serverEpoch + 1_500_000,
                                                        seq: 4), at: 1000))
        #expect(quiet2 == nil)
        // Paused: fired, and a paused phase has no end.
        let paused = Fixture.snapshot(phase: .focus, status: .paused, remainingMs: 1_000_000, phaseLengthMs: 1_500_000,
                                      members: [me], seq: 6)
        let pauseSeen = hooks.observe(Self.message(.state(paused), at: 500_000))
        let pause = try #require(pauseSeen)
        #expect(pause.status == .paused && pause.endsAtMs == nil && pause.remainingSeconds == 1000)
        #expect(pause.environment["POMO_FOCUS"] == "0")
        // A stale state (older seq) changes nothing.
        let quiet3 = hooks.observe(Self.message(.state(focus), at: 500_100))
        #expect(quiet3 == nil)
        // The break: fired, its previous phase the focus.
        let rest = Fixture.snapshot(phase: .shortBreak, status: .running, remainingMs: 300_000, phaseLengthMs: 300_000,
                                    endsAt: Fixture.serverEpoch + 900_000, members: [me], seq: 7,
                                    serverTime: Fixture.serverEpoch + 600_000)
        let brokeSeen = hooks.observe(Self.message(.state(rest), at: 600_000))
        let broke = try #require(brokeSeen)
        #expect(broke.phase == .shortBreak && broke.previousPhase == .focus)
        #expect(broke.environment["POMO_PHASE"] == "shortBreak")
        // Replies and connection changes are not phase changes.
        let quiet4 = hooks.observe(.reconnecting(attempt: 1, retryAt: Fixture.local(0), reason: "x"))
        #expect(quiet4 == nil)
        let quiet5 = hooks.observe(Self.message(.ok(command: "start", appliesFrom: nil, ref: nil), at: 600_001))
        #expect(quiet5 == nil)
    }
}

/// The runner against real child processes through /bin/sh, in a folder of its own.
@Suite(.serialized, .timeLimit(.minutes(TestTime.minutes(1))))
struct HookRunnerTests {
    let folder: String

    init() throws {
        folder = NSTemporaryDirectory() + "pomo-hooks-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    }

    static let focus = PhaseChange(room: "team-alpha", phase: .focus, status: .running, previousPhase: .idle, cycle: 2,
                                   endsAtMs: 1_767_226_500_000, remainingSeconds: 1500, task: "Write the \"codec\" tests",
                                   name: "Ada", server: "ws://127.0.0.1:8080")

    /// Waits (polling on a thread of its own) until `path` holds what `condition` wants; returns its text.
    func waitForFile(_ path: String, _ what: String, _ condition: @escaping @Sendable (String) -> Bool = { !$0.isEmpty })
        async throws -> String {
        try await onOwnThread {
            let deadline = TestTime.deadline(10)
            while Date() < deadline {
                if let data = FileManager.default.contents(atPath: path),
                   case let text = String(decoding: data, as: UTF8.self), condition(text) { return text }
                usleep(20_000)
            }
            throw LiveTestFailure(description: "no \(what) in \(path) within 10 s")
        }
    }

    @Test func aHookWritesAFileWithTheEnvironmentItGotAndItsOutputIsLogged() async throws {
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let out = folder + "/env.txt"
        let runner = HookRunner(commands: ["env | grep '^POMO_' | sort > \(out).tmp && mv \(out).tmp \(out); echo hello from the hook"],
                                logPath: folder + "/state/hooks.log", environment: ["PATH": "/usr/bin:/bin"])
        await runner.fire(Self.focus)
        let text = try await waitForFile(out, "the hook's environment")
        let lines = Set(text.split(separator: "\n").map(String.init))
        #expect(lines.contains("POMO_PHASE=focus"))
        #expect(lines.contains("POMO_STATUS=running"))
        #expect(lines.contains("POMO_ROOM=team-alpha"))
        #expect(lines.contains("POMO_ENDS_AT=2026-01-01T00:15:00Z"))
        #expect(lines.contains("POMO_TASK=Write the \"codec\" tests"))
        #expect(lines.contains("POMO_CYCLE=2"))
        #expect(lines.contains("POMO_FOCUS=1"))
        #expect(lines.contains("POMO_PREVIOUS_PHASE=idle"))
        let log = try await waitForFile(folder + "/state/hooks.log", "the exit in the log") { $0.contains("exit 0") }
        #expect(log.contains("hello from the hook"))
        #expect(log.contains("team-alpha focus running"))
        var info = stat()
        #expect(stat(folder + "/state/hooks.log", &info) == 0 && info.st_mode & 0o777 == 0o600, "the log is private")
    }

    @Test func fireReturnsWhileTheHookRunsAndChangesDuringItAreNotStacked() async throws {
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let release = folder + "/release", runs = folder + "/runs"
        // The hook holds until the test releases it, then notes which phase it was told of.
        let runner = HookRunner(commands: ["while [ ! -e \(release) ]; do sleep 0.02; done; echo \"$POMO_PHASE $POMO_STATUS\" >> \(runs)"],
                                logPath: folder + "/hooks.log", environment: ["PATH": "/usr/bin:/bin"])
        await runner.fire(Self.focus)
        // fire returned though the hook cannot have ended: it was not waited for.
        #expect(await !runner.isIdle)
        #expect(!FileManager.default.fileExists(atPath: runs))
        var paused = Self.focus
        paused.status = .paused
        var rest = Self.focus
        rest.phase = .shortBreak
        var idle = Self.focus
        idle.phase = .idle
        idle.status = .idle
        // Three changes while it runs: only the latest waits.
        await runner.fire(paused)
        await runner.fire(rest)
        await runner.fire(idle)
        FileManager.default.createFile(atPath: release, contents: Data())
        let text = try await waitForFile(runs, "two runs") { $0.split(separator: "\n").count >= 2 }
        let deadline = TestTime.deadline(10)
        while await !runner.isIdle, Date() < deadline { try await Task.sleep(for: .milliseconds(20)) }
        #expect(await runner.isIdle)
        let final = String(decoding: FileManager.default.contents(atPath: runs) ?? Data(), as: UTF8.self)
        #expect(final.split(separator: "\n") == ["focus running", "idle idle"], "run for the first and the latest: \(text)")
        let log = String(decoding: FileManager.default.contents(atPath: folder + "/hooks.log") ?? Data(), as: UTF8.self)
        #expect(log.contains("hook still running"))
    }

    @Test func theLogStartsAgainPastItsLimitKeepingTheOldOne() async throws {
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let log = folder + "/hooks.log"
        FileManager.default.createFile(atPath: log, contents: Data(repeating: UInt8(ascii: "x"), count: 2000))
        let runner = HookRunner(commands: ["echo fresh"], logPath: log, logLimit: 1000, environment: ["PATH": "/usr/bin:/bin"])
        await runner.fire(Self.focus)
        let text = try await waitForFile(log, "the new log") { $0.contains("exit 0") }
        #expect(!text.contains("xxxx"))
        #expect(FileManager.default.contents(atPath: log + ".1")?.count == 2000)
    }

    @Test func thePreferencesFileKeepsHooksAndTheSilenceWithoutEachOther() throws {
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let file = Preferences.File(path: folder + "/preferences.json")
        FileManager.default.createFile(atPath: file.path,
                                       contents: Data(#"{"silenced": true, "hooks": {"onPhase": ["dnd-on.sh"]}}"#.utf8))
        var loaded = file.load()
        #expect(loaded == Preferences(silenced: true, hooks: .init(onPhase: ["dnd-on.sh"])))
        loaded.silenced = false
        try file.save(loaded)
        #expect(file.load().hooks.onPhase == ["dnd-on.sh"], "`m` keeps the hooks")
        // A hooks entry of the wrong shape leaves the silence readable.
        FileManager.default.createFile(atPath: file.path, contents: Data(#"{"silenced": true, "hooks": "x"}"#.utf8))
        #expect(file.load() == Preferences(silenced: true))
        try file.save(Preferences(silenced: true))
        let written = String(decoding: FileManager.default.contents(atPath: file.path) ?? Data(), as: UTF8.self)
        #expect(!written.contains("hooks"), "no empty hooks entry is written: \(written)")
    }
}

/// The built `pomo` in tmux with two hooks: a slow one the screen must not wait for, and a file-based
/// "do not disturb" flag that is there exactly while a focus runs.
@Suite(.onOwnThreads, .serialized, .timeLimit(.minutes(TestTime.minutes(1))))
struct LivePhaseHookTests {
    @Test func theScreenGoesOnWhileAHookHoldsAndTheDoNotDisturbFlagFollowsTheFocus() async throws {
        let server = try await ServerProcess.start()
        defer { server.stop() }
        let state = NSTemporaryDirectory() + "pomo-hooks-live-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: state) }
        let release = state + "/release", runs = state + "/runs", flag = state + "/dnd"
        let slow = "while [ ! -e \(release) ]; do sleep 0.02; done; echo $POMO_PHASE-$POMO_STATUS >> \(runs)"
        let dnd = "if [ \"$POMO_FOCUS\" = 1 ]; then echo \"$POMO_ENDS_AT\" > \(flag); else rm -f \(flag); fi"
        let tmux = try await TmuxSession.start(environment: ["XDG_STATE_HOME": state, "LANG": "C.UTF-8"])
        defer { tmux.kill() }
        try tmux.type("\(ProcessLauncher.pomo) join hooked --name Ada --server \(server.url) --no-notify \(joinTimeoutTyped) "
                      + "--on-phase '\(slow)' --on-phase '\(dnd)'; echo pomo-exited-$?")
        try tmux.press("Enter")
        try await tmux.waitFor("the view") { $0.contains("Ada (you)") && $0.contains("IDLE") }
        // The slow hook holds (it fired for the first state); the screen still answers keys and the room.
        try tmux.press("Space")
        try await tmux.waitFor("the running focus while the slow hook holds") { $0.contains("FOCUS") && $0.contains("space pause") }
        #expect(!FileManager.default.fileExists(atPath: runs), "the slow hook has not ended")
        // The flag hook is a command of its own: it ran for the focus although the slow one holds.
        let until = try await waitFor(flag) { !$0.isEmpty }
        #expect(until.hasSuffix("Z\n") && until.hasPrefix("20"), "the end of the focus: \(until)")
        try tmux.press("Space")
        try await tmux.waitFor("the paused focus") { $0.contains("space resume") }
        try await onOwnThread {
            let deadline = TestTime.deadline(10)
            while FileManager.default.fileExists(atPath: flag) && Date() < deadline { usleep(20_000) }
        }
        #expect(!FileManager.default.fileExists(atPath: flag), "paused: do not disturb is off")
        // Released, the slow hook runs once more, for the latest change only.
        FileManager.default.createFile(atPath: release, contents: Data())
        let text = try await waitFor(runs) { $0.split(separator: "\n").count >= 2 }
        #expect(text.split(separator: "\n") == ["idle-idle", "focus-paused"])
        let log = String(decoding: FileManager.default.contents(atPath: state + "/pomo/hooks.log") ?? Data(), as: UTF8.self)
        #expect(log.contains("hooked focus running"))
        try tmux.press("q")
        try await tmux.waitFor("the shell") { $0.contains("pomo-exited-0") }
    }

    func waitFor(_ path: String, _ condition: @escaping @Sendable (String) -> Bool) async throws -> String {
        try await onOwnThread {
            let deadline = TestTime.deadline(10)
            while Date() < deadline {
                if let data = FileManager.default.contents(atPath: path),
                   case let text = String(decoding: data, as: UTF8.self), condition(text) { return text }
                usleep(20_000)
            }
            throw LiveTestFailure(description: "nothing as expected in \(path) within 10 s")
        }
    }
}
