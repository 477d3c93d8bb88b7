import Foundation
import PomodoroCluster
import PomodoroCore
import PomodoroTestSupport
import Testing

extension RedisValue {
    var integerValue: Int64? { if case .integer(let value) = self { value } else { nil } }
}

/// Leases against a real `redis-server` started by the test on loopback.
@Suite(.onOwnThreads, .timeLimit(.minutes(TestTime.minutes(1))))
final class RedisLeasesTests {
    let redis: RedisTestServer
    let address: RedisAddress

    init() throws {
        redis = try RedisTestServer()
        address = try RedisAddress(parsing: redis.url)
    }

    deinit { redis.stop() }

    /// A Redis that forgot (here: keys deleted) gets the leases back under the same epochs, its counters raised
    /// to them; a lease another node holds now, or one still held, is not overwritten.
    @Test func restoringPutsBackForgottenLeasesUnderTheSameEpochsAndLeavesOthersAlone() throws {
        let a = RedisLeases(address: address), b = RedisLeases(address: address)
        #expect(try a.acquire(room: "kept", node: "a") == .granted(epoch: 1))
        #expect(try a.acquire(room: "forgotten", node: "a") == .granted(epoch: 1))
        #expect(try a.acquire(room: "taken", node: "a") == .granted(epoch: 1))
        try a.command(["DEL", "pomodoro:lease:forgotten", "pomodoro:epoch:forgotten", "pomodoro:lease:taken"])
        #expect(try b.acquire(room: "taken", node: "b") == .granted(epoch: 2))
        let restored = try a.restore([(room: "kept", holder: LeaseHolder(node: "a", epoch: 1)),
                                      (room: "forgotten", holder: LeaseHolder(node: "a", epoch: 1)),
                                      (room: "taken", holder: LeaseHolder(node: "a", epoch: 1))])
        #expect(restored == [true, true, false])
        #expect(try a.holder(room: "forgotten") == LeaseHolder(node: "a", epoch: 1))
        #expect(try a.epoch(room: "forgotten") == 1)
        #expect(try a.holder(room: "taken") == LeaseHolder(node: "b", epoch: 2))
        let ttl = try a.command(["PTTL", "pomodoro:lease:forgotten"]).integerValue ?? -1
        #expect(ttl > 0 && ttl <= LeaseTerm.timeToLive.milliseconds)
        // The next owner counts above the restored epoch.
        #expect(try a.release(room: "forgotten", holder: LeaseHolder(node: "a", epoch: 1)))
        #expect(try b.acquire(room: "forgotten", node: "b") == .granted(epoch: 2))
    }

    /// A Redis that forgot everything gives the next taker an epoch no higher than the owner's (its counter
    /// starts again): that taker's claim will find the fence at or above it, so the owner's restore replaces its
    /// lease; a lease under a higher epoch than the owner's (a real take) is left alone.
    @Test func restoringReplacesALeaseTakenUnderALowerEpochOnly() throws {
        let a = RedisLeases(address: address), b = RedisLeases(address: address)
        try a.command(["SET", "pomodoro:epoch:moment", "6"])
        try a.command(["SET", "pomodoro:epoch:real", "6"])
        #expect(try a.acquire(room: "equal", node: "a") == .granted(epoch: 1))
        #expect(try a.acquire(room: "moment", node: "a") == .granted(epoch: 7))
        #expect(try a.acquire(room: "real", node: "a") == .granted(epoch: 7))
        try a.command(["FLUSHALL"])
        #expect(try b.acquire(room: "moment", node: "b") == .granted(epoch: 1))
        #expect(try b.acquire(room: "equal", node: "b") == .granted(epoch: 1))
        try b.command(["SET", "pomodoro:lease:real", "8|c"])
        let restored = try a.restore([(room: "moment", holder: LeaseHolder(node: "a", epoch: 7)),
                                      (room: "real", holder: LeaseHolder(node: "a", epoch: 7)),
                                      (room: "equal", holder: LeaseHolder(node: "a", epoch: 1))])
        #expect(restored == [true, false, true])
        #expect(try a.holder(room: "equal") == LeaseHolder(node: "a", epoch: 1))
        #expect(try a.holder(room: "moment") == LeaseHolder(node: "a", epoch: 7))
        #expect(try a.epoch(room: "moment") == 7)
        #expect(try a.holder(room: "real") == LeaseHolder(node: "c", epoch: 8))
        // The moment's holder gives back only its own lease: the owner's stays.
        #expect(try !b.release(room: "moment", holder: LeaseHolder(node: "b", epoch: 1)))
        #expect(try a.holder(room: "moment") == LeaseHolder(node: "a", epoch: 7))
    }

