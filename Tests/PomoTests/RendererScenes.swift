import PomodoroClient
import PomodoroCore
import PomodoroProtocol

/// Dashboards in typical states, drawn by the renderer tests at fixed sizes.
enum RendererScenes {
    static let members = [Fixture.member("m1", "Ada", task: "Write the codec", done: 2),
                          Fixture.member("m2", "Lin", present: false, task: "Reviewing PRs", done: 1),
                          Fixture.member("m3", "Bo", present: false, connected: false)]

    /// Focus 3 of 4 running, 13:20 left of 25:00, Lin just added a minute. The local time zone is UTC+1.
    static var runningFocus: Dashboard { runningFocus(in: .en) }

    static func runningFocus(in language: Language) -> Dashboard {
        let start = Fixture.serverEpoch - 700_300
        var d = Fixture.dashboard(Fixture.runningFocus(startedAt: start, at: Fixture.serverEpoch, cycle: 3,
                                                       members: members), words: Words(language))
        _ = d.handle(.message(.event(room: "team-alpha", .control(action: .extend, by: "m2", seconds: 60),
                                     serverTime: Fixture.serverEpoch), raw: [], receivedAt: Fixture.local(0)))
        return d
    }

    /// A paused short break with new settings waiting for the next phase; `r` was just pressed.
    static var pausedBreakConfirmingReset: Dashboard { pausedBreakConfirmingReset(in: .en) }

    static func pausedBreakConfirmingReset(in language: Language) -> Dashboard {
        let pending = RoomSettings(focus: 3000, shortBreak: 600, longBreak: 1800, longBreakEvery: 4, autoStart: true)
        var d = Fixture.dashboard(Fixture.snapshot(phase: .shortBreak, status: .paused, remainingMs: 125_400,
                                                   phaseLengthMs: 300_000, cycle: 2, pending: pending,
                                                   members: members, seq: 9), words: Words(language))
        _ = d.handle(key: .character("r"), at: Fixture.local(0))
        return d
    }

    /// A long break ready to start; I am typing my task.
    static var editingTask: Dashboard { editingTask(in: .en) }

    static func editingTask(in language: Language) -> Dashboard {
        var d = Fixture.dashboard(Fixture.snapshot(phase: .longBreak, status: .ready, remainingMs: 900_000,
                                                   phaseLengthMs: 900_000, cycle: 4, members: members, seq: 12),
                                  words: Words(language))
        _ = d.handle(key: .character("t"), at: Fixture.local(0))
        for key in [Key.control("u")] + "Plan the sprint".map(Key.character) + [.left, .left, .left] {
            _ = d.handle(key: key, at: Fixture.local(0))
        }
        return d
    }

    /// The connection dropped: the countdown goes on from endsAt, the keys wait.
    static var reconnecting: Dashboard { reconnecting(in: .en) }

    static func reconnecting(in language: Language) -> Dashboard {
        var d = runningFocus(in: language)
        _ = d.handle(.reconnecting(attempt: 2, retryAt: Fixture.local(3200), reason: "the connection closed"))
        return d
    }

    /// Before the first welcome.
    static var connecting: Dashboard {
        var d = Dashboard(roomName: "team-alpha", serverLabel: "127.0.0.1:8080")
        _ = d.handle(.connecting(attempt: 1))
        return d
    }

    static var all: [(String, Dashboard, Int, Int)] {
        [("running80", runningFocus, 80, 24), ("running40", runningFocus, 40, 24),
         ("paused80", pausedBreakConfirmingReset, 80, 24), ("editing40", editingTask, 40, 24),
         ("reconnecting80", reconnecting, 80, 24), ("connecting40", connecting, 40, 10),
         ("running80x12", runningFocus, 80, 12), ("running30x8", runningFocus, 30, 8)]
    }
}

/// The host's scenes: the key line with the host's tools, their prompts, and the list of keys.
extension RendererScenes {
    /// The running focus, with me (Ada, m1) as the host of a locked room.
    static func hosting(in language: Language, keys: [Key] = []) -> Dashboard {
        let start = Fixture.serverEpoch - 700_300
        var snapshot = Fixture.runningFocus(startedAt: start, at: Fixture.serverEpoch, cycle: 3, members: members)
        snapshot.host = "m1"
        snapshot.locked = true
        var d = Fixture.dashboard(snapshot, words: Words(language))
        for key in keys { _ = d.handle(key: key, at: Fixture.local(0)) }
        return d
    }

    /// `k` pressed: the others are numbered, "2" typed.
    static func pickingToRemove(in language: Language) -> Dashboard {
        hosting(in: language, keys: [.character("k"), .character("2")])
    }

    /// `p` pressed, a new passcode typed.
    static func typingPasscode(in language: Language) -> Dashboard {
        hosting(in: language, keys: [.character("p")] + "new soup".map(Key.character))
    }

    /// `?` pressed by the host.
    static func hostHelp(in language: Language) -> Dashboard {
        hosting(in: language, keys: [.character("?")])
    }
}
