import Foundation
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
