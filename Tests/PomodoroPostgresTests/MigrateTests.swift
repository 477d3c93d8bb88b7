import Foundation
import PomodoroCore
import PomodoroPostgres
@testable import PomodoroStore
import PomodoroSQLite
import PomodoroTestSupport
import Testing

/// `pomodoro-server migrate` from an SQLite deployment into PostgreSQL: everything arrives, the counts are
/// checked, and a second run duplicates nothing.
@Suite(.onOwnThreads, .timeLimit(.minutes(TestTime.minutes(2))))
struct MigrateTests {
    /// Two rooms (one locked), three members, a journal of sessions and interruptions, in an SQLite file.
    static func deployment(at path: String) throws {
        let store = try SQLiteRoomStore.open(path: path)
        let other = roomID("team-b")
        let (sessions, interruptions) = JournalFixtures.journal(seed: 7)
        try store.apply([.saveRoom(Sample.roomRecord(), passcode: "pbkdf2-sha256$600000$00ff$" + String(repeating: "ab", count: 32)),
                         .saveMember(Sample.room, Sample.member(1, name: "Ada")),
                         .saveMember(Sample.room, Sample.member(2, name: "Lin", away: true, connected: false)),
                         .saveRoom(Sample.roomRecord(other, host: nil), passcode: nil),
                         .saveMember(other, Sample.member(3, name: "Zoë"))]
                        + sessions.map { .focusCompleted($0) } + interruptions.map { .interrupted($0) }
                        + [.focusCompleted(Sample.session(other, endedAtMs: utcMs(2026, 11, 2)))])
    }

    static func migrate(_ arguments: [String]) throws -> (status: Int32, output: String, errors: String) {
        let run = try ProcessLauncher.run(ProcessLauncher.server, ["migrate"] + arguments)
        return (run.status, run.output, run.errors)
    }

