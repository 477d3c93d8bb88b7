import Testing
import PomodoroCore

/// Focus time, completed sessions and interruptions, for the room and for each present member.
@Suite struct StatsTests {
    /// Long enough for a disconnected member to stay visible until the focus ends.
    let longGrace = RoomPolicy(reconnectGrace: .seconds(3600))

    @Test func aCompletedFocusCreditsTheRoomAndPresentMembers() throws {
        var t = TestRoom()
        let ada = try t.add("Ada")
        try t.send(.start, by: ada)
        t.advance(by: .seconds(1000))
        #expect(t.room.stats.focusTime == .seconds(1000))
        #expect(t.member(ada)?.stats.focusTime == .seconds(1000))
        #expect(t.room.stats.focusSessions == 0)

        t.advance(by: .seconds(2000))                   // well past the end, then a ready break
        #expect(t.room.stats == RoomStats(focusSessions: 1, focusTime: .seconds(1500), interruptions: 0))
        #expect(t.member(ada)?.stats == MemberStats(focusSessions: 1, focusTime: .seconds(1500), interruptions: 0))
    }

    @Test func focusTimeIsCreditedByElapsedTimeToTheNanosecond() throws {
        var t = TestRoom()
        let ada = try t.add("Ada")
        try t.send(.start, by: ada)
        t.advance(by: .nanoseconds(1_234_567_891))
        t.advance(by: .nanoseconds(1))
        #expect(t.room.stats.focusTime == .nanoseconds(1_234_567_892))
        try t.send(.pause, by: ada)
        t.advance(by: .seconds(100))
        #expect(t.room.stats.focusTime == .nanoseconds(1_234_567_892), "no credit while paused")
        try t.send(.resume, by: ada)
        t.advance(by: .seconds(2))
        #expect(t.room.stats.focusTime == .nanoseconds(3_234_567_892))
        #expect(t.member(ada)?.stats.focusTime == .nanoseconds(3_234_567_892))
    }

    @Test func breaksEarnNoFocusTime() throws {
        var t = TestRoom(settings: RoomSettings(autoStart: true))
        let ada = try t.add("Ada")
        try t.send(.start, by: ada)
        try t.send(.skip, by: ada)                      // break runs (auto-start)
        let focus = t.room.stats.focusTime
        t.advance(by: .seconds(299))
        #expect(t.room.phase == .shortBreak)
        #expect(t.room.stats.focusTime == focus)
        #expect(t.member(ada)?.stats.focusTime == focus)
    }

    @Test func aMemberWhoJoinsMidFocusEarnsOnlyTheTimeSinceJoining() throws {
        var t = TestRoom()
        let ada = try t.add("Ada")
        try t.send(.start, by: ada)
        let deadline = try #require(t.deadline)
        t.advance(by: .seconds(600))
        let bob = try t.add("Bob")
        t.advance(to: deadline)
        #expect(t.member(ada)?.stats == MemberStats(focusSessions: 1, focusTime: .seconds(1500)))
        #expect(t.member(bob)?.stats == MemberStats(focusSessions: 1, focusTime: .seconds(900)))
        #expect(t.room.stats.focusTime == .seconds(1500))
    }

    @Test func anAwayMemberEarnsNothingWhileAwayAndGetsOneInterruption() throws {
        var t = TestRoom()
        let ada = try t.add("Ada")
        let bob = try t.add("Bob")
        try t.send(.start, by: ada)
        let deadline = try #require(t.deadline)
        t.advance(by: .seconds(100))
        try t.send(.setAway(true), by: bob)
        t.advance(by: .seconds(400))
        try t.send(.setAway(false), by: bob)
        t.advance(by: .seconds(200))
        try t.send(.setAway(true), by: bob)
        t.advance(to: deadline)                         // completes while Bob is away

        #expect(t.member(bob)?.stats == MemberStats(focusSessions: 0, focusTime: .seconds(300), interruptions: 2))
        #expect(t.member(ada)?.stats == MemberStats(focusSessions: 1, focusTime: .seconds(1500), interruptions: 0))
        #expect(t.room.stats == RoomStats(focusSessions: 1, focusTime: .seconds(1500), interruptions: 0))
    }

    @Test func goingAwayOutsideARunningFocusIsNoInterruption() throws {
        var t = TestRoom()
        let ada = try t.add("Ada")
        try t.send(.setAway(true), by: ada)              // idle
        try t.send(.setAway(false), by: ada)
        try t.send(.start, by: ada)
        try t.send(.pause, by: ada)                      // one interruption, from the pause
        try t.send(.setAway(true), by: ada)              // paused: not running
        #expect(t.member(ada)?.stats.interruptions == 1)
    }

    @Test func disconnectingDuringAFocusCountsAnInterruptionAndStopsTheCredit() throws {
        var t = TestRoom(policy: longGrace)
        let ada = try t.add("Ada")
        let bob = try t.add("Bob")
        try t.send(.start, by: ada)
        let deadline = try #require(t.deadline)
        t.advance(by: .seconds(300))
        t.disconnect(bob)
        t.advance(to: deadline)
        #expect(t.member(bob)?.stats == MemberStats(focusSessions: 0, focusTime: .seconds(300), interruptions: 1))
        #expect(t.room.stats == RoomStats(focusSessions: 1, focusTime: .seconds(1500), interruptions: 0))
    }

