@testable import PomodoroServer
import PomodoroCore
import PomodoroProtocol
import Testing

/// The join workflow's steps, one path at a time, with no hub around them: each step is given what the hub
/// sees of the room and must say what happens next.
@Suite struct JoinFlowTests {
    static let room = try! RoomID(validating: "team")
    /// A lock that matches nothing: cheap to make (no hash), and the flow never looks inside.
    static let lock = PasscodeVerifier(encoded: "lock-of-the-room")
    static let otherLock = PasscodeVerifier(encoded: "lock-of-another-room")
    static let stored = StoredRoom(record: Room(id: room, now: .zero).record(wallOffsetNanoseconds: 0), members: [],
                                   passcode: nil)
    static let full = Refusal(code: .roomLimit, message: "the server holds as many rooms as it may", field: "room")

    static func flow(passcode: String? = nil, token: String? = nil, store: Bool = true) -> JoinFlow {
        JoinFlow(JoinFlow.Request(room: "team", name: "Ada", token: token, passcode: passcode, control: nil, ref: .string("j")),
                 room: room, hasStore: store)
    }

    static func refusal(_ action: JoinFlow.Action) -> ErrorCode? {
        if case .refuse(let refusal) = action { refusal.code } else { nil }
    }

    // MARK: A room in memory

    @Test func anOpenRoomInMemoryAdmitsAtOnce() {
        var flow = Self.flow()
        #expect(flow.start(.live(serial: 1, lock: nil, resumes: false)) == .admit)
        #expect(flow.isDone)
    }

    @Test func aMemberComingBackPassesTheLockWithTheirToken() {
        var flow = Self.flow(token: "abc")
        #expect(flow.start(.live(serial: 1, lock: Self.lock, resumes: true)) == .admit)
    }

