import Foundation
import Glibc
import PomodoroCore
import PomodoroNet
import PomodoroProtocol
import PomodoroServer
import PomodoroTestSupport
import Testing

/// Webhooks delivered by a real server to a real HTTP receiver on loopback (Tests/webhooks/receiver.py), whose
/// signature check is Python's hmac: signed, in order, retried after 500s and timeouts, refused on private
/// addresses without the option, in Slack's and Discord's shapes, and kept across a `kill -9`.
@Suite(.onOwnThreads, .serialized, .timeLimit(.minutes(TestTime.minutes(2)))) struct WebhookLiveTests {
    /// A server on a fresh SQLite file, webhooks allowed to reach loopback unless `allowPrivate` is false, and
    /// quick retries (0.3 s, doubling).
    static func withServer(allowPrivate: Bool = true, giveUpAfterMs: Int64? = nil, timeoutMs: Int? = nil,
                           _ body: (LiveServer, WebSocketClient, WebhookReceiver) throws -> Void) throws {
        let receiver = try WebhookReceiver()
        defer { receiver.stop() }
        let live = try LiveServer { configuration in
            configuration.database = .sqlite(path: receiver.folder.appendingPathComponent("server/db.sqlite").path)
            configuration.webhooks.allowPrivate = allowPrivate
            configuration.webhooks.firstRetryMs = 300
            if let giveUpAfterMs { configuration.webhooks.giveUpAfterMs = giveUpAfterMs }
            if let timeoutMs { configuration.webhooks.timeoutMs = timeoutMs }
        }
        defer { live.stop() }
        let client = try WebSocketClient()
        client.start()
        defer { client.stop(); client.waitUntilFinished() }
        try body(live, client, receiver)
    }

    /// Adds a webhook and returns the reply (with its secret).
    static func add(_ peer: Peer, url: String, events: [String], format: String = "json",
                    language: String? = nil) throws -> WebhooksPayload {
        peer.send(.webhook(.add(WebhookFields(url: url, events: events, format: format, language: language))),
                  ref: .string("add"))
        return try peer.expect("the webhook added") { message -> WebhooksPayload? in
            if case .webhooks(let payload, .string("add")?) = message { return payload }
            if case .error(let code, let text, _, _, _) = message { Issue.record("refused: \(code) \(text)") }
            return nil
        }
    }

    /// The room's webhooks as the host sees them. (Tests that poll it wait a tenth of a second between
    /// asks, under the connection's message rate.)
    static func list(_ peer: Peer, pause: Bool = false) throws -> WebhooksPayload {
        if pause { usleep(100_000) }
        peer.send(.webhook(.list), ref: .string("list"))
        // The list reads the store, behind its writer: on a machine running other tests' databases a write can
        // take seconds.
        return try peer.expect("the list", timeout: 15) { if case .webhooks(let p, .string("list")?) = $0 { p } else { nil } }
    }

    /// The ids of the deliveries the receiver took (2xx), in the order it took them.
    static func delivered(_ requests: [WebhookReceiver.Request]) -> [String] {
        requests.filter { $0.status == 200 }.compactMap(\.eventID)
    }

    @Test func jsonDeliveriesAreSignedKeptInOrderAndRetriedAfter500s() throws {
        try Self.withServer { live, client, receiver in
            let ada = try Peer(client, port: live.port)
            let bo = try Peer(client, port: live.port)
            _ = try ada.join("hooks-order", name: "Ada")
            let added = try Self.add(ada, url: receiver.url("/fail?first=2"),
                                     events: ["member_joined", "task_changed", "phase_started", "phase_completed"])
            let secret = try #require(added.secret)
            #expect(secret.hasPrefix("whsec_") && added.added == 1)
            try receiver.setSecret(secret)
            // The secret is shown once: the list never has it.
            #expect(try Self.list(ada).secret == nil)

            _ = try bo.join("hooks-order", name: "Bo")
            ada.send(.task(text: "write the \"report\" ✓"))
            ada.send(.configure(RoomSettings(focus: 1, shortBreak: 600)))
            _ = try ada.expect("configure ok") { if case .ok("configure", _, _) = $0 { true } else { nil } }
            ada.send(.start)
            _ = try ada.expect("the focus to complete", timeout: 10) {
                if case .event(_, .phaseCompleted(.focus, _, _, _), _) = $0 { true } else { nil }
            }
            let requests = try receiver.wait("four deliveries") { Self.delivered($0).count >= 4 }
            let types = requests.filter { $0.status == 200 }.map { $0.json["type"] as? String ?? "" }
            #expect(types == ["member_joined", "task_changed", "phase_started", "phase_completed"])
            // The first event was answered 500 twice and retried under its own id; nothing went out before it.
            #expect(requests.prefix(3).map(\.status) == [500, 500, 200])
            #expect(Set(requests.prefix(3).compactMap(\.eventID)).count == 1)
            // Order kept: an event is never sent before the one before it was taken.
            var taken: [String] = []
            for request in requests {
                guard let id = request.eventID else { continue }
                if !taken.contains(id) {
                    #expect(requests.filter { $0.eventID == id }.count >= 1)
                    taken.append(id)
                }
            }
            #expect(taken == Self.delivered(requests))
            // Every request is signed, and Python's hmac finds each signature good.
            #expect(requests.allSatisfy { $0.signatureValid == true })
            #expect(requests.allSatisfy { $0.headers["pomodoro-event-id"] == $0.eventID })
            let started = try #require(requests.first { $0.json["type"] as? String == "phase_started" }?.json)
            #expect(started["room"] as? String == "hooks-order")
            #expect((started["data"] as? [String: Any])?["members"] as? [String] == ["Ada", "Bo"])
            #expect((started["snapshot"] as? [String: Any])?["status"] as? String == "running")
            let task = try #require(requests.first { $0.json["type"] as? String == "task_changed" }?.json)
            #expect((task["data"] as? [String: Any])?["task"] as? String == "write the \"report\" ✓")

            // The host sees the deliveries, newest first, with their status and attempts: once the server has
            // its answer for the last one (the receiver answers before the server has read the answer).
            var deliveries: [WebhookDeliveryPayload] = []
            let deadline = TestTime.deadline(10)
            repeat { deliveries = try Self.list(ada, pause: true).webhooks.first?.deliveries ?? [] }
            while !deliveries.allSatisfy({ $0.state == "delivered" }) && Date() < deadline
            #expect(deliveries.map(\.event) == ["phase_completed", "phase_started", "task_changed", "member_joined"])
            #expect(deliveries.allSatisfy { $0.state == "delivered" && $0.status == 200 })
            #expect(deliveries.last?.attempts == 3)
            _ = bo
        }
    }

    /// A day of failures, shortened here to two seconds: the delivery is given up, the webhook switched off
    /// with its reason, and the room told.
    @Test func aWebhookFailingTooLongIsSwitchedOffAndTheRoomTold() throws {
        try Self.withServer(giveUpAfterMs: 2_000) { live, client, receiver in
            let ada = try Peer(client, port: live.port)
            let bo = try Peer(client, port: live.port)
            _ = try ada.join("hooks-down", name: "Ada")
            _ = try bo.join("hooks-down", name: "Bo")
            let added = try Self.add(ada, url: receiver.url("/fail?first=1000"), events: ["task_changed"])
            let id = try #require(added.added)
            bo.send(.task(text: "one"))
            for peer in [ada, bo] {
                let told = try peer.expect("the room told", timeout: 10) { message -> Int? in
                    if case .event(_, .webhookDisabled(let webhook, _), _) = message { webhook } else { nil }
                }
                #expect(told == id)
            }
            // The given-up attempt is written through the store's writer, which may commit just after the room
            // was told: the list is asked again, within a bound, until it shows the write.
            var hook = try #require(try Self.list(ada).webhooks.first)
            let written = TestTime.deadline(5)
            while hook.deliveries.first?.state != "failed" && written.timeIntervalSinceNow > 0 {
                hook = try #require(try Self.list(ada).webhooks.first)
            }
            #expect(!hook.enabled)
            #expect(hook.disabledReason?.contains("answered 500") == true)
            #expect(hook.deliveries.first?.state == "failed")
            let attempts = receiver.requests().count
            #expect(attempts >= 2)
            // Switched off, it queues nothing; switched on again, it delivers again.
            bo.send(.task(text: "two"))
            ada.send(.webhook(.change(id: id, WebhookFields(url: receiver.url("/ok"), enabled: true))), ref: .string("on"))
            _ = try ada.expect("switched on") { if case .webhooks(_, .string("on")?) = $0 { true } else { nil } }
            bo.send(.task(text: "three"))
            let requests = try receiver.wait("the delivery after it was switched on") { $0.contains { $0.path == "/ok" } }
            let tasks = requests.filter { $0.path == "/ok" }.map { ($0.json["data"] as? [String: Any])?["task"] as? String }
            #expect(tasks == ["three"])
        }
    }

    @Test func aDeliveryThatTimesOutIsTriedAgainUnderItsId() throws {
        try Self.withServer { live, client, receiver in
            let ada = try Peer(client, port: live.port)
            _ = try ada.join("hooks-timeout", name: "Ada")
            let added = try Self.add(ada, url: receiver.url("/slow?first=1"), events: ["phase_started"])
            ada.send(.webhook(.test(id: try #require(added.added))), ref: .string("t"))
            _ = try ada.expect("the test queued") { if case .ok("testWebhook", _, .string("t")?) = $0 { true } else { nil } }
            // The first request sleeps past the server's 5 s timeout; the retry is taken.
            let requests = try receiver.wait("the retry", timeout: 30) { $0.count >= 2 }
            #expect(requests.count == 2)
            #expect(requests[0].eventID != nil && requests[0].eventID == requests[1].eventID)
            #expect(requests[0].json["type"] as? String == "test")
            let delivery = try receiver.wait("nothing more", timeout: 1) { _ in true }
            #expect(delivery.count == 2)
            var deliveries: [WebhookDeliveryPayload] = []
            let deadline = TestTime.deadline(10)
            repeat { deliveries = try Self.list(ada, pause: true).webhooks.first?.deliveries ?? [] }
            while deliveries.first?.state != "delivered" && Date() < deadline
            #expect(deliveries.first?.state == "delivered")
            #expect(deliveries.first?.attempts == 2)
        }
    }

    /// Two receivers: one holds every request without answering (the server's timeout is a minute here, so
    /// only letting it go ends the hold), the other answers at once. The quick one gets every post, in order,
    /// while the stalled one still holds its first, and no second request reaches the stalled one meanwhile
    /// (one in flight per webhook). Let go, it gets every event, in order, once each.
    @Test func aStalledReceiverHoldsUpItsOwnWebhookOnly() throws {
        let fast = try WebhookReceiver()
        defer { fast.stop() }
        try Self.withServer(timeoutMs: 60_000) { live, client, slow in
            try slow.setStall(true)
            defer { try? slow.setStall(false) }
            let ada = try Peer(client, port: live.port)
            _ = try ada.join("hooks-stall", name: "Ada")
            _ = try Self.add(ada, url: slow.url("/stall"), events: ["task_changed"])
            _ = try Self.add(ada, url: fast.url("/ok"), events: ["task_changed"])
            func tasks(_ requests: [WebhookReceiver.Request]) -> [String] {
                requests.compactMap { ($0.json["data"] as? [String: Any])?["task"] as? String }
            }
            ada.send(.task(text: "one"))
            _ = try slow.wait("the first post, held", arrivals: true) { !$0.isEmpty }
            for text in ["two", "three", "four"] { ada.send(.task(text: text)) }
            // The bound only gives up: delivered one at a time, the quick posts would wait for the held one.
            let quick = try fast.wait("every quick post while the other receiver stalls") { tasks($0).count >= 4 }
            #expect(tasks(quick) == ["one", "two", "three", "four"])
            #expect(quick.allSatisfy { $0.status == 200 })
            let held = slow.arrivals()
            #expect(tasks(held) == ["one"], "one request in flight to the stalled webhook")
            #expect(slow.requests().isEmpty, "still held")

            try slow.setStall(false)
            let late = try slow.wait("every post, once let go") { tasks($0).count >= 4 }
            #expect(tasks(late) == ["one", "two", "three", "four"])
            #expect(late.allSatisfy { $0.status == 200 })
            #expect(Set(late.compactMap(\.eventID)).count == 4)
            #expect(tasks(slow.arrivals()) == ["one", "two", "three", "four"], "nothing sent twice")
        }
    }

    @Test func privateDestinationsAreRefusedWithoutTheOption() throws {
        try Self.withServer(allowPrivate: false) { live, client, receiver in
            let ada = try Peer(client, port: live.port)
            _ = try ada.join("hooks-private", name: "Ada")
            // A literal private address is refused at once.
            for url in [receiver.url("/ok"), "http://[::1]:\(receiver.port)/ok", "http://169.254.169.254/latest",
                        "http://10.1.2.3/hook", "ftp://example.com/x", "http://user:pw@example.com/"] {
                ada.send(.webhook(.add(WebhookFields(url: url, events: ["phase_started"]))), ref: .string("p"))
                let field = try ada.expect("a refusal of \(url)") {
                    if case .error(.badRequest, _, let field, .string("p")?, _) = $0 { field } else { nil }
                }
                #expect(field == "url")
            }
            // A name is taken, and refused when it resolves to loopback, at the attempt.
            let added = try Self.add(ada, url: "http://localhost:\(receiver.port)/ok", events: ["phase_started"])
            ada.send(.webhook(.test(id: try #require(added.added))))
            var delivery: WebhookDeliveryPayload?
            let deadline = TestTime.deadline(10)
            repeat { delivery = try Self.list(ada, pause: true).webhooks.first?.deliveries.first }
            while delivery?.attempts ?? 0 < 2 && Date() < deadline
            #expect(delivery?.state == "due")
            #expect(delivery?.status == nil)
            #expect(delivery?.error?.contains("loopback") == true, "\(delivery?.error ?? "no error")")
            #expect(receiver.requests().isEmpty)
        }
    }

    @Test func slackAndDiscordGetTheirOwnShapesInTheRoomsLanguage() throws {
        try Self.withServer { live, client, receiver in
            let ada = try Peer(client, port: live.port)
            let bo = try Peer(client, port: live.port)
            _ = try ada.join("team-alpha", name: "Ada")
            _ = try bo.join("team-alpha", name: "Bo")
            _ = try Self.add(ada, url: receiver.url("/slack"), events: ["phase_started", "task_changed"], format: "slack")
            _ = try Self.add(ada, url: receiver.url("/discord"), events: ["phase_started", "task_changed"],
                             format: "discord", language: "ko")
            bo.send(.task(text: "<!channel> @everyone & co"))
            ada.send(.configure(RoomSettings(focus: 1500, shortBreak: 300)))
            _ = try ada.expect("configure ok") { if case .ok("configure", _, _) = $0 { true } else { nil } }
            ada.send(.start)
            let requests = try receiver.wait("four posts") { $0.filter { $0.status == 200 }.count >= 4 }
            let slack = requests.filter { $0.path == "/slack" }.map(\.json)
            let discord = requests.filter { $0.path == "/discord" }.map(\.json)
            #expect(slack.count == 2 && discord.count == 2)
            // Slack's incoming webhook: {"text": …, "blocks": [{"type": "section", "text": {"type": "mrkdwn", …}}]},
            // with &, < and > escaped as Slack asks.
            for body in slack {
                #expect(Set(body.keys) == ["text", "blocks"])
                let block = try #require((body["blocks"] as? [[String: Any]])?.first)
                #expect(block["type"] as? String == "section")
                #expect((block["text"] as? [String: Any])?["type"] as? String == "mrkdwn")
                #expect((block["text"] as? [String: Any])?["text"] as? String == body["text"] as? String)
            }
            #expect(slack.map { $0["text"] as? String } == [
                "Bo is working on: &lt;!channel&gt; @everyone &amp; co",
                "team-alpha started a 25-minute focus: Ada, Bo",
            ])
            // Discord's: {"content": …} of at most 2,000 characters, no mention acted on.
            for body in discord {
                #expect(Set(body.keys) == ["content", "allowed_mentions"])
                #expect(((body["allowed_mentions"] as? [String: Any])?["parse"] as? [Any])?.isEmpty == true)
                #expect((body["content"] as? String ?? "").count <= 2000)
            }
            #expect(discord.map { $0["content"] as? String } == [
                "Bo 님의 작업: <!channel> @everyone & co",
                "team-alpha에서 25분 집중을 시작했습니다: Ada, Bo",
            ])
            #expect(requests.allSatisfy { $0.headers["content-type"] == "application/json" })
        }
    }

    /// The server dies by SIGKILL with deliveries due (the receiver answers 503); started again on the same
    /// database, it delivers every event, each under the id it had before.
    @Test func aKilledServerDeliversEveryEventAfterItsRestartUnderTheOriginalIDs() async throws {
        let receiver = try WebhookReceiver()
        defer { receiver.stop() }
        let database = receiver.folder.appendingPathComponent("server/db.sqlite").path
        func serverRun() async throws -> (process: LaunchedProcess, port: Int) {
            let process = try ProcessLauncher.start(ProcessLauncher.server, [
                "--port", "0", "--host", "127.0.0.1", "--web-root", LiveServer.webRoot, "--db", database,
                "--log-level", "warning", "--min-focus", "1", "--webhook-allow-private", "on", "--webhook-first-retry", "1",
            ])
            return (process, try await process.serving())
        }
        try receiver.setGate(open: false)
        let first = try await serverRun()
        let client = try WebSocketClient()
        client.start()
        defer { client.stop(); client.waitUntilFinished() }
        let ada = try Peer(client, port: first.port)
        let bo = try Peer(client, port: first.port)
        _ = try ada.join("hooks-crash", name: "Ada")
        let added = try Self.add(ada, url: receiver.url("/gate"), events: ["member_joined", "task_changed", "phase_started"])
        try receiver.setSecret(try #require(added.secret))
        _ = try bo.join("hooks-crash", name: "Bo")
        bo.send(.task(text: "review"))
        ada.send(.start)
        _ = try ada.expect("the focus to run") { if case .state(let s) = $0, s.running { true } else { nil } }
        // Deliveries are due: the first has been tried, and refused.
        let before = try receiver.wait("a first attempt") { $0.contains { $0.status == 503 } }
        let triedIDs = Set(before.compactMap(\.eventID))

        first.process.kill()
        _ = try await first.process.ended()
        try receiver.setGate(open: true)
        let second = try await serverRun()
        defer { second.process.terminate() }

        let requests = try receiver.wait("every event", timeout: 30) { Self.delivered($0).count >= 3 }
        let delivered = Self.delivered(requests)
        #expect(requests.filter { $0.status == 200 }.map { $0.json["type"] as? String } ==
                ["member_joined", "task_changed", "phase_started"])
        #expect(Set(delivered).count == 3, "each event once: \(delivered)")
        #expect(triedIDs.isSubset(of: Set(delivered)), "the ids tried before the kill are the ones delivered after")
        #expect(Set(requests.compactMap(\.eventID)) == Set(delivered), "no new id was made for a retry")
        #expect(requests.allSatisfy { $0.signatureValid == true })
        _ = bo
    }
}