    @Test func oneNodeHoldsARoomAndTheEpochRisesWithEachOwner() throws {
        let a = RedisLeases(address: address), b = RedisLeases(address: address)
        #expect(try a.acquire(room: "focus", node: "a") == .granted(epoch: 1))
        #expect(try b.acquire(room: "focus", node: "b") == .held(by: LeaseHolder(node: "a", epoch: 1)))
        #expect(try b.holder(room: "focus") == LeaseHolder(node: "a", epoch: 1))
        // Another room is another lease, with its own epochs.
        #expect(try b.acquire(room: "other", node: "b") == .granted(epoch: 1))

        #expect(try a.release(room: "focus", holder: LeaseHolder(node: "a", epoch: 1)))
        #expect(try b.holder(room: "focus") == nil)
        #expect(try b.acquire(room: "focus", node: "b") == .granted(epoch: 2))
        // A holder that let go (or lost the lease) can neither renew nor release the new owner's lease.
        #expect(try !a.renew(room: "focus", holder: LeaseHolder(node: "a", epoch: 1)))
        #expect(try !a.release(room: "focus", holder: LeaseHolder(node: "a", epoch: 1)))
        #expect(try a.holder(room: "focus") == LeaseHolder(node: "b", epoch: 2))
        #expect(try a.epoch(room: "focus") == 2)
    }

    /// An epoch counter lives a day after the room's last take (and after a raise), not for ever: one key per
    /// room name ever used would never leave Redis.
    @Test func epochCountersExpireADayAfterTheLastTake() throws {
        let a = RedisLeases(address: address)
        let day = RedisLeases.epochTimeToLive.milliseconds
        #expect(try a.acquire(room: "once", node: "a") == .granted(epoch: 1))
        let ttl = try #require(try a.command(["PTTL", "pomodoro:epoch:once"]).integerValue)
        #expect(ttl > day - 60_000 && ttl <= day)
        try a.raiseEpoch(room: "raised", to: 7)
        let raised = try #require(try a.command(["PTTL", "pomodoro:epoch:raised"]).integerValue)
        #expect(raised > day - 60_000 && raised <= day)
        #expect(try a.epoch(room: "raised") == 7)
    }

