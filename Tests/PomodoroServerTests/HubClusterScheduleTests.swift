@testable import PomodoroServer
import PomodoroCluster
import PomodoroCore
import PomodoroNet
import PomodoroProtocol
import PomodoroStore
import PomodoroTestSupport
import Testing

/// Rooms with schedules on a cluster node, through the hub on the manual clock (Thursday 2026-01-01, 00:00
/// UTC) and a `ManualCluster`: a room with schedules that no node runs is taken and started on the second
/// with nobody in it; one that another node runs is left to it; when that node's lease lapses the room is
/// taken and its set goes on; a change is announced to the other nodes once committed.
@Suite struct HubClusterScheduleTests {
    static let epoch = HubScheduleTests.epoch
    static let team = try! RoomID(validating: "team")

    /// "Standup", Thursdays at `time` UTC, `sessions` focus sessions of the room's settings.
    static func standup(at time: LocalTime, sessions: Int = 1) throws -> Schedule {
        Schedule(id: ScheduleID(1), name: "Standup", time: time, zone: try ZoneName("UTC"),
                 recurrence: .weekly([.thursday]), length: .focusSessions(sessions), warningMinutes: 0,
                 since: WallTime(milliseconds: epoch))
    }

    /// A node whose store holds room "team" with `schedules`, nobody in it.
    static func node(_ schedules: [Schedule], record: RoomRecord? = nil) throws -> (TestHub, ManualCluster) {
        let store = try HeldStore()
        let clock = ManualServerClock()
        try store.store.apply([.saveRoom(record ?? Room(id: team, now: .zero).record(wallOffsetNanoseconds: 0),
                                         passcode: nil),
                               .saveSchedules(team, schedules)])
        let cluster = ManualCluster(store: store.store, now: { clock.now().monotonic })
        return (TestHub(clock: clock, store: store, cluster: cluster), cluster)
    }

    /// Time passing with the node's leases renewed, as its keeper does.
    static func pass(_ t: TestHub, _ cluster: ManualCluster, seconds: Int) {
        for _ in 0..<seconds {
            cluster.renewAll()
            t.pass(.seconds(1))
        }
    }

