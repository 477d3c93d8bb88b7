import PomodoroCore
import Testing

/// The host's tools beside the controls: removing a member (and their ban), and the lock changing.
@Suite struct HostingTests {
    static let ban: Duration = .seconds(600)

    func room() -> TestRoom {
        var policy = RoomPolicy.standard
        policy.removalBan = Self.ban
        return TestRoom(policy: policy)
    }

    @Test func theHostRemovesAMemberWhoLeavesForGoodAndEveryoneHears() throws {
        var room = room()
        let host = try room.add("Hana")
        let ivo = try room.join("Ivo")
        let seqBefore = room.snapshot.seq
        let outcome = try room.room.remove(ivo.memberID, by: host, now: room.now)
        #expect(outcome.events == [.memberLeft(ivo.memberID, name: "Ivo", reason: .removed)])
        #expect(outcome.stateChanged)
        #expect(room.snapshot.seq > seqBefore)
        #expect(room.member(ivo.memberID) == nil)
        #expect(room.snapshot.memberCount == 1)
    }

    @Test func aRemovedMemberIsRefusedByNameAndByTokenUntilTheBanEnds() throws {
        var room = room()
        let host = try room.add("Hana")
        let ivo = try room.join("Ivo")
        try room.room.remove(ivo.memberID, by: host, now: room.now)
        // By their token, under another name.
        #expect(caught { try room.join("Someone", token: ivo.token) } == .banned(remaining: Self.ban))
        // By their name, in other capitals, without a token.
        room.clock.advance(by: .seconds(30))
        #expect(caught { try room.join("IVO") } == .banned(remaining: Self.ban - .seconds(30)))
        #expect(room.snapshot.memberCount == 1, "a refused join adds nobody")
        // Others still get in.
        _ = try room.add("Jun")
        // Once the ban is over, they come back as a new member.
        room.clock.advance(by: Self.ban - .seconds(30))
        let back = try room.join("Ivo", token: ivo.token)
        #expect(!back.resumed)
        #expect(back.memberID != ivo.memberID)
    }

    /// The store hears of every ban (after the room's row it goes with), and a room brought back from its
    /// rows on another boot's clock keeps a removed member out until the same wall-clock moment.
    @Test func bansGoToTheStoreAndOutliveARestart() throws {
        let offset: Int64 = 1_767_225_600_000_000_000 - ManualClock.origin.nanoseconds
        var t = room()
        let host = try t.add("Hana")
        let ivo = try t.join("Ivo")
        _ = t.room.takeStoreChanges(wallOffsetNanoseconds: offset, passcode: nil)
        _ = try t.room.remove(ivo.memberID, by: host, now: t.now)
        let changes = t.room.takeStoreChanges(wallOffsetNanoseconds: offset, passcode: nil)
        let untilMs = (t.now + Self.ban).wallMilliseconds(offsetNanoseconds: offset)
        let expected = [BanRecord(nameKey: "ivo", tokenHash: ivo.token.hash, untilMs: untilMs)]
        let saved = changes.firstIndex { if case .saveBans(_, expected) = $0 { true } else { false } }
        let room = changes.firstIndex { if case .saveRoom = $0 { true } else { false } }
        #expect(saved != nil && room != nil && room! < saved!, "\(changes)")
        // Nothing else to say about bans until the next removal.
        t.advance(by: .seconds(1))
        _ = try t.add("Jun")
        #expect(!t.room.takeStoreChanges(wallOffsetNanoseconds: offset, passcode: nil)
            .contains { if case .saveBans = $0 { true } else { false } })

