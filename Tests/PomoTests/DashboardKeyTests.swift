import PomodoroClient
import PomodoroCore
import PomodoroProtocol
import Testing

/// Keys as state transitions: what each key sends (or does not) in each state of the room.
@Suite struct DashboardKeyTests {
    let t0 = Fixture.local(0)

    func press(_ keys: [Key], on dashboard: inout Dashboard) -> [Dashboard.Effect] {
        keys.flatMap { dashboard.handle(key: $0, at: t0) }
    }

    func sent(_ effects: [Dashboard.Effect]) -> [ClientMessage] {
        effects.compactMap { if case let .send(message, _) = $0 { return message }; return nil }
    }

    @Test func spaceStartsPausesAndResumes() {
        var idle = Fixture.dashboard(Fixture.snapshot())
        #expect(sent(press([.character(" ")], on: &idle)) == [.start])
        var running = Fixture.dashboard(Fixture.runningFocus(at: Fixture.serverEpoch))
        #expect(sent(press([.character(" ")], on: &running)) == [.pause])
        var paused = Fixture.dashboard(Fixture.snapshot(phase: .focus, status: .paused, remainingMs: 5000,
                                                        phaseLengthMs: 10_000))
        #expect(sent(press([.character(" ")], on: &paused)) == [.resume])
        var ready = Fixture.dashboard(Fixture.snapshot(phase: .shortBreak, status: .ready, remainingMs: 300_000,
                                                       phaseLengthMs: 300_000))
        #expect(sent(press([.character(" ")], on: &ready)) == [.start])
        #expect(ready.toggleLabel == "start" && running.toggleLabel == "pause" && paused.toggleLabel == "resume")
    }

    @Test func keysThatMakeNoSenseDoNothing() {
        var idle = Fixture.dashboard(Fixture.snapshot())
        for key in ["s", "r", "+", "-", "1", "3", "5"] {
            #expect(press([.character(Character(key))], on: &idle) == [], "\(key) while idle")
        }
        #expect(idle.mode == .normal)
        #expect(!idle.isEnabled(.skip) && !idle.isEnabled(.reset) && !idle.isEnabled(.extend(minutes: 1)))
        // Unknown keys do nothing either.
        #expect(press([.character("x"), .up, .tab], on: &idle) == [])
    }

