import Testing
import PomodoroCore

/// Joining, names, disconnection and the grace period, resume tokens, leaving, limits, tasks and away.
@Suite struct MemberTests {
    @Test func joiningHandsOutSequentialIdsAndTheFreshToken() throws {
        var t = TestRoom()
        let seq = t.room.seq
        let first = try t.room.join(name: "Ada", token: nil, freshToken: ResumeToken("secret-a"), now: t.now)
        #expect(first.memberID == MemberID("m1"))
        #expect(first.token.rawValue == "secret-a")
        #expect(!first.resumed)
        // The first member creates the room and hosts it.
        #expect(first.outcome.events == [.memberJoined(MemberID("m1"), name: "Ada"), .hostChanged(MemberID("m1"))])
        #expect(first.outcome.stateChanged)
        #expect(t.room.seq > seq)

        let second = try t.room.join(name: "Bob", token: nil, freshToken: ResumeToken("secret-b"), now: t.now)
        #expect(second.memberID == MemberID("m2"))
        #expect(second.token.rawValue == "secret-b")

        let members = t.snapshot.members
        #expect(members.map(\.id) == [MemberID("m1"), MemberID("m2")])
        #expect(members.map(\.name) == ["Ada", "Bob"])
        #expect(members.allSatisfy { $0.present && $0.connected && $0.task.isEmpty && $0.stats == MemberStats() })
        #expect(t.room.memberCount == 2)
        #expect(t.room.connectedCount == 2)
    }

    @Test func namesAreTrimmed() throws {
        var t = TestRoom()
        let id = try t.add("  \tAda Lovelace \n")
        #expect(t.member(id)?.name == "Ada Lovelace")
    }

    @Test(arguments: [
        "", "   ", "\n\t",
        String(repeating: "x", count: 41),
        "Ada\u{202E}evil", "\u{202E}", "Ada\u{200F}", "Ada\u{2066}x", "Ada\u{2028}x",
        "Ada\nLovelace", "Ada\u{0}", "Ada\u{7F}", "Ada\u{1B}[31m", "Ada\u{9B}",
    ])
    func badNamesAreRefused(name: String) throws {
        var t = TestRoom()
        let before = t.snapshot
        #expect(caught { try t.join(name) }?.invalidField == "name")
        #expect(t.snapshot == before)
    }

    @Test(arguments: [
        ("A", "A"),
        (String(repeating: "x", count: 40), String(repeating: "x", count: 40)),
        ("  " + String(repeating: "y", count: 40) + "\n", String(repeating: "y", count: 40)),
        (String(repeating: "e\u{301}", count: 40), String(repeating: "e\u{301}", count: 40)),
        ("Zoë 🍅", "Zoë 🍅"),
        ("山田", "山田"),
    ])
    func goodNamesAreAccepted(name: String, expected: String) throws {
        var t = TestRoom()
        let id = try t.add(name)
        #expect(t.member(id)?.name == expected)
    }

    // MARK: Disconnection and resumption

    @Test func aDisconnectedMemberKeepsTheirPlaceAsNotPresent() throws {
        var t = TestRoom()
        let ada = try t.add("Ada")
        try t.add("Bob")
        t.advance(by: .seconds(5))
        let outcome = t.disconnect(ada)
        #expect(outcome.events == [.memberAway(ada, reason: .disconnected, connection: .lost)])
        #expect(outcome.stateChanged)
        let snapshot = try #require(t.member(ada))
        #expect(!snapshot.present)
        #expect(!snapshot.connected)
        #expect(t.snapshot.members.map(\.id) == [ada, MemberID("m2")])
        #expect(t.room.memberCount == 2)
        #expect(t.room.connectedCount == 1)
        #expect(t.room.nextWakeup() == t.now + .seconds(120), "the end of the grace period")
    }

