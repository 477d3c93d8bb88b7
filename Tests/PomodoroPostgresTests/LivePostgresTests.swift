import Foundation
import Glibc
import PomodoroCore
import PomodoroNet
import PomodoroPostgres
import PomodoroProtocol
import PomodoroServer
import Testing

/// The real server on PostgreSQL: what members are told is in the database, and a restart loses nothing.
@Suite(.timeLimit(.minutes(2)))
struct LivePostgresTests {
    /// Everything one connection received, with a bounded wait for the next message.
    final class Events: @unchecked Sendable {
        private var events: [ClientEvent] = []
        private var read = 0
        private let condition = NSCondition()

        func add(_ event: ClientEvent) {
            condition.lock()
            events.append(event)
            condition.broadcast()
            condition.unlock()
        }

        /// The next event (5 s at most).
        func next() throws -> ClientEvent {
            let deadline = Date().addingTimeInterval(5)
            condition.lock()
            defer { condition.unlock() }
            while read == events.count {
                guard condition.wait(until: deadline) else { throw Failure("nothing within 5 s") }
            }
            read += 1
            return events[read - 1]
        }
    }

    /// One WebSocket connection to the server.
    final class Connection: Sendable {
        let client: WebSocketClient
        let id: ClientConnectionID
        let events = Events()

        init(port: Int) throws {
            client = try WebSocketClient()
            client.start()
            let events = self.events
            id = client.connect(host: "127.0.0.1", port: port, path: "/ws") { events.add($0) }
            guard try events.next() == .opened else { throw Failure("no connection") }
        }

        func stop() {
            client.stop()
            client.waitUntilFinished()
        }

        func send(_ messages: [ClientMessage]) {
            for message in messages { client.send(WireCodec.encode(ClientFrame(message, ref: nil)), on: id) }
        }

        /// Reads messages until `match` accepts one.
        func expect<T>(_ what: String, _ match: (ServerMessage) -> T?) throws -> T {
            while true {
                guard case .text(let bytes) = try events.next() else { throw Failure("the connection ended before \(what)") }
                if let found = match(try WireCodec.decodeServerMessage(bytes)) { return found }
            }
        }
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    static func server(_ url: String) throws -> PomodoroServer {
        var configuration = ServerConfiguration(host: "127.0.0.1", port: 0, webRoot: nil)
        configuration.database = .postgres(url: url)
        let server = try PomodoroServer(configuration: configuration)
        server.start()
        return server
    }

    @Test func aRoomOnPostgresSurvivesARestart() throws {
        let url = try PostgresTestServer.shared.get().makeDatabase()
        let first = try Self.server(url)
        let ada = try Connection(port: first.port)
        // Pipelined, as scripts send: the join looks the room up in PostgreSQL while the rest waits.
        ada.send([.join(room: "pg-room", name: "Ada", token: nil), .task(text: "write the report"), .start])
        let you = try ada.expect("welcome") { if case .welcome(let you, _, _, _) = $0 { you } else { nil } }
        _ = try ada.expect("a running state") { if case .state(let room) = $0, room.status == .running { true } else { nil } }
        first.shutdown()
        first.waitUntilFinished()
        ada.stop()

        // What Ada was told is in the database.
        let store = try PostgresRoomStore.open(url: url)
        let stored = try #require(try store.loadRoom(try RoomID(validating: "pg-room")))
        store.close()
        #expect(stored.members.map(\.task) == ["write the report"])
        if case .running = stored.record.timer {} else { Issue.record("the stored timer is \(stored.record.timer)") }

        // A new server on the same database gives Ada her place back, the focus still running.
        let second = try Self.server(url)
        defer { second.shutdown(); second.waitUntilFinished() }
        let again = try Connection(port: second.port)
        defer { again.stop() }
        again.send([.join(room: "pg-room", name: "Ada", token: you.token)])
        let (back, room) = try again.expect("welcome") {
            if case .welcome(let me, let room, _, _) = $0 { (me, room) } else { nil }
        }
        #expect(back.resumed && back.id == you.id)
        #expect(room.status == .running)
    }
}

extension LivePostgresTests {
    /// A GET on a connection of its own: the status and the body.
    static func get(_ path: String, port: Int) throws -> (status: Int, body: String) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw Failure("connect failed") }
        let request = Array("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".utf8)
        _ = request.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        var response = [UInt8](), buffer = [UInt8](repeating: 0, count: 4096)
        while case let count = read(fd, &buffer, buffer.count), count > 0 { response += buffer[0..<count] }
        let text = String(decoding: response, as: UTF8.self)
        guard let status = Int(text.split(separator: " ").dropFirst().first ?? ""),
              let end = text.range(of: "\r\n\r\n") else { throw Failure("no HTTP answer") }
        return (status, String(text[end.upperBound...]))
    }

    /// PostgreSQL stops under a running room: the room goes on ticking, `/healthz` says why, a change is
    /// refused with `store_unavailable`; when it is back the server recovers by itself, and what members were
    /// told is in the database.
    @Test func aDatabaseOutageIsWaitedOut() throws {
        let database = try PostgresTestServer.own()
        defer { database.stop() }
        let url = try database.makeDatabase()
        let server = try Self.server(url)
        let ada = try Connection(port: server.port)
        defer { ada.stop() }
        ada.send([.join(room: "outage", name: "Ada", token: nil), .task(text: "before"), .start])
        _ = try ada.expect("a running state") { if case .state(let room) = $0, room.status == .running { true } else { nil } }

        try database.pause()
        let health = try Self.get("/healthz", port: server.port)
        #expect(health.status == 503)
        #expect(health.body.hasPrefix("database unavailable"))
        for _ in 0..<2 { _ = try ada.expect("a tick during the outage") { if case .tick = $0 { true } else { nil } } }
        ada.send([.task(text: "during")])
        let refused = try ada.expect("an error") { if case .error(let code, _, _, _) = $0 { code } else { nil } }
        #expect(refused == .storeUnavailable)

        try database.resume()
        let deadline = Date().addingTimeInterval(15)
        while try Self.get("/healthz", port: server.port).status != 200 {
            guard Date() < deadline else { throw Failure("/healthz did not recover within 15 s") }
            usleep(100_000)   // polling an outside engine's recovery, not ordering the test's own steps
        }
        ada.send([.task(text: "after")])
        _ = try ada.expect("ok task") { if case .ok("task", _, _) = $0 { true } else { nil } }
        _ = try ada.expect("the state with the new task") {
            if case .state(let room) = $0, room.members.first?.task == "after" { true } else { nil }
        }
        server.shutdown()
        server.waitUntilFinished()

        let store = try PostgresRoomStore.open(url: url)
        defer { store.close() }
        let stored = try #require(try store.loadRoom(try RoomID(validating: "outage")))
        #expect(stored.members.map(\.task) == ["after"])
    }
}
