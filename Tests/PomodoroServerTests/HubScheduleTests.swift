@testable import PomodoroServer
import PomodoroCore
import PomodoroNet
import PomodoroProtocol
import PomodoroTestSupport
import Testing

/// A room's schedules through the hub on the fake transport and the manual clock (which starts on Thursday
/// 2026-01-01, 00:00 UTC): added by a member, started by the server on the second, warned about, ended.
@Suite struct HubScheduleTests {
    static let epoch: Int64 = 1_767_225_600_000

    static func add(_ time: String, sessions: Int? = 1, warning: Int = 0) -> ClientMessage {
        .schedule(.add(ScheduleFields(name: "Standup", time: time, zone: "UTC", days: ["thu"], sessions: sessions,
                                      warning: warning)))
    }

    static func events(_ messages: [ServerMessage]) -> [ScheduleEventPayload] {
        messages.compactMap { if case .event(_, .schedule(let e), _) = $0 { e } else { nil } }
    }

    @Test func aScheduleStartsTheRoomOnTheSecondAndStopsAfterItsSet() throws {
        let t = TestHub()
        let ada = t.connect()
        t.send(.join(room: "team", name: "Ada", token: nil), from: ada)
        t.settle()
        t.transport.clearSent()
        t.send(Self.add("00:01", warning: 0), ref: "add", from: ada)
        t.settle()
        let added = try t.messages(to: ada)
        #expect(added.map(\.label) == ["ok addSchedule", "schedules", "state"])
        #expect(added.last?.snapshot?.nextSession == NextSessionPayload(schedule: "s1", name: "Standup",
                                                                       startsAt: Self.epoch + 60_000))

        t.transport.clearSent()
        t.pass(.seconds(59))
        #expect(Self.events(try t.messages(to: ada)).isEmpty, "nothing before the time")
        t.pass(.seconds(1))
        let started = try t.messages(to: ada)
        #expect(Self.events(started) == [.started(schedule: "s1", name: "Standup", lateMs: 0)])
        let running = try #require(started.compactMap(\.snapshot).last)
        #expect(running.phase == .focus && running.status == .running)
        #expect(running.endsAt == Self.epoch + 60_000 + 1_500_000, "the focus runs from the schedule's second")
        // The next week's start is the next session now.
        #expect(running.nextSession?.startsAt == Self.epoch + 60_000 + 7 * 86_400_000)

        t.transport.clearSent()
        t.pass(.seconds(1500))
        let ended = try t.messages(to: ada)
        #expect(Self.events(ended) == [.ended(schedule: "s1", name: "Standup", focusSessions: 1)])
        #expect(ended.compactMap(\.snapshot).last?.status == .idle)
    }

    @Test func aTimerThatWakesEarlyStartsNothingAndIsArmedForTheRest() throws {
        let t = TestHub()
        let ada = t.connect()
        t.send(.join(room: "team", name: "Ada", token: nil), from: ada)
        t.send(Self.add("00:01"), from: ada)
        t.settle()
        let room = try RoomID(validating: "team")
        // 2 ms before the time, as a timer that fires early would.
        t.clock.advance(by: .milliseconds(59_998))
        t.hub.scheduleTimerFired(room)
        t.settle()
        #expect(t.hub.rooms[room]?.room.status == .idle, "not started early")
        let timer = try #require(t.hub.rooms[room]?.scheduleTimer as? FakeTimer)
        #expect(timer.deadline == t.clock.now().monotonic + .milliseconds(2), "armed for what is left")
        // Woken 3 ms late: the focus still runs from the schedule's own instant.
        t.clock.advance(by: .milliseconds(5))
        t.transport.fireDueTimers()
        t.settle()
        let snapshot = t.hub.snapshot(of: try #require(t.hub.rooms[room]), at: t.clock.now())
        #expect(snapshot.status == .running)
        #expect(snapshot.endsAt == Self.epoch + 60_000 + 1_500_000)
    }

    @Test func theNewListGoesOutOnceItIsCommittedAndComesBackFromTheStore() throws {
        let store = try HeldStore()
        let t = TestHub(store: store)
        let ada = t.connect()
        t.send(.join(room: "team", name: "Ada", token: nil), from: ada)
        t.settle()
        t.transport.clearSent()
        t.send(Self.add("00:10"), ref: "add", from: ada)
        t.settle(commits: false)
        #expect(try t.messages(to: ada).map(\.label) == ["ok addSchedule"], "nothing announced before the commit")
        t.settle()
        #expect(try t.messages(to: ada).map(\.label) == ["ok addSchedule", "schedules", "state"])
        let room = try RoomID(validating: "team")
        let stored = try store.store.loadSchedules(room: room)
        let tenPast = try LocalTime(parsing: "00:10")
        #expect(stored.map(\.name) == ["Standup"])
        #expect(stored.first?.time == tenPast)
    }

    @Test func aWarningGoesOutItsMinutesBefore() throws {
        let t = TestHub()
        let ada = t.connect()
        t.send(.join(room: "team", name: "Ada", token: nil), from: ada)
        t.send(Self.add("00:10", warning: 5), from: ada)
        t.settle()
        t.transport.clearSent()
        t.pass(.seconds(5 * 60))
        #expect(Self.events(try t.messages(to: ada)) == [
            .warning(schedule: "s1", name: "Standup", startsAt: Self.epoch + 600_000, minutes: 5)])
    }

    @Test func inAHostOnlyRoomOnlyTheHostChangesSchedulesButAnyoneListsThem() throws {
        let t = TestHub()
        let ada = t.connect(), bob = t.connect(peer: "203.0.113.8")
        t.send(.join(room: "team", name: "Ada", token: nil, control: .host), from: ada)
        t.send(.join(room: "team", name: "Bob", token: nil), from: bob)
        t.settle()
        t.transport.clearSent()
        t.send(Self.add("00:10"), ref: "b", from: bob)
        t.send(.schedule(.list), ref: "l", from: bob)
        t.settle()
        let replies = try t.messages(to: bob)
        #expect(replies.map(\.label) == ["error forbidden", "schedules"])
        t.send(.schedule(.add(ScheduleFields(name: "x", time: "25:00", zone: "UTC", days: ["thu"]))), ref: "a", from: ada)
        t.settle()
        guard case .error(.badRequest, _, "time", _, _)? = try t.messages(to: ada).last else {
            Issue.record("a wrong time is refused naming the field"); return
        }
    }

    @Test func theServersLimitsBoundARoomsSchedules() throws {
        var configuration = ServerConfiguration(port: 0, webRoot: nil)
        configuration.schedulePolicy.maxSchedules = 1
        configuration.schedulePolicy.maxNameLength = 8
        let t = TestHub(configuration: configuration)
        let ada = t.connect()
        t.send(.join(room: "team", name: "Ada", token: nil), from: ada)
        t.send(Self.add("00:10"), ref: "a1", from: ada)
        t.send(Self.add("00:20"), ref: "a2", from: ada)
        t.send(.schedule(.add(ScheduleFields(name: "A long name", time: "00:30", zone: "UTC", days: ["thu"]))),
               ref: "a3", from: ada)
        t.settle()
        let replies = try t.messages(to: ada).map(\.label).filter { $0.hasPrefix("ok") || $0.hasPrefix("error") }
        #expect(replies == ["ok addSchedule", "error bad_request", "error bad_request"])
        #expect(t.hub.rooms[try RoomID(validating: "team")]?.schedules.schedules.count == 1)
    }

    @Test func aScheduleFallingDueInARunningRoomIsSkipped() throws {
        let t = TestHub()
        let ada = t.connect()
        t.send(.join(room: "team", name: "Ada", token: nil), from: ada)
        t.send(Self.add("00:01"), from: ada)
        t.send(.start, from: ada)
        t.settle()
        t.transport.clearSent()
        t.pass(.seconds(60))
        #expect(Self.events(try t.messages(to: ada)) == [
            .missed(schedule: "s1", name: "Standup", occurrence: Self.epoch + 60_000, busy: true)])
    }
}

