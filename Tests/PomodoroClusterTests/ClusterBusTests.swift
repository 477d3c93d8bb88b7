import Foundation
import PomodoroCluster
import PomodoroTestSupport
import Testing

extension RedisValue {
    /// Item `index` of an array reply (`.null` for anything else).
    func arrayItem(_ index: Int) -> RedisValue {
        if case .array(let items) = self, items.indices.contains(index) { return items[index] }
        return .null
    }
}

/// Pub/sub between nodes against a real `redis-server` started by the test on loopback.
@Suite(.onOwnThreads, .timeLimit(.minutes(TestTime.minutes(1))))
final class ClusterBusTests {
    let redis: RedisTestServer
    let address: RedisAddress
    let events = Locked<[ClusterBus.Event]>([])
    let arrived = DispatchSemaphore(value: 0)

    init() throws {
        redis = try RedisTestServer()
        address = try RedisAddress(parsing: redis.url)
    }

    deinit { redis.stop() }

    func makeBus(_ channels: Set<String>, at address: RedisAddress? = nil) -> ClusterBus {
        ClusterBus(address: address ?? self.address, channels: channels, turn: 0.05) { [events, arrived] event in
            events.update { $0.append(event) }
            arrived.signal()
        }
    }

    /// Waits (bounded) until an event matching `match` has arrived.
    func expectEvent(_ what: String, seconds: Double = 5, _ match: (ClusterBus.Event) -> Bool) {
        let deadline = TestTime.deadline(seconds)
        while !events.current.contains(where: match) {
            guard Date() < deadline else { Issue.record("no \(what) within \(seconds) s: \(events.current)"); return }
            _ = arrived.wait(timeout: .now() + 0.05)
        }
    }

    /// Publishes until someone hears it (a subscription takes effect a moment after it is asked for).
    func publishUntilHeard(_ channel: String, _ payload: String, by publisher: RedisLeases) throws {
        let deadline = TestTime.deadline(5)
        while Date() < deadline {
            if case .integer(let heard) = try publisher.command(["PUBLISH", channel, payload]), heard > 0 { return }
            usleep(10_000)
        }
        Issue.record("nobody subscribed to \(channel) within 5 s")
    }

    @Test func messagesOnSubscribedChannelsArriveInOrder() throws {
        let bus = makeBus(["room:a"])
        bus.start()
        defer { bus.stop() }
        let publisher = RedisLeases(address: address)
        try publishUntilHeard("room:a", "first", by: publisher)
        for n in 1...50 { try publisher.command(["PUBLISH", "room:a", "tick \(n)"]) }
        try publisher.command(["PUBLISH", "room:b", "not for us"])
        expectEvent("the 50th tick") { $0 == .message(channel: "room:a", payload: "tick 50") }
        let payloads = events.current.compactMap { event -> String? in
            if case .message(_, let payload) = event { payload } else { nil }
        }
        #expect(payloads == ["first"] + (1...50).map { "tick \($0)" })
        #expect(events.current.first == .subscribed(["room:a"]))
    }

    @Test func aMembersFrameCrossesToTheOwnersNodeUntouched() throws {
        let channel = BusMessage.nodeChannel("owner")
        let bus = makeBus([channel])
        bus.start()
        defer { bus.stop() }
        let sent = BusMessage.frame(from: .init(node: "edge", connection: 7), room: "team-a",
                                    frame: "{\"type\":\"setTask\",\n\"task\":\"🍅 tomato\\n\"}")
        try publishUntilHeard(channel, sent.encoded, by: RedisLeases(address: address))
        expectEvent("the frame") { if case .message(channel, _) = $0 { true } else { false } }
        guard case .message(_, let payload) = events.current.last else { return }
        #expect(try BusMessage(decoding: payload) == sent)
    }

    @Test func itComesBackAfterRedisRestartsAndSaysSo() throws {
        let bus = makeBus(["room:a"])
        bus.start()
        defer { bus.stop() }
        let publisher = RedisLeases(address: address, timeout: 0.3)
        try publishUntilHeard("room:a", "before", by: publisher)
        redis.halt()
        expectEvent("the disconnection") { if case .disconnected = $0 { true } else { false } }
        try redis.start()
        expectEvent("the second subscription") { _ in
            events.current.filter { $0 == .subscribed(["room:a"]) }.count == 2
        }
        try publishUntilHeard("room:a", "after", by: publisher)
        expectEvent("the message after the restart") { $0 == .message(channel: "room:a", payload: "after") }
    }

    @Test func stopEndsTheThreadEvenWithoutRedis() throws {
        // A loopback port this test holds bound without listening: connections to it are refused, and no other
        // suite's Redis can start on it meanwhile (a port freed by stopping this suite's Redis could be taken).
        let held = try LoopbackPort.Held()
        defer { withExtendedLifetime(held) {} }
        let bus = makeBus(["room:a"], at: RedisAddress(host: "127.0.0.1", port: held.port))
        bus.start()
        expectEvent("the disconnection") { if case .disconnected = $0 { true } else { false } }
        let started = Date()
        bus.stop()
        #expect(Date().timeIntervalSince(started) < 2)
    }
}
