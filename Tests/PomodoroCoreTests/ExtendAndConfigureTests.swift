import Testing
import PomodoroCore

/// `extend(seconds:)` moves the end of the current phase.
@Suite struct ExtendTests {
    @Test func extendingARunningPhaseMovesItsDeadline() throws {
        var t = TestRoom()
        let ada = try t.add("Ada")
        try t.send(.start, by: ada)
        let oldDeadline = try #require(t.deadline)
        t.advance(by: .seconds(100))

        let outcome = try t.send(.extend(seconds: 60), by: ada)
        #expect(outcome.events == [.control(.extend, by: ada, seconds: 60)])
        #expect(outcome.stateChanged)
        #expect(t.deadline == oldDeadline + .seconds(60))
        #expect(t.remaining == .seconds(1460))
        #expect(t.snapshot.phaseLength == .seconds(1560))

        // The old end passes quietly; the new one completes the phase.
        #expect(t.advance(to: oldDeadline).completions.isEmpty)
        #expect(t.advance(to: oldDeadline + .seconds(60)).completions == [Completion(.focus, .shortBreak, cycle: 1)])
    }

    @Test func aNegativeExtensionShortensThePhase() throws {
        var t = TestRoom()
        let ada = try t.add("Ada")
        try t.send(.start, by: ada)
        let oldDeadline = try #require(t.deadline)
        let outcome = try t.send(.extend(seconds: -600), by: ada)
        #expect(outcome.completions.isEmpty)
        #expect(t.deadline == oldDeadline - .seconds(600))
        #expect(t.snapshot.phaseLength == .seconds(900))
    }

    @Test func extendingAPausedPhaseChangesWhatIsLeft() throws {
        var t = TestRoom()
        let ada = try t.add("Ada")
        try t.send(.start, by: ada)
        t.advance(by: .seconds(100))
        try t.send(.pause, by: ada)
        try t.send(.extend(seconds: 120), by: ada)
        #expect(t.room.timer == .paused(remaining: .seconds(1520)))
        try t.send(.extend(seconds: -20), by: ada)
        #expect(t.room.timer == .paused(remaining: .seconds(1500)))
        #expect(t.snapshot.phaseLength == .seconds(1600))
        t.advance(by: .seconds(5))
        try t.send(.resume, by: ada)
        #expect(t.deadline == t.now + .seconds(1500))
    }

    @Test func extendingAReadyPhaseChangesItsLength() throws {
        var t = TestRoom()
        let ada = try t.add("Ada")
        try t.send(.start, by: ada)
        try t.send(.skip, by: ada)
        #expect(t.room.timer == .ready(remaining: .seconds(300)))
        try t.send(.extend(seconds: 90), by: ada)
        #expect(t.room.timer == .ready(remaining: .seconds(390)))
        #expect(t.snapshot.phaseLength == .seconds(390))
    }

    @Test(arguments: [-3600, -1401, -1400])
    func shorteningARunningPhaseToOrPastZeroCompletesItAtOnce(seconds: Int) throws {
        var t = TestRoom()
        let ada = try t.add("Ada")
        try t.send(.start, by: ada)
        t.advance(by: .seconds(100))                      // 1400 s left
        let outcome = try t.send(.extend(seconds: seconds), by: ada)
        #expect(outcome.events.contains(.control(.extend, by: ada, seconds: seconds)))
        #expect(outcome.completions == [Completion(.focus, .shortBreak, cycle: 1)])
        #expect(t.room.phase == .shortBreak)
        #expect(t.room.timer == .ready(remaining: .seconds(300)))
    }

    @Test func shorteningAPausedPhasePastZeroCompletesIt() throws {
        var t = TestRoom()
        let ada = try t.add("Ada")
        try t.send(.start, by: ada)
        t.advance(by: .seconds(100))
        try t.send(.pause, by: ada)
        let outcome = try t.send(.extend(seconds: -3000), by: ada)
        #expect(outcome.completions == [Completion(.focus, .shortBreak, cycle: 1)])
        #expect(t.room.phase == .shortBreak)
        #expect(t.room.timer == .ready(remaining: .seconds(300)))
    }

