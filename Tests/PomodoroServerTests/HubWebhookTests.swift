import Foundation
@testable import PomodoroServer
import PomodoroCore
import PomodoroProtocol
import PomodoroStore
import PomodoroTestSupport
import Testing

/// What a room's changes queue for its webhooks, read back from the outbox, through the hub with no socket
/// and no delivery thread (`WebhookLiveTests` delivers them for real).
@Suite struct HubWebhookTests {
    /// A hub on a held SQLite store with webhooks on and no deliverer: what is queued stays in the outbox.
    static func hub() throws -> (TestHub, any WebhookStore) {
        let store = try HeldStore()
        var configuration = ServerConfiguration(port: 0, webRoot: nil)
        configuration.webhooks.allowPrivate = true
        let t = TestHub(configuration: configuration, store: store)
        let hooks = try #require(store.store as? any WebhookStore)
        t.hub.webhookBook.store = hooks
        return (t, hooks)
    }

    /// The `data` of each delivery queued for the room's first webhook, oldest first.
    static func data(_ hooks: any WebhookStore, room: String) throws -> [[String: String]] {
        try hooks.recentDeliveries(room: RoomID(validating: room), webhook: 1, limit: 50).reversed().map { delivery in
            let body = try JSONSerialization.jsonObject(with: Data(delivery.body.utf8)) as? [String: Any]
            return (body?["data"] as? [String: Any] ?? [:]).compactMapValues { $0 as? String }
        }
    }

    @Test func theFirstMemberToLeaveAfterAWebhookIsAddedIsNamed() throws {
        let (t, hooks) = try Self.hub()
        let xan = t.connect(peer: "203.0.113.1"), yul = t.connect(peer: "203.0.113.2")
        t.send(.join(room: "wh5", name: "Xan", token: nil), from: xan)
        t.send(.join(room: "wh5", name: "Yul", token: nil), from: yul)
        t.settle()
        t.send(.webhook(.add(WebhookFields(url: "http://127.0.0.1:9/x", events: ["member_joined", "member_left"]))),
               ref: "add", from: xan)
        t.settle()
        #expect(try t.messages(to: xan).contains { if case .webhooks(_, .string("add")?) = $0 { true } else { false } })

        t.send(.leave, from: yul)
        t.settle()
        #expect(try Self.data(hooks, room: "wh5").map { $0["member"] } == ["Yul"])

        // And one who joins and leaves after it.
        let zed = t.connect(peer: "203.0.113.3")
        t.send(.join(room: "wh5", name: "Zed", token: nil), from: zed)
        t.settle()
        t.send(.leave, from: zed)
        t.settle()
        #expect(try Self.data(hooks, room: "wh5").map { $0["member"] } == ["Yul", "Zed", "Zed"])
    }

    @Test func aFocusShortenedBeforeItRanIsNotAnnouncedAsCompleted() throws {
        let (t, hooks) = try Self.hub()
        let a = t.connect()
        t.send(.join(room: "wh6", name: "Ada", token: nil), from: a)
        t.settle()
        t.send(.webhook(.add(WebhookFields(url: "http://127.0.0.1:9/x", events: ["phase_completed"]))), from: a)
        t.settle()
        t.send(.start, from: a)
        t.send(.skip, from: a)                           // short break, ready
        t.send(.extend(seconds: -300), from: a)          // the break ends: announced
        t.send(.extend(seconds: -1500), from: a)         // focus 2, never run, ends: not a completed focus
        t.settle()
        #expect(try Self.data(hooks, room: "wh6").map { $0["phase"] } == ["shortBreak"])
    }
}
