import Foundation
import PomodoroCore
import PomodoroSQLite
import PomodoroStore
@testable import PomodoroServer
import PomodoroTestSupport
import Testing

/// The delivery rules that are not HTTP (`WebhookPacing`), with time as an argument: one in flight per
/// webhook, `--webhook-deliveries-per-minute` counted per webhook (a webhook over it waits, in order; the
/// room's other webhooks do not), at most `maxInFlight` at once; then the same rate bound through the real
/// deliverer, store and an HTTP receiver, on a manual clock.
@Suite struct WebhookPacingTests {
    static let room = roomID("pacing")
    static let t0: Int64 = 1_767_225_600_000

    static func hook(_ id: Int, url: String = "http://203.0.113.9/hook") -> WebhookRecord {
        WebhookRecord(room: room, id: id, url: url, events: [.taskChanged], format: .json, secret: "whsec_pacing",
                      createdMs: t0)
    }

    /// An outbox in memory: the heads a store's `nextDeliveries` would give (each webhook's oldest due row,
    /// soonest first), and the rows marked delivered as they are sent.
    struct Outbox {
        var hooks: [WebhookRecord]
        var rows: [WebhookDelivery]

        init(_ hooks: [WebhookRecord], _ ids: [(webhook: Int, event: String)]) {
            self.hooks = hooks
            rows = ids.enumerated().map { index, row in
                WebhookDelivery(room: room, webhook: row.webhook, eventID: row.event, kind: .taskChanged, createdMs: t0,
                                body: "{}", seq: Int64(index + 1))
            }
        }

        func heads() -> [(WebhookRecord, WebhookDelivery)] {
            hooks.compactMap { hook in
                rows.first { $0.webhook == hook.id && $0.state == .due }.map { (hook, $0) }
            }.sorted { ($0.1.nextAttemptMs, $0.1.seq) < ($1.1.nextAttemptMs, $1.1.seq) }
        }

        mutating func delivered(_ event: String) {
            if let index = rows.firstIndex(where: { $0.eventID == event }) { rows[index].state = .delivered }
        }
    }

    /// What the deliverer does at `now` until nothing more goes: read, send, each result written at once.
    /// Returns the events sent, in order, and the wait the last read chose (the outbox polled every two
    /// minutes here, so the wait is the rate's).
    static func deliver(_ pacing: inout WebhookPacing, _ outbox: inout Outbox, at now: Int64) -> (sent: [String], waitMs: Int64) {
        var sent: [String] = []
        while true {
            let plan = pacing.plan(outbox.heads(), readAt: pacing.readMark, now: now, pollMs: 120_000)
            if plan.send.isEmpty { return (sent, plan.waitMs) }
            for (hook, delivery) in plan.send {
                sent.append(delivery.eventID)
                outbox.delivered(delivery.eventID)
                pacing.settled(.init(room: hook.room, webhook: hook.id))
            }
        }
    }

    @Test func aWebhookOverItsRateWaitsItsTurnInOrderWhileTheRoomsOthersGoOn() {
        var pacing = WebhookPacing(perMinute: 2, maxInFlight: 32)
        var outbox = Outbox([Self.hook(1), Self.hook(2)],
                            [(1, "a1"), (1, "a2"), (2, "b1"), (1, "a3"), (2, "b2"), (1, "a4"), (1, "a5")])
        let first = Self.deliver(&pacing, &outbox, at: Self.t0)
        // Two to each webhook: the bound is the webhook's, not the room's (four went out in this minute).
        #expect(first.sent == ["a1", "b1", "a2", "b2"])
        #expect(first.waitMs == 60_000)
        // Nothing more within the minute; the outbox is looked at again when the minute ends.
        let late = Self.deliver(&pacing, &outbox, at: Self.t0 + 59_999)
        #expect(late.sent.isEmpty && late.waitMs == 1)
        let second = Self.deliver(&pacing, &outbox, at: Self.t0 + 60_000)
        #expect(second.sent == ["a3", "a4"])
        let third = Self.deliver(&pacing, &outbox, at: Self.t0 + 120_000)
        #expect(third.sent == ["a5"])
        // Delayed, never dropped: every row went, once.
        #expect(outbox.rows.allSatisfy { $0.state == .delivered })
    }

    @Test func everyAttemptCountsRetriesToo() {
        var pacing = WebhookPacing(perMinute: 2, maxInFlight: 32)
        let outbox = Outbox([Self.hook(1)], [(1, "a1")])
        // a1 fails twice (still due, its retry due at once): both attempts count, the third waits the minute.
        for _ in 0..<2 {
            let plan = pacing.plan(outbox.heads(), readAt: pacing.readMark, now: Self.t0, pollMs: 120_000)
            #expect(plan.send.map(\.1.eventID) == ["a1"])
            pacing.settled(.init(room: Self.room, webhook: 1))
        }
        let third = pacing.plan(outbox.heads(), readAt: pacing.readMark, now: Self.t0 + 1_000, pollMs: 120_000)
        #expect(third.send.isEmpty && third.waitMs == 59_000)
    }

    @Test func oneInFlightPerWebhookAndNoMoreThanTheBoundAtOnce() {
        var pacing = WebhookPacing(perMinute: 60, maxInFlight: 2)
        let hooks = [Self.hook(1), Self.hook(2), Self.hook(3)]
        let outbox = Outbox(hooks, [(1, "a1"), (1, "a2"), (2, "b1"), (3, "c1")])
        let plan = pacing.plan(outbox.heads(), readAt: pacing.readMark, now: Self.t0, pollMs: 1_000)
        #expect(plan.send.map(\.1.eventID) == ["a1", "b1"])
        // Read again before any result: a1 is still the outbox's head for webhook 1, and is not sent twice;
        // webhook 3 waits for a free place.
        let again = pacing.plan(outbox.heads(), readAt: pacing.readMark, now: Self.t0, pollMs: 1_000)
        #expect(again.send.isEmpty)
        pacing.settled(.init(room: Self.room, webhook: 2))
        var rest = outbox
        rest.delivered("b1")
        let next = pacing.plan(rest.heads(), readAt: pacing.readMark, now: Self.t0, pollMs: 1_000)
        #expect(next.send.map(\.1.eventID) == ["c1"])
    }

