import PomodoroCore
@testable import PomodoroProtocol
import Testing

/// The host's tools on the wire: `passcode` needs its field (null unlocks, a forgotten field does not),
/// `kick` names a member; the removed and banned errors say why and for how long.
@Suite struct HostingFrameTests {
    func decode(_ text: String) throws(ProtocolError) -> ClientFrame {
        try WireCodec.decodeClientFrame([UInt8](text.utf8))
    }

    @Test func passcodeSetsWithAStringAndUnlocksWithNull() throws {
        #expect(try decode(#"{"type":"passcode","passcode":"new soup","ref":"p"}"#)
                == ClientFrame(.passcode("new soup"), ref: .string("p")))
        #expect(try decode(#"{"type":"passcode","passcode":null}"#) == ClientFrame(.passcode(nil)))
    }

    @Test(arguments: [#"{"type":"passcode","ref":1}"#, #"{"type":"passcode","passcode":5,"ref":1}"#,
                      #"{"type":"passcode","passcode":[],"ref":1}"#])
    func aMissingOrNonStringPasscodeIsABadRequestNotAnUnlock(_ text: String) {
        #expect(throws: ProtocolError.self) { try decode(text) }
        do { _ = try decode(text) } catch {
            #expect(error.code == .badRequest)
            #expect(error.field == "passcode")
            #expect(error.ref == .number(1))
        }
    }

    @Test func kickNeedsAMember() throws {
        #expect(try decode(#"{"type":"kick","member":"m3"}"#) == ClientFrame(.kick(member: "m3")))
        do { _ = try decode(#"{"type":"kick"}"#); Issue.record("decoded a kick without a member") } catch {
            #expect(error.code == .badRequest)
            #expect(error.field == "member")
        }
    }

    @Test func theRemovedAndBannedErrorsSayForHowLong() {
        #expect(ProtocolError.removed(for: .seconds(600)).message.hasSuffix("in 10 minutes"))
        #expect(ProtocolError.removed(for: .seconds(600)).code == .removed)
        let banned = ProtocolError(RoomError.banned(remaining: .seconds(61)))
        #expect(banned.code == .banned)
        #expect(banned.message.hasSuffix("in 2 minutes"))
        #expect(ProtocolError(RoomError.banned(remaining: .milliseconds(300))).message.hasSuffix("in 1 minute"))
    }

    @Test func theRemovedAndBannedErrorsCarryTheSecondsLeftRoundedUp() throws {
        #expect(ProtocolError.removed(for: .seconds(600)).retryAfter == 600)
        #expect(ProtocolError(RoomError.banned(remaining: .seconds(61))).retryAfter == 61)
        #expect(ProtocolError(RoomError.banned(remaining: .milliseconds(60_001))).retryAfter == 61)
        #expect(ProtocolError(RoomError.banned(remaining: .milliseconds(300))).retryAfter == 1)
        #expect(ProtocolError(RoomError.forbidden).retryAfter == nil)
        // On the wire and back; an error without it (an older server's) reads as nil.
        let wire = WireCodec.encode(.error(ProtocolError(RoomError.banned(remaining: .seconds(90)), ref: .number(3))))
        #expect(String(decoding: wire, as: UTF8.self).hasSuffix(#""ref":3,"retryAfter":90}"#))
        guard case let .error(code, _, _, _, seconds) = try WireCodec.decodeServerMessage(wire) else {
            Issue.record("not an error")
            return
        }
        #expect(code == .banned && seconds == 90)
        let older = try WireCodec.decodeServerMessage(Array(#"{"type":"error","code":"banned","message":"later"}"#.utf8))
        #expect(older == .error(code: .banned, message: "later", field: nil, ref: nil))
    }
}
