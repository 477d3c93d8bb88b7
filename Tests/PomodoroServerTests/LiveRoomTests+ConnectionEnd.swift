import PomodoroCore
import PomodoroNet
import PomodoroProtocol
import PomodoroServer
import PomodoroTestSupport
import Testing

/// How a member's connection ended, as the others hear it (`memberAway`'s `connection`), on the real server
/// with real sockets: a client that sent a close frame closed it on purpose (a tab closed, `pomo` quit); one
/// that hung up without one, or whose close frame reports an error, lost it.
extension LiveRoomTests {
    /// What Bo hears when Ada, joined over `ada`, ends her connection with `end`: the `connection` of her
    /// `memberAway` ("none" when it has none).
    func heardByBo(in room: String, _ end: (RawWebSocket) throws -> Void) throws -> String {
        let bo = try Peer(client, port: server.port)
        _ = try bo.join(room, name: "Bo")
        var ada: RawWebSocket? = try RawWebSocket(port: server.port)
        try ada?.send(opcode: 1, WireCodec.encode(ClientFrame(.join(room: room, name: "Ada", token: nil), ref: nil)))
        let id = try bo.expect("Ada's arrival") { message -> String? in
            if case let .event(_, .memberJoined(id, "Ada"), _) = message { id } else { nil }
        }
        try end(try #require(ada))
        ada = nil  // the socket is closed
        return try bo.expect("Ada away") { message -> String? in
            guard case .event(_, .memberAway(id, .disconnected, let how), _) = message else { return nil }
            return how?.rawValue ?? "none"
        }
    }

    /// A close frame with `status` (none: a frame without one), then the server's answer read, as a client
    /// closing properly does.
    static func closeFrame(_ status: UInt16?) -> [UInt8] {
        status.map { [UInt8($0 >> 8), UInt8($0 & 0xff)] + Array("bye".utf8) } ?? []
    }

    @Test(arguments: [(UInt16?.some(1000), "closed"), (1001, "closed"), (nil, "closed"), (1011, "lost"),
                      (1002, "lost")])
    func aCloseFrameSaysTheClientClosedUnlessItReportsAnError(status: UInt16?, heard: String) throws {
        defer { shutDown() }
        let said = try heardByBo(in: "ends-\(status ?? 0)") { ada in
            try ada.send(opcode: 8, Self.closeFrame(status))
            _ = ada.readUntilClose()
        }
        #expect(said == heard)
    }

    @Test func aConnectionDroppedWithoutACloseFrameIsLost() throws {
        defer { shutDown() }
        #expect(try heardByBo(in: "ends-drop") { _ in } == "lost")
    }

    @Test func aClientClosingAsPomoDoesClosedIt() throws {
        defer { shutDown() }
        let bo = try Peer(client, port: server.port)
        _ = try bo.join("ends-pomo", name: "Bo")
        let ada = try Peer(client, port: server.port)
        let id = try ada.join("ends-pomo", name: "Ada").you.id
        ada.close()  // what `pomo join`'s q does: a close frame with 1000, no `leave`
        let how = try bo.expect("Ada away") { message -> String? in
            if case .event(_, .memberAway(id, .disconnected, let how), _) = message { how?.rawValue ?? "none" } else { nil }
        }
        #expect(how == "closed")
    }
}
