@testable import PomodoroServer
import PomodoroCore
import PomodoroNet
import PomodoroProtocol
import PomodoroStore
import PomodoroTestSupport
import Testing

/// The host's tools through the hub, on the fake transport and the manual clock: removing a member (told
/// why, closed with 4002, refused by name and token until the ban ends) and changing or removing the
/// passcode (hashed off the service thread, durable, in force for new joins only).
@Suite struct HubHostingTests {
    static let ban: Duration = .seconds(600)

    static func hub(store: HeldStore? = nil) -> TestHub {
        var configuration = ServerConfiguration(port: 0, webRoot: nil)
        configuration.roomPolicy.removalBan = ban
        return TestHub(configuration: configuration, store: store)
    }

    /// Joins `name` to `room` from a connection of its own and returns the connection and welcome.
    static func join(_ t: TestHub, _ name: String, room: String = "team", token: String? = nil,
                     passcode: String? = nil, peer: String) throws -> (ConnectionID, YouPayload?) {
        let c = t.connect(peer: peer)
        t.send(.join(room: room, name: name, token: token, passcode: passcode), ref: "j", from: c)
        t.settle()
        return (c, try t.messages(to: c).first?.you)
    }

    static func last(_ t: TestHub, _ c: ConnectionID) throws -> ServerMessage? { try t.messages(to: c).last }

    @Test func aRemovedMemberIsToldWhyClosedAndRefusedByNameAndTokenUntilTheBanEnds() throws {
        let t = Self.hub()
        let (host, _) = try Self.join(t, "Hana", peer: "203.0.113.1")
        let (ivo, ivoYou) = try Self.join(t, "Ivo", peer: "203.0.113.2")
        let ivoID = try #require(ivoYou).id, token = try #require(ivoYou).token
        t.transport.clearSent()

        t.send(.kick(member: ivoID), ref: "k", from: host)
        t.settle()
        let toHost = try t.messages(to: host)
        #expect(toHost.map(\.label) == ["ok kick", "event memberLeft", "state"])
        #expect(toHost.contains { if case .event(_, .memberLeft(ivoID, .removed), _) = $0 { true } else { false } })
        #expect(toHost.last?.snapshot?.members.map(\.name) == ["Hana"])
        let toIvo = try t.messages(to: ivo)
        #expect(toIvo.map(\.label) == ["error removed"])
        #expect(toIvo.first?.failure?.message.contains("10 minutes") == true)
        #expect(t.transport.closes[ivo]?.code == 4002)

        // Back with the token (under another name), then by name without it: refused, with the time left.
        let (again, _) = try Self.join(t, "Somebody", token: token, peer: "203.0.113.2")
        #expect(try Self.last(t, again)?.failure?.code == .banned)
        t.pass(.seconds(120))
        let (byName, _) = try Self.join(t, "ivo", peer: "203.0.113.3")
        let refusal = try #require(try Self.last(t, byName)?.failure)
        #expect(refusal.code == .banned)
        #expect(refusal.message.hasSuffix("in 8 minutes"))
        #expect(try t.messages(to: host).filter { $0.label == "event memberJoined" }.isEmpty)

        // Past the ban, the same name and token get in again, as a new member.
        t.pass(Self.ban - .seconds(120))
        let (back, backYou) = try Self.join(t, "Ivo", token: token, peer: "203.0.113.2")
        let welcome = try #require(backYou)
        #expect(!welcome.resumed)
        #expect(welcome.id != ivoID)
        #expect(try t.messages(to: back).first?.snapshot?.members.map(\.name) == ["Hana", "Ivo"])
    }

    /// `retryAfter` of an `error`: the seconds until a removed member may join again.
    static func retryAfter(_ message: ServerMessage?) -> Int? {
        if case .error(_, _, _, _, let seconds)? = message { seconds } else { nil }
    }

