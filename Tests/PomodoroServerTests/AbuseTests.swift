import Foundation
import Glibc
import PomodoroCore
import PomodoroNet
import PomodoroProtocol
@testable import PomodoroServer
import PomodoroStore
import PomodoroTestSupport
import Testing

/// The server as an attacker on loopback sees it: limits that must hold under bursts and parallel requests,
/// rooms the store must not hand out past the limits. Each test is bounded in count and time.
@Suite(.onOwnThreads, .timeLimit(.minutes(TestTime.minutes(1))))
struct AbuseTests {
    typealias Folder = OrderTests.Folder

    /// A server with a database in `folder` and a locked room `lock-room` whose owner stays connected.
    final class LockedRoom {
        let server: LiveServer
        let client: WebSocketClient
        let owner: Peer
        let ownerToken: String

        init(folder: Folder, _ configure: (inout ServerConfiguration) -> Void = { _ in }) throws {
            server = try LiveServer {
                $0.databasePath = folder.database
                configure(&$0)
            }
            client = try WebSocketClient()
            client.start()
            owner = try Peer(client, port: server.port)
            owner.send(.join(room: "lock-room", name: "Owner", token: nil, passcode: "open sesame"))
            ownerToken = try owner.expect("welcome", timeout: 20) { if case .welcome(let you, _, _, _, _) = $0 { you.token } else { nil } }
        }

        func stop() {
            server.stop()
            client.stop()
            client.waitUntilFinished()
        }
    }

    static func error(_ peer: Peer) throws -> ErrorCode {
        // A passcode check is deliberately slow (PBKDF2): give it room on a loaded machine.
        try peer.expect("error", timeout: 20) { if case .error(let code, _, _, _, _) = $0 { code } else { nil } }
    }

    static func codes(_ messages: [ServerMessage]) -> [ErrorCode] {
        messages.compactMap { if case .error(let code, _, _, _, _) = $0 { code } else { nil } }
    }

    static func count(_ code: ErrorCode, in codes: [ErrorCode]) -> Int { codes.filter { $0 == code }.count }

    /// 40 wrong-passcode `stats` in one write on one connection: five are checked, the rest refused.
    @Test func aStatsBurstGetsNoMoreThanFiveWrongPasscodesChecked() throws {
        let folder = Folder()
        defer { folder.remove() }
        let room = try LockedRoom(folder: folder)
        defer { room.stop() }
        let socket = try RawWebSocket(port: room.server.port)
        try socket.write(OrderTests.burst((0..<40).map {
            (.stats(room: "lock-room", days: nil, tz: nil, passcode: "wrong-\($0)"), "s\($0)")
        }))
        let codes = Self.codes(try OrderTests.read(socket) { Self.codes($0).count >= 40 })
        #expect(Self.count(.badPasscode, in: codes) == RoomHub.passcodeFailuresPerMinute)
        #expect(Self.count(.rateLimited, in: codes) == 40 - RoomHub.passcodeFailuresPerMinute)
    }

    /// Eight connections from one address, five wrong joins each, all at once: five guesses in all.
    @Test func parallelWrongJoinsShareOneLimit() throws {
        let folder = Folder()
        defer { folder.remove() }
        let room = try LockedRoom(folder: folder)
        defer { room.stop() }
        let sockets = try (0..<8).map { _ in try RawWebSocket(port: room.server.port) }
        for (n, socket) in sockets.enumerated() {
            try socket.write(OrderTests.burst((0..<5).map {
                (.join(room: "lock-room", name: "Guess", token: nil, passcode: "wrong-\(n)-\($0)"), "j\($0)")
            }))
        }
        let codes = try sockets.flatMap { socket in Self.codes(try OrderTests.read(socket) { Self.codes($0).count >= 5 }) }
        #expect(codes.count == 40)
        #expect(Self.count(.badPasscode, in: codes) == RoomHub.passcodeFailuresPerMinute)
        #expect(Self.count(.rateLimited, in: codes) == 40 - RoomHub.passcodeFailuresPerMinute)
        // The owner's token still opens the room; the address's right passcode waits for the minute.
        let ownerAgain = try Peer(room.client, port: room.server.port)
        #expect(try ownerAgain.join("lock-room", name: "Owner", token: room.ownerToken).you.resumed)
    }

    /// 60 HTTP requests with a wrong `Authorization: Bearer`, all in flight at once: five get 401.
    @Test func parallelWrongBearersOverHTTPShareOneLimit() throws {
        let folder = Folder()
        defer { folder.remove() }
        let room = try LockedRoom(folder: folder) { $0.limits.apiRequestsPerSecond = 0 }
        defer { room.stop() }
        let connections = try (0..<60).map { n in
            // Five PBKDF2 checks in a row outlasted a 5 s read at load 30 on two cores.
            let http = try RawHTTP(port: room.server.port, readTimeout: 20)
            http.send("GET /api/rooms/lock-room/history HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer wrong-\(n)\r\n\r\n")
            return http
        }
        let statuses = try connections.map { try $0.response().status }
        #expect(statuses.filter { $0 == 401 }.count == RoomHub.passcodeFailuresPerMinute)
        #expect(statuses.filter { $0 == 429 }.count == 60 - RoomHub.passcodeFailuresPerMinute)
        // A member's token is no guess: it still reads the journal.
        let member = try RawHTTP(port: room.server.port)
            .exchange("GET /api/rooms/lock-room/history HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(room.ownerToken)\r\n\r\n")
        #expect(member.status == 200)
    }