    @Test func aReadBegunBeforeAResultWasWrittenSendsNothingTwice() {
        var pacing = WebhookPacing(perMinute: 60, maxInFlight: 32)
        var outbox = Outbox([Self.hook(1)], [(1, "a1"), (1, "a2")])
        #expect(pacing.plan(outbox.heads(), readAt: pacing.readMark, now: Self.t0, pollMs: 1_000).send.count == 1)
        // A read begins, then a1's result is written: that read still shows a1 due.
        let mark = pacing.readMark
        let stale = outbox.heads()
        pacing.settled(.init(room: Self.room, webhook: 1))
        outbox.delivered("a1")
        let plan = pacing.plan(stale, readAt: mark, now: Self.t0, pollMs: 1_000)
        #expect(plan.send.isEmpty && plan.waitMs == 0, "read again at once")
        let fresh = pacing.plan(outbox.heads(), readAt: pacing.readMark, now: Self.t0, pollMs: 1_000)
        #expect(fresh.send.map(\.1.eventID) == ["a2"])
    }

    @Test func aRetryNotYetDueSetsTheWait() {
        var pacing = WebhookPacing(perMinute: 60, maxInFlight: 32)
        var outbox = Outbox([Self.hook(1)], [(1, "a1")])
        outbox.rows[0].nextAttemptMs = Self.t0 + 300
        let plan = pacing.plan(outbox.heads(), readAt: pacing.readMark, now: Self.t0, pollMs: 1_000)
        #expect(plan.send.isEmpty && plan.waitMs == 300)
    }

    /// The same bound through the deliverer itself: a real SQLite outbox, real POSTs to a receiver on
    /// loopback, the results written back as the server writes them; the clock is the test's, so "later" is
    /// the clock's minute, not a wait.
    @Test(.timeLimit(.minutes(TestTime.minutes(1))))
    func theDelivererHoldsAWebhookOverItsRateAndDeliversEverythingLaterInOrder() throws {
        let receiver = try WebhookReceiver()
        defer { receiver.stop() }
        try withStore { store, _ in
            let clock = ManualServerClock(wallMs: Self.t0)
            let hooks = [Self.hook(1, url: receiver.url("/ok")), Self.hook(2, url: receiver.url("/ok"))]
            let order: [(Int, String)] = [(1, "a1"), (1, "a2"), (2, "b1"), (1, "a3"), (2, "b2"), (1, "a4"), (1, "a5")]
            try store.apply(hooks.map { .webhook(.save($0)) } + [.webhook(.queue(Self.room, order.map { hook, id in
                WebhookDelivery(room: Self.room, webhook: hook, eventID: id, kind: .taskChanged, createdMs: Self.t0,
                                body: #"{"id":"\#(id)"}"#)
            }))])
            var settings = WebhookSettings()
            settings.allowPrivate = true
            settings.deliveriesPerMinute = 2
            let results = Locked<[WebhookDeliverer.Result]>([])
            let arrived = DispatchSemaphore(value: 0)
            let box = Locked<WebhookDeliverer?>(nil)
            let deliverer = WebhookDeliverer(store: store, settings: settings, nowMs: { clock.now().wallMs }) { result in
                // As the service thread does: the result written, then the webhook's next may go.
                try? store.apply([.webhook(.attempted(result.attempt, disable: result.disabled))])
                results.update { $0.append(result) }
                box.current?.settled(result.webhook.room, result.webhook.id)
                arrived.signal()
            }
            box.update { $0 = deliverer }
            deliverer.start()
            defer { deliverer.stop() }
            func next(_ count: Int) throws -> [WebhookDeliverer.Result] {
                for _ in 0..<count {
                    guard waitFor(arrived, seconds: Double(TestTime.seconds(20))) else {
                        throw LiveTestFailure(description: "a result did not come; had \(results.current.map(\.delivery.eventID))")
                    }
                }
                return results.current.suffix(count)
            }

            let first = try next(4)
            #expect(Set(first.map(\.delivery.eventID)) == ["a1", "a2", "b1", "b2"])
            #expect(first.allSatisfy { $0.attempt.state == .delivered && $0.attempt.atMs == Self.t0 })
            clock.advance(by: .seconds(60))
            deliverer.wake()
            let second = try next(2)
            #expect(second.map(\.delivery.eventID) == ["a3", "a4"])
            #expect(second.allSatisfy { $0.attempt.atMs == Self.t0 + 60_000 })
            clock.advance(by: .seconds(60))
            deliverer.wake()
            let third = try next(1)
            #expect(third.map(\.delivery.eventID) == ["a5"])
            #expect(third.allSatisfy { $0.attempt.atMs == Self.t0 + 120_000 })

            // The receiver got every one once, each webhook's in order; the outbox has none left due.
            let ids = receiver.requests().filter { $0.status == 200 }.compactMap(\.eventID)
            #expect(ids.filter { $0.hasPrefix("a") } == ["a1", "a2", "a3", "a4", "a5"])
            #expect(ids.filter { $0.hasPrefix("b") } == ["b1", "b2"])
            #expect(try store.nextDeliveries(limit: 10).isEmpty)
        }
    }
}
