import Foundation
import PomodoroCore
import PomodoroNet
import PomodoroProtocol
@testable import PomodoroServer
import PomodoroTestSupport
import Testing

/// Issue 27, findings 2 and 3, against the real server (one node, a database, loopback): who may see a room
/// is decided when the answer goes out, and a lock, a new passcode or a kick reaches everyone who watches.
/// Bounds, not timings: every wait gives up after a few seconds, and a race the test means to set up is
/// checked to have happened before its outcome is believed.
@Suite(.onOwnThreads, .serialized, .timeLimit(.minutes(TestTime.minutes(2))))
struct AccessLiveTests {
    typealias Folder = OrderTests.Folder
    static let attackerHeader = "X-Forwarded-For: 198.51.100.66\r\n"

    func error(_ peer: Peer) throws -> ErrorCode {
        try peer.expect("error", timeout: 10) { if case let .error(code, _, _, _, _) = $0 { code } else { nil } }
    }

    /// Finding 2 as reported: a locked room whose members have gone leaves memory; the attacker holds their
    /// turns at the passcode gate with 14 right passcodes of a room of their own, asks for the locked room's
    /// history with a wrong Bearer, and a member comes back before the guess's turn. The answer must be `401`,
    /// and the guess must count against the attacker's five.
    @Test func aGuessQueuedWhileTheRoomWasOnlyStoredIsStillCheckedAndCounted() throws {
        let folder = Folder()
        defer { folder.remove() }
        // Loopback is a trusted proxy, so the test speaks for an attacker at 198.51.100.66 (and the members
        // for loopback itself): two addresses, two turns at the gate.
        let server = try LiveServer {
            $0.databasePath = folder.database
            $0.trustedProxies = TrustedProxies([AddressRange("127.0.0.1/32")!])
            $0.limits.maxConnectionsPerAddress = 0
            $0.limits.apiRequestsPerSecond = 0
            $0.roomPolicy.emptyRoomLifetime = .seconds(1)
        }
        let client = try WebSocketClient()
        client.start()
        defer { server.stop(); client.stop(); client.waitUntilFinished() }

        // The attacker's own locked room, and the vault with one finished focus in its journal.
        let mallory = try Peer(client, port: server.port)
        mallory.send(.join(room: "mine", name: "Mallory", token: nil, passcode: "my own pass"))
        _ = try mallory.expect("welcome", timeout: 20) { if case .welcome = $0 { true } else { nil } }
        let ada = try Peer(client, port: server.port)
        ada.send(.join(room: "vault", name: "Ada", token: nil, passcode: "open sesame"))
        _ = try ada.expect("welcome", timeout: 20) { if case .welcome = $0 { true } else { nil } }
        ada.send(.task(text: "the secret plan"))
        ada.send(.configure(RoomSettings(focus: 1, shortBreak: 60, longBreak: 60, longBreakEvery: 4, autoStart: false)))
        ada.send(.start)
        _ = try ada.expect("the focus completed", timeout: 10) {
            if case .event(_, .phaseCompleted(.focus, _, _, _), _) = $0 { true } else { nil }
        }
        ada.send(.leave, ref: .string("bye"))
        _ = try ada.expect("ok leave") { if case .ok("leave", _, _) = $0 { true } else { nil } }
        // The vault leaves memory (its lock stays in the database).
        let gone = TestTime.deadline(10)
        while try RawHTTP.get("/api/rooms/vault", port: server.port).status != 404 {
            guard Date() < gone else { throw LiveTestFailure(description: "the vault stayed in memory") }
            usleep(50_000)
        }
        let member = try RawHTTP(port: server.port)
        let before = try member.exchange("GET /api/rooms/vault/history HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer open sesame\r\n\r\n")
        try #require(before.status == 200 && before.text.contains("the secret plan"), "the journal holds Ada's task")

        // 14 right passcodes of the attacker's own room, then the guess, all from the attacker's address.
        let fillers = try (0..<14).map { _ in
            let http = try RawHTTP(port: server.port, readTimeout: 30)
            http.send("GET /api/rooms/mine/stats HTTP/1.1\r\nHost: x\r\n\(Self.attackerHeader)Authorization: Bearer my own pass\r\n\r\n")
            return http
        }
        let guess = try RawHTTP(port: server.port, readTimeout: 30)
        guess.send("GET /api/rooms/vault/history HTTP/1.1\r\nHost: x\r\n\(Self.attackerHeader)Authorization: Bearer a wrong guess\r\n\r\n")
        let answered = LockedBox<(RawHTTPReply, Date)?>(nil)
        let reading = DispatchGroup()
        let socket = LockedBox(guess)
        DispatchQueue.global().async(group: reading) { answered.set(try? (socket.value.response(), Date())) }

        // A member comes back (from loopback: a gate of its own) while the guess waits its turn.
        let back = try Peer(client, port: server.port)
        back.send(.join(room: "vault", name: "Ada", token: nil, passcode: "open sesame"))
        let welcomed = try back.expect("welcome", timeout: 20) { if case .welcome = $0 { Date() } else { nil } }
        try #require(reading.wait(timeout: .now() + 30) == .success)
        let (reply, at) = try #require(answered.value, "the guess got no answer")
        try #require(at > welcomed, "the guess was answered before the member came back: the race was not set up")

        #expect(reply.status == 401, "the history was served for a wrong passcode: \(reply.text.prefix(200))")
        #expect(!reply.text.contains("the secret plan"))
        for filler in fillers { #expect(try filler.response().status == 200) }
        // The guess counted: four more wrong ones are checked, the next is refused unchecked.
        let statuses = try (1...5).map { n in
            try RawHTTP(port: server.port, readTimeout: 30).exchange(
                "GET /api/rooms/vault/history HTTP/1.1\r\nHost: x\r\n\(Self.attackerHeader)Authorization: Bearer guess \(n)\r\n\r\n").status
        }
        #expect(statuses == [401, 401, 401, 401, 429])
    }

    /// Finding 3: an observer and an event-stream reader of an open room stop receiving it when the host
    /// locks it; a member's own screen (observing with their token) goes on.
    @Test func aLockReachesTheRoomsObserversAndStreamReaders() throws {
        let server = try LiveServer()
        let client = try WebSocketClient()
        client.start()
        defer { server.stop(); client.stop(); client.waitUntilFinished() }
        let hana = try Peer(client, port: server.port)
        let (hanaYou, _) = try hana.join("team", name: "Hana")
        let stranger = try Peer(client, port: server.port)
        stranger.send(.observe(room: "team"))
        _ = try stranger.expect("observing") { if case .observing = $0 { true } else { nil } }
        let wall = try Peer(client, port: server.port)
        wall.send(.observe(room: "team", token: hanaYou.token))
        _ = try wall.expect("observing") { if case .observing = $0 { true } else { nil } }
        let reader = try RawHTTP(port: server.port)
        reader.send("GET /api/rooms/team/events HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(try reader.response(head: true).status == 200)

        hana.send(.passcode("open sesame"), ref: .string("lock"))
        _ = try hana.expect("ok passcode", timeout: 20) { if case .ok("passcode", _, _) = $0 { true } else { nil } }
        hana.send(.task(text: "the secret plan"))

        #expect(try error(stranger) == .badPasscode)
        #expect(try stranger.expectClose() == RoomHub.accessEndedCode)
        let streamed = String(decoding: reader.readToEnd(), as: UTF8.self)
        #expect(streamed.contains("event: error") && streamed.contains("\"code\":\"bad_passcode\""))
        #expect(!streamed.contains("the secret plan"))
        // Hana's wall display still sees her room.
        _ = try wall.expect("the task") { message in
            message.snapshot?.members.contains { $0.task == "the secret plan" } == true ? true : nil
        }
    }

    /// Finding 3: a removed member who watches with their own token stops watching when removed, and one who
    /// watches with the passcode stops when it changes.
    @Test func aKickAndANewPasscodeReachThoseWhoWatch() throws {
        let server = try LiveServer()
        let client = try WebSocketClient()
        client.start()
        defer { server.stop(); client.stop(); client.waitUntilFinished() }
        let hana = try Peer(client, port: server.port)
        hana.send(.join(room: "vault", name: "Hana", token: nil, passcode: "open sesame"))
        _ = try hana.expect("welcome", timeout: 20) { if case .welcome = $0 { true } else { nil } }
        let ivo = try Peer(client, port: server.port)
        ivo.send(.join(room: "vault", name: "Ivo", token: nil, passcode: "open sesame"))
        let ivoYou = try ivo.expect("welcome", timeout: 20) { if case let .welcome(you, _, _, _, _) = $0 { you } else { nil } }
        let ivosScreen = try Peer(client, port: server.port)
        ivosScreen.send(.observe(room: "vault", token: ivoYou.token))
        _ = try ivosScreen.expect("observing") { if case .observing = $0 { true } else { nil } }
        let guest = try Peer(client, port: server.port)
        guest.send(.observe(room: "vault", passcode: "open sesame"))
        _ = try guest.expect("observing", timeout: 20) { if case .observing = $0 { true } else { nil } }

        hana.send(.kick(member: ivoYou.id))
        #expect(try error(ivosScreen) == .removed)
        #expect(try ivosScreen.expectClose() == RoomHub.removedCloseCode)
        #expect(try ivo.expectClose() == RoomHub.removedCloseCode)

        hana.send(.passcode("new soup"), ref: .string("p"))
        #expect(try error(guest) == .badPasscode)
        #expect(try guest.expectClose() == RoomHub.accessEndedCode)
    }
}

/// A value one thread sets and another reads.
final class LockedBox<T>: @unchecked Sendable {
    // Each test hands a value to one other thread and reads it back once that thread is done.
    private let lock = NSLock()
    private var stored: T
    init(_ value: T) { stored = value }
    var value: T { lock.withLock { stored } }
    func set(_ value: T) { lock.withLock { stored = value } }
}