    @Test func shorteningAReadyPhasePastZeroCompletesIt() throws {
        var t = TestRoom()
        let ada = try t.add("Ada")
        try t.send(.start, by: ada)
        try t.send(.skip, by: ada)                      // short break 1, ready
        let outcome = try t.send(.extend(seconds: -300), by: ada)
        #expect(outcome.completions == [Completion(.shortBreak, .focus, cycle: 2)])
        #expect(t.room.phase == .focus)
        #expect(t.room.cycle == 2)
        #expect(t.room.timer == .ready(remaining: .seconds(1500)))
    }

    @Test(arguments: [0, 3601, -3601, 86_400, Int.max, Int.min])
    func extendRefusesZeroAndMoreThanAnHour(seconds: Int) throws {
        var t = TestRoom()
        let ada = try t.add("Ada")
        try t.send(.start, by: ada)
        let before = t.snapshot
        #expect(caught { try t.send(.extend(seconds: seconds), by: ada) }?.invalidField == "seconds")
        #expect(t.snapshot == before)
    }

    @Test func extendAcceptsExactlyAnHourEitherWay() throws {
        var t = TestRoom()
        let ada = try t.add("Ada")
        try t.send(.start, by: ada)
        let deadline = try #require(t.deadline)
        try t.send(.extend(seconds: 3600), by: ada)
        #expect(t.deadline == deadline + .seconds(3600))
        try t.send(.extend(seconds: -3600), by: ada)
        #expect(t.deadline == deadline)
    }

    @Test(arguments: [60, -60])
    func extendWhenIdleIsRefused(seconds: Int) throws {
        var t = TestRoom()
        let ada = try t.add("Ada")
        #expect(caught { try t.send(.extend(seconds: seconds), by: ada) }?.isInvalidState == true)
        #expect(t.room.phase == .idle)
    }

    @Test func aPhaseCannotBeExtendedBeyondEightHours() throws {
        var t = TestRoom()
        let ada = try t.add("Ada")
        try t.send(.start, by: ada)
        for _ in 0..<7 { try t.send(.extend(seconds: 3600), by: ada) }
        #expect(t.snapshot.phaseLength == .seconds(1500 + 7 * 3600))
        #expect(caught { try t.send(.extend(seconds: 3600), by: ada) }?.invalidField == "seconds")
        try t.send(.extend(seconds: 2100), by: ada)
        #expect(t.snapshot.phaseLength == .seconds(8 * 3600))
        #expect(caught { try t.send(.extend(seconds: 1), by: ada) }?.invalidField == "seconds")
        try t.send(.extend(seconds: -1), by: ada)       // shortening is still fine
        #expect(t.snapshot.phaseLength == .seconds(8 * 3600 - 1))
    }
}

/// `configure` validates settings and applies them now or when the current phase ends.
@Suite struct ConfigureTests {
    @Test(arguments: [
        (RoomSettings(focus: 0), "focus"),
        (RoomSettings(focus: 14_401), "focus"),
        (RoomSettings(focus: -5), "focus"),
        (RoomSettings(shortBreak: 0), "shortBreak"),
        (RoomSettings(shortBreak: 14_401), "shortBreak"),
        (RoomSettings(longBreak: 0), "longBreak"),
        (RoomSettings(longBreak: 14_401), "longBreak"),
        (RoomSettings(longBreakEvery: 0), "longBreakEvery"),
        (RoomSettings(longBreakEvery: 13), "longBreakEvery"),
    ])
    func invalidSettingsAreRefusedNamingTheField(settings: RoomSettings, field: String) throws {
        var t = TestRoom()
        let ada = try t.add("Ada")
        let before = t.snapshot
        #expect(caught { try t.send(.configure(settings), by: ada) }?.invalidField == field)
        #expect(t.snapshot == before)
    }