    @Test func aDeploymentMovesToPostgresOnceAndIsVerified() async throws {
        let url = try await PostgresTestServer.makeDatabase()
        try withTemporaryFolder { folder in
            let path = folder.appendingPathComponent("pomodoro.sqlite").path
            try Self.deployment(at: path)

            let first = try Self.migrate(["--from", "sqlite:\(path)", "--to", url])
            #expect(first.status == 0, "\(first.errors)")
            #expect(first.output.contains("verified"))
            let second = try Self.migrate(["--from", path, "--to", url])
            #expect(second.status == 0, "\(second.errors)")
            #expect(second.output.contains("copied 0 focus sessions and 0 interruptions"))

            // Every row is there once, and the stores answer alike.
            let source = try SQLiteRoomStore.open(path: path)
            let target = try PostgresRoomStore.open(url: url)
            defer { target.close() }
            #expect(try target.loadRooms() == source.loadRooms())
            for room in [Sample.room, roomID("team-b")] {
                #expect(try target.sessions(room: room, endedFrom: nil, before: nil, limit: nil)
                        == source.sessions(room: room, endedFrom: nil, before: nil, limit: nil))
                #expect(try target.interruptions(room: room, from: nil, before: nil)
                        == source.interruptions(room: room, from: nil, before: nil))
                let quarters: Range<Int64> = 0..<Int64.max / 900_000
                #expect(try target.journalTotals(room: room, quarters: quarters)
                        == source.journalTotals(room: room, quarters: quarters))
            }
        }
    }

    /// A token's plain text, as the team holds it; the store keeps its SHA-256.
    static let token = "pomo_" + String(repeating: "5a", count: 32)
    static let secret = "whsec_" + String(repeating: "c3", count: 24)

    /// The room's integrations: two API tokens (one of team-b's), two webhooks (one switched off by the server)
    /// and an outbox of every state: delivered, due after failures (its next attempt already passed), due
    /// untried, and given up.
    static func integrations(at path: String, receiver: String) throws {
        let store = try SQLiteRoomStore.open(path: path)
        let created: Int64 = 1_795_000_000_000
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        func body(_ id: String, _ type: String) -> String { #"{"id":"\#(id)","type":"\#(type)","room":"team-a"}"# }
        try store.apply([
            .saveAPITokens(Sample.room, [
                APITokenRecord(id: "t1", name: "deploy bot", tokenHash: ResumeToken(token).hash, createdAtMs: created,
                               lastUsedAtMs: created + 60_000, createdBy: MemberID("m1")),
                APITokenRecord(id: "t3", name: "Émile's ✓", tokenHash: String(repeating: "b", count: 64), createdAtMs: created),
            ]),
            .saveAPITokens(roomID("team-b"), [APITokenRecord(id: "t1", name: "cron", tokenHash: String(repeating: "d", count: 64),
                                                             createdAtMs: created)]),
            .webhook(.save(WebhookRecord(room: Sample.room, id: 1, url: receiver, events: [.phaseStarted, .taskChanged],
                                         format: .json, secret: secret, createdMs: created))),
            .webhook(.save(WebhookRecord(room: Sample.room, id: 3, url: "https://hooks.slack.com/services/T0/B0/x",
                                         events: [.phaseCompleted], format: .slack, secret: "whsec_unused", language: "ko",
                                         enabled: false, createdMs: created + 1, disabledReason: "failed for a day; last: answered 404"))),
            .webhook(.queue(Sample.room, [
                WebhookDelivery(room: Sample.room, webhook: 1, eventID: "evt_delivered", kind: .taskChanged, createdMs: created,
                                body: body("evt_delivered", "task_changed"), state: .delivered, attempts: 1,
                                nextAttemptMs: created, lastAttemptMs: created + 5, lastStatus: 200),
                WebhookDelivery(room: Sample.room, webhook: 3, eventID: "evt_given_up", kind: .phaseCompleted, createdMs: created,
                                body: #"{"text":"팀"}"#, state: .failed, attempts: 9, nextAttemptMs: created + 86_400_000,
                                lastAttemptMs: created + 86_400_000, lastStatus: 404, lastError: "answered 404"),
                WebhookDelivery(room: Sample.room, webhook: 1, eventID: "evt_retried", kind: .taskChanged, createdMs: now - 60_000,
                                body: body("evt_retried", "task_changed"), state: .due, attempts: 2,
                                nextAttemptMs: now - 1_000, lastAttemptMs: now - 21_000, lastStatus: 503, lastError: "answered 503"),
                WebhookDelivery(room: Sample.room, webhook: 1, eventID: "evt_waiting", kind: .phaseStarted, createdMs: now - 50_000,
                                body: body("evt_waiting", "phase_started")),
            ])),
        ])
    }

    /// Every outbox row of every webhook of the room, in order, without the store's row numbers.
    static func outbox(_ store: any WebhookStore, _ room: RoomID) throws -> [WebhookDelivery] {
        var rows: [WebhookDelivery] = []
        for hook in try store.webhooks(room: room) {
            rows += try store.recentDeliveries(room: room, webhook: hook.id, limit: 100).reversed()
        }
        return rows.map { var row = $0; row.seq = 0; return row }
    }

    /// The integrations move with their rooms: token hashes, webhooks with their secrets, the outbox in order with
    /// its attempts; and they work on a server running on the target: the copied token drives the room over
    /// the control API, and the due deliveries go out, in order, under their ids, signed with the copied secret.
    @Test func tokensWebhooksAndTheirOutboxMoveAndStillWork() async throws {
        let url = try await PostgresTestServer.makeDatabase()
        let receiver = try WebhookReceiver()
        defer { receiver.stop() }
        try receiver.setSecret(Self.secret)
        try withTemporaryFolder { folder in
            let path = folder.appendingPathComponent("pomodoro.sqlite").path
            try Self.deployment(at: path)
            try Self.integrations(at: path, receiver: receiver.url("/ok"))

            let first = try Self.migrate(["--from", path, "--to", url])
            #expect(first.status == 0, "\(first.errors)")
            #expect(first.output.contains("2 API tokens, 2 webhooks, 4 webhook deliveries"),
                    "\(first.output)")
            let second = try Self.migrate(["--from", path, "--to", url])
            #expect(second.status == 0, "\(second.errors)")
            #expect(second.output.contains("verified"), "\(second.output)")

            let source = try SQLiteRoomStore.open(path: path)
            let target = try PostgresRoomStore.open(url: url)
            defer { target.close() }
            for room in [Sample.room, roomID("team-b")] {
                #expect(try target.loadRoom(room)?.apiTokens == source.loadRoom(room)?.apiTokens)
                #expect(try target.webhooks(room: room) == source.webhooks(room: room))
                // Twice copied, each row once, in the source's order, with its state and attempts.
                #expect(try Self.outbox(target, room) == Self.outbox(source, room))
            }
            #expect(try target.loadRoom(Sample.room)?.apiTokens.first?.tokenHash == ResumeToken(Self.token).hash)
            #expect(try target.webhooks(room: Sample.room).map(\.secret) == [Self.secret, "whsec_unused"])
            #expect(try Self.outbox(target, Sample.room).map(\.eventID) == ["evt_delivered", "evt_retried", "evt_waiting", "evt_given_up"])
            // What the target will deliver next is what the source would have.
            #expect(try target.nextDeliveries(limit: 10).map { $0.1.eventID } == ["evt_retried"])

            // A server on the target: the copied token drives the room, and the outbox goes on.
            let server = try ProcessLauncher.start(ProcessLauncher.server, [
                "--port", "0", "--host", "127.0.0.1", "--web-root", LiveServer.webRoot, "--db", url,
                "--log-level", "warning", "--webhook-allow-private", "on",
            ])
            defer { server.stop() }
            let port = try server.waitUntilServing()
            let started = try httpRequest("POST", port: port, path: "/api/rooms/team-a/commands",
                                          headers: ["Authorization: Bearer \(Self.token)"],
                                          body: Array(#"{"type":"start","ref":"go"}"#.utf8))
            #expect(started.status == 200, "\(started.body)")
            #expect(started.body.contains(#""type":"ok""#) && started.body.contains(#""ref":"go""#), "\(started.body)")
            let wrong = try httpRequest("POST", port: port, path: "/api/rooms/team-a/commands",
                                        headers: ["Authorization: Bearer pomo_" + String(repeating: "0", count: 64)],
                                        body: Array(#"{"type":"pause"}"#.utf8))
            #expect(wrong.status == 401, "\(wrong.status) \(wrong.body)")

            let requests = try receiver.wait("the copied deliveries and the start") { $0.count >= 3 }
            #expect(requests.prefix(2).map(\.eventID) == ["evt_retried", "evt_waiting"])
            #expect(requests.count == 3 && requests[2].json["type"] as? String == "phase_started")
            #expect(requests.allSatisfy { $0.status == 200 && $0.signatureValid == true })
        }
    }

    @Test func unusableArgumentsAreOneLineAndStatus78() throws {
        let bad = try Self.migrate(["--from", "mysql://x/y", "--to", "none"])
        #expect(bad.status == 78)
        #expect(bad.errors == "pomodoro-server migrate: 'mysql://' is not a database this server can use: give a file path, sqlite:PATH, postgres://USER@HOST/DBNAME or none\n")
        let same = try Self.migrate(["--from", "a.sqlite", "--to", "sqlite:a.sqlite"])
        #expect(same.status == 78)
    }

    @Test func anUnreachableTargetFailsWithoutThePassword() throws {
        try withTemporaryFolder { folder in
            let path = folder.appendingPathComponent("pomodoro.sqlite").path
            try Self.deployment(at: path)
            let result = try Self.migrate(["--from", path, "--to", "postgres://focus:hunter2@127.0.0.1:1/none?connect_timeout=2"])
            #expect(result.status == 1)
            #expect(result.errors.hasPrefix("pomodoro-server migrate: "))
            #expect(!result.errors.contains("hunter2") && !result.output.contains("hunter2"))
        }
    }
}
