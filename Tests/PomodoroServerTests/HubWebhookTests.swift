import Foundation
@testable import PomodoroServer
import PomodoroCore
import PomodoroNet
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

    /// The hub, and Ada in `room` with a webhook for `events` added (its first: `data`, `numbers` read it).
    static func ada(in room: String, hooking events: [String]) throws -> (TestHub, any WebhookStore, ConnectionID) {
        let (t, hooks) = try hub()
        let a = t.connect()
        t.send(.join(room: room, name: "Ada", token: nil), from: a)
        t.settle()
        t.send(.webhook(.add(WebhookFields(url: "http://127.0.0.1:9/x", events: events))), from: a)
        t.settle()
        return (t, hooks, a)
    }

    /// The body of each delivery queued for the room's first webhook, oldest first.
    static func bodies(_ hooks: any WebhookStore, room: String) throws -> [[String: Any]] {
        try hooks.recentDeliveries(room: RoomID(validating: room), webhook: 1, limit: 50).reversed().map { delivery in
            try JSONSerialization.jsonObject(with: Data(delivery.body.utf8)) as? [String: Any] ?? [:]
        }
    }

    /// The `data` of each delivery queued for the room's first webhook, oldest first.
    static func data(_ hooks: any WebhookStore, room: String) throws -> [[String: String]] {
        try bodies(hooks, room: room).map { ($0["data"] as? [String: Any] ?? [:]).compactMapValues { $0 as? String } }
    }

    /// The whole-number fields of the `data` of each delivery queued for the room's first webhook, oldest first.
    static func numbers(_ hooks: any WebhookStore, room: String) throws -> [[String: Int]] {
        try bodies(hooks, room: room).map { ($0["data"] as? [String: Any] ?? [:]).compactMapValues { $0 as? Int } }
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
        let (t, hooks, a) = try Self.ada(in: "wh6", hooking: ["phase_completed"])
        t.send(.start, from: a)
        t.send(.skip, from: a)                           // short break, ready
        t.send(.extend(seconds: -300), from: a)          // the break ends: announced
        t.send(.extend(seconds: -1500), from: a)         // focus 2, never run, ends: not a completed focus
        t.settle()
        #expect(try Self.data(hooks, room: "wh6").map { $0["phase"] } == ["shortBreak"])
    }

    @Test func aCompletedPhaseGivesTheLengthItRanNotTheSettings() throws {
        let (t, hooks, a) = try Self.ada(in: "wh7", hooking: ["phase_completed"])
        t.send(.start, from: a)                          // a 25-minute focus
        t.settle()
        t.pass(.seconds(60))
        t.send(.extend(seconds: 300), from: a)           // 30 minutes
        // New settings, taken at the focus's end: the focus still ran 30 minutes, the break then runs 10.
        t.send(.configure(RoomSettings(focus: 3000, shortBreak: 600)), from: a)
        t.settle()
        t.pass(.seconds(1740))                           // the focus ends
        t.send(.start, from: a)                          // the 10-minute break
        t.settle()
        t.pass(.seconds(200))
        t.send(.extend(seconds: -600), from: a)          // shortened past its end: it ran 200 seconds
        t.settle()

        #expect(try Self.data(hooks, room: "wh7").map { $0["phase"] } == ["focus", "shortBreak"])
        let numbers = try Self.numbers(hooks, room: "wh7")
        #expect(numbers.map { $0["seconds"] } == [1800, 200])
        #expect(numbers.map { $0["minutes"] } == [30, 3], "to the nearest minute")
        #expect(try Self.bodies(hooks, room: "wh7").first?["text"] as? String == "wh7 completed a 30-minute focus")
    }

    @Test func aScheduledSetsLastFocusGivesItsOwnLengthNotTheRoomsSettingsPutBack() throws {
        let (t, hooks, a) = try Self.ada(in: "wh8", hooking: ["phase_completed"])  // Thursday, 00:00 UTC
        t.send(.schedule(.add(ScheduleFields(name: "Sprint", time: "00:01", zone: "UTC", days: ["thu"],
                                             settings: RoomSettings(focus: 600, shortBreak: 120), sessions: 1,
                                             warning: 0))), from: a)
        t.settle()
        t.pass(.seconds(60))                             // the set starts: one 10-minute focus
        t.pass(.seconds(600))                            // it ends, and with it the set
        let entry = try #require(t.hub.rooms[RoomID(validating: "wh8")])
        #expect(entry.room.status == .idle && entry.room.settings == .standard, "the room's own 25 minutes are back")
        #expect(try Self.numbers(hooks, room: "wh8").map { $0["seconds"] } == [600])
        #expect(try Self.numbers(hooks, room: "wh8").map { $0["minutes"] } == [10])
    }
}
