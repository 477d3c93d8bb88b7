import Testing
import PomodoroCore

/// What a room hands a store, and how a room comes back from it after a restart.
@Suite struct RecordsTests {
    /// Wall-clock = monotonic + this, as the server's clock would report it.
    let offset: Int64 = 1_763_700_000_000_000_000 - ManualClock.origin.nanoseconds

    func wallMs(_ instant: Instant) -> Int64 { (instant.nanoseconds + offset) / 1_000_000 }

    func sessions(_ changes: [StoreChange]) -> [FocusSessionRecord] {
        changes.compactMap { if case .focusCompleted(let s) = $0 { s } else { nil } }
    }

    func interruptions(_ changes: [StoreChange]) -> [InterruptionRecord] {
        changes.compactMap { if case .interrupted(let i) = $0 { i } else { nil } }
    }

    func savedRooms(_ changes: [StoreChange]) -> [RoomRecord] {
        changes.compactMap { if case .saveRoom(let r, _) = $0 { r } else { nil } }
    }

    func savedMembers(_ changes: [StoreChange]) -> [MemberRecord] {
        changes.compactMap { if case .saveMember(_, let m) = $0 { m } else { nil } }
    }

    @Test func aJoinWritesTheRoomAndTheMemberOnceAndTicksWriteNothing() throws {
        var t = TestRoom()
        let ada = try t.add("Ada")
        let first = t.room.takeStoreChanges(wallOffsetNanoseconds: offset, passcode: "verifier")
        #expect(first.count == 2)
        #expect(first.first == .saveRoom(t.room.record(wallOffsetNanoseconds: offset), passcode: "verifier"))
        #expect(savedMembers(first).map(\.id) == [ada])
        #expect(savedMembers(first).first?.tokenHash == ResumeToken("token-1").hash, "the token's hash, never the token")
        #expect(t.room.takeStoreChanges(wallOffsetNanoseconds: offset, passcode: nil).isEmpty, "taken once")

        try t.send(.start, by: ada)
        _ = t.room.takeStoreChanges(wallOffsetNanoseconds: offset, passcode: nil)
        let tick = t.advance(by: .seconds(1))
        #expect(tick.tick != nil)
        #expect(t.room.takeStoreChanges(wallOffsetNanoseconds: offset, passcode: nil).isEmpty,
                "a tick changes no row: the credited time goes with the next change")
    }

    @Test func aCompletedFocusBecomesOneJournalEntryWithThoseWhoWerePresent() throws {
        var t = TestRoom(settings: RoomSettings(focus: 600), policy: RoomPolicy(reconnectGrace: .seconds(3600)))
        let ada = try t.add("Ada")
        let lin = try t.add("Lin")
        let bo = try t.add("Bo")
        try t.send(.setTask("write the report"), by: ada)
        let startedAt = t.now
        try t.send(.start, by: ada)
        t.advance(by: .seconds(200))
        try t.send(.setAway(true), by: lin)     // Lin steps away for the rest of it
        t.advance(by: .seconds(100))
        t.disconnect(bo)                        // Bo's connection drops
        _ = t.room.takeStoreChanges(wallOffsetNanoseconds: offset, passcode: nil)
        t.advance(by: .seconds(400))            // 100 s past the end

        let changes = t.room.takeStoreChanges(wallOffsetNanoseconds: offset, passcode: nil)
        let entries = sessions(changes)
        #expect(entries == [FocusSessionRecord(
            room: t.room.id, startedAtMs: wallMs(startedAt), endedAtMs: wallMs(startedAt + .seconds(600)),
            lengthSeconds: 600,
            participants: [.init(member: ada, name: "Ada", task: "write the report", focusMs: 600_000)])])
        #expect(savedMembers(changes).first { $0.id == ada }?.stats.focusSessions == 1)
    }

    @Test func aPausedFocusKeepsItsFirstStartAndItsLengthIncludesExtensions() throws {
        var t = TestRoom(settings: RoomSettings(focus: 60))
        let ada = try t.add("Ada")
        let startedAt = t.now
        try t.send(.start, by: ada)
        t.advance(by: .seconds(10))
        try t.send(.pause, by: ada)
        t.advance(by: .seconds(30))
        try t.send(.resume, by: ada)
        try t.send(.extend(seconds: 60), by: ada)
        t.advance(by: .seconds(110))
        let entry = try #require(sessions(t.room.takeStoreChanges(wallOffsetNanoseconds: offset, passcode: nil)).first)
        #expect(entry.startedAtMs == wallMs(startedAt))
        #expect(entry.endedAtMs == wallMs(startedAt + .seconds(150)))
        #expect(entry.lengthSeconds == 120)
        #expect(entry.participants.map(\.focusMs) == [120_000])
    }

    @Test func interruptionsAreJournaledForTheRoomAndEachPresentMember() throws {
        var t = TestRoom()
        let ada = try t.add("Ada")
        let lin = try t.add("Lin")
        try t.send(.start, by: ada)
        t.advance(by: .seconds(5))
        try t.send(.setAway(true), by: lin)
        let at = t.now
        try t.send(.pause, by: ada)
        let records = interruptions(t.room.takeStoreChanges(wallOffsetNanoseconds: offset, passcode: nil))
        #expect(records == [
            InterruptionRecord(room: t.room.id, member: lin, name: "Lin", atMs: wallMs(at)),
            InterruptionRecord(room: t.room.id, member: nil, name: nil, atMs: wallMs(at)),
            InterruptionRecord(room: t.room.id, member: ada, name: "Ada", atMs: wallMs(at)),
        ])
    }

    @Test func aLeavingMemberIsRemovedFromTheStore() throws {
        var t = TestRoom()
        let ada = try t.add("Ada")
        let lin = try t.add("Lin")
        _ = t.room.takeStoreChanges(wallOffsetNanoseconds: offset, passcode: nil)
        t.leave(lin)
        let changes = t.room.takeStoreChanges(wallOffsetNanoseconds: offset, passcode: nil)
        #expect(changes.contains(.removeMember(t.room.id, lin)))
        #expect(!savedMembers(changes).contains { $0.id == lin })
        #expect(savedRooms(changes).first?.host == ada)
    }

    // MARK: Restoring

    /// Writes a room's rows as a store would keep them, then brings it back `downtime` later.
    /// `handedOff`: by a draining node, its members on their way back.
    func restart(_ t: TestRoom, after downtime: Duration, policy: RoomPolicy = .standard,
                 handedOff: Bool = false) -> (room: Room, outcome: Outcome, now: Instant, offset: Int64) {
        let record = t.room.record(wallOffsetNanoseconds: offset)
        let members = t.room.memberRecords(wallOffsetNanoseconds: offset)
        // A new boot: a different monotonic origin, the same wall clock.
        let bootShift: Int64 = 7_000_000_000_000
        let now = Instant(nanoseconds: t.now.nanoseconds - bootShift) + downtime
        var room = Room(restoring: record, members: members, policy: policy, now: now,
                        wallOffsetNanoseconds: offset + bootShift)
        let outcome = room.resumeAfterRestart(at: now, handedOff: handedOff)
        return (room, outcome, now, offset + bootShift)
    }

    @Test func aRoomHandedOffMovesOnWhileItsMembersAreOnTheirWayBackAndWaitsOnceTheirPlacesAreGone() throws {
        // A grace of 10 min, so that the break (5 min) ends within it and the next focus's end after it.
        let policy = RoomPolicy(reconnectGrace: .seconds(600))
        var t = TestRoom(settings: RoomSettings(focus: 600, shortBreak: 300, autoStart: true), policy: policy)
        let ada = try t.add("Ada")
        try t.send(.start, by: ada)
        t.advance(by: .seconds(599))                  // handed off a second before the focus ends
        var (room, _, now, _) = restart(t, after: .milliseconds(20), policy: policy, handedOff: true)
        #expect(room.connectedCount == 0)
        let outcome = room.advance(to: now + .seconds(1))
        #expect(outcome.completions.count == 1)
        #expect(room.phase == .shortBreak)
        #expect(room.status == .running, "the break runs for the members coming back")
        _ = room.advance(to: now + .seconds(301))
        #expect(room.phase == .focus)
        #expect(room.status == .running, "and the focus after it, within their grace")
        // Nobody came back while their places were kept: the focus's end waits for someone, as in any
        // empty room.
        _ = room.advance(to: now + .seconds(901))
        #expect(room.phase == .shortBreak)
        #expect(room.status != .running)

        // The same room restarted from its store (no hand-off): the break waits at once.
        (room, _, now, _) = restart(t, after: .milliseconds(20), policy: policy)
        _ = room.advance(to: now + .seconds(1))
        #expect(room.phase == .shortBreak)
        #expect(room.status != .running)
    }

    @Test func aRoomIsTakenAsHandedOffOnlyWhileItsMembersMayBeOnTheirWayBack() throws {
        func restored(_ t: TestRoom, after downtime: Duration) -> (Room, Instant) {
            let bootShift: Int64 = 7_000_000_000_000
            let now = Instant(nanoseconds: t.now.nanoseconds - bootShift) + downtime
            let room = Room(restoring: t.room.record(wallOffsetNanoseconds: offset),
                            members: t.room.memberRecords(wallOffsetNanoseconds: offset), now: now,
                            wallOffsetNanoseconds: offset + bootShift)
            return (room, now)
        }
        var t = TestRoom(settings: RoomSettings(focus: 600, shortBreak: 300, autoStart: true))
        let ada = try t.add("Ada")
        try t.send(.start, by: ada)
        t.advance(by: .seconds(599))
        // Its focus ended 2 s ago, Ada there when it was written: she is on her way.
        var (room, now) = restored(t, after: .seconds(3))
        #expect(room.membersWereHere(at: now))
        // Ended longer ago than her grace (2 min): back as after any restart.
        (room, now) = restored(t, after: .seconds(125))
        #expect(!room.membersWereHere(at: now))
        // Nobody connected when it was written: nobody is coming back.
        t.leave(ada)
        (room, now) = restored(t, after: .seconds(3))
        #expect(!room.membersWereHere(at: now))
    }

    @Test(arguments: [false, true])
    func membersARestartFoundGoneAreShownAwayAndBackWithoutAnEventEitherWay(handedOff: Bool) throws {
        var t = TestRoom()
        let ada = try t.add("Ada")
        let bo = try t.join("Bo")
        let cy = try t.add("Cy")
        _ = t.disconnect(cy)                          // gone before the restart: her going was said
        var (room, outcome, now, _) = restart(t, after: .seconds(3), handedOff: handedOff)
        // The server went, not their connections: nothing is said of it.
        #expect(!outcome.events.contains { $0.isAboutOneMember }, "\(outcome.events)")
        #expect(room.snapshot(at: now).members.map(\.connected) == [false, false, false], "shown away until back")
        now = now + .milliseconds(200)
        let back = try room.join(name: "Bo", token: bo.token, freshToken: ResumeToken("unused"), now: now)
        #expect(back.resumed && back.memberID == bo.memberID)
        #expect(!back.outcome.events.contains { $0.isAboutOneMember }, "Bo is back as if never gone: \(back.outcome.events)")
        #expect(room.snapshot(at: now).members.map(\.connected) == [false, true, false])
        // Cy's going was announced before the restart: her return is.
        let cyToken = ResumeToken("token-3")
        let cyBack = try room.join(name: "Cy", token: cyToken, freshToken: ResumeToken("unused"), now: now)
        #expect(cyBack.outcome.events == [.memberReturned(cy)])
        // Bo's next loss of the connection is his own, and said both ways.
        let lost = room.disconnect(bo.memberID, now: now + .seconds(1))
        #expect(lost.events.contains(.memberAway(bo.memberID, reason: .disconnected, connection: .lost)))
        let again = try room.join(name: "Bo", token: bo.token, freshToken: ResumeToken("unused"), now: now + .seconds(2))
        #expect(again.outcome.events == [.memberReturned(bo.memberID)])
        // Sent back by a node for a restart (1012): the same, not announced either way.
        let sentBack = room.disconnect(bo.memberID, now: now + .seconds(3), ended: .restart)
        #expect(!sentBack.events.contains { $0.isAboutOneMember }, "\(sentBack.events)")
        #expect(room.snapshot(at: now + .seconds(3)).members[1].connected == false)
        let home = try room.join(name: "Bo", token: bo.token, freshToken: ResumeToken("unused"), now: now + .seconds(4))
        #expect(!home.outcome.events.contains { $0.isAboutOneMember }, "\(home.outcome.events)")
        // Ada never comes back: her place ends with the grace, and that is said.
        let expired = room.advance(to: now + .seconds(3600))
        #expect(expired.events.contains(.memberLeft(ada, name: "Ada", reason: .expired)))
    }

    @Test func aPhaseEndingWhileARoomIsHandedOffIsFollowedByTheNext() throws {
        var t = TestRoom(settings: RoomSettings(focus: 600, shortBreak: 300, autoStart: true))
        let ada = try t.add("Ada")
        try t.send(.start, by: ada)
        t.advance(by: .seconds(599))
        let (room, outcome, now, _) = restart(t, after: .seconds(2), handedOff: true)
        #expect(outcome.completions.count == 1)
        #expect(room.phase == .shortBreak)
        #expect(room.status == .running)
        #expect(room.remaining(at: now) == .seconds(299))
    }

    @Test func aRunningPhaseGoesOnWithTheRightRemainingTime() throws {
        var t = TestRoom()
        let ada = try t.add("Ada")
        try t.send(.start, by: ada)
        t.advance(by: .seconds(300))                  // 20 min left when the server dies
        let (room, outcome, now, _) = restart(t, after: .seconds(30))
        #expect(room.status == .running)
        #expect(room.remaining(at: now) == .seconds(1200 - 30))
        #expect(room.phase == .focus)
        #expect(outcome.completions.isEmpty)
        #expect(room.snapshot(at: now).members.map(\.connected) == [false], "back as away until they return")
        #expect(room.nextWakeup().map { $0 - now } == .seconds(1), "ticks go on at the next boundary")
    }

    @Test func aPhaseThatEndedDuringTheDowntimeCompletesOnItsDeadlineAndIsCounted() throws {
        var t = TestRoom(settings: RoomSettings(focus: 600, autoStart: true))
        let ada = try t.add("Ada")
        try t.send(.setTask("taxes"), by: ada)
        let startedAt = t.now
        try t.send(.start, by: ada)
        t.advance(by: .seconds(500))
        var (room, outcome, _, newOffset) = restart(t, after: .seconds(3600))
        #expect(outcome.completions == [Completion(.focus, .shortBreak, autoStarted: false, cycle: 1)],
                "completed once; the break waits, since nobody is there to see it start")
        #expect(room.status == .ready)
        #expect(room.stats.focusSessions == 1)
        #expect(room.stats.focusTime == .seconds(600))
        #expect(room.member(ada)?.stats.focusSessions == 1, "Ada was present when the server stopped")
        let entry = try #require(sessions(room.takeStoreChanges(wallOffsetNanoseconds: newOffset, passcode: nil)).first)
        #expect(entry.startedAtMs == wallMs(startedAt))
        #expect(entry.endedAtMs == wallMs(startedAt + .seconds(600)))
        #expect(entry.participants.map(\.task) == ["taxes"])
    }

    @Test func membersReturnWithTheirTokensAndKeepTheirIds() throws {
        var t = TestRoom()
        let ada = try t.add("Ada")
        let lin = try t.add("Lin")
        try t.send(.setTask("slides"), by: lin)
        var (room, _, now, _) = restart(t, after: .seconds(5))
        let back = try room.join(name: "Lin", token: ResumeToken("token-2"), freshToken: ResumeToken("new"), now: now)
        #expect(back.memberID == lin)
        #expect(back.resumed)
        #expect(room.member(lin)?.task == "slides")
        let newcomer = try room.join(name: "Bo", token: nil, freshToken: ResumeToken("t3"), now: now)
        #expect(newcomer.memberID == MemberID("m3"), "ids are never reused after a restart")
        #expect(room.hostID == ada)
        #expect(room.snapshot(at: now).seq > t.room.seq, "seq goes on rising")
    }

    @Test func membersWhoDoNotReturnLeaveAfterTheGracePeriod() throws {
        var t = TestRoom()
        let ada = try t.add("Ada")
        var (room, _, now, _) = restart(t, after: .seconds(5))
        let outcome = room.advance(to: now + RoomPolicy.standard.reconnectGrace)
        #expect(outcome.events.contains(.memberLeft(ada, name: "Ada", reason: .expired)))
    }

    @Test func everyTimerStateAndSettingRoundTrips() throws {
        var t = TestRoom(settings: RoomSettings(focus: 900, shortBreak: 120, longBreak: 600, longBreakEvery: 3))
        let ada = try t.add("Ada")
        try t.send(.start, by: ada)
        t.advance(by: .seconds(100))
        try t.send(.pause, by: ada)
        try t.send(.configure(RoomSettings(focus: 1200)), by: ada)
        try t.send(.setControlMode(.host), by: ada)
        let (paused, _, now, newOffset) = restart(t, after: .seconds(999))
        #expect(paused.status == .paused)
        #expect(paused.remaining(at: now) == .seconds(800))
        #expect(paused.pendingSettings == RoomSettings(focus: 1200))
        #expect(paused.settings == t.room.settings)
        #expect(paused.controlMode == .host)
        #expect(paused.stats == t.room.stats)
        #expect(paused.record(wallOffsetNanoseconds: newOffset).focusStartedAtMs
                == t.room.record(wallOffsetNanoseconds: offset).focusStartedAtMs)

        try t.send(.reset, by: ada)
        let (idle, _, _, _) = restart(t, after: .seconds(1))
        #expect(idle.status == .idle)
        #expect(idle.settings == RoomSettings(focus: 1200))
    }
}