        // Another boot, 4 minutes after the removal: the monotonic clock starts elsewhere, the wall clock goes on.
        let record = t.room.record(wallOffsetNanoseconds: offset)
        let members = t.room.memberRecords(wallOffsetNanoseconds: offset)
        let bootShift: Int64 = 9_000_000_000_000
        let removedAt = t.now - .seconds(1)
        func boot(after downtime: Duration) -> (Room, Instant) {
            let now = Instant(nanoseconds: removedAt.nanoseconds - bootShift) + downtime
            var policy = RoomPolicy.standard
            policy.removalBan = Self.ban
            var restored = Room(restoring: record, members: members, bans: expected, policy: policy, now: now,
                                wallOffsetNanoseconds: offset + bootShift)
            _ = restored.resumeAfterRestart(at: now)
            return (restored, now)
        }
        var (back, now) = boot(after: .seconds(240))
        #expect(caught { try back.join(name: "ivo", token: nil, freshToken: ResumeToken("fresh-1"), now: now) }
                == .banned(remaining: Self.ban - .seconds(240)))
        #expect(caught { try back.join(name: "Ivan", token: ivo.token, freshToken: ResumeToken("fresh-2"), now: now) }
                == .banned(remaining: Self.ban - .seconds(240)))
        #expect(back.banRecords(wallOffsetNanoseconds: offset + bootShift) == expected)
        // A boot after the ban's end forgets it, and Ivo comes back as a new member.
        (back, now) = boot(after: Self.ban)
        #expect(back.banRecords(wallOffsetNanoseconds: offset + bootShift).isEmpty)
        let again = try back.join(name: "Ivo", token: ivo.token, freshToken: ResumeToken("fresh-3"), now: now)
        #expect(!again.resumed)
    }

    @Test func onlyTheHostRemovesAndNeverThemselves() throws {
        var room = room()
        let host = try room.add("Hana")
        let ivo = try room.add("Ivo")
        #expect(caught { try room.room.remove(host, by: ivo, now: room.now) } == .forbidden)
        #expect(caught { try room.room.remove(host, by: host, now: room.now) }
                == .invalidState("the host cannot remove themselves; use leave"))
        #expect(caught { try room.room.remove(MemberID("m9"), by: host, now: room.now) }
                == .invalidArgument(field: "member", reason: "is not a member of this room"))
        #expect(room.snapshot.memberCount == 2)
        // The role handed on, the old host may no longer remove anyone.
        try room.send(.handOff(to: ivo), by: host)
        #expect(caught { try room.room.remove(ivo, by: host, now: room.now) } == .forbidden)
        try room.room.remove(host, by: ivo, now: room.now)
        #expect(room.snapshot.host == ivo)
    }

    @Test func removingAPresentMemberDuringFocusJournalsTheirInterruption() throws {
        var room = room()
        let host = try room.add("Hana")
        let ivo = try room.add("Ivo")
        try room.send(.start, by: host)
        room.clock.advance(by: .seconds(60))
        try room.room.remove(ivo, by: host, now: room.now)
        let changes = room.room.takeStoreChanges(wallOffsetNanoseconds: 0, passcode: nil)
        #expect(changes.contains { if case .removeMember(_, ivo) = $0 { true } else { false } })
        #expect(changes.contains { if case .interrupted(let record) = $0 { record.member == ivo } else { false } })
    }

    @Test func aLockChangeIsTheHostsAnnouncedAndSavesTheRoomsRow() throws {
        var room = room()
        let host = try room.add("Hana")
        let ivo = try room.add("Ivo")
        _ = room.room.takeStoreChanges(wallOffsetNanoseconds: 0, passcode: nil)
        #expect(caught { try room.room.lockChanged(locked: true, by: ivo, now: room.now) } == .forbidden)
        #expect(room.room.takeStoreChanges(wallOffsetNanoseconds: 0, passcode: nil).isEmpty)
        let outcome = try room.room.lockChanged(locked: true, by: host, now: room.now)
        #expect(outcome.events == [.lockChanged(locked: true, by: host)])
        let changes = room.room.takeStoreChanges(wallOffsetNanoseconds: 0, passcode: "hash")
        #expect(changes.contains { if case .saveRoom(_, passcode: "hash") = $0 { true } else { false } })
    }
}
