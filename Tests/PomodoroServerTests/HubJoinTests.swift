@testable import PomodoroServer
import PomodoroCore
import PomodoroNet
import PomodoroProtocol
import PomodoroStore
import PomodoroTestSupport
import Testing

/// Joins through the hub with no socket: store reads, passcode hashes and commits answer when the test
/// releases them, so joins racing each other and frames waiting behind a join are tested step by step.
@Suite struct HubJoinTests {
    static func labels(_ messages: [ServerMessage]) -> [String] { messages.map(\.label) }

    /// A room as a store keeps it, with settings a new room would not have, so a test can tell it came back.
    static func storedRoom(_ name: String, passcode: String? = nil) -> (record: RoomRecord, passcode: String?) {
        let room = Room(id: try! RoomID(validating: name), settings: RoomSettings(focus: 1234, shortBreak: 321),
                        now: .zero)
        return (room.record(wallOffsetNanoseconds: 0), passcode.map { PasscodeVerifier(passcode: $0).encoded })
    }

    @Test func twoJoinsRacingForANewRoomShareOneReadAndOneRoom() throws {
        let t = TestHub(store: try HeldStore())
        let a = t.connect(peer: "203.0.113.1"), b = t.connect(peer: "203.0.113.2")
        t.send(.join(room: "team", name: "Ada", token: nil), ref: "a", from: a)
        t.send(.join(room: "team", name: "Bo", token: nil), ref: "b", from: b)
        // Both wait for the one look-up; nothing is answered yet.
        #expect(t.store!.readCount == 1)
        #expect(t.transport.sent.isEmpty)
        #expect(t.hub.roomCount == 0)

        t.settle()
        #expect(t.store!.readCount == 1)
        #expect(t.hub.roomCount == 1)
        let toA = try t.messages(to: a), toB = try t.messages(to: b)
        let ada = try #require(toA.first?.you), bo = try #require(toB.first?.you)
        #expect(ada.id != bo.id)
        #expect(!ada.resumed && !bo.resumed)
        // The second joiner is welcomed into the first one's room, and the first hears of them.
        #expect(toB.first?.snapshot?.members.map(\.name) == ["Ada", "Bo"])
        #expect(toA.contains { if case .event(_, .memberJoined(_, "Bo"), _) = $0 { true } else { false } })
        #expect(toA.last?.snapshot?.memberCount == 2)
    }

    @Test func twoJoinsRacingForAStoredRoomBringItBackOnce() throws {
        let store = try HeldStore()
        let stored = Self.storedRoom("kept")
        try store.store.apply([.saveRoom(stored.record, passcode: nil)])
        let t = TestHub(store: store)
        let a = t.connect(peer: "203.0.113.1"), b = t.connect(peer: "203.0.113.2")
        t.send(.join(room: "kept", name: "Ada", token: nil), ref: "a", from: a)
        t.send(.join(room: "kept", name: "Bo", token: nil), ref: "b", from: b)
        #expect(store.readCount == 1)

        t.settle()
        #expect(store.readCount == 1)
        #expect(t.hub.roomCount == 1)
        let welcomeA = try #require(try t.messages(to: a).first?.snapshot)
        let welcomeB = try #require(try t.messages(to: b).first?.snapshot)
        // The stored settings came back, and both joined the same room.
        #expect(welcomeA.settings.focus == 1234 && welcomeB.settings.focus == 1234)
        #expect(welcomeB.members.map(\.name) == ["Ada", "Bo"])
    }

    @Test func joinsRacingForALockedStoredRoomEachShowThePasscode() throws {
        let store = try HeldStore()
        let stored = Self.storedRoom("vault", passcode: "open sesame")
        try store.store.apply([.saveRoom(stored.record, passcode: stored.passcode)])
        let t = TestHub(store: store)
        let a = t.connect(peer: "203.0.113.1"), b = t.connect(peer: "203.0.113.2")
        t.send(.join(room: "vault", name: "Ada", token: nil, passcode: "open sesame"), ref: "a", from: a)
        t.send(.join(room: "vault", name: "Eve", token: nil, passcode: "guess"), ref: "b", from: b)
        #expect(store.readCount == 1)
        store.releaseReads()
        t.transport.runPosted()
        // One check each, off the service thread; nothing is loaded into memory before a check passes.
        #expect(t.work.pending == 2)
        #expect(t.hub.roomCount == 0)

        t.settle()
        #expect(store.readCount == 1)
        #expect(Self.labels(try t.messages(to: a)).first == "welcome")
        let refusal = try #require(try t.messages(to: b).first?.failure)
        #expect(refusal.code == .badPasscode && refusal.message == "wrong passcode")
        #expect(t.hub.roomCount == 1)
    }

    @Test func framesPipelinedBehindASlowJoinTakeEffectInOrder() throws {
        let t = TestHub(store: try HeldStore())
        let a = t.connect()
        t.send(.join(room: "team", name: "Ada", token: nil), ref: "j", from: a)
        t.send(.task(text: "write the report"), ref: "t", from: a)
        t.send(.start, ref: "s", from: a)
        t.send(.ping, ref: "p", from: a)
        // Nothing has been answered while the look-up waits: not even the ping, which comes after the join.
        #expect(t.transport.sent[a] == nil)

        t.settle()
        let messages = try t.messages(to: a)
        let replies = Self.labels(messages).filter { $0 != "state" && !$0.hasPrefix("event") && $0 != "tick" }
        #expect(replies == ["welcome", "ok task", "ok start", "pong"])
        let last = try #require(messages.last { $0.snapshot != nil }?.snapshot)
        #expect(last.running)
        #expect(last.members.first?.task == "write the report")
    }

