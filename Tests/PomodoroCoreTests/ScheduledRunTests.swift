import Testing
import PomodoroCore

/// A room started by a schedule runs its set by itself and stops after the last focus.
@Suite struct ScheduledRunTests {
    private func schedule(sessions: Int?, settings: RoomSettings? = nil) throws -> Schedule {
        Schedule(id: ScheduleID(1), name: "Writing block", time: try LocalTime(parsing: "14:00"),
                 zone: try ZoneName("Europe/Berlin"), recurrence: .weekly([.thursday]), settings: settings,
                 length: sessions.map { .focusSessions($0) } ?? .untilStopped, since: WallTime(seconds: 0))
    }

    @Test func twoFocusSessionsRunWithTheirBreakThenTheRoomStops() throws {
        var t = TestRoom()  // auto-start off, nobody connected: the scheduled set runs all the same
        let start = t.now
        let outcome = try t.room.startScheduled(try schedule(sessions: 2), now: t.now)
        #expect(outcome.stateChanged && t.room.phase == .focus && t.room.status == .running)
        #expect(t.deadline == start + .seconds(1500), "the first focus ends on the minute it was due")
        #expect(t.room.scheduledRun?.focusSessionsLeft == 2)

        let first = t.advance(to: start + .seconds(1500))
        #expect(first.completions == [Completion(.focus, .shortBreak, autoStarted: true, cycle: 1)])
        #expect(first.scheduleEnded == nil)
        t.advance(to: start + .seconds(1800))
        #expect(t.room.phase == .focus && t.room.status == .running && t.room.cycle == 2)
        let last = t.advance(to: start + .seconds(3300))
        #expect(last.completions == [Completion(.focus, .idle, autoStarted: false, cycle: 1)])
        #expect(last.scheduleEnded?.focusSessionsDone == 2 && last.scheduleEnded?.schedule == ScheduleID(1))
        #expect(t.room.phase == .idle && t.room.status == .idle && t.room.scheduledRun == nil)
        #expect(t.room.stats.focusSessions == 2)
        #expect(t.room.nextWakeup().map { $0 > t.now } ?? true)
    }

    @Test func theSnapshotCarriesTheRunAndItsProgress() throws {
        var t = TestRoom()
        #expect(t.room.snapshot(at: t.now).scheduledRun == nil, "a room on its own has none")
        let start = t.now
        try t.room.startScheduled(try schedule(sessions: 3), now: t.now)
        var run = t.room.snapshot(at: t.now).scheduledRun
        #expect(run?.name == "Writing block" && run?.focusSessions == 3 && run?.focusSessionsDone == 0)
        t.advance(to: start + .seconds(1500))
        run = t.room.snapshot(at: t.now).scheduledRun
        #expect(run?.focusSessions == 3 && run?.focusSessionsDone == 1, "one done, the total unchanged")
        t.advance(to: start + .seconds(3700))  // the second focus and its break done, into the third
        run = t.room.snapshot(at: t.now).scheduledRun
        #expect(run?.focusSessionsDone == 2 && t.room.phase == .focus)
        t.advance(to: start + .seconds(3 * 1500 + 2 * 300))
        #expect(t.room.status == .idle && t.room.snapshot(at: t.now).scheduledRun == nil, "gone once the set is done")
    }

    @Test func theScheduleSettingsHoldForTheRunAndTheRoomsComeBack() throws {
        var t = TestRoom()
        let own = RoomSettings(focus: 3000, shortBreak: 600)
        try t.room.startScheduled(try schedule(sessions: 1, settings: own), now: t.now)
        #expect(t.room.settings == own && t.deadline == t.now + .seconds(3000))
        t.advance(by: .seconds(3000))
        #expect(t.room.settings == .standard && t.room.phase == .idle)
    }

    @Test func untilStoppedRunsOnAndAResetEndsIt() throws {
        var t = TestRoom()
        let ada = try t.add("Ada")
        try t.room.startScheduled(try schedule(sessions: nil, settings: RoomSettings(focus: 3000, shortBreak: 600)),
                                  now: t.now)
        for _ in 0..<6 { t.advance(by: .seconds(3600)) }
        #expect(t.room.status == .running && t.room.scheduledRun?.focusSessionsDone == 6)
        try t.send(.reset, by: ada)
        #expect(t.room.scheduledRun == nil && t.room.settings == .standard)
    }