    @Test func extendAndShortenByMinutes() {
        var running = Fixture.dashboard(Fixture.runningFocus(at: Fixture.serverEpoch))
        #expect(sent(press(["+", "-", "1", "3", "5", "="].map { .character($0) }, on: &running))
                == [.extend(seconds: 60), .extend(seconds: -60), .extend(seconds: 60), .extend(seconds: 180),
                    .extend(seconds: 300), .extend(seconds: 60)])
        // A phase already near the 8-hour limit cannot grow: + is dimmed, - still works.
        let long = Fixture.snapshot(phase: .focus, status: .paused, remainingMs: 1000,
                                    phaseLengthMs: 8 * 3600 * 1000 - 30_000)
        var nearLimit = Fixture.dashboard(long)
        #expect(sent(press([.character("+"), .character("5"), .character("-")], on: &nearLimit))
                == [.extend(seconds: -60)])
    }

    @Test func resetAsksFirst() {
        var running = Fixture.dashboard(Fixture.runningFocus(at: Fixture.serverEpoch))
        #expect(press([.character("r")], on: &running) == [])
        #expect(running.mode == .confirmReset)
        #expect(sent(press([.character("y")], on: &running)) == [.reset])
        #expect(running.mode == .normal)
        // Anything but y keeps the timer, and says so.
        _ = press([.character("r"), .character("n")], on: &running)
        #expect(running.mode == .normal)
        #expect(running.notice(at: t0)?.text == "Reset cancelled")
        _ = press([.character("r"), .enter], on: &running)
        #expect(running.mode == .normal)
    }

    @Test func theTaskEditorEditsAndSubmits() {
        let members = [Fixture.member("m1", "Ada", task: "Old task")]
        var d = Fixture.dashboard(Fixture.snapshot(members: members))
        _ = press([.character("t")], on: &d)
        guard case .editingTask(let editor) = d.mode else {
            Issue.record("t should open the editor")
            return
        }
        #expect(editor.text == "Old task")
        // While editing, letters are text, not commands: 's' does not skip, 'q' does not quit.
        let typed = press([.control("w"), .control("w")] + "Sq review".map(Key.character) + [.home, .delete],
                          on: &d)
        #expect(typed == [])
        #expect(sent(press([.enter], on: &d)) == [.task(text: "q review")])
        #expect(d.mode == .normal)
        // Escape leaves the task alone.
        _ = press([.character("t"), .character("x"), .escape], on: &d)
        #expect(d.mode == .normal)
        // Submitting the same text again sends nothing.
        _ = press([.character("t")], on: &d)
        #expect(sent(press([.enter], on: &d)) == [])
    }

    @Test func awayTogglesFromWhatTheServerSays() {
        var d = Fixture.dashboard(Fixture.snapshot())
        #expect(sent(press([.character("a")], on: &d)) == [.presence(away: true)])
        let away = Fixture.snapshot(members: [Fixture.member("m1", "Ada", present: false)], seq: 3)
        _ = d.handle(.message(.state(away), raw: [], receivedAt: t0))
        #expect(d.room.iAmAway)
        #expect(sent(press([.character("a")], on: &d)) == [.presence(away: false)])
        // Two quick presses before the server answers: away, then back again, not away twice.
        var quick = Fixture.dashboard(Fixture.snapshot())
        #expect(sent(press([.character("a"), .character("a")], on: &quick))
                == [.presence(away: true), .presence(away: false)])
        #expect(quick.awayRequestedOrShown == false)
    }

    @Test func whileReconnectingOnlyQuitWorks() {
        var d = Fixture.dashboard(Fixture.runningFocus(at: Fixture.serverEpoch))
        _ = d.handle(.reconnecting(attempt: 1, retryAt: Fixture.local(500), reason: "the connection closed"))
        #expect(press([" ", "s", "t", "a", "+"].map { .character($0) }, on: &d) == [])
        #expect(d.notice(at: t0)?.text.hasPrefix("Not connected") == true)
        #expect(press([.character("q")], on: &d) == [.quit])
        #expect(press([.control("c")], on: &d) == [.quit])
        // Back: keys work again.
        _ = d.handle(.message(Fixture.welcome(Fixture.runningFocus(at: Fixture.serverEpoch), resumed: true), raw: [],
                              receivedAt: Fixture.local(600)))
        #expect(sent(press([.character(" ")], on: &d)) == [.pause])
        #expect(d.lastEvent?.text == "Reconnected")
    }

    @Test func refusalsAreShownAndNamed() {
        var d = Fixture.dashboard(Fixture.runningFocus(at: Fixture.serverEpoch))
        let effects = press([.character("s")], on: &d)
        guard case let .send(.skip, ref)? = effects.first else {
            Issue.record("s should skip")
            return
        }
        _ = d.handle(.message(.error(code: .invalidState, message: "the room is idle", field: nil, ref: ref),
                              raw: [], receivedAt: Fixture.local(10)))
        #expect(d.notice(at: Fixture.local(10))?.text == "Skip refused: the room is idle")
        #expect(d.notice(at: Fixture.local(10))?.kind == .error)
        // The flash fades after a few seconds, back to the last event.
        #expect(d.notice(at: Fixture.local(10 + Dashboard.flashMs))?.text == "You joined team-alpha")
    }

    @Test func aCompletedPhaseRingsNotifiesAndSaysSo() {
        var d = Fixture.dashboard(Fixture.runningFocus(at: Fixture.serverEpoch))
        let event = ServerMessage.event(room: "team-alpha",
                                        .phaseCompleted(completed: .focus, next: .shortBreak, autoStarted: false, cycle: 1),
                                        serverTime: Fixture.serverEpoch + 1000)
        let effects = d.handle(.message(event, raw: [], receivedAt: Fixture.local(1000)))
        #expect(effects == [.bell, .notify(title: "Focus done · team-alpha",
                                          body: "Short break is ready: press space to start.")])
        #expect(d.lastEvent?.text == "Focus done · Short break next")
        var quiet = Fixture.dashboard(Fixture.runningFocus(at: Fixture.serverEpoch), bell: false)
        #expect(quiet.handle(.message(event, raw: [], receivedAt: Fixture.local(1000))).contains(.bell) == false)
    }

    @Test func eventsReadAsSentences() {
        let members = [Fixture.member("m1", "Ada"), Fixture.member("m2", "Lin")]
        var d = Fixture.dashboard(Fixture.runningFocus(at: Fixture.serverEpoch, members: members))
        func line(_ event: EventPayload) -> String? {
            _ = d.handle(.message(.event(room: "team-alpha", event, serverTime: Fixture.serverEpoch), raw: [],
                                  receivedAt: t0))
            return d.lastEvent?.text
        }
        #expect(line(.memberJoined(member: "m3", name: "Bo")) == "Bo joined")
        #expect(line(.control(action: .pause, by: "m2", seconds: nil)) == "Lin paused")
        #expect(line(.control(action: .extend, by: "m1", seconds: -60)) == "You took off 1 min")
        #expect(line(.control(action: .extend, by: "m2", seconds: 90)) == "Lin added 90 s")
        #expect(line(.memberAway(member: "m2", reason: .disconnected)) == "Lin lost the connection")
        #expect(line(.memberAway(member: "m2", reason: .disconnected, connection: .lost)) == "Lin lost the connection")
        #expect(line(.memberAway(member: "m2", reason: .disconnected, connection: .closed)) == "Lin stepped out")
        #expect(line(.memberAway(member: "m2", reason: .away)) == "Lin stepped away")
        #expect(line(.memberLeft(member: "m2", reason: .expired)) == "Lin timed out")
        #expect(line(.phaseCompleted(completed: .shortBreak, next: .focus, autoStarted: true, cycle: 2))
                == "Short break done · Focus 2 of 4 started")
    }

    @Test func controlKeysForTheTerminal() {
        var d = Fixture.dashboard(Fixture.snapshot())
        #expect(press([.control("z")], on: &d) == [.suspend])
        #expect(press([.control("l")], on: &d) == [.redraw])
    }

    @Test func aRejoinAsANewMemberCarriesTheTaskOver() {
        let members = [Fixture.member("m1", "Ada", task: "Write the codec")]
        var d = Fixture.dashboard(Fixture.snapshot(members: members))
        _ = d.handle(.reconnecting(attempt: 1, retryAt: Fixture.local(500), reason: "the server is shutting down"))
        // A restarted server: a new room, a new member, no task.
        let fresh = Fixture.snapshot(members: [Fixture.member("m1", "Ada")])
        let effects = d.handle(.message(Fixture.welcome(fresh, resumed: false), raw: [], receivedAt: Fixture.local(900)))
        #expect(sent(effects) == [.task(text: "Write the codec")])
        #expect(d.lastEvent?.text.hasPrefix("Reconnected as a new member") == true)
        // Resumed: the server kept everything, nothing to send.
        _ = d.handle(.reconnecting(attempt: 1, retryAt: Fixture.local(1500), reason: "the connection closed"))
        #expect(d.handle(.message(Fixture.welcome(fresh, resumed: true), raw: [], receivedAt: Fixture.local(1900))) == [])
    }
}