    @Test func aMemberWhoseClientClosedIsAwayAsOneWhoseConnectionWasLostAndSaysSo() throws {
        var closed = TestRoom(), lost = TestRoom()
        let ada = try closed.add("Ada"), bea = try lost.add("Ada")
        try closed.add("Bob")
        try lost.add("Bob")
        try closed.send(.start, by: ada)
        try lost.send(.start, by: bea)
        closed.advance(by: .seconds(5))
        lost.advance(by: .seconds(5))
        let byClient = closed.disconnect(ada, ended: .closed)
        let dropped = lost.disconnect(bea, ended: .lost)
        #expect(byClient.events == [.memberAway(ada, reason: .disconnected, connection: .closed)])
        #expect(dropped.events == [.memberAway(bea, reason: .disconnected, connection: .lost)])
        // Only the words differ: the same place kept, the same focus time, the same interruption.
        #expect(closed.member(ada) == lost.member(bea))
        #expect(closed.member(ada)?.stats.interruptions == 1 && closed.member(ada)?.connected == false)
    }

    /// A new member whose connection said nothing before it dropped (join-and-drop) keeps their place only
    /// for the short silent grace; one who returns in time is back for good, with the full grace next time.
    @Test func aSilentlyLostMemberHasTheShortGrace() throws {
        var t = TestRoom(policy: RoomPolicy(reconnectGrace: .seconds(120), silentGrace: .seconds(10)))
        let host = try t.add("Host")
        let drop = try t.join("Drop")
        let back = try t.join("Back")
        t.room.disconnect(drop.memberID, now: t.now, silent: true)
        t.room.disconnect(back.memberID, now: t.now, silent: true)
        #expect(t.room.nextWakeup() == t.now + .seconds(10))
        t.advance(by: .seconds(9))
        _ = try t.join("Back", token: back.token)
        let outcome = t.advance(by: .seconds(1))
        #expect(outcome.events == [.memberLeft(drop.memberID, name: "Drop", reason: .expired)])
        #expect(t.room.memberCount == 2)
        // Back in time, the returning member is an ordinary one again: the full grace.
        t.disconnect(back.memberID)
        #expect(t.room.nextWakeup() == t.now + .seconds(120))
        #expect(t.member(host) != nil)
    }

    @Test func disconnectingTwiceOrAnUnknownMemberDoesNothing() throws {
        var t = TestRoom()
        let ada = try t.add("Ada")
        try t.add("Bob")
        t.disconnect(ada)
        let seq = t.room.seq
        #expect(t.disconnect(ada) == Outcome())
        #expect(t.disconnect(MemberID("m99")) == Outcome())
        #expect(t.room.seq == seq)
    }

    @Test func comingBackWithinTheGracePeriodResumesTheSameMember() throws {
        var t = TestRoom()
        let joined = try t.join("Ada")
        let ada = joined.memberID
        try t.add("Bob")
        try t.send(.start, by: ada)
        t.advance(by: .seconds(100))
        try t.send(.setTask("chapter 3"), by: ada)
        t.disconnect(ada)
        let statsBefore = try #require(t.member(ada)?.stats)
        #expect(statsBefore.focusTime == .seconds(100))

        t.advance(by: .seconds(120) - .nanoseconds(1))
        let back = try t.join("Ada", token: ResumeToken(joined.token.rawValue))
        #expect(back.memberID == ada)
        #expect(back.resumed)
        #expect(back.token.rawValue == joined.token.rawValue)
        #expect(back.outcome.events == [.memberReturned(ada)])
        let snapshot = try #require(t.member(ada))
        #expect(snapshot.connected && snapshot.present)
        #expect(snapshot.stats == statsBefore)
        #expect(snapshot.task == "chapter 3")
        #expect(t.snapshot.members.filter { $0.id == ada }.count == 1)
        #expect(t.room.memberCount == 2)

        // The grace period no longer applies to them.
        t.advance(by: .seconds(600))
        #expect(t.member(ada)?.connected == true)
    }

    @Test func afterTheGracePeriodTheMemberIsRemovedAndTheirTokenMakesANewMember() throws {
        var t = TestRoom()
        let joined = try t.join("Ada")
        let ada = joined.memberID
        try t.add("Bob")
        t.disconnect(ada)
        let lostAt = t.now

        #expect(t.advance(to: lostAt + .seconds(120) - .nanoseconds(1)).events.isEmpty)
        let outcome = t.advance(to: lostAt + .seconds(120))
        #expect(outcome.events == [.memberLeft(ada, name: "Ada", reason: .expired), .hostChanged(MemberID("m2"))])
        #expect(outcome.stateChanged)
        #expect(t.member(ada) == nil)
        #expect(t.room.memberCount == 1)

        let again = try t.join("Ada", token: joined.token)
        #expect(!again.resumed)
        #expect(again.memberID == MemberID("m3"), "ids are never reused")
        #expect(again.outcome.events == [.memberJoined(MemberID("m3"), name: "Ada")])
        #expect(t.member(MemberID("m3"))?.stats == MemberStats())
    }