    @Test func aLockedRoomWithoutAPasscodeIsRefusedWithoutAHash() {
        var flow = Self.flow()
        let action = flow.start(.live(serial: 1, lock: Self.lock, resumes: false))
        #expect(action == .refuse(Refusal(code: .badPasscode, message: "this room is locked: join with its passcode",
                                                   field: "passcode")))
        #expect(flow.isDone)
    }

    @Test func aLockedRoomChecksThePasscodeThenAdmits() {
        var flow = Self.flow(passcode: "open sesame")
        #expect(flow.start(.live(serial: 4, lock: Self.lock, resumes: false)) == .check("open sesame", against: Self.lock))
        #expect(!flow.isDone)
        #expect(flow.checked(matched: true, room: .live(serial: 4, lock: Self.lock, resumes: false)) == .admit)
        #expect(flow.isDone)
    }

    @Test func aWrongPasscodeIsRefused() {
        var flow = Self.flow(passcode: "guess")
        _ = flow.start(.live(serial: 4, lock: Self.lock, resumes: false))
        #expect(flow.checked(matched: false, room: .live(serial: 4, lock: Self.lock, resumes: false))
                == .refuse(Refusal(code: .badPasscode, message: "wrong passcode", field: "passcode")))
    }

    @Test func aRoomThatClosedOrWasMadeAnewDuringTheCheckIsNotJoined() {
        for room in [JoinFlow.Sighting.absent(creation: nil), .live(serial: 5, lock: Self.lock, resumes: false)] {
            var flow = Self.flow(passcode: "open sesame")
            _ = flow.start(.live(serial: 4, lock: Self.lock, resumes: false))
            #expect(flow.checked(matched: true, room: room)
                    == .refuse(Refusal(code: .invalidState, message: "the room closed meanwhile; join again")))
        }
    }

    @Test func theGateRefusingACheckRefusesTheJoin() {
        var flow = Self.flow(passcode: "open sesame")
        _ = flow.start(.live(serial: 4, lock: Self.lock, resumes: false))
        #expect(flow.gateRefused() == .refuse(Refusal(code: .rateLimited,
                                                               message: "too many wrong passcodes; try again in a minute",
                                                               field: "passcode")))
        #expect(flow.isDone)
    }

    // MARK: A new room

    @Test func withoutAStoreAnOpenRoomIsCreatedAtOnce() {
        var flow = Self.flow(store: false)
        #expect(flow.start(.absent(creation: nil)) == .create(lock: nil))
    }

    @Test func theRoomLimitsHoldBeforeAnythingIsRead() {
        var flow = Self.flow()
        #expect(flow.start(.absent(creation: Self.full)) == .refuse(Self.full))
    }

    @Test func aNewRoomsPasscodeIsHashedFirst() {
        var flow = Self.flow(passcode: "open sesame", store: false)
        #expect(flow.start(.absent(creation: nil)) == .hash("open sesame"))
        #expect(flow.hashed(Self.lock, room: .absent(creation: nil)) == .create(lock: Self.lock))
    }

    @Test func aPasscodeOfTheWrongLengthIsRefusedUnhashed() {
        var flow = Self.flow(passcode: "abc", store: false)
        #expect(Self.refusal(flow.start(.absent(creation: nil))) == .badRequest)
    }

    @Test func aRoomCreatedByAnotherDuringTheHashIsJoinedBehindTheirLock() {
        var flow = Self.flow(passcode: "open sesame", store: false)
        _ = flow.start(.absent(creation: nil))
        #expect(flow.hashed(Self.lock, room: .live(serial: 9, lock: Self.otherLock, resumes: false))
                == .check("open sesame", against: Self.otherLock))
        #expect(flow.checked(matched: true, room: .live(serial: 9, lock: Self.otherLock, resumes: false)) == .admit)
    }

    @Test func theLimitsHoldAgainAfterTheHash() {
        var flow = Self.flow(passcode: "open sesame", store: false)
        _ = flow.start(.absent(creation: nil))
        #expect(flow.hashed(Self.lock, room: .absent(creation: Self.full)) == .refuse(Self.full))
    }

    // MARK: A room the store may have

    @Test func aRoomNotInMemoryIsLookedUp() {
        var flow = Self.flow()
        #expect(flow.start(.absent(creation: nil)) == .lookUp)
        #expect(!flow.isDone)
        #expect(flow.lookedUp(.notFound, room: .absent(creation: nil)) == .create(lock: nil))
    }

    @Test func aRoomNobodyHasIsCreatedWithItsPasscodeHashed() {
        var flow = Self.flow(passcode: "open sesame")
        _ = flow.start(.absent(creation: nil))
        #expect(flow.lookedUp(.notFound, room: .absent(creation: nil)) == .hash("open sesame"))
        #expect(flow.hashed(Self.lock, room: .absent(creation: nil)) == .create(lock: Self.lock))
    }

    @Test func anOpenStoredRoomIsBroughtBack() {
        var flow = Self.flow()
        _ = flow.start(.absent(creation: nil))
        #expect(flow.lookedUp(.found(Self.stored, lock: nil, resumes: false), room: .absent(creation: nil))
                == .bringBack(Self.stored))
    }

    @Test func aLockedStoredRoomComesBackOnlyOnceThePasscodeMatches() {
        var flow = Self.flow(passcode: "open sesame")
        _ = flow.start(.absent(creation: nil))
        #expect(flow.lookedUp(.found(Self.stored, lock: Self.lock, resumes: false), room: .absent(creation: nil))
                == .check("open sesame", against: Self.lock))
        #expect(flow.checked(matched: true, room: .absent(creation: nil)) == .bringBack(Self.stored))

        var wrong = Self.flow(passcode: "guess")
        _ = wrong.start(.absent(creation: nil))
        _ = wrong.lookedUp(.found(Self.stored, lock: Self.lock, resumes: false), room: .absent(creation: nil))
        #expect(Self.refusal(wrong.checked(matched: false, room: .absent(creation: nil))) == .badPasscode)
    }

    @Test func aStoredRoomBroughtBackByAnotherJoinMeanwhileIsJoined() {
        var flow = Self.flow(passcode: "open sesame")
        _ = flow.start(.absent(creation: nil))
        _ = flow.lookedUp(.found(Self.stored, lock: Self.lock, resumes: false), room: .absent(creation: nil))
        #expect(flow.checked(matched: true, room: .live(serial: 2, lock: Self.lock, resumes: false)) == .admit)
    }

    /// Issue 27, finding 2: the room another join brought back may have been locked anew by its host before
    /// this joiner's check of the stored lock came back; the lock it has now decides, not the stored one.
    @Test func aStoredRoomBroughtBackAndLockedAnewMeanwhileNeedsItsNewLock() {
        var flow = Self.flow(passcode: "open sesame")
        _ = flow.start(.absent(creation: nil))
        _ = flow.lookedUp(.found(Self.stored, lock: Self.lock, resumes: false), room: .absent(creation: nil))
        #expect(flow.checked(matched: true, room: .live(serial: 2, lock: Self.otherLock, resumes: false))
                == .check("open sesame", against: Self.otherLock))
        #expect(!flow.isDone)
        #expect(Self.refusal(flow.checked(matched: false, room: .live(serial: 2, lock: Self.otherLock, resumes: false)))
                == .badPasscode)
    }

    @Test func aStoredMemberComesBackWithoutThePasscode() {
        var flow = Self.flow(token: "abc")
        _ = flow.start(.absent(creation: nil))
        #expect(flow.lookedUp(.found(Self.stored, lock: Self.lock, resumes: true), room: .absent(creation: nil))
                == .bringBack(Self.stored))
    }

    @Test func aRoomInMemoryByTheTimeTheStoreAnswersIsJoinedThere() {
        var flow = Self.flow()
        _ = flow.start(.absent(creation: nil))
        #expect(flow.lookedUp(.found(Self.stored, lock: nil, resumes: false),
                              room: .live(serial: 3, lock: nil, resumes: false)) == .admit)
    }

    @Test func theLimitsHoldAgainWhenTheStoreAnswers() {
        var missing = Self.flow()
        _ = missing.start(.absent(creation: nil))
        #expect(missing.lookedUp(.notFound, room: .absent(creation: Self.full)) == .refuse(Self.full))
        var stored = Self.flow()
        _ = stored.start(.absent(creation: nil))
        #expect(stored.lookedUp(.found(Self.stored, lock: nil, resumes: false), room: .absent(creation: Self.full))
                == .refuse(Self.full))
    }

    @Test func aTakeWaitingForTheCoordinatorSaysSo() {
        var flow = Self.flow()
        _ = flow.start(.absent(creation: nil))
        let action = flow.lookedUp(.coordinatorAway, room: .absent(creation: nil))
        #expect(action == .refuse(.coordinatorAway))
        guard case .refuse(let refusal) = action else { return }
        #expect(refusal.code == .unavailable && refusal.message.contains("coordinator (Redis)"))
    }

    @Test func aStoreThatCannotBeReadRefusesTheJoin() {
        var flow = Self.flow()
        _ = flow.start(.absent(creation: nil))
        #expect(flow.lookedUp(.failed, room: .absent(creation: nil))
                == .refuse(Refusal(code: .unavailable, message: "the server could not read its store just now; try again")))
    }
}
