import Testing
import PomodoroCore

/// Which focus phases count as completed: those that ran at least the server's shortest focus
/// (`RoomPolicy.minFocusSeconds`, a minute here). One shortened below it still ends and rings, but earns no
/// `focusCompleted` and writes no journal session.
@Suite struct CompletedFocusTests {
    let offset: Int64 = 1_763_700_000_000_000_000 - ManualClock.origin.nanoseconds

    /// The journal sessions the room hands its store now.
    func sessions(_ t: inout TestRoom) -> [FocusSessionRecord] {
        t.room.takeStoreChanges(wallOffsetNanoseconds: offset, passcode: nil).compactMap {
            if case .focusCompleted(let s) = $0 { s } else { nil }
        }
    }

    /// The `counted` of each `phaseCompleted` event, in order.
    func counted(_ outcome: Outcome) -> [Bool] {
        outcome.events.compactMap { if case .phaseCompleted(_, _, _, _, let counted, _) = $0 { counted } else { nil } }
    }

    @Test func aFullFocusCountsAsBefore() throws {
        var t = TestRoom()
        let ada = try t.add("Ada")
        try t.send(.start, by: ada)
        let outcome = t.advance(by: .seconds(1500))
        #expect(outcome.completions == [Completion(.focus, .shortBreak, cycle: 1)])
        #expect(counted(outcome) == [true])
        #expect(t.room.stats == RoomStats(focusSessions: 1, focusTime: .seconds(1500)))
        #expect(t.member(ada)?.stats == MemberStats(focusSessions: 1, focusTime: .seconds(1500)))
        #expect(sessions(&t).map(\.lengthSeconds) == [1500])
    }

    @Test func aReadyFocusShortenedToZeroEndsWithoutCountingAndStartingRunsTheBreak() throws {
        var t = TestRoom()
        let ada = try t.add("Ada")
        try t.send(.start, by: ada)
        try t.send(.skip, by: ada)                       // short break, ready
        try t.send(.skip, by: ada)                       // focus 2, ready: it never ran
        _ = sessions(&t)
        let before = t.room.stats

        let shortened = try t.send(.extend(seconds: -1500), by: ada)
        #expect(shortened.completions == [Completion(.focus, .shortBreak, cycle: 2)], "it still ends, and rings")
        #expect(counted(shortened) == [false])
        #expect(shortened.changedMembers.isEmpty, "nobody earned anything")
        try t.send(.start, by: ada)
        #expect(t.room.phase == .shortBreak && t.room.status == .running)

        #expect(t.room.stats == before)
        #expect(t.room.stats.focusSessions == 0)
        #expect(t.member(ada)?.stats.focusSessions == 0)
        #expect(sessions(&t).isEmpty)
    }

    @Test func aReadyFocusShortenedBelowTheMinimumThenRunToItsEndDoesNotCount() throws {
        var t = TestRoom()
        let ada = try t.add("Ada")
        try t.send(.start, by: ada)
        try t.send(.skip, by: ada)
        try t.send(.skip, by: ada)                       // focus 2, ready
        try t.send(.extend(seconds: -1450), by: ada)     // 50 s
        try t.send(.start, by: ada)
        let outcome = t.advance(by: .seconds(50))
        #expect(outcome.completions == [Completion(.focus, .shortBreak, cycle: 2)])
        #expect(counted(outcome) == [false])
        #expect(t.room.stats.focusSessions == 0)
        #expect(t.room.stats.focusTime == .seconds(50), "the time it ran is still focus time")
        #expect(t.member(ada)?.stats == MemberStats(focusSessions: 0, focusTime: .seconds(50), interruptions: 1),
                "the first skip was the interruption")
        #expect(sessions(&t).isEmpty)
    }

    @Test(arguments: [60, 100])
    func aRunningFocusShortenedPastItsEndAfterTheMinimumCountsWithTheLengthItRan(ran: Int) throws {
        var t = TestRoom()
        let ada = try t.add("Ada")
        let startedAt = t.now
        try t.send(.start, by: ada)
        t.advance(by: .seconds(Int64(ran)))
        let outcome = try t.send(.extend(seconds: -3600), by: ada)
        #expect(outcome.completions == [Completion(.focus, .shortBreak, cycle: 1)])
        #expect(counted(outcome) == [true])
        #expect(t.room.stats == RoomStats(focusSessions: 1, focusTime: .seconds(Int64(ran))))
        #expect(t.member(ada)?.stats == MemberStats(focusSessions: 1, focusTime: .seconds(Int64(ran))))
        let session = try #require(sessions(&t).first)
        #expect(session.lengthSeconds == ran)
        #expect(session.endedAtMs - session.startedAtMs == Int64(ran) * 1000)
        #expect(session.startedAtMs == (startedAt.nanoseconds + offset) / 1_000_000)
        #expect(session.participants.map(\.focusMs) == [Int64(ran) * 1000])
    }

    @Test func aRunningFocusShortenedPastItsEndBeforeTheMinimumRingsButDoesNotCount() throws {
        var t = TestRoom(settings: RoomSettings(focus: 300))
        let ada = try t.add("Ada")
        try t.send(.start, by: ada)
        t.advance(by: .seconds(10))
        _ = sessions(&t)
        let outcome = try t.send(.extend(seconds: -290), by: ada)
        #expect(outcome.completions == [Completion(.focus, .shortBreak, cycle: 1)])
        #expect(counted(outcome) == [false])
        #expect(t.room.phase == .shortBreak)
        #expect(t.room.stats == RoomStats(focusSessions: 0, focusTime: .seconds(10), interruptions: 0))
        #expect(t.member(ada)?.stats == MemberStats(focusSessions: 0, focusTime: .seconds(10)))
        let changes = t.room.takeStoreChanges(wallOffsetNanoseconds: offset, passcode: nil)
        #expect(!changes.contains { if case .focusCompleted = $0 { true } else { false } })
        #expect(!changes.contains { if case .interrupted = $0 { true } else { false } }, "nor is it an interruption")
    }

    @Test func timePausedIsNotTimeRun() throws {
        var t = TestRoom()
        let ada = try t.add("Ada")
        try t.send(.start, by: ada)
        t.advance(by: .seconds(30))
        try t.send(.pause, by: ada)
        t.advance(by: .seconds(600))                     // ten minutes since it started, half a minute run
        let outcome = try t.send(.extend(seconds: -3600), by: ada)
        #expect(counted(outcome) == [false])
        #expect(t.room.stats.focusSessions == 0)
        #expect(sessions(&t).isEmpty)
    }

    @Test func theMinimumIsTheServers() throws {
        var t = TestRoom(policy: RoomPolicy(minFocusSeconds: 5))
        let ada = try t.add("Ada")
        try t.send(.start, by: ada)
        t.advance(by: .seconds(5))
        let outcome = try t.send(.extend(seconds: -3600), by: ada)
        #expect(counted(outcome) == [true])
        #expect(sessions(&t).map(\.lengthSeconds) == [5])
    }

    @Test func aBreakIsNeverCounted() throws {
        var t = TestRoom()
        let ada = try t.add("Ada")
        try t.send(.start, by: ada)
        t.advance(by: .seconds(1500))
        try t.send(.start, by: ada)
        let outcome = t.advance(by: .seconds(300))
        #expect(outcome.completions == [Completion(.shortBreak, .focus, cycle: 2)])
        #expect(counted(outcome) == [false])
        #expect(t.room.stats.focusSessions == 1)
    }
}
