import PomodoroCore
@testable import PomodoroProtocol

// The host's tools' shapes (docs/PROTOCOL.md §4, "The host's tools"), kept apart from the main table.

extension GoldenFixtureTests {
    static let hostingTable: [(String, Shape)] = [
        ("server/event-memberLeft-removed.json", event(.memberLeft(member: "m2", reason: .removed))),
        ("server/event-lockChanged.json", event(.lockChanged(locked: true, by: "m1"))),
        ("server/event-lockChanged-unlocked.json", event(.lockChanged(locked: false, by: "m1"))),
        ("server/error-removed.json", .server(.error(ProtocolError.removed(for: .seconds(600))))),
        ("server/error-banned.json", .server(.error(ProtocolError(RoomError.banned(remaining: .seconds(540)),
                                                                  ref: .string("j1"))))),
        ("client/passcode.json", .client(ClientFrame(.passcode("new soup"), ref: .string("p1")))),
        ("client/passcode-remove.json", .client(ClientFrame(.passcode(nil)))),
        ("client/kick.json", .client(ClientFrame(.kick(member: "m3"), ref: .string("k1")))),
    ]
}
