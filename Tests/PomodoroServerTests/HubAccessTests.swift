@testable import PomodoroServer
import PomodoroCore
import PomodoroNet
import PomodoroProtocol
import PomodoroTestSupport
import Testing

/// Who may see a room (`RoomAccess`), through the hub with no socket, where the races of issue 27 can be
/// set up exactly: store answers, passcode hashes and posted work run only when the test says.
@Suite struct HubAccessTests {
    static let attacker = "198.51.100.66", owner = "203.0.113.1", member = "203.0.113.2"
    static let vault = try! RoomID(validating: "vault")

    // MARK: The rule

    @Test func theRule() {
        let lock = PasscodeVerifier(encoded: "lock-of-the-room"), other = PasscodeVerifier(encoded: "another-lock")
        #expect(RoomAccess.verdict(lock: nil, isMember: false, opened: nil, passcode: nil) == .allowed)
        #expect(RoomAccess.verdict(lock: lock, isMember: true, opened: nil, passcode: nil) == .allowed)
        #expect(RoomAccess.verdict(lock: lock, isMember: false, opened: lock.encoded, passcode: nil) == .allowed)
        #expect(RoomAccess.verdict(lock: lock, isMember: false, opened: nil, passcode: nil) == .refused)
        // A passcode that opened another lock (the one before a change) opens nothing now: checked again.
        #expect(RoomAccess.verdict(lock: lock, isMember: false, opened: other.encoded, passcode: "soup")
                == .check("soup", against: lock))
        #expect(RoomAccess.verdict(lock: lock, isMember: false, opened: other.encoded, passcode: nil) == .refused)
    }

    @Test func aWaitLearnsOfALockChangeOfItsRoomOnly() throws {
        var access = RoomAccess()
        let other = try RoomID(validating: "other")
        let first = access.begin(Self.vault), second = access.begin(Self.vault), elsewhere = access.begin(other)
        access.lockChanged(Self.vault)
        let third = access.begin(Self.vault)
        let ended = [access.end(first), access.end(second), access.end(third), access.end(elsewhere)]
        #expect(ended == [false, false, true, true])
        #expect(access.waitCount == 0)
        access.lockChanged(Self.vault)   // nobody waits: nothing is kept
        let later = access.begin(Self.vault)
        let kept = access.end(later)
        #expect(kept)
    }

    // MARK: Finding 2: a guess judged against the lock the room has when its turn comes

    /// A hub with a database: the attacker's own locked room `mine` in memory, and the locked `vault`, whose
    /// last member left, gone from memory (its lock only in the store).
    static func vaultGoneFromMemory() throws -> TestHub {
        let t = TestHub(store: try HeldStore())
        t.send(.join(room: "mine", name: "Mallory", token: nil, passcode: "my own pass"), from: t.connect(peer: attacker))
        let ada = t.connect(peer: owner)
        t.send(.join(room: "vault", name: "Ada", token: nil, passcode: "open sesame"), from: ada)
        t.settle()
        t.send(.task(text: "the secret plan"), from: ada)
        t.send(.leave, from: ada)
        t.pass(.seconds(3600))
        try #require(t.hub.rooms[Self.vault] == nil)
        return t
    }

    enum Read: String, CaseIterable, CustomTestStringConvertible {
        case stats, httpStats = "/stats", history = "/history", schedules = "/schedules", calendar = "/calendar.ics"
        var testDescription: String { self == .stats ? "WebSocket stats" : "GET /api/rooms/vault\(rawValue)" }
    }

    /// Asks for the vault's journal with a wrong passcode from the attacker's address; returns the answer's
    /// outcome once there is one: "ok", or the error's code.
    static func guess(_ read: Read, in t: TestHub) -> () throws -> String? {
        if read == .stats {
            let c = t.connect(peer: attacker)
            t.send(.stats(room: "vault", days: 7, tz: nil, passcode: "a wrong guess"), from: c)
            return {
                guard let last = try t.messages(to: c).last else { return nil }
                return last.failure.map { $0.code.rawValue } ?? (last.label == "stats" ? "ok" : last.label)
            }
        }
        let response = RecordedResponse()
        t.hub.receivedHTTP(HTTPRequest(method: .get, path: "/api/rooms/vault" + read.rawValue,
                                       authorization: "Bearer a wrong guess", peer: attacker), responder: response)
        return {
            guard let answer = response.response else { return nil }
            switch answer.status {
            case 200: return "ok"
            case 401: return ErrorCode.badPasscode.rawValue
            case 429: return ErrorCode.rateLimited.rawValue
            default: return "\(answer.status)"
            }
        }
    }

    /// Issue 27, finding 2, as reported: the attacker fills their turns at the passcode gate with right
    /// passcodes of their own room, guesses the vault's while it is only stored, and a member comes back
    /// before the guess's turn. The guess must be checked against the lock the room has then, and counted.
    @Test(arguments: Read.allCases)
    func aGuessWhoseTurnComesAfterTheRoomIsBackIsCheckedAndCounted(read: Read) throws {
        let t = try Self.vaultGoneFromMemory()
        let store = try #require(t.store)
        // A member comes back with the passcode: the store has answered, the check waits for its hash.
        let back = t.connect(peer: Self.member)
        t.send(.join(room: "vault", name: "Ada", token: nil, passcode: "open sesame"), from: back)
        store.releaseReads()
        t.transport.runPosted()
        #expect(t.work.pending == 1)

        // Two right passcodes of the attacker's own room hold the address's two turns (their reads wait)...
        for _ in 0..<2 {
            t.send(.stats(room: "mine", days: 1, tz: nil, passcode: "my own pass"), from: t.connect(peer: Self.attacker))
        }
        #expect(store.pendingReads == 2)
        // ...so the guess waits for its turn while the vault is only in the store.
        let answer = Self.guess(read, in: t)
        #expect(try answer() == nil)

        // The member is back in before the guess's turn comes.
        t.work.runAll()
        t.transport.runPosted()
        #expect(try t.messages(to: back).first?.label == "welcome")
        #expect(t.hub.rooms[Self.vault]?.passcode != nil)

        t.settle()
        #expect(try answer() == ErrorCode.badPasscode.rawValue, "the vault was read with a wrong passcode")
        // It was counted: four more wrong guesses reach the limit, and the next is refused unchecked.
        let more = t.connect(peer: Self.attacker)
        for n in 1...5 {
            t.send(.stats(room: "vault", days: 1, tz: nil, passcode: "guess \(n)"), from: more)
            t.settle()
        }
        #expect(try t.messages(to: more).compactMap(\.failure?.code)
                == [.badPasscode, .badPasscode, .badPasscode, .badPasscode, .rateLimited])
    }

    /// A reader whose check is answered after the lock changed asks again against the new lock.
    @Test func aJournalReadWhoseLockChangedWhileItWasReadIsAskedAgain() throws {
        let t = TestHub(store: try HeldStore())
        let host = t.connect(peer: Self.owner)
        t.send(.join(room: "vault", name: "Hana", token: nil, passcode: "open sesame"), from: host)
        t.settle()
        let reader = t.connect(peer: Self.attacker)
        t.send(.stats(room: "vault", days: 1, tz: nil, passcode: "open sesame"), from: reader)
        // The read (and its check of the old passcode) waits; the host's new lock lands first.
        t.send(.passcode("new soup"), from: host)
        t.work.runAll()
        t.transport.runPosted()
        #expect(t.hub.rooms[Self.vault]?.passcode?.matches("new soup") == true)
        t.settle()
        #expect(try t.messages(to: reader).last?.failure?.code == .badPasscode)
    }

    enum Look: String, CaseIterable {
        case observe, snapshot, events
    }

    /// Finding 2 for the live room: a passcode checked against a lock the host replaced while the hash ran
    /// must open the new lock too (`observe`, `GET /api/rooms/{room}` and its events alike).
    @Test(arguments: Look.allCases) func aPasscodeCheckedAgainstAReplacedLockMustOpenTheNewOne(look: Look) throws {
        let t = TestHub()
        let host = t.connect(peer: Self.owner)
        t.send(.join(room: "vault", name: "Hana", token: nil, passcode: "open sesame"), from: host)
        t.settle()
        t.send(.passcode("new soup"), ref: "p", from: host)
        #expect(t.work.pending == 1)
        // Someone with the old passcode asks now: their check starts against the old lock.
        let watcher = t.connect(peer: Self.attacker)
        let response = RecordedResponse()
        switch look {
        case .observe: t.send(.observe(room: "vault", passcode: "open sesame"), from: watcher)
        case .snapshot, .events:
            t.hub.receivedHTTP(HTTPRequest(method: .get, path: look == .events ? "/api/rooms/vault/events" : "/api/rooms/vault",
                                           authorization: "Bearer open sesame", peer: Self.attacker),
                               responder: response)
        }
        #expect(t.work.pending == 2)
        t.settle()   // the new lock lands first, then the old passcode's check
        switch look {
        case .observe:
            #expect(try t.messages(to: watcher).map(\.label) == ["error bad_passcode"])
            #expect(t.hub.rooms[Self.vault]?.observers.isEmpty == true)
        case .snapshot, .events:
            #expect(response.response?.status == 401)
            #expect(response.streamed == nil && t.hub.rooms[Self.vault]?.streams.isEmpty == true)
        }
        // The old passcode was checked against the new lock, and counted: four more and the address is done.
        for n in 1...4 {
            t.send(.observe(room: "vault", passcode: "guess \(n)"), from: watcher)
            t.settle()
        }
        let limits = try #require(t.hub.addressLimits as? LocalAddressLimits)
        #expect(limits.wrongPasscodes.count(for: Self.attacker, at: t.clock.now().monotonic) == RoomHub.passcodeFailuresPerMinute)
    }

    // MARK: Finding 3: watchers on a lock, a new passcode and a kick

    @Test func aLockEndsTheWatchOfEveryoneWhoShowedNothingAndKeepsMembersTokens() throws {
        let t = TestHub()
        let host = t.connect(peer: Self.owner)
        t.send(.join(room: "team", name: "Hana", token: nil), from: host)
        let ivo = t.connect(peer: Self.member)
        t.send(.join(room: "team", name: "Ivo", token: nil), from: ivo)
        let ivoToken = try #require(try t.messages(to: ivo).first?.you?.token)
        let stranger = t.connect(peer: Self.attacker), ivosScreen = t.connect(peer: Self.member)
        t.send(.observe(room: "team"), from: stranger)
        t.send(.observe(room: "team", token: ivoToken), from: ivosScreen)
        let reader = try #require(HubEventStreamTests.open(t).streamed)
        let ivosReader = try #require(HubEventStreamTests.open(t, authorization: "Bearer \(ivoToken)").streamed)
        t.transport.clearSent()

        t.send(.passcode("open sesame"), ref: "p", from: host)
        t.settle()
        t.send(.task(text: "the secret plan"), from: host)
        t.settle()

        #expect(try t.messages(to: stranger).map(\.label) == ["error bad_passcode"])
        #expect(t.transport.closes[stranger]?.code == RoomHub.accessEndedCode)
        #expect(reader.finished && reader.events.last == "error")
        #expect(!reader.pieces.contains { $0.contains("the secret plan") })
        // Ivo's own screens stay: his token still opens the room.
        #expect(t.transport.closes[ivosScreen] == nil && !ivosReader.finished)
        #expect(try t.messages(to: ivosScreen).contains { $0.snapshot?.members.contains { $0.task == "the secret plan" } == true })
        let room = try #require(t.hub.rooms[try RoomID(validating: "team")])
        #expect(room.observers == [ivosScreen] && room.streams.count == 1)
    }

    @Test func aNewPasscodeEndsTheWatchOfThoseWhoOpenedTheOldOne() throws {
        let t = TestHub()
        let host = t.connect(peer: Self.owner)
        t.send(.join(room: "vault", name: "Hana", token: nil, passcode: "open sesame"), from: host)
        t.settle()
        let hostToken = try #require(try t.messages(to: host).first?.you?.token)
        let guest = t.connect(peer: Self.attacker), wall = t.connect(peer: Self.owner)
        t.send(.observe(room: "vault", passcode: "open sesame"), from: guest)
        t.send(.observe(room: "vault", token: hostToken), from: wall)
        let reader = try #require(HubEventStreamTests.open(t, "/api/rooms/vault/events", authorization: "Bearer open sesame").streamed)
        t.settle()
        #expect(try t.messages(to: guest).first?.label == "observing")
        t.transport.clearSent()

        t.send(.passcode("new soup"), from: host)
        t.settle()
        #expect(try t.messages(to: guest).map(\.label) == ["error bad_passcode"])
        #expect(t.transport.closes[guest]?.code == RoomHub.accessEndedCode)
        #expect(reader.finished)
        #expect(t.transport.closes[wall] == nil)
        #expect(try t.messages(to: wall).contains { $0.label == "event lockChanged" })

        // Unlocking ends nobody's watch.
        let newcomer = t.connect(peer: Self.attacker)
        t.send(.observe(room: "vault", passcode: "new soup"), from: newcomer)
        t.settle()
        t.send(.passcode(nil), from: host)
        t.settle()
        #expect(t.transport.closes[newcomer] == nil && t.transport.closes[wall] == nil)
    }

    @Test func aKickEndsTheWatchThatTheRemovedMembersTokenOpened() throws {
        let t = TestHub()
        let host = t.connect(peer: Self.owner)
        t.send(.join(room: "vault", name: "Hana", token: nil, passcode: "open sesame"), from: host)
        let ivo = t.connect(peer: Self.member)
        t.send(.join(room: "vault", name: "Ivo", token: nil, passcode: "open sesame"), from: ivo)
        t.settle()
        let ivoYou = try #require(try t.messages(to: ivo).first?.you)
        let ivosScreen = t.connect(peer: Self.member)
        t.send(.observe(room: "vault", token: ivoYou.token), from: ivosScreen)
        let ivosReader = try #require(HubEventStreamTests.open(t, "/api/rooms/vault/events",
                                                               authorization: "Bearer \(ivoYou.token)").streamed)
        t.transport.clearSent()

        t.send(.kick(member: ivoYou.id), from: host)
        t.settle()
        t.send(.task(text: "after Ivo"), from: host)
        t.settle()
        #expect(t.transport.closes[ivo]?.code == RoomHub.removedCloseCode)
        #expect(try t.messages(to: ivosScreen).map(\.label) == ["error removed"])
        #expect(t.transport.closes[ivosScreen]?.code == RoomHub.removedCloseCode)
        #expect(ivosReader.finished && !ivosReader.pieces.contains { $0.contains("after Ivo") })
        // And the token opens nothing afterwards.
        let again = t.connect(peer: Self.member)
        t.send(.observe(room: "vault", token: ivoYou.token), from: again)
        #expect(try t.messages(to: again).first?.failure?.code == .badPasscode)
    }

    @Test func aKickInAnOpenRoomLeavesEveryWatcher() throws {
        let t = TestHub()
        let host = t.connect(peer: Self.owner)
        t.send(.join(room: "team", name: "Hana", token: nil), from: host)
        let ivo = t.connect(peer: Self.member)
        t.send(.join(room: "team", name: "Ivo", token: nil), from: ivo)
        let ivoYou = try #require(try t.messages(to: ivo).first?.you)
        let ivosScreen = t.connect(peer: Self.member)
        t.send(.observe(room: "team", token: ivoYou.token), from: ivosScreen)
        t.send(.kick(member: ivoYou.id), from: host)
        t.settle()
        // Anyone may watch an open room: the watch stays (it could be opened again with nothing).
        #expect(t.transport.closes[ivosScreen] == nil)
    }
}
