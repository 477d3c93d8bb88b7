import Foundation
import PomodoroCore
import PomodoroNet
import PomodoroProtocol
@testable import PomodoroServer
import PomodoroStore
import PomodoroSQLite
import PomodoroTestSupport
import Testing

/// A member the host removed stays out across a restart of the server: the ban is in the SQLite file, and
/// the room brought back from it refuses their name and their resume token until the ban ends.
@Suite(.onOwnThreads, .serialized, .timeLimit(.minutes(TestTime.minutes(1))))
struct StoredBanTests {
    static func refusal(_ peer: Peer) throws -> ErrorCode {
        try peer.expect("error", timeout: 10) { if case let .error(code, _, _, _, _) = $0 { code } else { nil } }
    }

    @Test func aRemovedMemberIsStillRefusedAfterARestart() throws {
        let folder = StoredLockTests.StoreFolder()
        let client = try WebSocketClient()
        client.start()
        defer { client.stop(); client.waitUntilFinished() }
        let room = "ban-room"

        let first = try folder.server()
        let host = try Peer(client, port: first.port)
        _ = try host.join(room, name: "Hana", token: nil)
        let ivo = try Peer(client, port: first.port)
        let (ivoYou, _) = try ivo.join(room, name: "Ivo", token: nil)
        host.send(.kick(member: ivoYou.id), ref: .string("k"))
        _ = try host.expect("ok kick") { if case .ok("kick", _, .string("k")?) = $0 { true } else { nil } }
        #expect(try Self.refusal(ivo) == .removed)
        first.stop()

        let stored = try SQLiteRoomStore.open(path: folder.database)
        let bans = try #require(try stored.loadRoom(RoomID(validating: room))).bans
        try stored.close()
        #expect(bans.map(\.nameKey) == ["ivo"])
        #expect(bans.map(\.tokenHash) == [ResumeToken(ivoYou.token).hash])

        let second = try folder.server()
        defer { second.stop() }
        let byName = try Peer(client, port: second.port)
        byName.send(.join(room: room, name: "IVO", token: nil))
        #expect(try Self.refusal(byName) == .banned)
        let byToken = try Peer(client, port: second.port)
        byToken.send(.join(room: room, name: "Someone", token: ivoYou.token))
        #expect(try Self.refusal(byToken) == .banned)
        // Anyone else still gets in.
        let jun = try Peer(client, port: second.port)
        let (junYou, _) = try jun.join(room, name: "Jun", token: nil)
        #expect(!junYou.resumed)
    }
}
