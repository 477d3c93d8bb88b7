import Foundation
import PomodoroCluster
import PomodoroTestSupport
import Testing

/// The per-address counts two nodes share, against a real `redis-server` started by the test on loopback.
@Suite(.onOwnThreads, .timeLimit(.minutes(TestTime.minutes(1))))
final class RedisAddressCountsTests {
    let redis: RedisTestServer
    let address: RedisAddress

    init() throws {
        redis = try RedisTestServer()
        address = try RedisAddress(parsing: redis.url)
    }

    deinit { redis.stop() }

    func one(_ counts: RedisAddressCounts, _ operation: RedisAddressCounts.Operation) throws -> RedisAddressCounts.Answer {
        try counts.run([operation])[0].get()
    }

    func reserve(_ id: String, limit: Int = 3) -> RedisAddressCounts.Operation {
        .reserve(kind: "passcode", address: "192.0.2.7", id: id, limit: limit, spanMs: 60_000)
    }

    /// Two nodes' reservations share one window, even under the same ids (each node numbers its own): the
    /// limit holds for both together; running ones make it busy, done ones limited; a right one hands its
    /// place back; another address is untouched.
    @Test func twoNodesShareOneWindow() throws {
        let a = RedisAddressCounts(address: address, incarnation: "a#1")
        let b = RedisAddressCounts(address: address, incarnation: "b#1")
        #expect(try one(a, reserve("1")) == .window(granted: true, happened: 0, reserved: 1))
        #expect(try one(b, reserve("1")) == .window(granted: true, happened: 0, reserved: 2))
        #expect(try one(b, reserve("2")) == .window(granted: true, happened: 0, reserved: 3))
        #expect(try one(a, reserve("2")) == .window(granted: false, happened: 0, reserved: 3), "busy")
        _ = try one(a, .settle(kind: "passcode", address: "192.0.2.7", id: "1", counts: false, spanMs: 60_000))
        _ = try one(b, .settle(kind: "passcode", address: "192.0.2.7", id: "1", counts: true, spanMs: 60_000))
        _ = try one(b, .settle(kind: "passcode", address: "192.0.2.7", id: "2", counts: true, spanMs: 60_000))
        #expect(try one(a, reserve("3")) == .window(granted: true, happened: 2, reserved: 1))
        _ = try one(a, .settle(kind: "passcode", address: "192.0.2.7", id: "3", counts: true, spanMs: 60_000))
        #expect(try one(b, reserve("4")) == .window(granted: false, happened: 3, reserved: 0), "limited")
        #expect(try one(b, .reserve(kind: "room", address: "192.0.2.7", id: "4", limit: 3, spanMs: 60_000))
                == .window(granted: true, happened: 0, reserved: 1), "rooms are another window")
        #expect(try one(b, .reserve(kind: "passcode", address: "198.51.100.1", id: "5", limit: 3, spanMs: 60_000))
                == .window(granted: true, happened: 0, reserved: 1))
    }

    /// Entries leave the window `spanMs` after they were made, by Redis's clock.
    @Test func entriesLeaveTheWindow() throws {
        let a = RedisAddressCounts(address: address, incarnation: "a#1")
        let short = { (id: String) in RedisAddressCounts.Operation.reserve(kind: "room", address: "x", id: id, limit: 1, spanMs: 200) }
        #expect(try one(a, short("1")) == .window(granted: true, happened: 0, reserved: 1))
        _ = try one(a, .settle(kind: "room", address: "x", id: "1", counts: true, spanMs: 200))
        #expect(try one(a, short("2")) == .window(granted: false, happened: 1, reserved: 0))
        let deadline = TestTime.deadline(5)
        var granted = false
        while !granted && Date() < deadline {
            if case .window(true, _, _) = try one(a, short("2")) { granted = true } else { usleep(10_000) }
        }
        #expect(granted)
    }

    /// Connections: each node writes its own count whole; admission sums the live nodes'; a node that has
    /// not beaten lately (dead) no longer counts.
    @Test func connectionsSumTheLiveNodes() throws {
        let a = RedisAddressCounts(address: address, incarnation: "a#1")
        let b = RedisAddressCounts(address: address, incarnation: "b#1")
        let dead = RedisAddressCounts(address: address, incarnation: "gone#1")
        _ = try one(a, .beat)
        _ = try one(b, .beat)
        #expect(try one(a, .connections(address: "x", held: 1, limit: 3)) == .connections(admitted: true, total: 1))
        #expect(try one(a, .connections(address: "x", held: 2, limit: 3)) == .connections(admitted: true, total: 2))
        #expect(try one(b, .connections(address: "x", held: 1, limit: 3)) == .connections(admitted: true, total: 3))
        #expect(try one(b, .connections(address: "x", held: 2, limit: 3)) == .connections(admitted: false, total: 3))
        // A write of the count as it is (a close) corrects whatever was there.
        #expect(try one(a, .connections(address: "x", held: 0, limit: 0)) == .connections(admitted: true, total: 1))
        #expect(try one(b, .connections(address: "x", held: 2, limit: 3)) == .connections(admitted: true, total: 2))
        // A node with no recent beat (never, here) is left out, and its count removed.
        _ = try one(dead, .connections(address: "x", held: 5, limit: 0))
        #expect(try one(b, .connections(address: "x", held: 3, limit: 3)) == .connections(admitted: true, total: 3))
        // The beat says how long since the one before.
        guard case .beat(let since?) = try one(a, .beat) else { Issue.record("no earlier beat"); return }
        #expect(since >= 0 && since < 60_000)
        #expect(try one(dead, .beat) == .beat(sinceLastMs: nil))
    }

    /// A batch goes in one round trip, its answers in order.
    @Test func aBatchAnswersInOrder() throws {
        let a = RedisAddressCounts(address: address, incarnation: "a#1")
        let answers = try a.run([reserve("1", limit: 1), reserve("2", limit: 1), .beat]).map { try $0.get() }
        #expect(answers == [.window(granted: true, happened: 0, reserved: 1),
                            .window(granted: false, happened: 0, reserved: 1), .beat(sinceLastMs: nil)])
    }
}
