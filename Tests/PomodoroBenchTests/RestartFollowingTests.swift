import PomodoroBench
import PomodoroProtocol
import Testing

/// A restarting cluster under load (make bench-rolling): members follow a close with 1012 back as
/// themselves, and the report says the longest run of seconds each one missed, and which command was
/// answered last.
@Suite struct RestartFollowingTests {
    var plan: BenchPlan {
        var plan = BenchPlan(members: 20, rooms: 4, focusSeconds: 3, breakSeconds: 2, roomPrefix: "bench-7")
        plan.followsRestarts = true
        return plan
    }

    /// A member of room 1 (not a starter) welcomed with token "t1".
    func joined(_ plan: BenchPlan) -> SimulatedMember {
        var member = SimulatedMember(index: 5, plan: plan)
        _ = member.handle(.connectRequested(atMs: 0), plan: plan)
        _ = member.handle(.opened, plan: plan)
        _ = member.handle(.welcome(atMs: 10, token: "t1"), plan: plan)
        return member
    }

    @Test func aMemberClosedWith1012ComesBackWithItsTokenAndNoProblem() {
        var member = joined(plan)
        #expect(member.handle(.closed(code: 1012, atMs: 5_000), plan: plan) == [.reconnect(.restart)])
        #expect(member.stage == .reconnecting)
        // The next node is down too: tried again, the 1012's time kept.
        #expect(member.handle(.connectRequested(atMs: 5_400), plan: plan).isEmpty)
        #expect(member.handle(.failed(reason: "refused"), plan: plan) == [.reconnect(.refused)])
        _ = member.handle(.connectRequested(atMs: 5_700), plan: plan)
        #expect(member.handle(.opened, plan: plan) == [.send(.join(room: "bench-7-1", name: "m5", token: "t1"))])
        // Back: no second configure, and the time from the 1012 to the welcome.
        #expect(member.handle(.welcome(atMs: 5_900, token: "t1"), plan: plan).isEmpty)
        #expect(member.returnLatenciesMs == [900])
        #expect(member.restarts == 1)
        #expect(member.failedReturns == 1)
        #expect(member.welcomedAtMs == 10)
        #expect(!member.hadProblem)
    }

    @Test func aMemberWhoseRoomMovedComesBackToo() {
        var member = joined(plan)
        #expect(member.handle(.closed(code: 4005, atMs: 100), plan: plan) == [.reconnect(.roomMoved)])
        _ = member.handle(.connectRequested(atMs: 600), plan: plan)
        _ = member.handle(.opened, plan: plan)
        _ = member.handle(.welcome(atMs: 700, token: "t1"), plan: plan)
        #expect(member.roomMoves == 1)
        #expect(member.restarts == 0)
        #expect(member.returnLatenciesMs == [600])
        #expect(!member.hadProblem)
    }

    @Test func aStarterComingBackDoesNotConfigureItsRoomAgain() {
        var member = SimulatedMember(index: 1, plan: plan)
        _ = member.handle(.connectRequested(atMs: 0), plan: plan)
        _ = member.handle(.opened, plan: plan)
        #expect(member.handle(.welcome(atMs: 1, token: "s"), plan: plan) == [.send(.configure(plan.settings))])
        _ = member.handle(.closed(code: 1012, atMs: 2), plan: plan)
        _ = member.handle(.connectRequested(atMs: 3), plan: plan)
        _ = member.handle(.opened, plan: plan)
        #expect(member.handle(.welcome(atMs: 4, token: "s"), plan: plan).isEmpty)
    }

    @Test func withoutFollowingOrForAnotherCodeAClosedMemberHasAProblem() {
        var other = joined(plan)
        #expect(other.handle(.closed(code: 1008, atMs: 1), plan: plan) == [.problem(.closed(code: 1008))])
        var still = BenchPlan(members: 20, rooms: 4, focusSeconds: 3, breakSeconds: 2, roomPrefix: "bench-7")
        still.followsRestarts = false
        var member = joined(still)
        #expect(member.handle(.closed(code: 1012, atMs: 1), plan: still) == [.problem(.closed(code: 1012))])
        // The run's own closes at its end are nobody's problem, nor a restart.
        var ending = joined(plan)
        _ = ending.handle(.finishing, plan: plan)
        #expect(ending.handle(.closed(code: 1012, atMs: 1), plan: plan).isEmpty)
        #expect(ending.restarts == 0)
    }