    @Test(arguments: [
        RoomSettings(focus: 1, shortBreak: 1, longBreak: 1, longBreakEvery: 1),
        RoomSettings(focus: 14_400, shortBreak: 14_400, longBreak: 14_400, longBreakEvery: 12, autoStart: true),
    ])
    func boundarySettingsAreAccepted(settings: RoomSettings) throws {
        var t = TestRoom(policy: RoomPolicy(minFocusSeconds: 1))
        let ada = try t.add("Ada")
        let outcome = try t.send(.configure(settings), by: ada)
        #expect(outcome.appliesFrom == .now)
        #expect(t.room.settings == settings)
    }

    /// Each completed focus writes a journal row: the policy's floor (a minute unless the server lowers it)
    /// bounds how fast a room writes them. Breaks are not journalled and keep the settings' own range.
    @Test func aFocusShorterThanThePolicysFloorIsRefused() throws {
        var t = TestRoom()
        let ada = try t.add("Ada")
        #expect(RoomPolicy.standard.minFocusSeconds == 60)
        let before = t.snapshot
        let error = caught { try t.send(.configure(RoomSettings(focus: 59, shortBreak: 1, autoStart: true)), by: ada) }
        #expect(error?.invalidField == "focus")
        #expect(t.snapshot == before)
        let floor = RoomSettings(focus: 60, shortBreak: 1, longBreak: 1, autoStart: true)
        _ = try t.send(.configure(floor), by: ada)
        #expect(t.room.settings == floor)

        var lowered = TestRoom(policy: RoomPolicy(minFocusSeconds: 1))
        let lin = try lowered.add("Lin")
        _ = try lowered.send(.configure(RoomSettings(focus: 1)), by: lin)
        #expect(lowered.room.settings.focus == 1)
    }

    @Test func configureWhenIdleAppliesNow() throws {
        var t = TestRoom()
        let ada = try t.add("Ada")
        let settings = RoomSettings(focus: 50 * 60, shortBreak: 10 * 60, longBreak: 30 * 60, longBreakEvery: 2)
        let outcome = try t.send(.configure(settings), by: ada)
        #expect(outcome.appliesFrom == .now)
        #expect(outcome.events == [.control(.configure, by: ada, seconds: nil)])
        #expect(t.snapshot.settings == settings)
        #expect(t.snapshot.pendingSettings == nil)
        try t.send(.start, by: ada)
        #expect(t.deadline == t.now + .seconds(50 * 60))
    }

    @Test func configureWhenReadyUpdatesTheWaitingPhase() throws {
        var t = TestRoom()
        let ada = try t.add("Ada")
        try t.send(.start, by: ada)
        try t.send(.skip, by: ada)                      // short break, ready
        let outcome = try t.send(.configure(RoomSettings(shortBreak: 120)), by: ada)
        #expect(outcome.appliesFrom == .now)
        #expect(t.room.timer == .ready(remaining: .seconds(120)))
        #expect(t.snapshot.phaseLength == .seconds(120))
    }

    @Test func configureWhileRunningWaitsForTheNextPhase() throws {
        var t = TestRoom()
        let ada = try t.add("Ada")
        try t.send(.start, by: ada)
        let deadline = try #require(t.deadline)
        let settings = RoomSettings(focus: 40 * 60, shortBreak: 7 * 60)
        let outcome = try t.send(.configure(settings), by: ada)
        #expect(outcome.appliesFrom == .nextPhase)
        #expect(t.snapshot.pendingSettings == settings)
        #expect(t.snapshot.settings == .standard)
        #expect(t.deadline == deadline, "the running phase keeps its end")

        t.advance(to: deadline)
        #expect(t.snapshot.settings == settings)
        #expect(t.snapshot.pendingSettings == nil)
        #expect(t.room.timer == .ready(remaining: .seconds(7 * 60)))
        try t.send(.skip, by: ada)
        #expect(t.room.timer == .ready(remaining: .seconds(40 * 60)))
    }