    @Test func theRemovalAndEachRefusedJoinCarryTheSecondsLeftRoundedUp() throws {
        let t = Self.hub()
        let (host, _) = try Self.join(t, "Hana", peer: "203.0.113.1")
        let (ivo, ivoYou) = try Self.join(t, "Ivo", peer: "203.0.113.2")
        let token = try #require(ivoYou).token
        t.send(.kick(member: try #require(ivoYou).id), ref: "k", from: host)
        t.settle()
        let removed = try Self.last(t, ivo)
        #expect(removed?.failure?.code == .removed)
        #expect(Self.retryAfter(removed) == 600)

        // 2 min 0.5 s later: 479.5 s are left, said as 480 (and as 8 minutes in the words).
        t.pass(.milliseconds(120_500))
        let (byToken, _) = try Self.join(t, "Somebody", token: token, peer: "203.0.113.2")
        let refused = try Self.last(t, byToken)
        #expect(refused?.failure?.code == .banned)
        #expect(Self.retryAfter(refused) == 480)
        #expect(refused?.failure?.message.hasSuffix("in 8 minutes") == true)

        // 0.2 s before the end: one second, never zero while the ban still refuses.
        t.pass(.milliseconds(479_300))
        let (byName, _) = try Self.join(t, "IVO", peer: "203.0.113.3")
        let last = try Self.last(t, byName)
        #expect(last?.failure?.code == .banned)
        #expect(Self.retryAfter(last) == 1)
        #expect(last?.failure?.message.hasSuffix("in 1 minute") == true)

        // Other refusals carry none.
        t.send(.kick(member: "m9"), ref: "k2", from: host)
        t.settle()
        let other = try Self.last(t, host)
        #expect(other?.failure?.code == .badRequest)
        #expect(Self.retryAfter(other) == nil)

        // Once the seconds have passed, the join is let in.
        t.pass(.milliseconds(200))
        let (back, backYou) = try Self.join(t, "Ivo", token: token, peer: "203.0.113.2")
        let answers = try t.messages(to: back).map(\.label)
        #expect(backYou != nil, "\(answers)")
    }

    @Test func onlyTheHostRemovesOrChangesThePasscode() throws {
        let t = Self.hub()
        let (host, hostYou) = try Self.join(t, "Hana", peer: "203.0.113.1")
        let (ivo, _) = try Self.join(t, "Ivo", peer: "203.0.113.2")
        t.transport.clearSent()
        t.send(.kick(member: try #require(hostYou).id), ref: "k", from: ivo)
        t.send(.passcode("let me in"), ref: "p", from: ivo)
        t.settle()
        #expect(try t.messages(to: ivo).map(\.label) == ["error forbidden", "error forbidden"])
        #expect(try t.messages(to: host).isEmpty)
        #expect(t.work.pending == 0, "nothing was hashed for a refused change")
        t.send(.passcode("abc"), ref: "p", from: host)
        #expect(try Self.last(t, host)?.label == "error bad_request")
    }

    @Test func aNewPasscodeLocksNewJoinsOnlyAndIsSavedWithTheRoom() throws {
        let store = try HeldStore()
        let t = Self.hub(store: store)
        let (host, _) = try Self.join(t, "Hana", passcode: "old soup", peer: "203.0.113.1")
        let (ivo, ivoYou) = try Self.join(t, "Ivo", passcode: "old soup", peer: "203.0.113.2")
        #expect(try t.messages(to: ivo).first?.snapshot?.locked == true)
        t.transport.clearSent()

        t.send(.passcode("new soup"), ref: "p", from: host)
        t.send(.ping, ref: "after", from: host)
        // Hashed off the service thread; the host's later frames wait for it.
        #expect(t.work.pending == 1)
        #expect(try t.messages(to: host).isEmpty)
        t.settle()
        #expect(try t.messages(to: host).map(\.label) == ["ok passcode", "pong", "event lockChanged", "state"]
                || t.messages(to: host).map(\.label) == ["ok passcode", "event lockChanged", "state", "pong"])
        #expect(try t.messages(to: ivo).last?.snapshot?.locked == true, "members inside stay")

        // Durable: the room's row holds the new hash.
        let saved = try #require(try store.store.loadRoom(RoomID(validating: "team"))?.passcode)
        #expect(PasscodeVerifier(encoded: saved).matches("new soup"))
        #expect(!PasscodeVerifier(encoded: saved).matches("old soup"))

        // New joins: the old passcode is refused, the new one gets in; a resume token needs none.
        let (old, _) = try Self.join(t, "Jun", passcode: "old soup", peer: "203.0.113.3")
        #expect(try Self.last(t, old)?.failure?.code == .badPasscode)
        let (new, newYou) = try Self.join(t, "Jun", passcode: "new soup", peer: "203.0.113.4")
        #expect(newYou != nil)
        _ = new
        t.disconnect(ivo)
        let (resumed, resumedYou) = try Self.join(t, "Ivo", token: try #require(ivoYou).token, peer: "203.0.113.2")
        #expect(resumedYou?.resumed == true)
        _ = resumed

        // Unlocked: anyone gets in without a passcode, and the snapshot says so.
        t.send(.passcode(nil), ref: "u", from: host)
        t.settle()
        #expect(try Self.last(t, host)?.snapshot?.locked == false)
        #expect(try store.store.loadRoom(RoomID(validating: "team"))?.passcode == nil)
        let (open, openYou) = try Self.join(t, "Kai", peer: "203.0.113.5")
        #expect(openYou != nil)
        #expect(try t.messages(to: open).first?.snapshot?.locked == false)
    }

    @Test func aHandOffSentWhileThePasscodeIsHashedWaitsForIt() throws {
        let t = Self.hub()
        let (host, _) = try Self.join(t, "Hana", peer: "203.0.113.1")
        let (_, ivoYou) = try Self.join(t, "Ivo", peer: "203.0.113.2")
        t.transport.clearSent()
        t.send(.passcode("new soup"), ref: "p", from: host)
        // The hash is at work: the host's hand-off waits behind it (frames in order), so it lands after.
        t.send(.handOff(member: try #require(ivoYou).id), ref: "h", from: host)
        t.settle()
        #expect(try t.messages(to: host).filter { $0.label.hasPrefix("ok") }.map(\.label) == ["ok passcode", "ok handOff"])
        #expect(try t.messages(to: host).last?.snapshot?.locked == true)
    }

    @Test func aJoinWhosePasscodeWasCheckedAgainstTheOldLockMustOpenTheNewOne() throws {
        let t = Self.hub()
        let (host, _) = try Self.join(t, "Hana", passcode: "old soup", peer: "203.0.113.1")
        // The host's new passcode is hashed first, then a joiner's old passcode is checked against the old lock;
        // the new lock is in place by the time the check answers.
        t.send(.passcode("new soup"), ref: "p", from: host)
        let late = t.connect(peer: "203.0.113.2")
        t.send(.join(room: "team", name: "Ivo", token: nil, passcode: "old soup"), ref: "j", from: late)
        #expect(t.work.pending == 2)
        t.settle()
        #expect(try Self.last(t, late)?.failure?.code == .badPasscode)
        #expect(try t.messages(to: host).last?.snapshot?.members.map(\.name) == ["Hana"])
        // A check in flight while the host takes the lock away: the room is open now, so the joiner is let in.
        let lucky = t.connect(peer: "203.0.113.3")
        t.send(.join(room: "team", name: "Jun", token: nil, passcode: "new soup"), ref: "j", from: lucky)
        t.send(.passcode(nil), ref: "u", from: host)
        #expect(t.work.pending == 1)
        t.settle()
        #expect(try t.messages(to: lucky).first?.you != nil)
    }
}