    @Test func aRoomWithSchedulesThatNoNodeRunsIsTakenAndStartsOnTheSecondWithNobodyInIt() throws {
        let (t, cluster) = try Self.node([try Self.standup(at: LocalTime(hour: 0, minute: 1))])
        t.router!.keepScheduledRoomsRunning(try t.store!.store.loadSchedules())
        t.settle()
        #expect(cluster.holding == [Self.team], "taken at the first sweep")
        let entry = try #require(t.hub.rooms[Self.team])
        #expect(entry.schedules.schedules.map(\.name) == ["Standup"], "with its schedules, read after the claim")

        Self.pass(t, cluster, seconds: 59)
        #expect(entry.room.status == .idle, "nothing before its time")
        Self.pass(t, cluster, seconds: 1)
        #expect(entry.room.status == .running && entry.room.scheduledRun?.name == "Standup")
        // On the schedule's own second: a member joining now sees the focus end 25 minutes after 00:01.
        let ada = t.connect()
        t.send(.join(room: "team", name: "Ada", token: nil), from: ada)
        t.settle()
        let welcome = try #require(try t.messages(to: ada).compactMap(\.snapshot).first)
        #expect(welcome.endsAt == Self.epoch + 60_000 + 1_500_000)
        // The start is written and announced to the other nodes once committed.
        #expect(cluster.announced == [Self.team])
        #expect(try t.store!.store.loadSchedules(room: Self.team).first?.handledThrough
            == WallTime(milliseconds: Self.epoch + 60_000))
    }

    @Test func aRoomAnotherNodeRunsIsLeftToItUntilItsLeaseLapsesThenItsSetGoesOnHere() throws {
        // Another node started the set at 00:01 (one focus done, the second running to 00:51) and holds it.
        var record = Room(id: Self.team, now: .zero).record(wallOffsetNanoseconds: 0)
        record.phase = .focus
        record.timer = .running(endsAtMs: Self.epoch + 51 * 60_000)
        record.phaseLengthMs = 1_500_000
        record.cycle = 2
        record.scheduledRun = ScheduledRun(schedule: ScheduleID(1), name: "Standup", focusSessionsLeft: 2,
                                           focusSessionsDone: 1, roomSettings: nil)
        var schedule = try Self.standup(at: LocalTime(hour: 0, minute: 1), sessions: 3)
        schedule.handledThrough = WallTime(milliseconds: Self.epoch + 60_000)
        let (t, cluster) = try Self.node([schedule], record: record)
        cluster.held(Self.team, by: "node-b")
        t.router!.keepScheduledRoomsRunning(try t.store!.store.loadSchedules())
        t.settle()
        Self.pass(t, cluster, seconds: 10)
        #expect(t.hub.rooms[Self.team] == nil && cluster.holding.isEmpty, "node-b runs it")

        // node-b dies; its lease lapses; the next sweep takes the room and the set runs on by itself.
        cluster.lapsed(Self.team)
        Self.pass(t, cluster, seconds: 1)
        let entry = try #require(t.hub.rooms[Self.team])
        #expect(entry.room.phase == .focus && entry.room.status == .running)
        #expect(entry.room.scheduledRun?.focusSessionsDone == 1, "the set as the store has it")
        #expect(entry.room.stats.focusSessions == 0)
        Self.pass(t, cluster, seconds: 90 * 60)
        #expect(entry.room.status == .idle && entry.room.scheduledRun == nil, "stopped after its third focus")
        #expect(entry.room.stats.focusSessions == 2, "the two completed here")
        #expect(try t.store!.store.loadRoom(Self.team)?.record.scheduledRun == nil)
    }

    @Test func roomsWhoseSchedulesWereDeletedElsewhereAreNotTaken() throws {
        let (t, cluster) = try Self.node([try Self.standup(at: LocalTime(hour: 0, minute: 1))])
        cluster.held(Self.team, by: "node-b")
        t.router!.keepScheduledRoomsRunning(try t.store!.store.loadSchedules())
        t.settle()
        // node-b deletes the schedule, and says so; then it dies.
        t.router!.schedulesHeard(.room(Self.team, []))
        cluster.lapsed(Self.team)
        Self.pass(t, cluster, seconds: 5)
        #expect(t.hub.rooms[Self.team] == nil && cluster.holding.isEmpty)
        // A reread that finds schedules again brings the room into the sweep.
        t.router!.schedulesHeard(.all([Self.team: [try Self.standup(at: LocalTime(hour: 0, minute: 1))]]))
        Self.pass(t, cluster, seconds: 1)
        #expect(cluster.holding == [Self.team])
    }

    @Test func aNodeListsTheSchedulesOfARoomAnotherNodeRuns() throws {
        let (t, cluster) = try Self.node([try Self.standup(at: LocalTime(hour: 0, minute: 1))])
        cluster.held(Self.team, by: "node-b")
        t.router!.keepScheduledRoomsRunning(try t.store!.store.loadSchedules())
        t.settle()
        let list = RecordedResponse()
        t.hub.receivedHTTP(HTTPRequest(method: .get, path: "/api/rooms/team/schedules", peer: "127.0.0.1"), responder: list)
        t.settle()
        let body = try #require(list.response?.body)
        let payload = try WireCodec.decodeSchedulesBody(body)
        #expect(payload.schedules.map(\.fields.name) == ["Standup"] && payload.schedules.first?.next == Self.epoch + 60_000)
        let feed = RecordedResponse()
        t.hub.receivedHTTP(HTTPRequest(method: .get, path: "/api/rooms/team/calendar.ics", peer: "127.0.0.1"), responder: feed)
        t.settle()
        #expect(feed.response.map { String(decoding: $0.body, as: UTF8.self).contains("SUMMARY:Standup") } == true)
    }

    @Test func aScheduleAddedByAMemberIsAnnouncedOnceCommitted() throws {
        let (t, cluster) = try Self.node([])
        t.router!.keepScheduledRoomsRunning([:])
        let ada = t.connect()
        t.send(.join(room: "team", name: "Ada", token: nil), from: ada)
        t.settle()
        t.send(HubScheduleTests.add("00:05"), from: ada)
        t.settle(commits: false)
        #expect(cluster.announced.isEmpty, "not before the store has it")
        t.settle()
        #expect(cluster.announced == [Self.team])
    }
}
