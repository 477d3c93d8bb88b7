import Testing
import PomodoroCore
import PomodoroStore
@testable import PomodoroPostgres
import PomodoroTestSupport

/// A room's webhooks and their outbox kept alike by both stores: the real SQLite file and the real
/// PostgreSQL server.
extension StoreConformanceTests {
    static func hook(_ id: Int, room: RoomID = Sample.room, enabled: Bool = true) -> WebhookRecord {
        WebhookRecord(room: room, id: id, url: "https://hooks.example.com/\(id)?a=1&b=ü",
                      events: [.phaseStarted, .taskChanged], format: id == 1 ? .json : .slack,
                      secret: "whsec_\(id)", language: id == 1 ? "en" : "zh-Hant", enabled: enabled,
                      createdMs: 1_795_000_000_000 + Int64(id))
    }

    static func delivery(_ n: Int, hook: Int, room: RoomID = Sample.room) -> WebhookDelivery {
        WebhookDelivery(room: room, webhook: hook, eventID: "evt_\(n)", kind: .phaseStarted,
                        createdMs: 1_795_000_100_000 + Int64(n), body: #"{"n":\#(n),"text":"É ✓ 'quoted'"}"#)
    }

    @Test func webhooksAndTheirOutboxRoundTripAlike() throws {
        try withBothStores { sqlite, postgres in
            let other = roomID("team-b")
            try applyToBoth((sqlite, postgres), [
                .webhook(.save(Self.hook(1))), .webhook(.save(Self.hook(2))), .webhook(.save(Self.hook(1, room: other))),
                .webhook(.queue(Sample.room, [Self.delivery(1, hook: 1), Self.delivery(2, hook: 1),
                                              Self.delivery(3, hook: 2)])),
                .webhook(.queue(other, [Self.delivery(4, hook: 1, room: other)])),
            ])
            for store in [sqlite as any WebhookStore, postgres] {
                #expect(try store.webhooks(room: Sample.room) == [Self.hook(1), Self.hook(2)])
                #expect(try store.webhooks(room: nil).count == 3)
                // One head per webhook, the oldest due: deliveries go out in order, one at a time.
                let heads = try store.nextDeliveries(limit: 10)
                #expect(heads.map(\.1.eventID).sorted() == ["evt_1", "evt_3", "evt_4"])
                #expect(heads.first { $0.1.eventID == "evt_1" }?.0 == Self.hook(1))
                #expect(heads.first { $0.1.eventID == "evt_1" }?.1.body == Self.delivery(1, hook: 1).body)
            }
            // Delivered: the next one of that webhook is its head; a failure keeps the head, later.
            let first = try sqlite.nextDeliveries(limit: 10).first { $0.1.eventID == "evt_1" }!.1
            let firstPG = try postgres.nextDeliveries(limit: 10).first { $0.1.eventID == "evt_1" }!.1
            for (store, seq) in [(sqlite as any RoomStore, first.seq), (postgres, firstPG.seq)] {
                try store.apply([.webhook(.attempted(DeliveryAttempt(
                    room: Sample.room, webhook: 1, seq: seq, state: .delivered, attempts: 2, atMs: 5, nextAttemptMs: 5,
                    status: 200, error: nil), disable: nil))])
            }
            for store in [sqlite as any WebhookStore, postgres] {
                #expect(try store.nextDeliveries(limit: 10).map(\.1.eventID).sorted() == ["evt_2", "evt_3", "evt_4"])
                let recent = try store.recentDeliveries(room: Sample.room, webhook: 1, limit: 10)
                #expect(recent.map(\.eventID) == ["evt_2", "evt_1"])
                #expect(recent.last?.state == .delivered && recent.last?.attempts == 2 && recent.last?.lastStatus == 200)
            }
            // Given up: the webhook is switched off with its reason, and its deliveries are no longer due.
            let second = try sqlite.nextDeliveries(limit: 10).first { $0.1.eventID == "evt_2" }!.1
            let secondPG = try postgres.nextDeliveries(limit: 10).first { $0.1.eventID == "evt_2" }!.1
            for (store, seq) in [(sqlite as any RoomStore, second.seq), (postgres, secondPG.seq)] {
                try store.apply([.webhook(.attempted(DeliveryAttempt(
                    room: Sample.room, webhook: 1, seq: seq, state: .failed, attempts: 9, atMs: 6, nextAttemptMs: 6,
                    status: 500, error: "answered 500"), disable: "failed for a day"))])
            }
            for store in [sqlite as any WebhookStore, postgres] {
                #expect(try store.webhooks(room: Sample.room).first?.enabled == false)
                #expect(try store.webhooks(room: Sample.room).first?.disabledReason == "failed for a day")
                #expect(try store.nextDeliveries(limit: 10).map(\.1.eventID).sorted() == ["evt_3", "evt_4"])
            }
            // Removing a webhook takes its outbox with it; the other room's webhook 1 stays.
            try applyToBoth((sqlite, postgres), [.webhook(.remove(Sample.room, 1))])
            for store in [sqlite as any WebhookStore, postgres] {
                #expect(try store.webhooks(room: Sample.room) == [Self.hook(2)])
                #expect(try store.recentDeliveries(room: Sample.room, webhook: 1, limit: 10).isEmpty)
                #expect(try store.webhooks(room: other) == [Self.hook(1, room: other)])
            }
        }
    }

    /// A webhook keeps its last `WebhookRows.keptDeliveries` finished deliveries; the rest go as new ones finish.
    @Test func finishedDeliveriesAreKeptToTheLastFew() throws {
        try withBothStores { sqlite, postgres in
            let count = WebhookRows.keptDeliveries + 5
            try applyToBoth((sqlite, postgres), [
                .webhook(.save(Self.hook(1))),
                .webhook(.queue(Sample.room, (1...count).map { Self.delivery($0, hook: 1) })),
            ])
            for store in [sqlite as any RoomStore, postgres] {
                let webhooks = store as! any WebhookStore
                while let head = try webhooks.nextDeliveries(limit: 1).first?.1 {
                    try store.apply([.webhook(.attempted(DeliveryAttempt(
                        room: Sample.room, webhook: 1, seq: head.seq, state: .delivered, attempts: 1, atMs: 1,
                        nextAttemptMs: 1, status: 204, error: nil), disable: nil))])
                }
                let kept = try webhooks.recentDeliveries(room: Sample.room, webhook: 1, limit: 100)
                #expect(kept.map(\.eventID) == (6...count).reversed().map { "evt_\($0)" })
            }
        }
    }
}
