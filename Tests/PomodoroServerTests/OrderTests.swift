import Foundation
import Glibc
import PomodoroCore
import PomodoroNet
import PomodoroProtocol
import PomodoroServer
import PomodoroStore
import PomodoroSQLite
import PomodoroTestSupport
import Testing

/// Frames of one connection take effect in the order they were sent, whatever a `join` waits for: a store
/// look-up, a passcode hash, a slow disk. Scripts, bots and slow phones send without waiting for `welcome`.
@Suite(.onOwnThreads, .timeLimit(.minutes(TestTime.minutes(1))))
struct OrderTests {
    /// A folder of its own for a test's database, removed by `remove()`.
    struct Folder {
        let path = NSTemporaryDirectory() + "pomodoro-order-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        var database: String { path + "/pomodoro.sqlite" }
        func remove() { try? FileManager.default.removeItem(atPath: path) }
    }

    /// A live server on a database of its own and a client for it, both stopped (and the folder removed)
    /// after `body`.
    static func withServer(_ body: (LiveServer, WebSocketClient) throws -> Void) throws {
        let folder = Folder()
        defer { folder.remove() }
        let server = try LiveServer { $0.databasePath = folder.database }
        let client = try WebSocketClient()
        client.start()
        defer { server.stop(); client.stop(); client.waitUntilFinished() }
        try body(server, client)
    }

    /// The frames of `messages`, each with its ref, as one write.
    static func burst(_ messages: [(ClientMessage, String)]) -> [UInt8] {
        messages.flatMap { message, ref in
            RawWebSocket.frame(opcode: 1, WireCodec.encode(ClientFrame(message, ref: .string(ref))))
        }
    }

    /// join, task, configure, start: what a script sends in one go.
    static func pipelined(room: String, token: String? = nil, passcode: String? = nil) -> [UInt8] {
        burst([(.join(room: room, name: "Calm", token: token, passcode: passcode), "j"),
               (.task(text: "write the report"), "t"),
               (.configure(RoomSettings(focus: 1500, shortBreak: 300)), "c"),
               (.start, "s")])
    }

    /// Reads server messages until `done` says the list is complete (or the socket's 5 s read timeout).
    static func read(_ socket: RawWebSocket, until done: ([ServerMessage]) -> Bool) throws -> [ServerMessage] {
        var messages: [ServerMessage] = []
        while !done(messages) {
            guard let (opcode, payload) = socket.readFrame() else {
                throw LiveTestFailure(description: "connection ended or went quiet after \(messages)")
            }
            if opcode == 1 { messages.append(try WireCodec.decodeServerMessage(payload)) }
        }
        return messages
    }

    /// The replies (not broadcasts) among `messages`, in order, as short labels: `welcome`, `ok task`, `error
    /// not_joined`, ...
    static func replies(_ messages: [ServerMessage]) -> [String] {
        messages.compactMap { message in
            switch message {
            case .welcome: "welcome"
            case .ok(let command, _, _): "ok \(command)"
            case .error(let code, _, _, _, _): "error \(code.rawValue)"
            case .stats: "stats"
            case .pong: "pong"
            default: nil
            }
        }
    }

    static func isRunning(_ message: ServerMessage) -> Bool {
        if case .state(let room) = message { return room.status == .running }
        return false
    }

    /// Sends the pipelined burst and checks that every frame took effect, in order, and the room runs.
    static func expectPipelinedBurstWorks(port: Int, room: String, token: String? = nil,
                                          passcode: String? = nil) throws {
        let socket = try RawWebSocket(port: port)
        try socket.write(pipelined(room: room, token: token, passcode: passcode))
        let messages = try read(socket) { replies($0).count >= 4 && $0.contains(where: isRunning) }
        #expect(replies(messages) == ["welcome", "ok task", "ok configure", "ok start"])
    }

    @Test func aPipelinedBurstWorksWithADatabase() throws {
        try Self.withServer { server, _ in try Self.expectPipelinedBurstWorks(port: server.port, room: "bystander") }
    }

