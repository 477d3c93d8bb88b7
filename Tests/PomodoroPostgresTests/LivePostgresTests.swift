import Foundation
import Glibc
import PomodoroCore
import PomodoroNet
import PomodoroPostgres
import PomodoroProtocol
import PomodoroServer
import PomodoroTestSupport
import Testing

/// The real server on PostgreSQL: what members are told is in the database, a restart loses nothing, and
/// an outage of the database is waited out. `LiveServer`, `Peer` and `httpGet` come from the test support
/// (LivePeers.swift).
@Suite(.onOwnThreads, .timeLimit(.minutes(TestTime.minutes(2))))
struct LivePostgresTests {
    let client: WebSocketClient

    init() throws {
        client = try WebSocketClient()
        client.start()
    }

    func finish() {
        client.stop()
        client.waitUntilFinished()
    }

    static func server(_ url: String) throws -> LiveServer {
        try LiveServer { $0.database = .postgres(url: url) }
    }

    static func isRunning(_ message: ServerMessage) -> Bool? {
        if case .state(let room) = message, room.status == .running { true } else { nil }
    }

    @Test func aRoomOnPostgresSurvivesARestart() async throws {
        defer { finish() }
        let url = try await PostgresTestServer.makeDatabase()
        let first = try Self.server(url)
        let ada = try Peer(client, port: first.port)
        // Pipelined, as scripts send: the join looks the room up in PostgreSQL while the rest waits.
        ada.send(.join(room: "pg-room", name: "Ada", token: nil))
        ada.send(.task(text: "write the report"))
        ada.send(.start)
        let you = try ada.expect("welcome") { if case .welcome(let you, _, _, _, _) = $0 { you } else { nil } }
        _ = try ada.expect("a running state", Self.isRunning)
        first.stop()

        // What Ada was told is in the database.
        let store = try PostgresRoomStore.open(url: url)
        let stored = try #require(try store.loadRoom(try RoomID(validating: "pg-room")))
        store.close()
        #expect(stored.members.map(\.task) == ["write the report"])
        if case .running = stored.record.timer {} else { Issue.record("the stored timer is \(stored.record.timer)") }

        // A new server on the same database gives Ada her place back, the focus still running.
        let second = try Self.server(url)
        defer { second.stop() }
        let back = try Peer(client, port: second.port).join("pg-room", name: "Ada", token: you.token)
        #expect(back.you.resumed && back.you.id == you.id)
        #expect(back.room.status == .running)
    }

    /// PostgreSQL stops under a running room: the room goes on ticking, `/healthz` says why, a change is
    /// refused with `store_unavailable`; when it is back the server recovers by itself, and what members were
    /// told is in the database.
    @Test func aDatabaseOutageIsWaitedOut() async throws {
        defer { finish() }
        let database = try await onOwnThread { try PostgresTestServer.own() }
        defer { database.stop() }
        let url = try database.makeDatabase()
        let server = try Self.server(url)
        let ada = try Peer(client, port: server.port)
        ada.send(.join(room: "outage", name: "Ada", token: nil))
        ada.send(.task(text: "before"))
        ada.send(.start)
        _ = try ada.expect("a running state", Self.isRunning)

        try database.pause()
        let health = try httpGet(port: server.port, path: "/healthz")
        #expect(health.status == 503)
        #expect(health.body.hasPrefix("database unavailable"))
        let readiness = try httpGet(port: server.port, path: "/readyz")
        #expect(readiness.status == 503 && readiness.body.hasPrefix("not ready: database unavailable"), "\(readiness)")
        for _ in 0..<2 { _ = try ada.expect("a tick during the outage") { if case .tick = $0 { true } else { nil } } }
        ada.send(.task(text: "during"))
        let refused = try ada.expect("an error") { if case .error(let code, _, _, _, _) = $0 { code } else { nil } }
        #expect(refused == .storeUnavailable)

        try database.resume()
        let deadline = TestTime.deadline(15)
        while try httpGet(port: server.port, path: "/healthz").status != 200 {
            guard Date() < deadline else { throw LiveTestFailure(description: "/healthz did not recover within 15 s") }
            usleep(100_000)   // polling an outside engine's recovery, not ordering the test's own steps
        }
        #expect(try httpGet(port: server.port, path: "/readyz").status == 200, "ready again once the database is")
        ada.send(.task(text: "after"))
        _ = try ada.expect("ok task") { if case .ok("task", _, _) = $0 { true } else { nil } }
        _ = try ada.expect("the state with the new task") {
            if case .state(let room) = $0, room.members.first?.task == "after" { true } else { nil }
        }
        server.stop()

        let store = try PostgresRoomStore.open(url: url)
        defer { store.close() }
        let stored = try #require(try store.loadRoom(try RoomID(validating: "outage")))
        #expect(stored.members.map(\.task) == ["after"])
    }
}
