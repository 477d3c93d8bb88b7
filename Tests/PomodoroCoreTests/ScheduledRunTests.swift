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
        #expect(t.room.isBusy)
        #expect(throws: RoomError.invalidState("a session is under way")) {
            try t.room.startScheduled(try schedule(sessions: 2), now: t.now)
        }
        try t.send(.pause, by: ada)
        #expect(t.room.isBusy, "a paused session is still under way")
        try t.send(.reset, by: ada)
        #expect(!t.room.isBusy)
        #expect((try? t.room.startScheduled(try schedule(sessions: 2), now: t.now)) != nil)
    }
}
