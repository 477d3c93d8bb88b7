import Foundation
import PomodoroCore
import PomodoroNet
import PomodoroProtocol
@testable import PomodoroServer
import PomodoroStore
import PomodoroSQLite
import PomodoroTestSupport
import Testing

/// A locked room's stored passcode hash read back by the server: one it cannot read keeps the room locked
/// (open to members' resume tokens alone), and one with an older work factor still verifies and is made
/// again with the current one.
@Suite(.onOwnThreads, .serialized, .timeLimit(.minutes(TestTime.minutes(1))))
struct StoredLockTests {
    static let passcode = "open sesame"

    // MARK: The verifier

    /// Stored values this server cannot read, each next to the valid one it was made from.
    static func tampered(_ valid: String) -> [String] {
        // `pbkdf2-sha256$ITERATIONS$SALT$HASH`, whatever work factor made it.
        let parts = valid.split(separator: "$", omittingEmptySubsequences: false).map(String.init)
        func withWorkFactor(_ factor: String) -> String { ([parts[0], factor] + parts[2...]).joined(separator: "$") }
        return [withWorkFactor("20000000"),                                    // a future, larger work factor
         valid.replacingOccurrences(of: "pbkdf2-sha256$", with: "argon2id$"),  // another algorithm
         withWorkFactor("0"),
         String(valid.dropLast(2)),                                           // a truncated hash
         "", "garbage"]
    }

    @Test func anUnreadableStoredHashMatchesNothingAndIsKeptAsItWas() throws {
        let valid = PasscodeVerifier(passcode: Self.passcode).encoded
        #expect(valid.hasPrefix("pbkdf2-sha256$600000$"))
        #expect(PasscodeVerifier(encoded: valid).matches(Self.passcode))
        for stored in Self.tampered(valid) {
            let verifier = PasscodeVerifier(encoded: stored)
            #expect(!verifier.isReadable, "\(stored)")
            #expect(!verifier.matches(Self.passcode), "\(stored)")
            #expect(verifier.encoded == stored, "written back unchanged")
        }
    }

    @Test func anOlderWorkFactorStillVerifiesAndIsUpgraded() throws {
        let old = PasscodeVerifier(encoded: PasscodeVerifier(passcode: Self.passcode, iterations: 100_000).encoded)
        #expect(old.encoded.hasPrefix("pbkdf2-sha256$100000$"))
        guard case .wrong = old.check("open sesame!", workFactor: PasscodeVerifier.iterations) else { Issue.record("a wrong passcode matched"); return }
        guard case .right(let upgraded?) = old.check(Self.passcode, workFactor: PasscodeVerifier.iterations) else {
            Issue.record("the right passcode did not match, or was not upgraded")
            return
        }
        #expect(upgraded.encoded.hasPrefix("pbkdf2-sha256$600000$"))
        guard case .right(nil) = PasscodeVerifier(encoded: upgraded.encoded).check(Self.passcode, workFactor: PasscodeVerifier.iterations) else {
            Issue.record("the upgraded hash does not verify, or asks for another upgrade")
            return
        }
    }

    // MARK: Against the real server

    /// A server on a database in a fresh folder, stopped and removed at the end.
    final class StoreFolder {
        let path = NSTemporaryDirectory() + "pomodoro-lock-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        var database: String { path + "/pomodoro.sqlite" }
        deinit { try? FileManager.default.removeItem(atPath: path) }

        func server() throws -> LiveServer { try LiveServer { $0.databasePath = database } }

        /// Rewrites the room's stored passcode column, as an edit of the file or a newer server would.
        func setPasscode(of room: String, _ change: (String) -> String) throws -> String {
            let store = try SQLiteRoomStore.open(path: database)
            defer { try? store.close() }
            let stored = try #require(try store.loadRoom(RoomID(validating: room)))
            let passcode = change(try #require(stored.passcode))
            try store.apply([.saveRoom(stored.record, passcode: passcode)])
            return passcode
        }

        func storedPasscode(of room: String) throws -> String? {
            let store = try SQLiteRoomStore.open(path: database)
            defer { try? store.close() }
            return try store.loadRoom(RoomID(validating: room))?.passcode
        }
    }

    /// Makes a locked room with one member on a first server run; returns the member's token.
    static func makeLockedRoom(_ room: String, in folder: StoreFolder, client: WebSocketClient) throws -> String {
        let first = try folder.server()
        defer { first.stop() }
        let owner = try Peer(client, port: first.port)
        owner.send(.join(room: room, name: "Owner", token: nil, passcode: passcode))
        return try owner.expect("welcome", timeout: 10) { if case let .welcome(you, _, _, _, _) = $0 { you.token } else { nil } }
    }

