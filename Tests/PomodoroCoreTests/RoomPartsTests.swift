@testable import PomodoroCore
import Testing

/// The parts a room is made of, each against the invariant it owns.
@Suite struct RoomPartsTests {
    // MARK: Roster

    /// The counts recomputed the slow way, to compare with the roster's running ones.
    func recount(_ roster: Roster) -> (connected: Int, present: Int, disconnected: Set<MemberID>) {
        let members = Array(roster.inOrder)
        return (members.filter(\.connected).count, members.filter(\.isPresent).count,
                Set(members.filter { $0.disconnectedAt != nil }.map(\.id)))
    }

    @Test func theRostersCountsFollowEveryChange() {
        var roster = Roster()
        // A fixed pseudo-random walk of joins, presence changes, disconnections, returns and leaves.
        var seed: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next(_ n: Int) -> Int {
            seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((seed >> 33) % UInt64(n))
        }
        let t = Instant(nanoseconds: 5_000_000_000)
        for step in 0..<2000 {
            let ids = roster.ids
            switch ids.isEmpty ? 0 : next(5) {
            case 0: _ = roster.add(name: "n\(step)", tokenHash: "h\(step)")
            case 1: roster.update(ids[next(ids.count)]) { $0.away.toggle() }
            case 2: roster.update(ids[next(ids.count)]) { $0.connected = false; $0.disconnectedAt = t }
            case 3: roster.update(ids[next(ids.count)]) { $0.connected = true; $0.disconnectedAt = nil }
            default: roster.remove(ids[next(ids.count)])
            }
            let slow = recount(roster)
            #expect(roster.connectedCount == slow.connected, "step \(step)")
            #expect(roster.presentCount == slow.present, "step \(step)")
            #expect(roster.disconnected == slow.disconnected, "step \(step)")
            #expect(roster.count == roster.ids.count)
        }
        // Members come in join order, and numbers are never reused.
        let joinOrders = roster.inOrder.map(\.joinOrder)
        #expect(joinOrders == joinOrders.sorted())
        #expect(roster.nextMemberNumber > joinOrders.max() ?? 0)
    }

    @Test func aRemovedMemberLeavesNoTraceAndTheirNumberIsNotReused() {
        var roster = Roster()
        let a = roster.add(name: "Ada", tokenHash: "a")
        let b = roster.add(name: "Bo", tokenHash: "b") { $0.connected = false; $0.disconnectedAt = Instant(nanoseconds: 1) }
        #expect(roster.connectedCount == 1 && roster.disconnected == [b])
        let removed = roster.remove(b)
        let again = roster.remove(b)
        #expect(removed?.name == "Bo" && again == nil)
        #expect(roster.ids == [a] && roster.disconnected.isEmpty && roster.count == 1)
        let c = roster.add(name: "Cy", tokenHash: "c")
        #expect(c == MemberID("m3"))
        #expect(roster.member(withTokenHash: "c") == c && roster.member(withTokenHash: "b") == nil)
        // Updating someone not in the room changes nothing.
        roster.update(b) { $0.name = "ghost" }
        #expect(roster[b] == nil && roster.count == 2)
    }

    @Test func restoredMembersKeepTheirPlacesAndNewOnesFollow() {
        var roster = Roster(nextMemberNumber: 4)
        var m3 = Member(id: MemberID("m3"), name: "Ada", tokenHash: "a")
        m3.joinOrder = 3
        var m7 = Member(id: MemberID("m7"), name: "Bo", tokenHash: "b")
        m7.joinOrder = 7
        roster.restore(m3)
        roster.restore(m7)
        // A stored counter behind the rows cannot hand out an id that is taken.
        #expect(roster.add(name: "Cy", tokenHash: "c") == MemberID("m8"))
        #expect(roster.ids == [MemberID("m3"), MemberID("m7"), MemberID("m8")])
    }

    // MARK: PendingChanges