    @Test func aPipelinedBurstWorksInALockedRoom() throws {
        try Self.withServer { server, client in
            let owner = try Peer(client, port: server.port)
            owner.send(.join(room: "vault", name: "Owner", token: nil, passcode: "open sesame"))
            _ = try owner.expect("welcome") { if case .welcome = $0 { true } else { nil } }
            try Self.expectPipelinedBurstWorks(port: server.port, room: "vault", passcode: "open sesame")
        }
    }

    /// The member's room is only in the store (a server that brought back no rooms at start, as one with
    /// more stored rooms than `--max-rooms`): the join looks it up, the token brings the member back, and
    /// the frames behind the join wait for all of it.
    @Test func aPipelinedBurstWorksForAMemberResumingByToken() throws {
        let folder = Folder()
        defer { folder.remove() }
        let first = try LiveServer { $0.databasePath = folder.database }
        let client = try WebSocketClient()
        client.start()
        let you: YouPayload
        do {
            defer { first.stop(); client.stop(); client.waitUntilFinished() }
            let peer = try Peer(client, port: first.port)
            (you, _) = try peer.join("comeback", name: "Calm", token: nil)
        }
        let store = try GatedStore(SQLiteRoomStore.open(path: folder.database), restoresNothing: true)
        let second = try LiveServer(store: store)
        defer { store.open(); second.stop() }
        let socket = try RawWebSocket(port: second.port)
        try socket.write(Self.pipelined(room: "comeback", token: you.token))
        #expect(store.waitForALookUp())
        store.open()
        let messages = try Self.read(socket) { Self.replies($0).count >= 4 && $0.contains(where: Self.isRunning) }
        #expect(Self.replies(messages) == ["welcome", "ok task", "ok configure", "ok start"])
        let resumed = messages.contains { if case .welcome(let me, _, _, _, _) = $0 { me.id == you.id && me.resumed } else { false } }
        #expect(resumed)
    }

    /// The store answers only when the test lets it: the whole burst is in while the join waits.
    @Test func aPipelinedBurstWaitsForASlowStore() throws {
        let folder = Folder()
        defer { folder.remove() }
        let store = try GatedStore(SQLiteRoomStore.open(path: folder.database))
        let server = try LiveServer(store: store)
        defer { store.open(); server.stop() }
        let socket = try RawWebSocket(port: server.port)
        try socket.write(Self.pipelined(room: "slow-disk"))
        #expect(store.waitForALookUp())
        store.open()
        let messages = try Self.read(socket) { Self.replies($0).count >= 4 && $0.contains(where: Self.isRunning) }
        #expect(Self.replies(messages) == ["welcome", "ok task", "ok configure", "ok start"])
    }