    static func get(_ path: String, bearer: String?, port: Int) throws -> Int {
        let authorization = bearer.map { "Authorization: Bearer \($0)\r\n" } ?? ""
        return try RawHTTP(port: port).exchange("GET \(path) HTTP/1.1\r\nHost: x\r\n\(authorization)\r\n").status
    }

    static func error(_ peer: Peer) throws -> (ErrorCode, String?) {
        try peer.expect("error", timeout: 10) { if case let .error(code, _, field, _, _) = $0 { (code, field) } else { nil } }
    }

    @Test(arguments: [0, 1])
    func aStoredHashTheServerCannotReadRefusesAllButMembers(tampering: Int) throws {
        let folder = StoreFolder()
        let client = try WebSocketClient()
        client.start()
        defer { client.stop(); client.waitUntilFinished() }
        let room = "lock-room"
        let token = try Self.makeLockedRoom(room, in: folder, client: client)
        _ = try folder.setPasscode(of: room) { Self.tampered($0)[tampering] }

        let server = try folder.server()
        defer { server.stop() }
        for path in ["/api/rooms/\(room)/history", "/api/rooms/\(room)/stats"] {
            #expect(try Self.get(path, bearer: nil, port: server.port) == 401, "\(path) without credentials")
        }
        #expect(try Self.get("/api/rooms/\(room)/stats", bearer: Self.passcode, port: server.port) == 401,
                "the right passcode cannot be checked against an unreadable hash")
        #expect(try Self.get("/api/rooms/\(room)/history", bearer: token, port: server.port) == 200, "a member's token")

        let guest = try Peer(client, port: server.port)
        guest.send(.stats(room: room, days: 1, tz: "UTC", passcode: nil))
        #expect(try Self.error(guest) == (.badPasscode, "passcode"))
        guest.send(.stats(room: room, days: 1, tz: "UTC", passcode: Self.passcode))
        #expect(try Self.error(guest) == (.badPasscode, "passcode"))
        guest.send(.join(room: room, name: "Guest", token: nil))
        #expect(try Self.error(guest) == (.badPasscode, "passcode"))
        guest.send(.join(room: room, name: "Guest", token: nil, passcode: Self.passcode))
        #expect(try Self.error(guest) == (.badPasscode, "passcode"))

        let owner = try Peer(client, port: server.port)
        let (you, snapshot) = try owner.join(room, name: "Owner", token: token)
        #expect(you.resumed && snapshot.locked)
        owner.send(.stats(room: nil, days: 1, tz: "UTC", passcode: nil), ref: .string("s"))
        _ = try owner.expect("stats") { if case .stats = $0 { true } else { nil } }
    }

    @Test func aHashWithAnOlderWorkFactorLetsTheRightPasscodeInAndIsUpgraded() throws {
        let folder = StoreFolder()
        let client = try WebSocketClient()
        client.start()
        defer { client.stop(); client.waitUntilFinished() }
        let room = "old-lock"
        let token = try Self.makeLockedRoom(room, in: folder, client: client)
        let old = try folder.setPasscode(of: room) { _ in
            PasscodeVerifier(passcode: Self.passcode, iterations: 100_000).encoded
        }

        // This server hashes at the real work factor, so the older one is made again.
        let server = try LiveServer { $0.databasePath = folder.database; $0.passcodeIterations = PasscodeVerifier.iterations }
        let guest = try Peer(client, port: server.port)
        guest.send(.join(room: room, name: "Guest", token: nil, passcode: "wrong passcode"))
        #expect(try Self.error(guest) == (.badPasscode, "passcode"))
        guest.send(.join(room: room, name: "Guest", token: nil, passcode: Self.passcode))
        _ = try guest.expect("welcome", timeout: 10) { if case .welcome = $0 { true } else { nil } }
        // The room's row is written with its next change: a start.
        guest.send(.start, ref: .number(1))
        _ = try guest.expect("ok") { if case .ok("start", _, .number(1)?) = $0 { true } else { nil } }
        server.stop()

        let stored = try #require(try folder.storedPasscode(of: room))
        #expect(stored != old)
        #expect(stored.hasPrefix("pbkdf2-sha256$600000$"))
        #expect(PasscodeVerifier(encoded: stored).matches(Self.passcode))

        // And the next run takes the new hash: the passcode and the member's token still open the room.
        let again = try folder.server()
        defer { again.stop() }
        #expect(try Self.get("/api/rooms/\(room)/stats", bearer: Self.passcode, port: again.port) == 200)
        #expect(try Self.get("/api/rooms/\(room)/stats", bearer: token, port: again.port) == 200)
    }
}