    @Test func theLongestRunOfMissedSecondsIsCountedBetweenAndAfterTheSecondsDelivered() {
        let window = TickWindow(startMs: 10_000, endMs: 20_000)   // boundaries 10_500 ... 19_500 on grid 500
        var tally = TickTally()
        let endsAt: Int64 = 30_500
        for second: Int64 in [10, 11, 12] { _ = tally.tick(remainingMs: endsAt - (second * 1000 + 500), endsAtMs: endsAt, window: window) }
        #expect(tally.longestMissedRun(window: window) == 7)       // 13_500 ... 19_500 not yet come
        // 13_500 to 15_500 missed (three in a row), 16_500 delivered, then the rest.
        _ = tally.tick(remainingMs: endsAt - 16_500, endsAtMs: endsAt, window: window)
        #expect(tally.longestMissedRun(window: window) == 3)
        for second: Int64 in [17, 18, 19] { _ = tally.tick(remainingMs: endsAt - (second * 1000 + 500), endsAtMs: endsAt, window: window) }
        #expect(tally.longestMissedRun(window: window) == 3)
        // A member whose first tick came late missed the seconds from the window's start.
        var late = TickTally()
        _ = late.tick(remainingMs: endsAt - 12_500, endsAtMs: endsAt, window: window)
        #expect(late.longestMissedRun(window: window) == 7)          // 10_500, 11_500 before; 13_500 ... 19_500 after
        #expect(TickTally().longestMissedRun(window: window) == 10)
    }

    @Test func aWelcomeOrStateOfTheRunningRoomShowsTheSecondItWasTakenIn() {
        let window = TickWindow(startMs: 10_000, endMs: 20_000)   // boundaries 10_500 ... 19_500 on grid 500
        let endsAt: Int64 = 30_500
        var tally = TickTally()
        for second: Int64 in [10, 11] { _ = tally.tick(remainingMs: endsAt - (second * 1000 + 500), endsAtMs: endsAt, window: window) }
        // Closed after 11_500; the welcome, taken at 14_900, shows 15.6 s left: the second from 14_500.
        tally.snapshot(remainingMs: endsAt - 14_900, endsAtMs: endsAt, window: window)
        #expect(tally.deliveredInWindow == 3)
        #expect(tally.snapshotsInWindow == 1)
        // The tick for that same second, late behind it, is no duplicate; the next one is a tick again.
        #expect(tally.tick(remainingMs: endsAt - 14_500, endsAtMs: endsAt, window: window) == nil)
        #expect(tally.duplicates == 0)
        #expect(tally.tick(remainingMs: endsAt - 15_500, endsAtMs: endsAt, window: window) == 15_500)
        for second: Int64 in 16...19 { _ = tally.tick(remainingMs: endsAt - (second * 1000 + 500), endsAtMs: endsAt, window: window) }
        // 12_500 and 13_500 missed: two in a row, not three (14_500 reached the member in the welcome).
        #expect(tally.longestMissedRun(window: window) == 2)
        #expect(tally.deliveredInWindow == 8)
        // A snapshot taken on a boundary shows that boundary; one of an older second changes nothing.
        var exact = TickTally()
        exact.snapshot(remainingMs: endsAt - 12_500, endsAtMs: endsAt, window: window)
        exact.snapshot(remainingMs: endsAt - 12_000, endsAtMs: endsAt, window: window)
        #expect(exact.deliveredInWindow == 1)
        #expect(exact.gridOffsetMs == 500)
        #expect(exact.longestMissedRun(window: window) == 7)          // 10_500, 11_500 before; 13_500 ... 19_500 after
    }