    /// `/api` is metered per address: past the burst, 429 with Retry-After. The bucket refills one request
    /// a second, so a run slow enough (a sanitizer) to take over a second for the burst may find one more
    /// come back: what is answered before the first 429 is the burst and at most one a second since.
    @Test func theAPIIsMeteredPerAddress() throws {
        let server = try LiveServer {
            $0.limits.apiRequestsPerSecond = 1
            $0.limits.apiBurst = 3
        }
        defer { server.stop() }
        let http = try RawHTTP(port: server.port)
        let started = Date()
        var statuses: [RawHTTPReply] = []
        while statuses.count < 20, statuses.last?.status != 429 {
            statuses.append(try http.exchange("GET /api/rooms/open-room/stats HTTP/1.1\r\nHost: x\r\n\r\n"))
        }
        let elapsed = Date().timeIntervalSince(started)
        let answered = statuses.prefix { $0.status != 429 }
        #expect(answered.allSatisfy { $0.status == 503 }, "no database: unavailable, but answered")
        #expect(answered.count >= 3 && Double(answered.count) <= 3 + elapsed.rounded(.up),
                "\(answered.count) answered before the first 429, in \(elapsed) s")
        #expect(statuses.last?.status == 429)
        #expect(statuses.last?.headers["retry-after"] == "1")
    }

    /// Join-and-drop from one address: at most `membersPerAddressPerRoom` members of a room, and those who
    /// said nothing keep their places only for the short grace.
    @Test func oneAddressCannotFillARoom() throws {
        let server = try LiveServer { $0.limits.membersPerAddressPerRoom = 5 }
        let client = try WebSocketClient()
        client.start()
        defer { server.stop(); client.stop(); client.waitUntilFinished() }
        var tokens: [String] = []
        for n in 0..<5 {
            let peer = try Peer(client, port: server.port)
            tokens.append(try peer.join("crowded", name: "Drop \(n)", token: nil).you.token)
            peer.close()
            _ = try peer.expectClose()
        }
        let sixth = try Peer(client, port: server.port)
        sixth.send(.join(room: "crowded", name: "Sixth", token: nil))
        let code = try sixth.expect("error") { if case .error(let code, _, _, _, _) = $0 { code } else { nil } }
        #expect(code == .roomFull)
        // A member of this address coming back with their token is no new member.
        let back = try sixth.join("crowded", name: "Drop 0", token: tokens[0])
        #expect(back.you.resumed)
    }

    /// Rooms that come back from the store count against `--max-rooms` and are checked before loading.
    @Test func roomsFromTheStoreCountAgainstMaxRooms() throws {
        let folder = Folder()
        defer { folder.remove() }
        do {
            let first = try LiveServer { $0.databasePath = folder.database }
            let client = try WebSocketClient()
            client.start()
            defer { first.stop(); client.stop(); client.waitUntilFinished() }
            // Three rooms stored with nobody in them: they stay stored, and come back when joined.
            for name in ["kept-1", "kept-2", "kept-3"] {
                let peer = try Peer(client, port: first.port)
                _ = try peer.join(name, name: "Once", token: nil)
                peer.send(.leave)
                _ = try peer.expect("ok leave") { if case .ok("leave", _, _) = $0 { true } else { nil } }
            }
        }
        let second = try LiveServer {
            $0.databasePath = folder.database
            $0.limits.maxRooms = 2
        }
        let client = try WebSocketClient()
        client.start()
        defer { second.stop(); client.stop(); client.waitUntilFinished() }
        let peers = try (0..<3).map { _ in try Peer(client, port: second.port) }
        _ = try peers[0].join("kept-1", name: "Back", token: nil)
        _ = try peers[1].join("kept-2", name: "Back", token: nil)
        peers[2].send(.join(room: "kept-3", name: "Back", token: nil))
        let code = try peers[2].expect("error") { if case .error(let code, _, _, _, _) = $0 { code } else { nil } }
        #expect(code == .roomLimit)
        #expect(try Self.rooms(in: second.server) == 2)
    }

    /// A join to a locked room that only the store has, without its passcode or with a wrong one, loads
    /// nothing into memory (and so writes nothing).
    @Test func aLockedStoredRoomIsLoadedOnlyForItsPasscode() throws {
        let folder = Folder()
        defer { folder.remove() }
        do {
            let room = try LockedRoom(folder: folder)
            defer { room.stop() }
            room.owner.send(.leave)
            _ = try room.owner.expect("ok leave") { if case .ok("leave", _, _) = $0 { true } else { nil } }
        }
        let server = try LiveServer { $0.databasePath = folder.database }
        let client = try WebSocketClient()
        client.start()
        defer { server.stop(); client.stop(); client.waitUntilFinished() }
        let guest = try Peer(client, port: server.port)
        guest.send(.join(room: "lock-room", name: "Guest", token: nil))
        #expect(try Self.error(guest) == .badPasscode)
        guest.send(.join(room: "lock-room", name: "Guest", token: nil, passcode: "wrong one"))
        #expect(try Self.error(guest) == .badPasscode)
        #expect(try Self.rooms(in: server.server) == 0)
        guest.send(.join(room: "lock-room", name: "Guest", token: nil, passcode: "open sesame"))
        _ = try guest.expect("welcome") { if case .welcome = $0 { true } else { nil } }
        #expect(try Self.rooms(in: server.server) == 1)
    }

    /// The rooms the server holds, read on its service thread.
    static func rooms(in server: PomodoroServer) throws -> Int {
        let done = DispatchSemaphore(value: 0)
        let box = CountBox()
        server.counts { counts in
            box.set(counts.rooms)
            done.signal()
        }
        guard done.wait(timeout: .now() + 5) == .success else { throw LiveTestFailure(description: "no counts") }
        return box.value
    }

    final class CountBox: @unchecked Sendable {
        private let lock = NSLock()
        private var stored = 0
        func set(_ value: Int) { lock.withLock { stored = value } }
        var value: Int { lock.withLock { stored } }
    }
}
