import Foundation
import Logging
@testable import PomodoroCluster
import PomodoroCore
import PomodoroNet
@testable import PomodoroServer
import PomodoroTestSupport
import Testing

/// Work posted to "the service thread": the test runs it, on its own thread (the one that made it), when it
/// waits for an answer.
final class PostedWork: LoopThread, @unchecked Sendable {
    private let owner = pthread_self()
    private let condition = NSCondition()

    var isOnServiceThread: Bool { pthread_equal(pthread_self(), owner) != 0 }
    private var work: [@Sendable () -> Void] = []

    func post(_ body: @escaping @Sendable () -> Void) {
        condition.lock()
        work.append(body)
        condition.signal()
        condition.unlock()
    }

    /// Runs posted work until `done` holds, for at most `timeout` seconds.
    func run(until done: () -> Bool, timeout: Double = 10) -> Bool {
        let deadline = TestTime.deadline(timeout)
        while !done() {
            condition.lock()
            while work.isEmpty {
                if !condition.wait(until: deadline) { condition.unlock(); return done() }
            }
            let next = work.removeFirst()
            condition.unlock()
            next()
        }
        return true
    }
}

/// Two nodes' address limits on one real Redis: they count together while Redis answers, each on its own
/// while it does not, and together again once it is back.
@Suite(.onOwnThreads, .timeLimit(.minutes(TestTime.minutes(1))))
final class ClusterAddressLimitsTests {
    let redis: RedisTestServer

    init() throws { redis = try RedisTestServer() }
    deinit { redis.stop() }

    func node(_ name: String, posted: PostedWork) throws -> ClusterAddressLimits {
        let local = LocalAddressLimits(maxConnections: 2, roomsPerMinute: 2, wrongPasscodesPerMinute: 5, clock: SystemClock())
        let limits = ClusterAddressLimits(
            local: local, redis: RedisAddressCounts(address: try RedisAddress(parsing: redis.url), incarnation: name),
            logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }), loop: posted, post: posted.post)
        limits.start()
        return limits
    }

    func admit(_ limits: ClusterAddressLimits, _ raw: UInt64, _ posted: PostedWork) -> Bool? {
        var answer: Bool?
        limits.admitConnection(ConnectionID(rawValue: raw), from: "192.0.2.7") { answer = $0 }
        _ = posted.run(until: { answer != nil })
        return answer
    }

    func room(_ limits: ClusterAddressLimits, _ posted: PostedWork) -> LimitReservation?? {
        var answer: LimitReservation??
        limits.reserveRoom(for: "192.0.2.7") { answer = .some($0) }
        _ = posted.run(until: { answer != nil })
        return answer
    }

    /// What Redis holds as `node`'s count of the address's connections.
    func held(_ node: String) throws -> String? {
        try RedisConnection(RedisAddress(parsing: redis.url), timeout: 1)
            .command(["HGET", "pomodoro:limit:connections:192.0.2.7", node]).text
    }

    @Test func twoNodesCountTogetherAndFailOpenToTheirOwnCount() throws {
        let posted = PostedWork()
        let a = try node("a#1", posted: posted), b = try node("b#1", posted: posted)
        defer { a.stop(); b.stop() }
        // Both have beaten before b asks (a node that never beat is taken for dead).
        let beaten = TestTime.deadline(5)
        while try RedisConnection(RedisAddress(parsing: redis.url), timeout: 1).command(["HLEN", "pomodoro:limit:nodes"]) != .integer(2),
              Date() < beaten {
            usleep(20_000)
        }

        #expect(admit(a, 1, posted) == true)
        #expect(admit(a, 2, posted) == true)
        #expect(admit(b, 3, posted) == false, "the address holds two, on a")
        a.connectionClosed(ConnectionID(rawValue: 1))
        // a writes its close on its own queue, b asks on its own: b asks once the close is in Redis.
        let written = TestTime.deadline(5)
        while try held("a#1") != "1", Date() < written { usleep(10_000) }
        #expect(admit(b, 4, posted) == true, "a's close freed a place")
        #expect(admit(a, 5, posted) == false)

        let first = try #require(room(a, posted) ?? nil)
        a.settleRoom(first, kept: true)
        let second = try #require(room(b, posted) ?? nil)
        b.settleRoom(second, kept: true)
        #expect(room(a, posted) == .some(nil), "two rooms a minute, made on two nodes")

        // Redis away: each node decides by its own count.
        redis.halt()
        #expect(admit(b, 6, posted) == true, "b holds one of its own")
        #expect(admit(b, 7, posted) == false, "b's own limit still holds")
        // Each has made one room by its own count: one more each, not counted in Redis, then no more.
        let alone = try #require(room(b, posted) ?? nil)
        #expect(!alone.shared)
        b.settleRoom(alone, kept: true)
        #expect(room(b, posted) == .some(nil))

        // Redis back (empty): the nodes write their counts again and count together.
        try redis.start()
        let back = TestTime.deadline(10)
        var refused = false
        var raw: UInt64 = 100
        while !refused && Date() < back {
            raw += 1
            // a holds one (2), b two (4, 6): the address is over its two wherever it asks.
            if admit(a, raw, posted) == false { refused = true } else {
                a.connectionClosed(ConnectionID(rawValue: raw))
                usleep(100_000)
            }
        }
        #expect(refused, "once Redis is back a's new connection sees b's")
    }
}
