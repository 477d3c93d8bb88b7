import Testing
import PomodoroCore

/// Ticks mark each whole-second boundary of a running phase's remaining time; `nextWakeup()` says when.
@Suite struct TickTests {
    /// Drives a whole 25-minute focus by calling `advance` at each wake-up, `late` after it.
    /// Returns the ticks seen and the number of the call (1-based) that completed the phase.
    private func runFocus(_ t: inout TestRoom, late: (Int) -> Duration) throws -> (ticks: [Tick], completedAt: Int?, calls: Int) {
        let deadline = try #require(t.deadline)
        var ticks: [Tick] = []
        var completedAt: Int?
        var calls = 0
        while completedAt == nil && calls < 2000 {
            calls += 1
            let wakeup = try #require(t.room.nextWakeup())
            try #require(wakeup > t.now, "wake-up \(calls) would not move time forward")
            // Each wake-up is the next whole-second boundary of the remaining time, or the deadline.
            let secondsLeft = (deadline - wakeup).nanoseconds
            #expect(secondsLeft % 1_000_000_000 == 0, "wake-up \(calls) is not on a whole second")
            #expect(secondsLeft == Int64(1500 - calls) * 1_000_000_000, "wake-up \(calls) skips or repeats a second")
            let outcome = t.advance(to: wakeup + late(calls))
            if let tick = outcome.tick {
                ticks.append(tick)
                #expect(tick.seq == t.room.seq)
            }
            if !outcome.completions.isEmpty {
                completedAt = calls
                #expect(wakeup == deadline, "the phase completes at the call for its deadline")
            }
        }
        return (ticks, completedAt, calls)
    }

    @Test func aWholeFocusTicksOncePerSecondAndEndsOnItsDeadline() throws {
        var t = TestRoom()
        let ada = try t.add("Ada")
        try t.send(.start, by: ada)
        let deadline = try #require(t.deadline)

        let run = try runFocus(&t, late: { _ in .zero })
        #expect(run.calls == 1500)
        #expect(run.completedAt == 1500)
        #expect(run.ticks.count == 1499)
        #expect(run.ticks.map(\.remaining) == (1...1499).reversed().map { Duration.seconds($0) })
        #expect(run.ticks.allSatisfy { $0.phase == .focus && $0.cycle == 1 && $0.deadline == deadline })
        #expect(t.room.phase == .shortBreak)
        #expect(t.room.status == .ready)
        #expect(t.room.nextWakeup() == nil, "nothing runs and someone is connected")
    }

    @Test func aWholeFocusWithLateWakeupsStillTicksOncePerSecondWithoutDrift() throws {
        var t = TestRoom(settings: RoomSettings(autoStart: true))
        let ada = try t.add("Ada")
        try t.send(.start, by: ada)
        let deadline = try #require(t.deadline)

        // 1–9 ms of deterministic jitter on every wake-up.
        let run = try runFocus(&t, late: { call in .milliseconds((call * 7) % 9 + 1) })
        #expect(run.completedAt == 1500)
        #expect(run.ticks.count == 1499)
        #expect(run.ticks.map(\.remaining) == (1...1499).reversed().map { Duration.seconds($0) })
        #expect(t.room.phase == .shortBreak)
        #expect(t.deadline == deadline + .seconds(300), "the break starts at the focus deadline, not the late wake-up")
        #expect(t.snapshot.deadline == deadline + .seconds(300))
        #expect(t.room.stats.focusTime == .seconds(1500))
    }

    @Test func anAutoStartedBreakTicksFromItsFullLength() throws {
        var t = TestRoom(settings: RoomSettings(autoStart: true))
        let ada = try t.add("Ada")
        try t.send(.start, by: ada)
        let deadline = try #require(t.deadline)
        let outcome = t.advance(to: deadline + .milliseconds(4))
        #expect(outcome.tick == nil, "a break that just began has not crossed a boundary")
        let tick = try #require(try t.wake().tick)
        #expect(tick.phase == .shortBreak)
        #expect(tick.remaining == .seconds(299))
        #expect(tick.deadline == deadline + .seconds(300))
    }

    @Test func aCallJustBeforeABoundaryYieldsNoTick() throws {
        var t = TestRoom()
        let ada = try t.add("Ada")
        try t.send(.start, by: ada)
        let boundary = try #require(t.room.nextWakeup())
        #expect(boundary == t.now + .seconds(1))

        #expect(t.advance(to: boundary - .nanoseconds(1)).tick == nil)
        #expect(t.room.nextWakeup() == boundary)
        let tick = try #require(t.advance(to: boundary).tick)
        #expect(tick.remaining == .seconds(1499))
    }

    @Test func aLateCallYieldsOnlyTheLatestBoundary() throws {
        var t = TestRoom()
        let ada = try t.add("Ada")
        try t.send(.start, by: ada)
        let deadline = try #require(t.deadline)

        let outcome = t.advance(by: .milliseconds(3500))
        let tick = try #require(outcome.tick)
        #expect(tick.remaining == .seconds(1497), "the boundaries 1499 and 1498 s were passed over")
        #expect(t.room.nextWakeup() == deadline - .seconds(1496))
    }