    @Test func aReturningMemberEarnsAgainFromTheirReturn() throws {
        var t = TestRoom()
        let ada = try t.add("Ada")
        let bob = try t.join("Bob")
        try t.send(.start, by: ada)
        let deadline = try #require(t.deadline)
        t.advance(by: .seconds(300))
        t.disconnect(bob.memberID)
        t.advance(by: .seconds(100))
        try t.join("Bob", token: bob.token)
        t.advance(to: deadline)
        #expect(t.member(bob.memberID)?.stats == MemberStats(focusSessions: 1, focusTime: .seconds(1400), interruptions: 1))
    }

    @Test func leavingDuringAFocusDoesNotInterruptTheRoom() throws {
        var t = TestRoom()
        let ada = try t.add("Ada")
        let bob = try t.add("Bob")
        try t.send(.start, by: ada)
        t.advance(by: .seconds(300))
        t.leave(bob)
        t.advance(by: .seconds(1200))
        #expect(t.room.stats == RoomStats(focusSessions: 1, focusTime: .seconds(1500), interruptions: 0))
        #expect(t.member(ada)?.stats.interruptions == 0)
    }

    @Test func pausingARunningFocusInterruptsTheRoomAndPresentMembersOnly() throws {
        var t = TestRoom()
        let ada = try t.add("Ada")
        let bob = try t.add("Bob")
        let cyd = try t.add("Cyd")
        try t.send(.setAway(true), by: bob)              // before the focus: no interruption
        try t.send(.start, by: ada)
        t.advance(by: .seconds(60))
        t.disconnect(cyd)                               // Cyd's own interruption
        try t.send(.pause, by: ada)
        #expect(t.room.stats.interruptions == 1)
        #expect(t.member(ada)?.stats.interruptions == 1)
        #expect(t.member(bob)?.stats.interruptions == 0)
        #expect(t.member(cyd)?.stats.interruptions == 1)
    }

    @Test func skippingOrResettingARunningFocusIsAnInterruptionNotACompletion() throws {
        var t = TestRoom()
        let ada = try t.add("Ada")
        try t.send(.start, by: ada)
        t.advance(by: .seconds(60))
        try t.send(.skip, by: ada)
        try t.send(.skip, by: ada)                      // skipping a ready break: nothing counted
        try t.send(.start, by: ada)
        t.advance(by: .seconds(30))
        try t.send(.reset, by: ada)
        #expect(t.room.stats == RoomStats(focusSessions: 0, focusTime: .seconds(90), interruptions: 2))
        #expect(t.member(ada)?.stats == MemberStats(focusSessions: 0, focusTime: .seconds(90), interruptions: 2))
    }

    @Test func stoppingAPausedFocusOrARunningBreakCountsNothingMore() throws {
        var t = TestRoom()
        let ada = try t.add("Ada")
        try t.send(.start, by: ada)
        try t.send(.pause, by: ada)                      // 1
        try t.send(.skip, by: ada)                      // paused focus: not running
        try t.send(.start, by: ada)                      // break runs
        try t.send(.pause, by: ada)
        try t.send(.resume, by: ada)
        try t.send(.skip, by: ada)
        try t.send(.reset, by: ada)
        #expect(t.room.stats.interruptions == 1)
        #expect(t.member(ada)?.stats.interruptions == 1)
    }

    @Test func focusSessionsCountOnlyMembersPresentAtTheEnd() throws {
        var t = TestRoom()
        let ada = try t.add("Ada")
        let bob = try t.add("Bob")
        try t.send(.start, by: ada)
        let deadline = try #require(t.deadline)
        t.advance(to: deadline - .seconds(1))
        try t.send(.setAway(true), by: ada)
        t.advance(to: deadline)
        #expect(t.member(ada)?.stats.focusSessions == 0)
        #expect(t.member(bob)?.stats.focusSessions == 1)
        #expect(t.room.stats.focusSessions == 1)
    }

    @Test func aCatchUpCreditsEachFocusByItsOwnLength() throws {
        var t = TestRoom(settings: RoomSettings(focus: 600, shortBreak: 60, longBreak: 120, autoStart: true))
        let ada = try t.add("Ada")
        try t.send(.start, by: ada)
        // Four focus sessions, three short breaks, the long break, then 100 s into the next focus.
        t.advance(by: .seconds(4 * 600 + 3 * 60 + 120 + 100))
        #expect(t.room.stats.focusSessions == 4)
        #expect(t.room.stats.focusTime == .seconds(4 * 600 + 100))
        #expect(t.member(ada)?.stats == MemberStats(focusSessions: 4, focusTime: .seconds(2500)))
    }

    @Test func aFocusRunningWithNobodyPresentStillCountsForTheRoom() throws {
        var t = TestRoom(policy: longGrace)
        let ada = try t.add("Ada")
        try t.send(.start, by: ada)
        t.disconnect(ada)
        t.advance(by: .seconds(1500))
        #expect(t.room.stats == RoomStats(focusSessions: 1, focusTime: .seconds(1500), interruptions: 0))
        #expect(t.member(ada)?.stats == MemberStats(focusSessions: 0, focusTime: .zero, interruptions: 1))
    }
}