    /// Beyond `maxPendingFrames` waiting behind a join, frames are refused at once; those that waited are
    /// answered after the welcome, in order.
    @Test func framesPilingUpBehindAJoinAreBounded() throws {
        let folder = Folder()
        defer { folder.remove() }
        let store = try GatedStore(SQLiteRoomStore.open(path: folder.database))
        let server = try LiveServer(store: store)
        defer { store.open(); server.stop() }
        let socket = try RawWebSocket(port: server.port)
        let extra = 3
        let pings = (0..<(ServerLimits.framesWaitingBehindARequest + extra)).map { (ClientMessage.ping, "p\($0)") }
        try socket.write(Self.burst([(.join(room: "queue", name: "Calm", token: nil), "j")] + pings))
        #expect(store.waitForALookUp())
        let refused = try Self.read(socket) { $0.count >= extra }
        #expect(Self.replies(refused) == Array(repeating: "error rate_limited", count: extra))
        store.open()
        let answered = try Self.read(socket) { Self.replies($0).count >= 1 + ServerLimits.framesWaitingBehindARequest }
        #expect(Array(Self.replies(answered).prefix(1 + ServerLimits.framesWaitingBehindARequest))
                == ["welcome"] + Array(repeating: "pong", count: ServerLimits.framesWaitingBehindARequest))
    }

    /// A second join while one is pending, a leave right after a join, a stats request in between: each is
    /// answered in the order sent.
    @Test func everyRequestIsAnsweredInTheOrderSent() throws {
        try Self.withServer { server, _ in
            let socket = try RawWebSocket(port: server.port)
            try socket.write(Self.burst([(.join(room: "first", name: "Calm", token: nil), "j1"),
                                         (.join(room: "second", name: "Calm", token: nil), "j2"),
                                         (.stats(room: nil, days: nil, tz: nil, passcode: nil), "st"),
                                         (.start, "s"),
                                         (.leave, "l"),
                                         (.join(room: "second", name: "Calm", token: nil), "j3"),
                                         (.leave, "l2"),
                                         (.join(room: "first", name: "Calm", token: nil), "j4")]))
            let messages = try Self.read(socket) { Self.replies($0).count >= 8 }
            #expect(Self.replies(messages) == ["welcome", "error already_joined", "stats", "ok start", "ok leave",
                                               "welcome", "ok leave", "welcome"])
        }
    }

    /// After `leave`, the same connection joins again, with a database (where the join looks the room up).
    @Test func leaveThenJoinOnOneConnection() throws {
        try Self.withServer { server, client in
            let peer = try Peer(client, port: server.port)
            _ = try peer.join("revolving", name: "Calm", token: nil)
            peer.send(.leave)
            _ = try peer.expect("ok leave") { if case .ok("leave", _, _) = $0 { true } else { nil } }
            let again = try peer.join("elsewhere", name: "Calm", token: nil)
            #expect(again.room.room == "elsewhere")
            peer.send(.leave)
            _ = try peer.expect("ok leave") { if case .ok("leave", _, _) = $0 { true } else { nil } }
            _ = try peer.join("revolving", name: "Calm", token: nil)
        }
    }
}

/// A store whose room look-ups wait until the test opens it: a disk as slow as a test needs, without
/// guessing at timings.
final class GatedStore: RoomStore, @unchecked Sendable {
    private let inner: any RoomStore
    private let condition = NSCondition()
    private var isOpen = false
    private var lookUps = 0
    private let restoresNothing: Bool

    /// - Parameter restoresNothing: the server finds no rooms to bring back at start.
    init(_ inner: any RoomStore, restoresNothing: Bool = false) {
        self.inner = inner
        self.restoresNothing = restoresNothing
    }

    /// Lets every waiting and later look-up through.
    func open() {
        condition.lock()
        isOpen = true
        condition.broadcast()
        condition.unlock()
    }

    /// Waits (up to 5 s) until a look-up has reached the store and is held there.
    func waitForALookUp() -> Bool {
        condition.lock()
        defer { condition.unlock() }
        let deadline = TestTime.deadline(5)
        while lookUps == 0 { if !condition.wait(until: deadline) { return false } }
        return true
    }

    func loadRoom(_ id: RoomID) throws(StoreError) -> StoredRoom? {
        condition.lock()
        lookUps += 1
        condition.broadcast()
        while !isOpen { condition.wait() }
        condition.unlock()
        return try inner.loadRoom(id)
    }

    func loadRooms() throws(StoreError) -> [StoredRoom] { restoresNothing ? [] : try inner.loadRooms() }
    func loadSchedules() throws(StoreError) -> [RoomID: [Schedule]] { try inner.loadSchedules() }
    func loadSchedules(room: RoomID) throws(StoreError) -> [Schedule] { try inner.loadSchedules(room: room) }
    func apply(_ changes: [StoreChange]) throws(StoreError) { try inner.apply(changes) }
    func sessions(room: RoomID, endedFrom from: Int64?, before: Int64?, limit: Int?) throws(StoreError)
        -> [FocusSessionRecord] { try inner.sessions(room: room, endedFrom: from, before: before, limit: limit) }
    func interruptions(room: RoomID, from: Int64?, before: Int64?) throws(StoreError) -> [InterruptionRecord] {
        try inner.interruptions(room: room, from: from, before: before)
    }
}
