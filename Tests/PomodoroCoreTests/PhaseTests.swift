import Testing
import PomodoroCore

/// The phase cycle: start, completion, auto-start, pause/resume, skip, reset.
@Suite struct PhaseTests {
    @Test func aNewRoomIsIdleAtCycleOneWithStandardSettings() {
        let t = TestRoom()
        let snapshot = t.snapshot
        #expect(snapshot.phase == .idle)
        #expect(snapshot.status == .idle)
        #expect(snapshot.cycle == 1)
        #expect(snapshot.remaining == .zero)
        #expect(snapshot.deadline == nil)
        #expect(snapshot.pendingSettings == nil)
        #expect(snapshot.members.isEmpty)
        #expect(snapshot.stats == RoomStats())
        #expect(snapshot.settings == RoomSettings(focus: 1500, shortBreak: 300, longBreak: 900,
                                                   longBreakEvery: 4, autoStart: false))
        #expect(RoomSettings.standard == snapshot.settings)
    }

    @Test func startFromIdleRunsAFullFocus() throws {
        var t = TestRoom()
        let ada = try t.add("Ada")
        let seq = t.room.seq
        let outcome = try t.send(.start, by: ada)

        #expect(outcome.events == [.control(.start, by: ada, seconds: nil)])
        #expect(outcome.stateChanged)
        #expect(t.room.seq > seq)
        #expect(t.room.phase == .focus)
        #expect(t.room.status == .running)
        #expect(t.room.cycle == 1)
        #expect(t.room.timer == .running(deadline: t.now + .seconds(1500)))
        #expect(t.snapshot.deadline == t.now + .seconds(1500))
        #expect(t.snapshot.phaseLength == .seconds(1500))
        #expect(t.snapshot.running)

        t.advance(by: .seconds(100))
        #expect(t.remaining == .seconds(1400))
    }

    @Test func startWhileRunningIsRefusedAndChangesNothing() throws {
        var t = TestRoom()
        let ada = try t.add("Ada")
        try t.send(.start, by: ada)
        t.advance(by: .seconds(3))
        let before = t.snapshot
        #expect(caught { try t.send(.start, by: ada) }?.isInvalidState == true)
        #expect(t.snapshot == before)
    }

    @Test func aPhaseEndingWithoutAutoStartLeavesTheNextOneReady() throws {
        var t = TestRoom()
        let ada = try t.add("Ada")
        try t.send(.start, by: ada)
        let deadline = try #require(t.deadline)

        #expect(t.advance(to: deadline - .nanoseconds(1)).completions.isEmpty)
        #expect(t.room.phase == .focus)

        let outcome = t.advance(to: deadline)
        #expect(outcome.completions == [Completion(.focus, .shortBreak, autoStarted: false, cycle: 1)])
        #expect(outcome.stateChanged)
        #expect(t.room.phase == .shortBreak)
        #expect(t.room.timer == .ready(remaining: .seconds(300)))
        #expect(t.snapshot.phaseLength == .seconds(300))
        #expect(t.snapshot.deadline == nil)

        // A ready phase does not count down.
        t.advance(by: .seconds(1000))
        #expect(t.remaining == .seconds(300))
        #expect(t.room.nextWakeup() == nil)
    }

    /// Runs every phase to its end and starts the next one by hand, recording (phase, cycle) at each start.
    private func walk(_ t: inout TestRoom, by id: MemberID, phases count: Int) throws -> ([String], [Completion]) {
        var seen: [String] = []
        var completions: [Completion] = []
        for _ in 0..<count {
            try t.send(.start, by: id)
            seen.append("\(t.room.phase)\(t.room.cycle)")
            let expectedLength = t.room.settings.length(of: t.room.phase)
            #expect(t.remaining == expectedLength)
            let deadline = try #require(t.deadline)
            let outcome = t.advance(to: deadline)
            completions += outcome.completions
            #expect(t.room.status == .ready)
            #expect(t.remaining == t.room.settings.length(of: t.room.phase), "the next phase waits with its full length")
        }
        return (seen, completions)
    }

    @Test func phasesFollowFocusBreakWithALongBreakAfterTheFourthFocus() throws {
        var t = TestRoom()
        let ada = try t.add("Ada")
        let (seen, completions) = try walk(&t, by: ada, phases: 10)
        #expect(seen == ["focus1", "shortBreak1", "focus2", "shortBreak2", "focus3", "shortBreak3",
                         "focus4", "longBreak4", "focus1", "shortBreak1"])
        #expect(completions == [
            Completion(.focus, .shortBreak, cycle: 1), Completion(.shortBreak, .focus, cycle: 2),
            Completion(.focus, .shortBreak, cycle: 2), Completion(.shortBreak, .focus, cycle: 3),
            Completion(.focus, .shortBreak, cycle: 3), Completion(.shortBreak, .focus, cycle: 4),
            Completion(.focus, .longBreak, cycle: 4), Completion(.longBreak, .focus, cycle: 1),
            Completion(.focus, .shortBreak, cycle: 1), Completion(.shortBreak, .focus, cycle: 2),
        ])
    }

    @Test func withLongBreakEveryOneEveryBreakIsLong() throws {
        var t = TestRoom(settings: RoomSettings(focus: 60, shortBreak: 10, longBreak: 30, longBreakEvery: 1))
        let ada = try t.add("Ada")
        let (seen, _) = try walk(&t, by: ada, phases: 6)
        #expect(seen == ["focus1", "longBreak1", "focus1", "longBreak1", "focus1", "longBreak1"])
    }

    @Test(arguments: [2, 3, 12])
    func theLongBreakComesAfterEveryNthFocus(every: Int) throws {
        var t = TestRoom(settings: RoomSettings(focus: 60, shortBreak: 10, longBreak: 30, longBreakEvery: every))
        let ada = try t.add("Ada")
        let (seen, _) = try walk(&t, by: ada, phases: 2 * every + 1)
        var expected: [String] = []
        for n in 1...every {
            expected.append("focus\(n)")
            expected.append(n == every ? "longBreak\(n)" : "shortBreak\(n)")
        }
        expected.append("focus1")
        #expect(seen == expected)
    }

    @Test func autoStartBeginsTheNextPhaseAtThePreviousDeadlineEvenWhenWokenLate() throws {
        var t = TestRoom(settings: RoomSettings(autoStart: true))
        let ada = try t.add("Ada")
        try t.send(.start, by: ada)
        let first = try #require(t.deadline)

        let outcome = t.advance(to: first + .seconds(7))
        #expect(outcome.completions == [Completion(.focus, .shortBreak, autoStarted: true, cycle: 1)])
        #expect(t.room.phase == .shortBreak)
        #expect(t.room.status == .running)
        #expect(t.deadline == first + .seconds(300), "no drift from the late wake-up")
        #expect(t.remaining == .seconds(293))
    }

    @Test func severalPhasesAreCaughtUpInOneAdvanceWithoutDrift() throws {
        var t = TestRoom(settings: RoomSettings(autoStart: true))
        let ada = try t.add("Ada")
        try t.send(.start, by: ada)
        let start = t.now
        let seq = t.room.seq

        // Focus, short break and focus end; we land 10 s into the second short break.
        let outcome = t.advance(by: .seconds(1500 + 300 + 1500 + 10))
        #expect(outcome.completions == [
            Completion(.focus, .shortBreak, autoStarted: true, cycle: 1),
            Completion(.shortBreak, .focus, autoStarted: true, cycle: 2),
            Completion(.focus, .shortBreak, autoStarted: true, cycle: 2),
        ])
        #expect(t.room.phase == .shortBreak)
        #expect(t.room.cycle == 2)
        #expect(t.deadline == start + .seconds(1500 + 300 + 1500 + 300))
        #expect(t.remaining == .seconds(290))
        #expect(t.room.seq >= seq + 3, "each completed phase is a state change")
        #expect(t.room.stats.focusSessions == 2)
        #expect(t.room.stats.focusTime == .seconds(3000))
    }

    @Test func autoStartWaitsWhenNobodyIsConnected() throws {
        var t = TestRoom(settings: RoomSettings(autoStart: true))
        let ada = try t.add("Ada")
        try t.send(.start, by: ada)
        let deadline = try #require(t.deadline)
        t.advance(by: .seconds(60))
        t.disconnect(ada)

        // The running phase still ends on time...
        #expect(t.room.nextWakeup().map { $0 <= deadline } == true)
        let outcome = t.advance(to: deadline + .seconds(1))
        #expect(outcome.completions == [Completion(.focus, .shortBreak, autoStarted: false, cycle: 1)])
        // ...but nothing new starts with nobody there.
        #expect(t.room.timer == .ready(remaining: .seconds(300)))
    }

    @Test func autoStartNeedsOnlyOneConnectedMember() throws {
        var t = TestRoom(settings: RoomSettings(autoStart: true))
        let ada = try t.add("Ada")
        try t.add("Bob")
        try t.send(.start, by: ada)
        t.disconnect(ada)
        let deadline = try #require(t.deadline)
        let outcome = t.advance(to: deadline)
        #expect(outcome.completions == [Completion(.focus, .shortBreak, autoStarted: true, cycle: 1)])
        #expect(t.room.status == .running)
    }

    // MARK: Pause and resume

    @Test(arguments: [Duration.nanoseconds(1), .nanoseconds(123_456_789_012), .seconds(1499) + .nanoseconds(999_999_999)])
    func pauseAndResumeKeepTheRemainingTimeToTheMillisecond(runFor: Duration) throws {
        var t = TestRoom()
        let ada = try t.add("Ada")
        try t.send(.start, by: ada)
        t.advance(by: runFor)

        let paused = try t.send(.pause, by: ada)
        #expect(paused.events == [.control(.pause, by: ada, seconds: nil)])
        // What was left, in whole milliseconds as it is stored and sent, never more.
        let left = Duration.milliseconds((Duration.seconds(1500) - runFor).milliseconds)
        #expect(left <= .seconds(1500) - runFor && .seconds(1500) - runFor - left < .milliseconds(1))
        #expect(t.room.timer == .paused(remaining: left))
        #expect(t.snapshot.status == .paused)
        #expect(t.snapshot.deadline == nil)

        // Time passes while paused; nothing moves.
        t.advance(by: .seconds(3600) + .nanoseconds(7))
        #expect(t.remaining == left)
        #expect(t.room.timer == .paused(remaining: left))

        // Resumed at an instant off the wall clock's milliseconds: the new deadline is the first whole
        // millisecond at or after resumedAt + left, and the time left counts down from it.
        try t.send(.resume, by: ada)
        let resumedAt = t.now
        let deadline = try #require(t.deadline)
        #expect(deadline >= resumedAt + left && deadline < resumedAt + left + .milliseconds(1))
        #expect((deadline.nanoseconds + t.room.wallOffsetNanoseconds) % 1_000_000 == 0)
        for step in [Duration.nanoseconds(1), .nanoseconds(333_333_333), .seconds(17)] where step < left {
            var probe = t
            probe.advance(by: step)
            #expect(probe.remaining == deadline - probe.now)
        }
    }

    /// Clients are told deadlines in whole milliseconds (`endsAt`) and count seconds from them: a phase that
    /// starts between two milliseconds of the wall clock ends on the next one, so each second's tick is due
    /// at the very moment the clients were told, not up to a millisecond after it.
    @Test(arguments: [Int64(0), 17, 999_999, -250_001])
    func aPhaseEndsOnAWholeMillisecondOfTheWallClock(offsetNs: Int64) throws {
        var t = TestRoom(settings: RoomSettings(autoStart: true))
        t.room.wallOffsetNanoseconds = 1_700_000_000_000_000_000 + offsetNs
        let ada = try t.add("Ada")
        let startedAt = t.now
        try t.send(.start, by: ada)
        let deadline = try #require(t.deadline)
        #expect((deadline.nanoseconds + t.room.wallOffsetNanoseconds) % 1_000_000 == 0)
        #expect(deadline >= startedAt + .seconds(1500) && deadline < startedAt + .seconds(1500) + .milliseconds(1))
        // The next second's tick is due exactly at endsAt - 1499 s, the boundary a client computes.
        #expect(t.room.nextWakeup(after: t.now) == deadline - .seconds(1499))
        let endsAtMs = deadline.wallMilliseconds(offsetNanoseconds: t.room.wallOffsetNanoseconds)
        #expect(Int64(endsAtMs) * 1_000_000 - t.room.wallOffsetNanoseconds == deadline.nanoseconds)
        // The phase after it follows on from it, whole too.
        _ = t.advance(to: deadline)
        let next = try #require(t.deadline)
        #expect((next.nanoseconds + t.room.wallOffsetNanoseconds) % 1_000_000 == 0)
    }

    @Test func pauseAndResumeAreRefusedInTheWrongState() throws {
        var t = TestRoom()
        let ada = try t.add("Ada")
        #expect(caught { try t.send(.pause, by: ada) }?.isInvalidState == true)
        #expect(caught { try t.send(.resume, by: ada) }?.isInvalidState == true)
        try t.send(.start, by: ada)
        #expect(caught { try t.send(.resume, by: ada) }?.isInvalidState == true)
        try t.send(.pause, by: ada)
        #expect(caught { try t.send(.pause, by: ada) }?.isInvalidState == true)
        #expect(t.room.status == .paused)
    }

    @Test func startAlsoResumesAPausedPhase() throws {
        var t = TestRoom()
        let ada = try t.add("Ada")
        try t.send(.start, by: ada)
        t.advance(by: .seconds(10))
        try t.send(.pause, by: ada)
        t.advance(by: .seconds(50))
        try t.send(.start, by: ada)
        #expect(t.deadline == t.now + .seconds(1490))
    }

    @Test func aPausedPhaseDoesNotCompleteOnItsOldDeadline() throws {
        var t = TestRoom()
        let ada = try t.add("Ada")
        try t.send(.start, by: ada)
        let oldDeadline = try #require(t.deadline)
        t.advance(by: .seconds(100))
        try t.send(.pause, by: ada)
        #expect(t.advance(to: oldDeadline + .seconds(1)).completions.isEmpty)
        try t.send(.resume, by: ada)
        let newDeadline = try #require(t.deadline)
        #expect(newDeadline == t.now + .seconds(1400))
        #expect(t.advance(to: newDeadline).completions == [Completion(.focus, .shortBreak, cycle: 1)])
    }

    // MARK: Skip

    @Test func skipEndsARunningFocusAndSetsUpTheBreak() throws {
        var t = TestRoom()
        let ada = try t.add("Ada")
        try t.send(.start, by: ada)
        t.advance(by: .seconds(200))
        let outcome = try t.send(.skip, by: ada)
        #expect(outcome.events.contains(.control(.skip, by: ada, seconds: nil)))
        #expect(outcome.completions.isEmpty, "a skipped phase did not run to its end")
        #expect(t.room.phase == .shortBreak)
        #expect(t.room.cycle == 1)
        #expect(t.room.timer == .ready(remaining: .seconds(300)))
        #expect(t.room.stats.focusSessions == 0)
        #expect(t.room.stats.interruptions == 1)
    }

    @Test func skipWithAutoStartRunsTheNextPhaseFromNow() throws {
        var t = TestRoom(settings: RoomSettings(autoStart: true))
        let ada = try t.add("Ada")
        try t.send(.start, by: ada)
        t.advance(by: .seconds(200))
        try t.send(.skip, by: ada)
        #expect(t.room.phase == .shortBreak)
        #expect(t.deadline == t.now + .seconds(300))
    }

    @Test func skippingABreakMovesToTheNextFocusCycle() throws {
        var t = TestRoom()
        let ada = try t.add("Ada")
        try t.send(.start, by: ada)
        try t.send(.skip, by: ada)          // focus 1 → short break (ready)
        #expect(t.room.cycle == 1)
        try t.send(.skip, by: ada)          // short break → focus 2, without starting it
        #expect(t.room.phase == .focus)
        #expect(t.room.cycle == 2)
        #expect(t.room.timer == .ready(remaining: .seconds(1500)))
        #expect(t.room.stats.interruptions == 1, "only the running focus counted")
    }

    @Test func skippingThroughAWholeSetFollowsThePhaseOrder() throws {
        var t = TestRoom()
        let ada = try t.add("Ada")
        try t.send(.start, by: ada)
        var seen = ["\(t.room.phase)\(t.room.cycle)"]
        for _ in 0..<9 {
            try t.send(.skip, by: ada)
            seen.append("\(t.room.phase)\(t.room.cycle)")
        }
        #expect(seen == ["focus1", "shortBreak1", "focus2", "shortBreak2", "focus3", "shortBreak3",
                         "focus4", "longBreak4", "focus1", "shortBreak1"])
    }

    @Test func skipWhenIdleIsRefused() throws {
        var t = TestRoom()
        let ada = try t.add("Ada")
        #expect(caught { try t.send(.skip, by: ada) }?.isInvalidState == true)
        #expect(t.room.phase == .idle)
    }

    // MARK: Reset

    @Test func resetReturnsToIdleAtCycleOne() throws {
        var t = TestRoom()
        let ada = try t.add("Ada")
        try t.send(.start, by: ada)
        try t.send(.skip, by: ada)
        try t.send(.skip, by: ada)
        try t.send(.start, by: ada)          // focus 2 running
        #expect(t.room.cycle == 2)
        t.advance(by: .seconds(30))
        let outcome = try t.send(.reset, by: ada)
        #expect(outcome.events == [.control(.reset, by: ada, seconds: nil)])
        #expect(t.room.phase == .idle)
        #expect(t.room.status == .idle)
        #expect(t.room.cycle == 1)
        #expect(t.remaining == .zero)
        #expect(t.snapshot.phaseLength == .zero)
        #expect(t.room.stats.interruptions == 2, "the skipped focus 1 and the reset focus 2")
    }

    @Test func resetOfABreakCountsNoInterruption() throws {
        var t = TestRoom()
        let ada = try t.add("Ada")
        try t.send(.start, by: ada)
        let deadline = try #require(t.deadline)
        t.advance(to: deadline)
        try t.send(.start, by: ada)          // short break running
        try t.send(.reset, by: ada)
        #expect(t.room.phase == .idle)
        #expect(t.room.stats.interruptions == 0)
    }

    @Test func resetWhenAlreadyIdleIsRefused() throws {
        var t = TestRoom()
        let ada = try t.add("Ada")
        #expect(caught { try t.send(.reset, by: ada) }?.isInvalidState == true)
        try t.send(.start, by: ada)
        try t.send(.reset, by: ada)
        #expect(caught { try t.send(.reset, by: ada) }?.isInvalidState == true)
    }

    @Test func startAfterResetBeginsFocusOne() throws {
        var t = TestRoom()
        let ada = try t.add("Ada")
        try t.send(.start, by: ada)
        try t.send(.skip, by: ada)
        try t.send(.skip, by: ada)
        try t.send(.reset, by: ada)
        try t.send(.start, by: ada)
        #expect(t.room.phase == .focus)
        #expect(t.room.cycle == 1)
        #expect(t.deadline == t.now + .seconds(1500))
    }
}