    @Test func neverTwoTicksForTheSameSecond() throws {
        var t = TestRoom()
        let ada = try t.add("Ada")
        try t.send(.start, by: ada)
        #expect(t.advance(by: .seconds(1)).tick?.remaining == .seconds(1499))
        #expect(t.advance(by: .zero).tick == nil, "same instant again")
        #expect(t.advance(by: .milliseconds(500)).tick == nil, "between boundaries")
        #expect(t.advance(by: .milliseconds(499)).tick == nil)
        #expect(t.advance(by: .milliseconds(1)).tick?.remaining == .seconds(1498))
    }

    @Test func ticksDoNotBumpSeqButStateChangesDo() throws {
        var t = TestRoom()
        let ada = try t.add("Ada")
        try t.send(.start, by: ada)
        let seq = t.room.seq
        let first = try t.wake()
        #expect(first.tick?.seq == seq)
        #expect(!first.stateChanged)
        let second = try t.wake()
        #expect(second.tick?.seq == seq)
        #expect(t.room.seq == seq)

        try t.send(.pause, by: ada)
        #expect(t.room.seq > seq)
    }

    @Test func aTickComputedDuringACommandCarriesTheSeqOfTheResultingState() throws {
        var t = TestRoom()
        let ada = try t.add("Ada")
        try t.send(.start, by: ada)
        t.clock.advance(by: .seconds(2))
        let outcome = try t.send(.setTask("write tests"), by: ada)
        let tick = try #require(outcome.tick)
        #expect(tick.remaining == .seconds(1498))
        #expect(tick.seq == t.room.seq)
    }

    @Test func seqStrictlyIncreasesOnEveryStateChange() throws {
        var t = TestRoom(settings: RoomSettings(focus: 60, shortBreak: 30, autoStart: true))
        var seqs = [t.room.seq]
        func record(_ outcome: Outcome, _ t: TestRoom) {
            if outcome.stateChanged { seqs.append(t.room.seq) }
        }
        let ada = try t.add("Ada"); seqs.append(t.room.seq)
        let bob = try t.add("Bob"); seqs.append(t.room.seq)
        record(try t.send(.start, by: ada), t)
        record(try t.send(.setTask("read"), by: bob), t)
        record(try t.send(.extend(seconds: 10), by: bob), t)
        record(try t.send(.pause, by: ada), t)
        record(try t.send(.resume, by: ada), t)
        record(try t.send(.setAway(true), by: bob), t)
        record(t.disconnect(bob), t)
        record(t.advance(by: .seconds(200)), t)
        record(try t.send(.configure(RoomSettings(focus: 90)), by: ada), t)
        record(try t.send(.skip, by: ada), t)
        record(try t.send(.reset, by: ada), t)
        record(t.leave(ada), t)
        #expect(seqs.count >= 14)
        #expect(zip(seqs, seqs.dropFirst()).allSatisfy { $0 < $1 }, "seq went \(seqs)")
    }

    @Test func aCatchUpOverManyPhasesBumpsSeqForEach() throws {
        var t = TestRoom(settings: RoomSettings(focus: 60, shortBreak: 30, longBreak: 45, autoStart: true))
        let ada = try t.add("Ada")
        try t.send(.start, by: ada)
        let seq = t.room.seq
        let outcome = t.advance(by: .seconds(4 * 60 + 3 * 30 + 45))   // one whole set
        #expect(outcome.completions.count == 8)
        #expect(t.room.seq >= seq + 8)
        #expect(t.room.phase == .focus)
        #expect(t.room.cycle == 1)
        #expect(outcome.tick == nil, "the new focus has just begun")
    }

    @Test func ticksResumeOnTheBoundariesOfAPausedRemainder() throws {
        var t = TestRoom()
        let ada = try t.add("Ada")
        try t.send(.start, by: ada)
        t.advance(by: .milliseconds(10_250))            // 1489.75 s left, tick 1490 shown
        try t.send(.pause, by: ada)
        #expect(t.room.nextWakeup() == nil)
        t.advance(by: .seconds(42))
        try t.send(.resume, by: ada)
        #expect(t.room.nextWakeup() == t.now + .milliseconds(750))
        let tick = try #require(try t.wake().tick)
        #expect(tick.remaining == .seconds(1489))
    }

    @Test func ticksFollowAnExtendedDeadline() throws {
        var t = TestRoom()
        let ada = try t.add("Ada")
        try t.send(.start, by: ada)
        t.advance(by: .milliseconds(2500))              // 1497.5 s left
        try t.send(.extend(seconds: 60), by: ada)       // 1557.5 s left
        let deadline = try #require(t.deadline)
        #expect(t.room.nextWakeup() == deadline - .seconds(1557))
        #expect(try t.wake().tick?.remaining == .seconds(1557))
        try t.send(.extend(seconds: -120), by: ada)     // 1437 s left, exactly on a boundary
        #expect(try t.wake().tick?.remaining == .seconds(1436))
    }

    @Test func nothingToWakeForWhenNothingRunsAndSomeoneIsThere() throws {
        var t = TestRoom()
        let ada = try t.add("Ada")
        #expect(t.room.nextWakeup() == nil)             // idle
        try t.send(.start, by: ada)
        #expect(t.room.nextWakeup() != nil)             // running
        try t.send(.pause, by: ada)
        #expect(t.room.nextWakeup() == nil)             // paused
        try t.send(.skip, by: ada)
        #expect(t.room.nextWakeup() == nil)             // ready
    }
}