    @Test func framesWaitBehindAPasscodeHashToo() throws {
        let t = TestHub()
        let a = t.connect()
        t.send(.join(room: "vault", name: "Ada", token: nil, passcode: "open sesame"), ref: "j", from: a)
        t.send(.start, ref: "s", from: a)
        #expect(t.work.pending == 1)
        #expect(t.transport.sent[a] == nil)
        t.settle()
        #expect(Self.labels(try t.messages(to: a)).filter { !$0.hasPrefix("event") && $0 != "state" }
                == ["welcome", "ok start"])
        #expect(try t.messages(to: a).first?.snapshot?.locked == true)
    }

    @Test func theRoomLimitRefusesANewRoomButNotAJoin() throws {
        var configuration = ServerConfiguration(port: 0, webRoot: nil)
        configuration.limits.maxRooms = 1
        let t = TestHub(configuration: configuration)
        let a = t.connect(peer: "203.0.113.1"), b = t.connect(peer: "203.0.113.2"), c = t.connect(peer: "203.0.113.3")
        t.send(.join(room: "one", name: "Ada", token: nil), from: a)
        t.send(.join(room: "two", name: "Bo", token: nil), from: b)
        t.send(.join(room: "one", name: "Cy", token: nil), from: c)
        t.settle()
        let refusal = try #require(try t.messages(to: b).first?.failure)
        #expect(refusal.code == .roomLimit && refusal.message == "the server holds as many rooms as it may")
        #expect(try t.messages(to: c).first?.label == "welcome")
        #expect(t.hub.roomCount == 1)
    }

    @Test func oneAddressHoldsAtMostItsMembersOfARoom() throws {
        var configuration = ServerConfiguration(port: 0, webRoot: nil)
        configuration.limits.membersPerAddressPerRoom = 2
        let t = TestHub(configuration: configuration)
        let joined = (0..<3).map { _ in t.connect(peer: "198.51.100.9") }
        for (i, connection) in joined.enumerated() { t.send(.join(room: "team", name: "M\(i)", token: nil), from: connection) }
        t.settle()
        #expect(try joined.map { try t.messages(to: $0).first?.label } == ["welcome", "welcome", "error room_full"])
        // Another address is let in.
        let other = t.connect(peer: "198.51.100.10")
        t.send(.join(room: "team", name: "Other", token: nil), from: other)
        #expect(try t.messages(to: other).first?.label == "welcome")
    }

    @Test func theSameMemberJoiningAgainReplacesTheOlderConnection() throws {
        let t = TestHub()
        let first = t.connect(), second = t.connect()
        t.send(.join(room: "team", name: "Ada", token: nil), from: first)
        let you = try #require(try t.messages(to: first).first?.you)
        t.send(.join(room: "team", name: "Ada", token: you.token), from: second)
        let welcome = try #require(try t.messages(to: second).first?.you)
        #expect(welcome.resumed && welcome.id == you.id)
        let replaced = try #require(try t.messages(to: first).last?.failure)
        #expect(replaced.code == .replaced)
        #expect(t.transport.closes[first] == FakeTransport.Close(code: 4001, reason: "replaced"))
        // The older connection speaks for nobody now: its start changes nothing.
        t.send(.start, ref: "s", from: first)
        #expect(try t.messages(to: second).compactMap(\.snapshot).allSatisfy { !$0.running })
    }

    @Test func aRoomThatClosesWhileAPasscodeIsCheckedIsNotJoined() throws {
        var configuration = ServerConfiguration(port: 0, webRoot: nil)
        configuration.roomPolicy.emptyRoomLifetime = .seconds(30)
        let t = TestHub(configuration: configuration)
        let owner = t.connect(peer: "203.0.113.1"), late = t.connect(peer: "203.0.113.2")
        t.send(.join(room: "vault", name: "Ada", token: nil, passcode: "open sesame"), from: owner)
        t.settle()
        t.send(.join(room: "vault", name: "Bo", token: nil, passcode: "open sesame"), ref: "late", from: late)
        #expect(t.work.pending == 1)
        // The owner leaves and the empty room expires while the late joiner's passcode is being checked.
        t.send(.leave, from: owner)
        t.pass(.seconds(31), hashes: false)
        #expect(t.hub.roomCount == 0)

        t.settle()
        let refusal = try #require(try t.messages(to: late).first?.failure)
        #expect(refusal.code == .invalidState && refusal.message == "the room closed meanwhile; join again")
        #expect(t.hub.roomCount == 0)
    }

    @Test func framesPilingUpBehindAJoinAreBounded() throws {
        let t = TestHub(store: try HeldStore())
        let a = t.connect()
        t.send(.join(room: "team", name: "Ada", token: nil), ref: "j", from: a)
        let waiting = ServerLimits.framesWaitingBehindARequest
        for n in 0..<(waiting + 3) { t.send(.ping, ref: "p\(n)", from: a) }
        // Those past the bound are refused at once; the rest wait their turn.
        #expect(try t.messages(to: a).map(\.label) == Array(repeating: "error rate_limited", count: 3))

        t.settle()
        let replies = try t.messages(to: a).map(\.label).dropFirst(3).filter { !$0.hasPrefix("event") && $0 != "state" }
        #expect(replies == ["welcome"] + Array(repeating: "pong", count: waiting))
    }

    @Test func aJoinWhoseConnectionWentAwayIsDropped() throws {
        let t = TestHub(store: try HeldStore())
        let a = t.connect()
        t.send(.join(room: "team", name: "Ada", token: nil), from: a)
        t.disconnect(a)
        t.settle()
        // The look-up answered, but nobody was there to join: no room was made.
        #expect(t.hub.roomCount == 0)
        #expect(t.transport.sent[a] == nil)
    }
}