    @Test func aLateJoinExpiresTheOldPlaceFirst() throws {
        var t = TestRoom()
        let joined = try t.join("Ada")
        try t.add("Bob")
        t.disconnect(joined.memberID)
        t.clock.advance(by: .seconds(500))              // nobody called advance in between
        let again = try t.join("Ada", token: joined.token)
        #expect(!again.resumed)
        #expect(again.outcome.events.contains(.memberLeft(joined.memberID, name: "Ada", reason: .expired)))
        #expect(t.room.memberCount == 2)
    }

    @Test func aTokenMatchingAConnectedMemberResumesThem() throws {
        var t = TestRoom()
        let joined = try t.join("Ada")
        let again = try t.join("Ada", token: joined.token)
        #expect(again.resumed)
        #expect(again.memberID == joined.memberID)
        #expect(t.room.memberCount == 1)
        #expect(t.snapshot.members.count == 1)
        #expect(t.member(joined.memberID)?.connected == true)
    }

    @Test(arguments: ["", "token-", "token-11", "token-1 ", "TOKEN-1", "token-2", "token-1\u{0}", "tokën-1"])
    func wrongTokensNeverResume(token: String) throws {
        var t = TestRoom()
        let joined = try t.join("Ada")                  // token-1
        #expect(joined.token.rawValue == "token-1")
        t.disconnect(joined.memberID)
        let other = try t.join("Eve", token: ResumeToken(token))
        #expect(!other.resumed)
        #expect(other.memberID != joined.memberID)
        #expect(t.member(joined.memberID)?.connected == false)
    }

    @Test func resumeTokenHashesCompareExactlyAndTokensNeverPrint() {
        #expect(ResumeToken.sameHash(ResumeToken("abc").hash, ResumeToken("abc").hash))
        #expect(!ResumeToken.sameHash(ResumeToken("abc").hash, ResumeToken("abd").hash))
        #expect(!ResumeToken.sameHash("abc", "ab"))
        #expect(!ResumeToken.sameHash("ab", "abc"))
        #expect(!ResumeToken.sameHash("abc", ""))
        #expect(!ResumeToken.sameHash("xbc", "abc"))
        #expect(!"\(ResumeToken("hunter2"))".contains("hunter2"))
    }

    /// Known answers (FIPS 180-4's examples, and lengths either side of the padding boundaries).
    @Test(arguments: [
        ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
        ("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
         "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"),
        (String(repeating: "a", count: 55), "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318"),
        (String(repeating: "a", count: 56), "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a"),
        (String(repeating: "a", count: 64), "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb"),
        (String(repeating: "a", count: 1000), "41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3"),
    ])
    func resumeTokenHashIsSHA256(text: String, digest: String) {
        #expect(ResumeToken(text).hash == digest)
    }

    @Test func theRoomKeepsOnlyTheTokensHash() throws {
        var t = TestRoom()
        let joined = try t.join("Ada")
        let records = t.room.memberRecords(wallOffsetNanoseconds: 0)
        #expect(records.map(\.tokenHash) == [joined.token.hash])
        #expect(!records[0].tokenHash.contains(joined.token.rawValue))
        let back = try t.join("Ada", token: joined.token)
        #expect(back.resumed)
        #expect(back.token.rawValue == joined.token.rawValue, "the welcome hands the same token back")
        #expect(!(try t.join("Eve", token: ResumeToken(joined.token.hash))).resumed, "the hash is no token")
    }

    // MARK: Leaving and limits