/// Schedules brought back at start-up: their room comes back with nobody in it, and what fell due while
/// the server was down starts late within the grace, or is counted as missed.
@Suite struct HubScheduleRestartTests {
    static let epoch = HubScheduleTests.epoch  // Thursday 2026-01-01 00:00 UTC, the manual clock's start

    static func stored(_ name: String) throws -> StoredRoom {
        let id = try RoomID(validating: name)
        return StoredRoom(record: Room(id: id, now: .zero).record(wallOffsetNanoseconds: 0), members: [], passcode: nil)
    }

    /// Wednesday's schedule for Thursday `time` UTC, handled up to Wednesday.
    static func schedule(_ time: String) throws -> Schedule {
        Schedule(id: ScheduleID(1), name: "Standup", time: try LocalTime(parsing: time), zone: try ZoneName("UTC"),
                 recurrence: .weekly([.thursday]), length: .focusSessions(2), warningMinutes: 0,
                 since: WallTime(milliseconds: epoch - 86_400_000))
    }

    @Test func anOccurrenceWithinTheGraceStartsLateAfterARestart() throws {
        let clock = ManualServerClock(wallMs: Self.epoch + 2 * 60_000 + 500)  // 00:02:00.5, two minutes late
        let t = TestHub(clock: clock)
        let room = try RoomID(validating: "team")
        t.hub.restore([try Self.stored("team")], schedules: [room: [try Self.schedule("00:00")]])
        t.settle()
        let entry = try #require(t.hub.rooms[room], "the room comes back for its schedule, empty as it is")
        #expect(entry.room.status == .running && entry.room.phase == .focus)
        #expect(entry.room.scheduledRun?.focusSessionsLeft == 2)
        #expect(entry.schedules.schedules.first?.handledThrough == WallTime(milliseconds: Self.epoch))
    }

    @Test func theGraceIsTheServersOption() throws {
        // Ten minutes late: missed under the default five, started under a grace of fifteen.
        var configuration = ServerConfiguration(port: 0, webRoot: nil)
        configuration.schedulePolicy.lateStartGrace = 15 * 60
        let t = TestHub(configuration: configuration, clock: ManualServerClock(wallMs: Self.epoch + 10 * 60_000))
        let room = try RoomID(validating: "team")
        t.hub.restore([try Self.stored("team")], schedules: [room: [try Self.schedule("00:00")]])
        t.settle()
        let entry = try #require(t.hub.rooms[room])
        #expect(entry.room.status == .running && entry.room.phase == .focus)
        #expect(entry.schedules.policy.lateStartGrace == 15 * 60)
    }

    @Test func anOccurrencePastTheGraceIsMissedAndTheRoomStaysIdle() throws {
        let clock = ManualServerClock(wallMs: Self.epoch + 10 * 60_000)  // ten minutes late
        let t = TestHub(clock: clock)
        let room = try RoomID(validating: "team")
        t.hub.restore([try Self.stored("team")], schedules: [room: [try Self.schedule("00:00")]])
        t.settle()
        let entry = try #require(t.hub.rooms[room])
        #expect(entry.room.status == .idle)
        #expect(entry.schedules.schedules.first?.missed == 1)
        // The room stays in memory, empty, for next week's start.
        t.pass(.seconds(3600))
        #expect(t.hub.rooms[room] != nil)
    }
}
