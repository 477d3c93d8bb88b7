import PomodoroClient
import PomodoroCore
import PomodoroProtocol
import Testing

/// The client checks its requests against the limits the server sent in `welcome`, not a copy of its own.
@Suite struct LimitsTests {
    /// A server configured tighter than the defaults.
    static let tight = LimitsPayload(maxNameLength: 20, maxTaskLength: 5, minPasscodeLength: 8, maxPasscodeLength: 32,
                                     maxExtendSeconds: 600, maxPhaseSeconds: 3600, minFocusSeconds: 300,
                                     maxSettingSeconds: 7200, maxLongBreakEvery: 6)

    @Test func theRoomViewKeepsTheLimitsOfItsWelcome() {
        var view = RoomView()
        #expect(view.limits == nil)
        view.apply(Fixture.welcome(Fixture.snapshot(), limits: Self.tight), receivedAt: Fixture.local(0))
        #expect(view.limits == Self.tight)
    }

    @Test func extendIsCheckedAgainstTheServersBound() {
        #expect(Self.tight.refusal(extending: 600) == nil)
        #expect(Self.tight.refusal(extending: -600) == nil)
        #expect(Self.tight.refusal(extending: 601) == "at most 10m either way per call")
        #expect(Self.tight.refusal(extending: -601) == "at most 10m either way per call")
        #expect(Self.tight.refusal(extending: 0) == "the amount must not be zero")
        #expect(Fixture.limits.refusal(extending: 3600) == nil)
        #expect(Fixture.limits.refusal(extending: 3601) == "at most 1h either way per call")
    }

    @Test func settingsAreCheckedAgainstTheServersBounds() {
        let fine = RoomSettings(focus: 300, shortBreak: 1, longBreak: 7200, longBreakEvery: 6)
        #expect(Self.tight.refusal(configuring: fine) == nil)
        var s = fine
        s.focus = 299
        #expect(Self.tight.refusal(configuring: s) == "--focus must be a duration from 5m to 2h")
        s = fine
        s.focus = 7201
        #expect(Self.tight.refusal(configuring: s) == "--focus must be a duration from 5m to 2h")
        s = fine
        s.longBreak = 7201
        #expect(Self.tight.refusal(configuring: s) == "--long-break must be a duration from 1s to 2h")
        s = fine
        s.shortBreak = 0
        #expect(Self.tight.refusal(configuring: s) == "--short-break must be a duration from 1s to 2h")
        s = fine
        s.longBreakEvery = 7
        #expect(Self.tight.refusal(configuring: s) == "--long-break-every must be 1–6")
        // The defaults allow what the tight server refuses.
        #expect(Fixture.limits.refusal(configuring: RoomSettings(focus: 3 * 3600, longBreakEvery: 12)) == nil)
    }

    @Test func plusIsDimmedWhereThePhaseWouldOutgrowTheServersLongest() {
        let paused = Fixture.snapshot(phase: .focus, status: .paused, remainingMs: 1000, phaseLengthMs: 3600_000 - 120_000)
        // Two minutes below the tight server's hour: +1 fits, +5 does not.
        let tight = Fixture.dashboard(paused, limits: Self.tight)
        #expect(tight.isEnabled(.extend(minutes: 1)) && tight.isEnabled(.extend(minutes: 2)))
        #expect(!tight.isEnabled(.extend(minutes: 3)) && !tight.isEnabled(.extend(minutes: 5)))
        // The same phase on a server with the default 8 hours grows freely.
        let roomy = Fixture.dashboard(paused)
        #expect(roomy.isEnabled(.extend(minutes: 5)))
    }

    @Test func theTaskEditorHoldsAtMostTheServersLongestTask() {
        var d = Fixture.dashboard(Fixture.snapshot(), limits: Self.tight)
        _ = d.handle(key: .character("t"), at: Fixture.local(0))
        for c in "abcdefgh" { _ = d.handle(key: .character(c), at: Fixture.local(0)) }
        guard case .editingTask(let editor) = d.mode else {
            Issue.record("t should open the editor")
            return
        }
        #expect(editor.limit == 5 && editor.text == "abcde")
    }
}
