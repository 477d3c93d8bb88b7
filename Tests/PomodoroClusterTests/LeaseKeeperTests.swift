import Foundation
import PomodoroCluster
import PomodoroCore
import PomodoroTestSupport
import Testing

/// The lease keeper against a real `redis-server` started by the test on loopback.
@Suite(.onOwnThreads, .timeLimit(.minutes(TestTime.minutes(1))))
final class LeaseKeeperTests {
    let redis: RedisTestServer
    let address: RedisAddress
    let losses = Locked<[(RoomID, Int64, LeaseKeeper.Loss)]>([])
    let room = roomID("team-a")

    init() throws {
        redis = try RedisTestServer()
        address = try RedisAddress(parsing: redis.url)
    }

    deinit { redis.stop() }

    static func monotonic() -> Instant {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Instant(nanoseconds: Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec))
    }

    func makeKeeper(clock: @escaping @Sendable () -> Instant = monotonic) -> LeaseKeeper {
        LeaseKeeper(leases: RedisLeases(address: address, timeout: 0.3), node: "a", clock: clock) { [losses] room, epoch, loss in
            losses.update { $0.append((room, epoch, loss)) }
        }
    }

    /// Takes the room for node a and hands it to `keeper`.
    func take(_ keeper: LeaseKeeper, at now: Instant) throws -> LeaseTerm {
        guard case .granted(let epoch) = try RedisLeases(address: address).acquire(room: room.rawValue, node: "a") else {
            throw LaunchFailure("the room was not free")
        }
        let term = LeaseTerm(epoch: epoch, requestedAt: now)
        keeper.hold(room, term: term)
        return term
    }

    /// Waits (bounded) until a loss has been reported.
    func awaitLoss(seconds: Double) -> LeaseKeeper.Loss? {
        let deadline = TestTime.deadline(seconds)
        while losses.current.isEmpty && Date() < deadline { usleep(10_000) }
        return losses.current.first?.2
    }

    @Test func aHeldLeaseOutlivesItsTimeToLiveWhileRenewed() throws {
        let keeper = makeKeeper()
        keeper.start()
        defer { keeper.stop() }
        _ = try take(keeper, at: Self.monotonic())
        let started = Date()
        while Date().timeIntervalSince(started) < 2.5 {
            #expect(keeper.isValid(room, at: Self.monotonic()))
            usleep(100_000)
        }
        #expect(try RedisLeases(address: address).holder(room: room.rawValue) == LeaseHolder(node: "a", epoch: 1))
        #expect(losses.current.isEmpty)
        #expect(keeper.held == [room: 1])
    }

    @Test func aLeaseAnotherNodeTookIsReportedTakenAndNoLongerValid() throws {
        let keeper = makeKeeper()
        keeper.start()
        defer { keeper.stop() }
        _ = try take(keeper, at: Self.monotonic())
        let other = RedisLeases(address: address)
        try other.command(["DEL", "pomodoro:lease:\(room.rawValue)"])
        #expect(try other.acquire(room: room.rawValue, node: "b") == .granted(epoch: 2))
        #expect(awaitLoss(seconds: 2) == .taken)
        #expect(!keeper.isValid(room, at: Self.monotonic()))
        #expect(losses.current.first?.1 == 1)
        // The keeper never touched the new owner's lease.
        #expect(try other.holder(room: room.rawValue) == LeaseHolder(node: "b", epoch: 2))
    }

    @Test func withoutRedisTheTermRunsOutOnTheNodesOwnClock() throws {
        let keeper = makeKeeper()
        keeper.start()
        defer { keeper.stop() }
        let taken = Self.monotonic()
        _ = try take(keeper, at: taken)
        redis.halt()
        #expect(awaitLoss(seconds: 4) == .expired)
        let noticed = Self.monotonic()
        #expect(!keeper.isValid(room, at: noticed))
        // No later than a time to live after the last renewal that could have landed, plus a round.
        #expect(noticed - taken < LeaseTerm.timeToLive * 3)
    }

    @Test func aNodeThatStalledFindsItsTermOverWhenItRunsAgain() throws {
        // The node's clock jumps as a stopped process sees it when it is continued.
        let clock = Locked(Self.monotonic())
        let keeper = makeKeeper(clock: { clock.current })
        let term = try take(keeper, at: clock.current)
        keeper.start()
        defer { keeper.stop() }
        #expect(keeper.isValid(room, at: clock.current))
        clock.update { $0 = $0 + .seconds(5) }
        #expect(!keeper.isValid(room, at: clock.current))
        #expect(awaitLoss(seconds: 3) == .expired)
        #expect(losses.current.first?.1 == term.epoch)
    }

    @Test func releasingGivesTheLeaseBackAtOnce() throws {
        let keeper = makeKeeper()
        keeper.start()
        defer { keeper.stop() }
        _ = try take(keeper, at: Self.monotonic())
        keeper.release(room)
        #expect(!keeper.isValid(room, at: Self.monotonic()))
        let other = RedisLeases(address: address)
        let deadline = TestTime.deadline(2)
        while try other.holder(room: room.rawValue) != nil && Date() < deadline { usleep(10_000) }
        #expect(try other.acquire(room: room.rawValue, node: "b") == .granted(epoch: 2))
        #expect(losses.current.isEmpty)
    }
}