    @Test func configureWhilePausedWaitsForTheNextPhase() throws {
        var t = TestRoom()
        let ada = try t.add("Ada")
        try t.send(.start, by: ada)
        t.advance(by: .seconds(10))
        try t.send(.pause, by: ada)
        let outcome = try t.send(.configure(RoomSettings(shortBreak: 60)), by: ada)
        #expect(outcome.appliesFrom == .nextPhase)
        #expect(t.room.timer == .paused(remaining: .seconds(1490)))
        #expect(t.snapshot.pendingSettings == RoomSettings(shortBreak: 60))
        try t.send(.skip, by: ada)
        #expect(t.room.timer == .ready(remaining: .seconds(60)))
        #expect(t.snapshot.pendingSettings == nil)
    }

    @Test func resetAppliesPendingSettings() throws {
        var t = TestRoom()
        let ada = try t.add("Ada")
        try t.send(.start, by: ada)
        try t.send(.configure(RoomSettings(focus: 600)), by: ada)
        try t.send(.reset, by: ada)
        #expect(t.snapshot.settings == RoomSettings(focus: 600))
        #expect(t.snapshot.pendingSettings == nil)
        try t.send(.start, by: ada)
        #expect(t.deadline == t.now + .seconds(600))
    }

    @Test func pendingAutoStartTakesEffectWhenThePhaseEnds() throws {
        var t = TestRoom()
        let ada = try t.add("Ada")
        try t.send(.start, by: ada)
        let deadline = try #require(t.deadline)
        try t.send(.configure(RoomSettings(autoStart: true)), by: ada)
        let outcome = t.advance(to: deadline)
        #expect(outcome.completions == [Completion(.focus, .shortBreak, autoStarted: true, cycle: 1)])
        #expect(t.deadline == deadline + .seconds(300))
    }

    /// Spec: during a break the cycle stays that of the focus just finished, even when fewer focus
    /// sessions per set now make it a long break.
    @Test func aLongBreakKeepsTheCycleOfTheFocusJustFinished() throws {
        var t = TestRoom()
        let ada = try t.add("Ada")
        try t.send(.start, by: ada)
        for _ in 0..<4 { try t.send(.skip, by: ada) }   // focus 3, ready
        try t.send(.start, by: ada)
        #expect(t.room.phase == .focus)
        #expect(t.room.cycle == 3)
        try t.send(.configure(RoomSettings(longBreakEvery: 2)), by: ada)
        let deadline = try #require(t.deadline)

        let outcome = t.advance(to: deadline)
        #expect(outcome.completions == [Completion(.focus, .longBreak, cycle: 3)])
        #expect(t.room.phase == .longBreak)
        #expect(t.room.cycle == 3)
        try t.send(.skip, by: ada)
        #expect(t.room.phase == .focus)
        #expect(t.room.cycle == 1)
    }

    @Test func aLongBreakAlwaysStartsANewSetEvenWithMoreSessionsPerSet() throws {
        var t = TestRoom()
        let ada = try t.add("Ada")
        try t.send(.start, by: ada)
        for _ in 0..<7 { try t.send(.skip, by: ada) }   // long break after focus 4, ready
        #expect(t.room.phase == .longBreak)
        #expect(t.room.cycle == 4)
        try t.send(.configure(RoomSettings(longBreakEvery: 6)), by: ada)
        try t.send(.skip, by: ada)
        #expect(t.room.phase == .focus)
        #expect(t.room.cycle == 1)
    }

    @Test func fewerSessionsPerSetStartANewSetAfterAShortBreak() throws {
        var t = TestRoom()
        let ada = try t.add("Ada")
        try t.send(.start, by: ada)
        for _ in 0..<5 { try t.send(.skip, by: ada) }   // short break 3, ready
        #expect(t.room.phase == .shortBreak)
        #expect(t.room.cycle == 3)
        try t.send(.configure(RoomSettings(longBreakEvery: 2)), by: ada)
        try t.send(.skip, by: ada)
        #expect(t.room.phase == .focus)
        #expect(t.room.cycle == 1, "focus 4 of 2 does not exist")
    }
}