    /// What a member sees when it comes back to a room whose phase just ended on its new node: its `welcome`
    /// (sent at once) shows the phase that follows, and the end of the phase before, held for its commit,
    /// comes after it. That end marks no second: the phase shown goes on to its own end, and the ticks
    /// of it that follow are no duplicates (measured so, such a member missed 4 seconds of a 5-second break,
    /// or 8 to 9 of a 10-second focus, while it heard every one of them).
    @Test func aPhaseEndHeardAfterTheNextPhaseWasShownMarksNoSecond() {
        let window = TickWindow(startMs: 10_000, endMs: 29_000)   // boundaries 10_500 ... 28_500 on grid 500
        let focus = PhaseMark("focus", cycle: 1), shortBreak = PhaseMark("shortBreak", cycle: 1)
        let focusEnds: Int64 = 13_500, breakEnds: Int64 = 18_500, nextFocusEnds: Int64 = 28_500
        var tally = TickTally()
        for second: Int64 in [10, 11, 12] {
            _ = tally.tick(remainingMs: focusEnds - (second * 1000 + 500), endsAtMs: focusEnds, phase: focus, window: window)
        }
        // Closed, back 0.8 s into the break: the welcome shows it (4.2 s left, the second from 13_500).
        tally.snapshot(remainingMs: 4_200, endsAtMs: breakEnds, phase: shortBreak, window: window)
        // Then the focus's end, and the break's state, both held for the commit of the focus's end.
        tally.phaseCompleted(next: shortBreak, window: window)
        tally.snapshot(remainingMs: 4_100, endsAtMs: breakEnds, phase: shortBreak, window: window)
        for second: Int64 in 14...17 {
            #expect(tally.tick(remainingMs: breakEnds - (second * 1000 + 500), endsAtMs: breakEnds, phase: shortBreak,
                               window: window) == second * 1000 + 500)
        }
        // The break's own end, then the next focus.
        tally.phaseCompleted(next: PhaseMark("focus", cycle: 2), window: window)
        for second: Int64 in 19...28 {
            _ = tally.tick(remainingMs: nextFocusEnds - (second * 1000 + 500), endsAtMs: nextFocusEnds,
                           phase: PhaseMark("focus", cycle: 2), window: window)
        }
        #expect(tally.duplicates == 0)
        #expect(tally.longestMissedRun(window: window) == 0)
        #expect(tally.deliveredInWindow == 19)
        // A phase end heard without the phase it set up (or before the next phase was shown) is placed as
        // before: at the end of the phase the last tick belonged to.
        var plain = TickTally()
        _ = plain.tick(remainingMs: 1_000, endsAtMs: focusEnds, phase: focus, window: window)
        plain.phaseCompleted(next: shortBreak, window: window)
        #expect(plain.deliveredInWindow == 2)
        #expect(plain.tick(remainingMs: 4_000, endsAtMs: breakEnds, phase: shortBreak, window: window) == 14_500)
    }

    @Test func theRunningTimerIsReadFromASnapshotWithoutParsingIt() throws {
        let running = Array(#"{"type":"state","room":{"id":"r","phase":"focus","status":"running","running":true,"remainingMs":1234567,"phaseLengthMs":1500000,"endsAt":1767226834567,"cycle":1,"members":[{"id":"m1","name":"Ada","task":"remainingMs"}]}}"#.utf8)
        let timer = try #require(FrameKind.runningTimer(inSnapshot: running))
        #expect(timer.remainingMs == 1_234_567 && timer.endsAtMs == 1_767_226_834_567)
        #expect(timer.phase == PhaseMark("focus", cycle: 1))
        let paused = Array(#"{"type":"state","room":{"id":"r","running":false,"remainingMs":1234567,"endsAt":null}}"#.utf8)
        #expect(FrameKind.runningTimer(inSnapshot: paused) == nil)
        let idle = Array(#"{"type":"welcome","room":{"id":"r","running":true,"remainingMs":0,"endsAt":null}}"#.utf8)
        #expect(FrameKind.runningTimer(inSnapshot: idle) == nil)
    }

    @Test func theSecondsAroundA1012AreMeasuredFromTheLastTickToTheFirstAfterTheWelcome() {
        var member = joined(plan)
        member.heard(atMs: 4_000)
        member.heard(atMs: 5_000)
        _ = member.handle(.closed(code: 1012, atMs: 5_700), plan: plan)
        _ = member.handle(.connectRequested(atMs: 5_800), plan: plan)
        _ = member.handle(.opened, plan: plan)
        _ = member.handle(.welcome(atMs: 6_300, token: "t1"), plan: plan)
        member.heard(atMs: 7_000)
        member.heard(atMs: 8_000)
        #expect(member.silencesBeforeCloseMs == [700])
        #expect(member.returnLatenciesMs == [600])
        #expect(member.firstTicksAfterReturnMs == [700])
    }

    @Test func aCommandCutOffByARestartIsNeitherAnsweredNorUnansweredAndTheLastOkIsKept() {
        var timer = CommandTimer(member: 3)
        let first = timer.tickArrived(atMs: 1_000)
        #expect(first?.message == .task(text: "timed 1"))
        timer.replied(ref: first?.ref, ok: true, atMs: 1_010)
        _ = timer.tickArrived(atMs: 2_000)
        timer.connectionClosed()
        #expect(timer.cutOff == 1)
        #expect(timer.lastAnswered == 1)
        #expect(timer.lastSent == 2)
        // The next tick sends again: nothing waits for the answer that cannot come.
        #expect(timer.tickArrived(atMs: 3_000)?.message == .task(text: "timed 3"))
        timer.connectionClosed()
        timer.connectionClosed()
        #expect(timer.cutOff == 2)
    }

    @Test func theTokenIsReadFromAWelcomeWithoutParsingIt() {
        let welcome = Array(#"{"type":"welcome","you":{"id":"m1","token":"3q9Zr2bW0x7s4T1kV8yN5mA6","resumed":false},"room":{"members":[{"id":"m1","name":"Ada"}]}}"#.utf8)
        #expect(FrameKind.token(inWelcome: welcome) == "3q9Zr2bW0x7s4T1kV8yN5mA6")
        #expect(FrameKind.token(inWelcome: Array(#"{"type":"welcome"}"#.utf8)) == nil)
    }
}