    @Test func leavingRemovesTheMemberForGood() throws {
        var t = TestRoom()
        let joined = try t.join("Ada")
        try t.add("Bob")
        let outcome = t.leave(joined.memberID)
        #expect(outcome.events == [.memberLeft(joined.memberID, name: "Ada", reason: .left), .hostChanged(MemberID("m2"))])
        #expect(outcome.stateChanged)
        #expect(t.member(joined.memberID) == nil)
        #expect(t.room.memberCount == 1)
        #expect(caught { try t.send(.start, by: joined.memberID) } == .unknownMember)
        #expect(!(try t.join("Ada", token: joined.token)).resumed)
    }

    @Test func aDisconnectedMemberCanLeave() throws {
        var t = TestRoom()
        let ada = try t.add("Ada")
        try t.add("Bob")
        t.disconnect(ada)
        #expect(t.leave(ada).events == [.memberLeft(ada, name: "Ada", reason: .left), .hostChanged(MemberID("m2"))])
        #expect(t.room.nextWakeup() == nil, "no grace period left to wait for")
    }

    @Test func aFullRoomRefusesNewMembersButNotReturningOnes() throws {
        var t = TestRoom(policy: RoomPolicy(maxMembers: 2))
        let ada = try t.join("Ada")
        try t.add("Bob")
        #expect(caught { try t.join("Cyd") } == .roomFull)

        // A disconnected member still holds their place during the grace period...
        t.disconnect(ada.memberID)
        #expect(caught { try t.join("Cyd") } == .roomFull)
        #expect(try t.join("Ada", token: ada.token).resumed)

        // ...and frees it when they leave.
        t.leave(ada.memberID)
        #expect(try t.add("Cyd") == MemberID("m3"))
        #expect(t.room.memberCount == 2)
    }

    @Test func commandsFromMembersNotConnectedAreRefused() throws {
        var t = TestRoom()
        let ada = try t.add("Ada")
        try t.add("Bob")
        #expect(caught { try t.send(.start, by: MemberID("m42")) } == .unknownMember)
        t.disconnect(ada)
        let commands: [Room.Command] = [.start, .pause, .resume, .skip, .reset, .extend(seconds: 60),
                                        .configure(.standard), .setTask("x"), .setAway(true)]
        for command in commands {
            #expect(caught { try t.send(command, by: ada) } == .unknownMember, "\(command)")
        }
        #expect(t.room.phase == .idle)
    }

    // MARK: Tasks and away

    @Test func tasksAreTrimmedAndMayBeEmpty() throws {
        var t = TestRoom()
        let ada = try t.add("Ada")
        let outcome = try t.send(.setTask("  write the tests  "), by: ada)
        #expect(outcome.stateChanged)
        #expect(t.member(ada)?.task == "write the tests")
        try t.send(.setTask(String(repeating: "t", count: 200)), by: ada)
        #expect(t.member(ada)?.task.count == 200)
        try t.send(.setTask("   "), by: ada)
        #expect(t.member(ada)?.task == "")
    }

    @Test(arguments: [String(repeating: "t", count: 201), "line\nbreak", "tab\tinside", "\u{202E}reversed", "bell\u{7}"])
    func badTasksAreRefused(text: String) throws {
        var t = TestRoom()
        let ada = try t.add("Ada")
        try t.send(.setTask("before"), by: ada)
        #expect(caught { try t.send(.setTask(text), by: ada) }?.invalidField == "text")
        #expect(t.member(ada)?.task == "before")
    }

    @Test func steppingAwayAndBack() throws {
        var t = TestRoom()
        let ada = try t.add("Ada")
        let away = try t.send(.setAway(true), by: ada)
        #expect(away.events == [.memberAway(ada, reason: .away)])
        #expect(t.member(ada)?.present == false)
        #expect(t.member(ada)?.connected == true)
        let back = try t.send(.setAway(false), by: ada)
        #expect(back.events == [.memberBack(ada)])
        #expect(t.member(ada)?.present == true)
    }

    @Test func anAwayMemberStillCountsAsConnectedForAutoStart() throws {
        var t = TestRoom(settings: RoomSettings(autoStart: true))
        let ada = try t.add("Ada")
        try t.send(.start, by: ada)
        try t.send(.setAway(true), by: ada)
        let deadline = try #require(t.deadline)
        #expect(t.advance(to: deadline).completions.first?.autoStarted == true)
    }
}