    @Test func aBusyRoomIsNotCutInto() throws {
        var t = TestRoom()
        let ada = try t.add("Ada")
        try t.send(.start, by: ada)
        #expect(t.room.inSession)
        #expect(throws: RoomError.invalidState("a session is under way")) {
            try t.room.startScheduled(try schedule(sessions: 2), now: t.now)
        }
        try t.send(.pause, by: ada)
        #expect(t.room.inSession, "a paused session is still under way")
        try t.send(.reset, by: ada)
        #expect(!t.room.inSession)
        #expect((try? t.room.startScheduled(try schedule(sessions: 2), now: t.now)) != nil)
    }

    /// The `counted` of each `phaseCompleted` event, in order.
    private func counted(_ outcome: Outcome) -> [Bool] {
        outcome.events.compactMap { if case .phaseCompleted(_, _, _, _, let counted, _) = $0 { counted } else { nil } }
    }

    @Test func aFocusThatDoesNotCountIsNotOneOfTheSetsSessions() throws {
        var t = TestRoom()
        let ada = try t.add("Ada")
        try t.room.startScheduled(try schedule(sessions: 2), now: t.now)
        t.advance(by: .seconds(10))
        let shortened = try t.send(.extend(seconds: -3600), by: ada)  // it ran 10 s: less than the shortest focus
        #expect(counted(shortened) == [false])
        #expect(shortened.completions == [Completion(.focus, .shortBreak, autoStarted: true, cycle: 1)])
        #expect(t.room.scheduledRun?.focusSessionsDone == 0 && t.room.scheduledRun?.focusSessionsLeft == 2)
        #expect(t.room.snapshot(at: t.now).scheduledRun?.focusSessionsDone == 0, "clients show no session done")

        t.advance(by: .seconds(300))                    // the break, then a whole focus
        let first = t.advance(by: .seconds(1500))
        #expect(counted(first) == [true] && first.scheduleEnded == nil)
        #expect(t.room.scheduledRun?.focusSessionsDone == 1, "the first that counted")
        t.advance(by: .seconds(300))
        let last = t.advance(by: .seconds(1500))
        #expect(last.scheduleEnded?.focusSessionsDone == 2)
        #expect(t.room.stats.focusSessions == 2 && t.room.status == .idle)
    }

    @Test func aSetOfOneIsNotEndedByAFocusThatDoesNotCount() throws {
        var t = TestRoom()
        let ada = try t.add("Ada")
        try t.room.startScheduled(try schedule(sessions: 1), now: t.now)
        t.advance(by: .seconds(59))
        let shortened = try t.send(.extend(seconds: -3600), by: ada)  // a second short of the shortest focus
        #expect(shortened.scheduleEnded == nil && t.room.scheduledRun != nil)
        #expect(t.room.phase == .shortBreak && t.room.status == .running, "the set goes on with its break")

        // The same, run a minute: it counts, and the set of one is done.
        var u = TestRoom()
        let bo = try u.add("Bo")
        try u.room.startScheduled(try schedule(sessions: 1), now: u.now)
        u.advance(by: .seconds(60))
        let done = try u.send(.extend(seconds: -3600), by: bo)
        #expect(done.scheduleEnded?.focusSessionsDone == 1 && u.room.status == .idle)
    }

    @Test func aRestartCountsOnlyTheFocusesThatCount() throws {
        var t = TestRoom()
        let ada = try t.add("Ada")
        try t.room.startScheduled(try schedule(sessions: 2), now: t.now)
        t.advance(by: .seconds(10))
        try t.send(.extend(seconds: -3600), by: ada)    // not one of the set's
        t.advance(by: .seconds(100))                     // into the break
        // Down for 1,900 s: the break and one whole focus ended meanwhile; the set has one more to go.
        let (back, outcome, _) = restarted(t.room, writtenAt: t.now, downFor: .seconds(1900))
        #expect(outcome.completions.map(\.completed) == [.shortBreak, .focus])
        #expect(outcome.scheduleEnded == nil && back.scheduledRun?.focusSessionsDone == 1)
        #expect(back.phase == .shortBreak && back.status == .running)
    }

    /// The room as a store kept it, brought back `downFor` after it was written on a new boot's clock.
    private func restarted(_ room: Room, writtenAt: Instant, downFor: Duration) -> (Room, Outcome, Instant) {
        let record = room.record(wallOffsetNanoseconds: 1_000_000_000_000)
        let members = room.memberRecords(wallOffsetNanoseconds: 1_000_000_000_000)
        // The new boot's monotonic clock starts near zero: the same wall time is a different instant.
        let now = Instant(nanoseconds: 5_000_000_000)
        let offset = 1_000_000_000_000 + writtenAt.nanoseconds + downFor.nanoseconds - now.nanoseconds
        var back = Room(restoring: record, members: members, now: now, wallOffsetNanoseconds: offset)
        let outcome = back.resumeAfterRestart(at: now)
        return (back, outcome, now)
    }

    @Test func aRestartMidSetCarriesOnTheRunAndStopsAfterItsLastFocus() throws {
        var t = TestRoom()
        let own = RoomSettings(focus: 3000, shortBreak: 600)
        try t.room.startScheduled(try schedule(sessions: 3, settings: own), now: t.now)
        t.advance(by: .seconds(3600 + 100))  // the first focus and break done, 100 s into the second focus
        #expect(t.room.scheduledRun?.focusSessionsDone == 1)

        // Down for 10 s: the second focus goes on, as part of the run.
        let restart = restarted(t.room, writtenAt: t.now, downFor: .seconds(10))
        var back = restart.0
        let now = restart.2
        #expect(back.scheduledRun == t.room.scheduledRun, "the run, its count and the room's own settings kept")
        #expect(back.settings == own && back.phase == .focus && back.cycle == 2)
        #expect(back.remaining(at: now).secondsRoundedUp == 3000 - 110, "stored to the millisecond")
        _ = back.advance(to: now + .seconds(2890))
        #expect(back.phase == .shortBreak && back.status == .running, "the break starts by itself, nobody there")
        _ = back.advance(to: now + .seconds(2890 + 600))
        #expect(back.phase == .focus && back.cycle == 3)
        let last = back.advance(to: now + .seconds(2890 + 600 + 3000))
        #expect(last.scheduleEnded?.focusSessionsDone == 3, "stops after the third, counting those before")
        #expect(back.status == .idle && back.scheduledRun == nil && back.settings == .standard)
    }

    @Test func phasesThatEndedWhileDownCompleteOnTheirDeadlinesAndTheRunEnds() throws {
        var t = TestRoom()
        try t.room.startScheduled(try schedule(sessions: 2, settings: RoomSettings(focus: 3000, shortBreak: 600)),
                                  now: t.now)
        t.advance(by: .seconds(100))
        // Down for two hours: the first focus, the break and the second focus all ended meanwhile.
        let (back, outcome, _) = restarted(t.room, writtenAt: t.now, downFor: .seconds(7200))
        #expect(outcome.completions.map(\.completed) == [.focus, .shortBreak, .focus])
        #expect(outcome.scheduleEnded?.focusSessionsDone == 2)
        #expect(back.status == .idle && back.scheduledRun == nil && back.settings == .standard)
        #expect(back.stats.focusSessions == 2)
    }

    @Test func aRunUntilStoppedWaitsReadyAfterALongOutage() throws {
        var t = TestRoom()
        try t.room.startScheduled(try schedule(sessions: nil), now: t.now)
        t.advance(by: .seconds(100))
        let (back, _, _) = restarted(t.room, writtenAt: t.now, downFor: .seconds(86_400))
        #expect(back.status == .ready && back.phase == .shortBreak)
        #expect(back.scheduledRun?.focusSessionsDone == 1, "still the run, counted")
    }
}