    /// Arguments go to Redis as bytes with a length: a NUL inside one is sent, and nothing after its end.
    @Test func argumentsReachRedisByteForByte() throws {
        let connection = try RedisConnection(address, timeout: 2)
        let value: [UInt8] = Array(#"{"type":"ping"}"#.utf8) + [0] + Array(repeating: UInt8(ascii: "A"), count: 4_000)
        try connection.command(["SET", "k", String(decoding: value, as: UTF8.self)])
        #expect(try connection.command(["STRLEN", "k"]).integerValue == Int64(value.count))
        #expect(try connection.command(["GET", "k"]).text.map { Array($0.utf8) } == value)
        try connection.command(bytes: [Array("SET".utf8), Array("b".utf8), value])
        #expect(try connection.command(["GET", "b"]).text.map { Array($0.utf8) } == value)
        try connection.command(["SET", "s", "a\u{0}b"])
        #expect(try connection.command(["STRLEN", "s"]).integerValue == 3)
        try connection.command(["SET", "e", ""])
        #expect(try connection.command(["STRLEN", "e"]).integerValue == 0)
    }

    @Test func holdersAreReadForManyRoomsAtOnceInTheirOrder() throws {
        let a = RedisLeases(address: address), b = RedisLeases(address: address)
        #expect(try a.acquire(room: "r1", node: "a") == .granted(epoch: 1))
        #expect(try b.acquire(room: "r3", node: "b") == .granted(epoch: 1))
        let rooms = ["r0", "r1", "r2", "r3"]
        let expected: [LeaseHolder?] = [nil, LeaseHolder(node: "a", epoch: 1), nil, LeaseHolder(node: "b", epoch: 1)]
        #expect(try a.holders(rooms: rooms) == expected)
        // Split over several MGETs, the same answer.
        #expect(try a.holders(rooms: rooms, batch: 3) == expected)
        #expect(try a.holders(rooms: []) == [])
    }

    @Test func aLeaseThatIsNotRenewedExpiresAndAnotherNodeTakesIt() throws {
        let a = RedisLeases(address: address), b = RedisLeases(address: address)
        let ttl = Duration.milliseconds(200)
        #expect(try a.acquire(room: "r", node: "a", timeToLive: ttl) == .granted(epoch: 1))
        // Renewed, it outlives its first time to live.
        let renewedAt = Date()
        var left = Date()
        while Date().timeIntervalSince(renewedAt) < 0.5 {
            left = Date()
            #expect(try a.renew(room: "r", holder: LeaseHolder(node: "a", epoch: 1), timeToLive: ttl))
            usleep(50_000)
        }
        #expect(try b.holder(room: "r") == LeaseHolder(node: "a", epoch: 1))
        // Left alone, it lapses within its time to live (Redis's expiry, polled with a bound): not before
        // the time to live has passed since the last renewal was sent.
        var taken: LeaseAttempt?
        while Date().timeIntervalSince(left) < 2 {
            let attempt = try b.acquire(room: "r", node: "b", timeToLive: ttl)
            if case .granted = attempt { taken = attempt; break }
            usleep(10_000)
        }
        #expect(taken == .granted(epoch: 2))
        #expect(Date().timeIntervalSince(left) >= 0.19)
        #expect(try !a.renew(room: "r", holder: LeaseHolder(node: "a", epoch: 1)))
    }

    @Test func manyLeasesAreRenewedInOneScriptEachOnlyIfStillItsHolders() throws {
        let a = RedisLeases(address: address), b = RedisLeases(address: address)
        let ttl = Duration.milliseconds(300)
        for n in 0..<3 { #expect(try a.acquire(room: "r\(n)", node: "a", timeToLive: ttl) == .granted(epoch: 1)) }
        // r1 changes hands behind a's back.
        try b.command(["DEL", "pomodoro:lease:r1"])
        #expect(try b.acquire(room: "r1", node: "b") == .granted(epoch: 2))
        let held = (0..<3).map { (room: "r\($0)", holder: LeaseHolder(node: "a", epoch: 1)) }
        #expect(try a.renew(held, timeToLive: .seconds(60)) == [true, false, true])
        #expect(try a.command(["PTTL", "pomodoro:lease:r0"]).integerValue ?? 0 > 30_000)
        #expect(try a.holder(room: "r1") == LeaseHolder(node: "b", epoch: 2))
        #expect(try a.renew([]) == [])
    }

    @Test func theEpochCanBeRaisedAboveAFenceButNeverLowered() throws {
        let leases = RedisLeases(address: address)
        try leases.raiseEpoch(room: "r", to: 41)
        #expect(try leases.acquire(room: "r", node: "a") == .granted(epoch: 42))
        try leases.raiseEpoch(room: "r", to: 7)
        #expect(try leases.epoch(room: "r") == 42)
    }

    @Test func aRedisThatGoesAwayIsAConnectionErrorAndABackOneAnswersAgain() throws {
        let leases = RedisLeases(address: address, timeout: 0.3)
        #expect(try leases.acquire(room: "r", node: "a") == .granted(epoch: 1))
        redis.halt()
        #expect(throws: RedisError.self) { try leases.renew(room: "r", holder: LeaseHolder(node: "a", epoch: 1)) }
        do {
            _ = try leases.holder(room: "r")
            Issue.record("Redis answered while stopped")
        } catch {
            #expect(error.isConnectionLost)
        }
        try redis.start()
        // Without persistence the restarted Redis has forgotten the lease and the epoch.
        #expect(try leases.holder(room: "r") == nil)
        #expect(try leases.acquire(room: "r", node: "b") == .granted(epoch: 1))
    }

    @Test func replyErrorsAreThrownAndKeepTheConnection() throws {
        let leases = RedisLeases(address: address)
        do {
            try leases.command(["NOSUCHCOMMAND"])
            Issue.record("an unknown command succeeded")
        } catch {
            #expect(error.kind == .reply)
            #expect(error.message.contains("unknown command"))
        }
        #expect(try leases.command(["PING"]) == .status("PONG"))
        #expect(try leases.command(["SET", "k", "v"]) == .status("OK"))
        #expect(try leases.command(["GET", "k"]) == .string("v"))
        #expect(try leases.command(["INCR", "n"]) == .integer(1))
        #expect(try leases.command(["MGET", "k", "none"]) == .array([.string("v"), .null]))
    }

    @Test func aWrongPasswordOrAnUnreachableServerIsAClearError() throws {
        var wrong = address
        wrong.password = "nope"
        do {
            try RedisLeases(address: wrong).command(["PING"])
            Issue.record("AUTH with a password succeeded on a server without one")
        } catch {
            #expect(error.kind == .reply)
        }
        let held = try LoopbackPort.Held()  // refused, and nobody else's Redis can start on it meanwhile
        defer { withExtendedLifetime(held) {} }
        let closed = RedisAddress(host: "127.0.0.1", port: held.port)
        do {
            try RedisLeases(address: closed, timeout: 0.3).command(["PING"])
            Issue.record("connected to a closed port")
        } catch {
            #expect(error.isConnectionLost)
            #expect(error.message.contains("127.0.0.1"))
        }
    }
}
