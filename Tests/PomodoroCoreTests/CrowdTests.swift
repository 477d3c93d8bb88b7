import Testing
import PomodoroCore

/// A big room: a member's change costs the room that member, not everyone, in the store and in the snapshot.
@Suite struct CrowdTests {
    let offset: Int64 = 1_763_700_000_000_000_000 - ManualClock.origin.nanoseconds

    func savedMembers(_ changes: [StoreChange]) -> [MemberRecord] {
        changes.compactMap { if case .saveMember(_, let m) = $0 { m } else { nil } }
    }

    func take(_ t: inout TestRoom) -> [StoreChange] {
        t.room.takeStoreChanges(wallOffsetNanoseconds: offset, passcode: nil)
    }

    @Test func aJoinInARunningFocusWritesTheRoomAndTheJoinerOnly() throws {
        var t = TestRoom()
        let ada = try t.add("Ada")
        for name in ["Bo", "Cy", "Di"] { try t.add(name) }
        try t.send(.start, by: ada)
        #expect(savedMembers(take(&t)).count == 4, "the start is a boundary: everyone who earns is written")
        t.advance(by: .seconds(60))
        let eve = try t.add("Eve")
        let changes = take(&t)
        #expect(changes.count == 2)
        #expect(savedMembers(changes).map(\.id) == [eve])
        try t.send(.setTask("notes"), by: eve)
        #expect(savedMembers(take(&t)).map(\.id) == [eve])
        try t.send(.setAway(true), by: ada)
        #expect(savedMembers(take(&t)).map(\.id) == [ada])
        try t.send(.pause, by: eve)
        #expect(Set(savedMembers(take(&t)).map(\.id)).count == 4, "the pause realizes the four who earned")
    }