    @Test func aMemberWhoLeftIsNotAlsoSavedAndTakingForgetsAll() {
        var pending = PendingChanges()
        #expect(!pending.isDue)
        pending.memberChanged(MemberID("m1"))
        pending.memberChanged(MemberID("m2"))
        // Member changes alone wait for the room's row.
        #expect(!pending.isDue)
        pending.memberRemoved(MemberID("m2"))
        pending.roomChanged()
        pending.record(.interrupted(nil, name: nil, at: Instant(nanoseconds: 1)))
        #expect(pending.isDue)
        let taken = pending.take()
        #expect(taken.roomDirty && taken.dirtyMembers == [MemberID("m1")] && taken.removedMembers == [MemberID("m2")])
        #expect(taken.journal.count == 1)
        #expect(!pending.isDue && pending.dirtyMembers.isEmpty && pending.removedMembers.isEmpty && pending.journal.isEmpty)
    }

    // MARK: HostRules

    @Test func inHostModeOnlyTheHostPressesTheControls() throws {
        let (host, guest) = (MemberID("m1"), MemberID("m2"))
        var rules = HostRules(mode: .anyone)
        let first = rules.memberJoined(host)
        let second = rules.memberJoined(guest)
        #expect(first && !second)
        #expect(rules.host == host)
        let timer: [Room.Command] = [.start, .pause, .resume, .skip, .reset, .extend(seconds: 60), .configure(.standard)]
        for command in timer { try rules.check(command, from: guest) }
        // The mode and the role are the host's in any mode.
        for command: Room.Command in [.setControlMode(.host), .handOff(to: guest)] {
            #expect(throws: RoomError.forbidden) { try rules.check(command, from: guest) }
            try rules.check(command, from: host)
        }
        rules.mode = .host
        for command in timer {
            #expect(throws: RoomError.forbidden) { try rules.check(command, from: guest) }
            try rules.check(command, from: host)
        }
        // One's own task and presence stay everyone's.
        try rules.check(.setTask("x"), from: guest)
        try rules.check(.setAway(true), from: guest)
    }

    @Test func theHostRolePassesOnWhenTheHostLeaves() {
        var rules = HostRules(mode: .host, host: MemberID("m1"))
        var asked = 0
        let guestLeft = rules.memberLeft(MemberID("m2"), successor: { asked += 1; return MemberID("m3") })
        #expect(!guestLeft && asked == 0 && rules.host == MemberID("m1"))
        let hostLeft = rules.memberLeft(MemberID("m1"), successor: { MemberID("m3") })
        #expect(hostLeft && rules.host == MemberID("m3"))
        let lastLeft = rules.memberLeft(MemberID("m3"), successor: { nil })
        #expect(lastLeft && rules.host == nil)
        // The next to arrive in the empty room hosts it.
        let arrived = rules.memberJoined(MemberID("m4"))
        #expect(arrived && rules.host == MemberID("m4"))
    }

    // MARK: FocusCredit

    @Test func theRoomsFocusTimeCountsEachInstantOnce() {
        let t0 = Instant(nanoseconds: 1_000_000_000_000)
        var credit = FocusCredit()
        var focus = Duration.zero
        credit.credit(&focus, until: t0 + .seconds(5))
        #expect(focus == .zero, "nothing runs yet")
        credit.focusRuns(from: t0)
        #expect(credit.uncredited(at: t0 + .seconds(3)) == .seconds(3))
        credit.credit(&focus, until: t0 + .seconds(10))
        credit.credit(&focus, until: t0 + .seconds(10))
        credit.credit(&focus, until: t0 + .seconds(4))
        #expect(focus == .seconds(10))
        #expect(credit.uncredited(at: t0 + .seconds(4)) == .zero)
        credit.stopped()
        credit.credit(&focus, until: t0 + .seconds(60))
        #expect(focus == .seconds(10) && credit.uncredited(at: t0 + .seconds(60)) == .zero)
        // Resuming keeps when the focus first started; a new phase forgets it.
        credit.focusRuns(from: t0 + .seconds(20))
        #expect(credit.focusStartedAt == t0)
        credit.newPhase()
        #expect(credit.focusStartedAt == nil)
    }
}
