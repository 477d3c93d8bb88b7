import Testing
import PomodoroCore

/// A room with nobody connected and nothing running expires after `policy.emptyRoomLifetime`.
@Suite struct RoomLifetimeTests {
    @Test func aRoomNobodyJoinsExpiresAfterItsEmptyLifetime() {
        let t = TestRoom()
        let created = t.now
        #expect(t.room.nextWakeup() == created + .seconds(600))
        #expect(!t.room.isExpired(at: created))
        #expect(!t.room.isExpired(at: created + .seconds(600) - .nanoseconds(1)))
        #expect(t.room.isExpired(at: created + .seconds(600)))
    }

    @Test func theLifetimeComesFromThePolicy() {
        let t = TestRoom(policy: RoomPolicy(emptyRoomLifetime: .seconds(30)))
        #expect(t.room.nextWakeup() == t.now + .seconds(30))
        #expect(t.room.isExpired(at: t.now + .seconds(30)))
    }

    @Test func joiningClearsTheCountdown() throws {
        var t = TestRoom()
        t.advance(by: .seconds(599))
        try t.add("Ada")
        #expect(t.room.nextWakeup() == nil)
        #expect(!t.room.isExpired(at: t.now + .seconds(100_000)))
    }

    @Test func theCountdownStartsWhenTheLastMemberDisconnects() throws {
        var t = TestRoom()
        let ada = try t.add("Ada")
        let bob = try t.add("Bob")
        t.advance(by: .seconds(50))
        t.disconnect(ada)
        #expect(!t.room.isExpired(at: t.now + .seconds(10_000)), "Bob is still there")
        t.advance(by: .seconds(50))
        t.disconnect(bob)
        let quietSince = t.now
        // The grace period ends first; the room's lifetime is still the next thing after it.
        #expect(t.room.nextWakeup() == quietSince - .seconds(50) + .seconds(120))
        t.advance(by: .seconds(200))
        #expect(t.room.memberCount == 0)
        #expect(t.room.nextWakeup() == quietSince + .seconds(600))
        #expect(!t.room.isExpired(at: quietSince + .seconds(600) - .nanoseconds(1)))
        #expect(t.room.isExpired(at: quietSince + .seconds(600)))
    }

    @Test func theCountdownStartsWhenTheLastMemberLeaves() throws {
        var t = TestRoom()
        let ada = try t.add("Ada")
        t.advance(by: .seconds(30))
        t.leave(ada)
        #expect(t.room.nextWakeup() == t.now + .seconds(600))
        #expect(t.room.isExpired(at: t.now + .seconds(600)))
    }

    @Test func comingBackClearsTheCountdown() throws {
        var t = TestRoom()
        let ada = try t.join("Ada")
        t.disconnect(ada.memberID)
        t.advance(by: .seconds(60))
        try t.join("Ada", token: ada.token)
        #expect(t.room.nextWakeup() == nil)
        #expect(!t.room.isExpired(at: t.now + .seconds(10_000)))
    }

    @Test func aPausedRoomWithNobodyConnectedExpires() throws {
        var t = TestRoom()
        let ada = try t.add("Ada")
        try t.send(.start, by: ada)
        try t.send(.pause, by: ada)
        t.disconnect(ada)
        #expect(t.room.isExpired(at: t.now + .seconds(600)))
    }

    @Test func aRunningPhaseWithNobodyConnectedFinishesThenTheRoomExpires() throws {
        var t = TestRoom(settings: RoomSettings(autoStart: true))
        let ada = try t.add("Ada")
        try t.send(.start, by: ada)
        let deadline = try #require(t.deadline)
        t.advance(by: .seconds(100))
        t.disconnect(ada)
        #expect(!t.room.isExpired(at: deadline - .nanoseconds(1)), "something still runs")
        #expect(!t.room.isExpired(at: t.now + .seconds(600)), "something still runs")

        // Follow the wake-ups: ticks, the grace period, the end of the focus.
        var completions: [Completion] = []
        var wakeups = 0
        while t.now < deadline && wakeups < 2000 {
            wakeups += 1
            completions += try t.wake().completions
        }
        #expect(t.now == deadline, "a wake-up falls exactly on the deadline")
        #expect(completions == [Completion(.focus, .shortBreak, autoStarted: false, cycle: 1)])
        #expect(t.room.status == .ready)
        #expect(t.room.nextWakeup() == deadline + .seconds(600))
        #expect(!t.room.isExpired(at: deadline + .seconds(600) - .nanoseconds(1)))
        #expect(t.room.isExpired(at: deadline + .seconds(600)))
    }

    @Test func aPhaseCaughtUpLateStillExpiresFromItsDeadline() throws {
        var t = TestRoom()
        let ada = try t.add("Ada")
        try t.send(.start, by: ada)
        let deadline = try #require(t.deadline)
        t.disconnect(ada)
        t.advance(to: deadline + .seconds(500))         // one late wake-up
        #expect(t.room.status == .ready)
        #expect(!t.room.isExpired(at: t.now))
        #expect(t.room.isExpired(at: deadline + .seconds(600)))
    }
}