    @Test func aMemberRowCarriesItsOwnSpan() throws {
        var t = TestRoom()
        let ada = try t.add("Ada")
        try t.send(.start, by: ada)
        let started = t.now
        t.advance(by: .seconds(100))
        let bob = try t.add("Bob")
        let joined = t.now
        t.advance(by: .seconds(50))
        let rows = t.room.memberRecords(wallOffsetNanoseconds: offset)
        #expect(rows.map(\.creditedSinceMs) == [(started.nanoseconds + offset) / 1_000_000,
                                                (joined.nanoseconds + offset) / 1_000_000])
        #expect(rows.map(\.stats.focusTime) == [.zero, .zero], "realized at the last change, not at every tick")
        #expect(t.member(ada)?.stats.focusTime == .seconds(150))
        #expect(t.member(bob)?.stats.focusTime == .seconds(50))
        #expect(rows.map(\.joinOrder) == rows.map(\.joinOrder).sorted())
    }

    @Test func aRestartFromSelfContainedRowsCreditsEachMemberFromTheirOwnSpan() throws {
        var t = TestRoom(settings: RoomSettings(focus: 600))
        let ada = try t.add("Ada")
        try t.send(.start, by: ada)
        t.advance(by: .seconds(100))
        let bob = try t.add("Bob")
        t.advance(by: .seconds(100))
        let cy = try t.add("Cy")
        try t.send(.setAway(true), by: cy)
        t.advance(by: .seconds(100))                  // 300 s in: Ada 300, Bob 200, Cy 0
        let record = t.room.record(wallOffsetNanoseconds: offset)
        let rows = t.room.memberRecords(wallOffsetNanoseconds: offset)
        let bootShift: Int64 = 7_000_000_000_000
        let now = Instant(nanoseconds: t.now.nanoseconds - bootShift) + .seconds(1000)   // past the end
        var room = Room(restoring: record, members: rows, now: now, wallOffsetNanoseconds: offset + bootShift)
        let outcome = room.resumeAfterRestart(at: now)
        #expect(outcome.completions.count == 1)
        let snapshot = room.snapshot(at: now)
        #expect(snapshot.members.map(\.stats.focusTime) == [.seconds(600), .seconds(500), .zero])
        #expect(snapshot.members.map(\.stats.focusSessions) == [1, 1, 0])
        #expect(snapshot.stats.focusTime == .seconds(600))
        #expect([ada, bob, cy] == snapshot.members.map(\.id))
    }

    @Test func aLeaveKeepsTheOthersRowsInOrderWithoutRewritingThem() throws {
        var t = TestRoom()
        let ada = try t.add("Ada")
        let bob = try t.add("Bob")
        let cy = try t.add("Cy")
        _ = take(&t)
        t.leave(bob)
        #expect(savedMembers(take(&t)).isEmpty)
        let dee = try t.add("Dee")
        let orders = t.room.memberRecords(wallOffsetNanoseconds: offset).map { ($0.id, $0.joinOrder) }
        #expect(orders.map(\.0) == [ada, cy, dee])
        #expect(Set(orders.map(\.1)).count == 3, "no two rows share a place")
        #expect(orders.map(\.1) == orders.map(\.1).sorted())
    }

    // MARK: The snapshot's member list

    @Test func theSnapshotListsTheFirstMembersAndCountsEveryone() throws {
        var t = TestRoom(policy: RoomPolicy(memberListLimit: 3))
        let ids = try ["Ada", "Bo", "Cy", "Di", "Eve"].map { name throws(RoomError) in try t.add(name) }
        try t.send(.setAway(true), by: ids[1])
        t.disconnect(ids[4])
        let snapshot = t.snapshot
        #expect(snapshot.members.map(\.id) == Array(ids.prefix(3)))
        #expect(snapshot.memberCount == 5)
        #expect(snapshot.presentCount == 3)
        #expect(snapshot.membersTruncated)
        #expect(t.room.connectedCount == 4)
        #expect(t.room.presentCount == 3)

        t.leave(ids[0])
        t.leave(ids[2])
        let small = t.snapshot
        #expect(small.members.map(\.id) == [ids[1], ids[3], ids[4]])
        #expect(small.memberCount == 3)
        #expect(small.presentCount == 1)
        #expect(!small.membersTruncated)
    }

    /// What a call changed of members beyond the counts (`Outcome.changedMembers`): the one who set a task or
    /// stepped away, everyone present at a focus's end or when it stopped early; and of those, the ones the
    /// snapshot leaves out, connected, once each (`unlistedMembers`).
    @Test func aCallNamesTheMembersWhoseOwnObjectChanged() throws {
        var t = TestRoom(settings: RoomSettings(focus: 60, shortBreak: 60), policy: RoomPolicy(memberListLimit: 2))
        let ids = try ["Ada", "Bo", "Cy", "Di", "Eve"].map { name throws(RoomError) in try t.add(name) }
        #expect(try t.send(.setTask("notes"), by: ids[2]).changedMembers == [ids[2]])
        #expect(try t.send(.setAway(true), by: ids[3]).changedMembers == [ids[3]])
        #expect(try t.send(.setAway(true), by: ids[3]).changedMembers.isEmpty, "already away: nothing changed")
        #expect(try t.send(.start, by: ids[0]).changedMembers.isEmpty)
        t.advance(by: .seconds(10))
        let paused = try t.send(.pause, by: ids[0])
        #expect(paused.changedMembers == [ids[0], ids[1], ids[2], ids[4]], "the present ones count an interruption")
        try t.send(.resume, by: ids[0])
        t.disconnect(ids[4])
        let ended = t.advance(by: .seconds(60))
        #expect(ended.changedMembers == [ids[0], ids[1], ids[2]], "the present ones earned the focus")

        #expect(t.room.unlistedMembers(ended.changedMembers + [ids[2], ids[3], ids[4]], at: t.now).map(\.id)
                == [ids[2], ids[3]], "listed, repeated and disconnected members left out")
        let cy = try #require(t.room.unlistedMembers([ids[2]], at: t.now).first)
        #expect(cy.task == "notes" && cy.present && cy.stats.focusSessions == 1 && cy.stats.interruptions == 1)
        t.leave(ids[0])
        t.leave(ids[1])
        #expect(t.room.unlistedMembers([ids[2], ids[3]], at: t.now).isEmpty, "three left: everyone is listed")
    }

    @Test func theCountsFollowReturnsAndExpiries() throws {
        var t = TestRoom(policy: RoomPolicy(reconnectGrace: .seconds(10)))
        let ada = try t.add("Ada")
        let bob = try t.join("Bob")
        t.disconnect(bob.memberID)
        #expect(t.room.connectedCount == 1)
        try t.join("Bob", token: bob.token)
        #expect(t.room.connectedCount == 2)
        #expect(t.room.presentCount == 2)
        t.disconnect(bob.memberID)
        t.disconnect(ada)
        #expect(t.room.nextWakeup() == t.now + .seconds(10))
        let outcome = t.advance(by: .seconds(10))
        #expect(outcome.events.filter { if case .memberLeft = $0 { true } else { false } }
                == [.memberLeft(ada, name: "Ada", reason: .expired), .memberLeft(bob.memberID, name: "Bob", reason: .expired)],
                "expired in join order")
        #expect(t.room.memberCount == 0)
        #expect(t.room.connectedCount == 0)
        #expect(t.room.presentCount == 0)
    }
}
