@testable import PomodoroServer
import Foundation
import PomodoroCluster
import PomodoroCore
import PomodoroNet
import PomodoroProtocol
import PomodoroStore
import PomodoroTestSupport
import Testing

/// One rule for a room's lifetime, through the hub on the manual clock (Thursday 2026-01-01, 00:00 UTC) and
/// a held SQLite store: a refused join leaves a room as the rule has it; a room comes back whole, with its
/// schedules; schedules do not keep a room in memory, it comes back shortly before its start and starts on
/// the second; and every room brought back counts toward `--max-rooms`.
@Suite struct HubRoomLifetimeTests {
    static let epoch = HubScheduleTests.epoch

    static func schedule(_ time: String, enabled: Bool = true) -> ClientMessage {
        .schedule(.add(ScheduleFields(name: "Standup", time: time, zone: "UTC", days: ["thu"], sessions: 1,
                                      warning: 0, enabled: enabled)))
    }

    static func configuration(maxRooms: Int = 100, lifetime: Duration = .seconds(60)) -> ServerConfiguration {
        var configuration = ServerConfiguration(port: 0, webRoot: nil)
        configuration.limits.maxRooms = maxRooms
        configuration.limits.roomsCreatedPerAddressPerMinute = 0
        configuration.roomPolicy.emptyRoomLifetime = lifetime
        return configuration
    }

    /// Ada makes `room`, adds a schedule at `time` (UTC, Thursdays) and leaves: nobody is in it.
    static func scheduledAndLeft(_ t: TestHub, _ room: String, at time: String, enabled: Bool = true) throws {
        let ada = t.connect()
        t.send(.join(room: room, name: "Ada", token: nil), from: ada)
        t.send(Self.schedule(time, enabled: enabled), ref: "add", from: ada)
        t.send(.leave, from: ada)
        t.settle()
        #expect(try t.messages(to: ada).map(\.label).contains("ok addSchedule"))
        t.disconnect(ada)
    }

    static func id(_ name: String) -> RoomID { try! RoomID(validating: name) }

    // MARK: Finding 4: a refused join

    @Test func aRefusedJoinLeavesAnEmptyRoomWithSchedulesInMemoryAndItStartsOnTime() throws {
        let t = TestHub(configuration: Self.configuration(lifetime: .seconds(600)), store: try HeldStore())
        try Self.scheduledAndLeft(t, "victim", at: "00:05")
        try Self.scheduledAndLeft(t, "other", at: "00:05")
        let eve = t.connect(peer: "198.51.100.9")
        t.send(.join(room: "victim", name: "", token: nil), ref: "bad", from: eve)
        t.settle()
        #expect(try t.messages(to: eve).map(\.label) == ["error bad_request"])
        let victim = try #require(t.hub.rooms[Self.id("victim")], "a refused join leaves the room as it was")
        #expect(victim.schedules.schedules.map(\.name) == ["Standup"])
        t.pass(.seconds(300))
        #expect(victim.room.status == .running && victim.room.scheduledRun?.name == "Standup", "it starts on time")
        #expect(t.hub.rooms[Self.id("other")]?.room.status == .running)
        #expect(try t.store!.store.loadSchedules(room: Self.id("victim")).count == 1)
    }

    @Test func aRefusedJoinLeavesARoomRunningAScheduledSetWithNobodyInIt() throws {
        let t = TestHub(configuration: Self.configuration(), store: try HeldStore())
        t.hub.restore([try HubScheduleRunTests.midSet()])
        t.settle()
        let eve = t.connect()
        t.send(.join(room: "team", name: "", token: nil), from: eve)
        t.settle()
        #expect(try t.messages(to: eve).map(\.label) == ["error bad_request"])
        let entry = try #require(t.hub.rooms[Self.id("team")], "the set runs on, nobody in the room")
        #expect(entry.room.status == .running && entry.room.scheduledRun?.focusSessionsDone == 1)
    }

    @Test func aRoomMadeForARefusedJoinAloneGoesAgainAtOnce() throws {
        let t = TestHub(configuration: Self.configuration(lifetime: .seconds(600)), store: try HeldStore())
        let eve = t.connect()
        t.send(.join(room: "fresh", name: "", token: nil), from: eve)
        t.settle()
        #expect(try t.messages(to: eve).map(\.label) == ["error bad_request"])
        #expect(t.hub.roomCount == 0, "no empty room is left behind")
    }

    @Test func aRoomBroughtBackByAJoinComesWithItsSchedulesAndAnAddKeepsThem() throws {
        let t = TestHub(configuration: Self.configuration(), store: try HeldStore())
        try Self.scheduledAndLeft(t, "victim", at: "02:00")
        t.pass(.seconds(61))
        #expect(t.hub.rooms[Self.id("victim")] == nil, "empty for its lifetime: out of memory, schedules and all")
        let bo = t.connect()
        t.send(.join(room: "victim", name: "Bo", token: nil), from: bo)
        t.settle()
        let entry = try #require(t.hub.rooms[Self.id("victim")])
        #expect(entry.schedules.schedules.map(\.id.description) == ["s1"], "brought back whole")
        t.send(Self.schedule("03:00"), ref: "add", from: bo)
        t.settle()
        let stored = try t.store!.store.loadSchedules(room: Self.id("victim"))
        #expect(stored.map(\.id.description) == ["s1", "s2"], "the stored schedule is kept, the new one is s2")
        #expect(stored.map(\.time.description) == ["02:00", "03:00"])
    }

    @Test func aStoredRoomAJoinBringsBackComesWithItsSchedules() throws {
        let store = try HeldStore()
        let id = Self.id("kept")
        let s1 = Schedule(id: ScheduleID(1), name: "Standup", time: try LocalTime(hour: 9, minute: 0),
                          zone: try ZoneName("UTC"), recurrence: .weekly([.thursday]),
                          since: WallTime(milliseconds: Self.epoch))
        try store.store.apply([.saveRoom(Room(id: id, now: .zero).record(wallOffsetNanoseconds: 0), passcode: nil),
                               .saveSchedules(id, [s1])])
        let t = TestHub(configuration: Self.configuration(), store: store)
        let bo = t.connect()
        t.send(.join(room: "kept", name: "Bo", token: nil), from: bo)
        t.settle()
        #expect(t.hub.rooms[id]?.schedules.schedules == [s1], "read with the room")
        t.send(Self.schedule("10:00"), ref: "add", from: bo)
        t.settle()
        #expect(try store.store.loadSchedules(room: id).map(\.name) == ["Standup", "Standup"])
        #expect(try store.store.loadSchedules(room: id).map(\.time.description) == ["09:00", "10:00"])
    }

    // MARK: Finding 5: schedules do not pin rooms

    @Test func aRoomWithSchedulesLeavesMemoryAndComesBackShortlyBeforeItsStartWhichIsOnTheSecond() throws {
        let t = TestHub(configuration: Self.configuration(), store: try HeldStore())
        try Self.scheduledAndLeft(t, "team", at: "00:30")
        t.pass(.seconds(61))
        #expect(t.hub.roomCount == 0, "schedules do not keep an empty room in memory")
        #expect(t.transport.armedTimers == 1, "one timer waits for the start: the index's")
        t.pass(.seconds(29 * 60 - 61 - 1))   // 00:28:59
        #expect(t.hub.roomCount == 0)
        t.pass(.seconds(1))                  // 00:29:00, the lead before 00:30
        let entry = try #require(t.hub.rooms[Self.id("team")], "back a minute before its start")
        #expect(entry.room.status == .idle)
        t.pass(.seconds(60))
        #expect(entry.room.status == .running && entry.room.scheduledRun?.name == "Standup")
        let snapshot = t.hub.snapshot(of: entry, at: t.clock.now())
        #expect(snapshot.endsAt == Self.epoch + 30 * 60_000 + 1_500_000, "the focus runs from the schedule's second")
        // The set over (25 minutes) and the lifetime passed, it leaves again, to come back next week.
        t.pass(.seconds(1500 + 61))
        #expect(t.hub.roomCount == 0)
        let next = try #require(t.hub.rooms.index?[Self.id("team")]?.next)
        #expect(next == WallTime(milliseconds: Self.epoch + 30 * 60_000 + 7 * 86_400_000))
    }

    @Test func disabledSchedulesNoLongerPinRoomsAgainstTheRoomLimit() throws {
        let t = TestHub(configuration: Self.configuration(maxRooms: 3), store: try HeldStore())
        for name in ["a", "b", "c"] { try Self.scheduledAndLeft(t, name, at: "09:00", enabled: false) }
        let bo = t.connect()
        t.send(.join(room: "new", name: "Bo", token: nil), from: bo)
        t.settle()
        #expect(try t.messages(to: bo).map(\.label) == ["error room_limit"], "three rooms are in memory")
        t.pass(.seconds(61))
        #expect(t.hub.roomCount == 0)
        t.send(.join(room: "new", name: "Bo", token: nil), from: bo)
        t.settle()
        #expect(try t.messages(to: bo).last { $0.you != nil } != nil, "their lifetime over, a new room may be made")
        #expect(t.hub.rooms.index?.count == 0, "nothing on: nothing to bring back")
    }

    @Test func aRoomBackForItsStartCountsTowardTheLimitAndAStartPassedOverIsCountedMissed() throws {
        let t = TestHub(configuration: Self.configuration(maxRooms: 1), store: try HeldStore())
        try Self.scheduledAndLeft(t, "team", at: "00:10")
        t.pass(.seconds(61))
        #expect(t.hub.roomCount == 0)
        let bo = t.connect()
        t.send(.join(room: "busy", name: "Bo", token: nil), from: bo)
        t.settle()
        t.pass(.seconds(10 * 60))
        #expect(t.hub.roomCount == 1 && t.hub.rooms[Self.id("team")] == nil, "no place for it: the limit holds")
        // Past the late-start grace, Bo leaves; a join brings the room back, with the start it missed counted.
        t.pass(.seconds(10 * 60))
        t.send(.leave, from: bo)
        t.pass(.seconds(61))
        let ada = t.connect()
        t.send(.join(room: "team", name: "Ada", token: nil), from: ada)
        t.send(.schedule(.list), ref: "l", from: ada)
        t.settle()
        let list = try #require(try t.messages(to: ada).compactMap { m -> SchedulesPayload? in
            if case .schedules(let payload, _) = m { payload } else { nil }
        }.last)
        #expect(list.schedules.map(\.missed) == [1])
    }

    @Test func atStartUpOnlyAsManyRoomsAsTheLimitComeBackForTheirSchedules() throws {
        let store = try HeldStore()
        // Ten stored rooms, nobody in them, each with a start two minutes ago (within the late-start grace).
        var stored: [StoredRoom] = []
        var schedules: [RoomID: [Schedule]] = [:]
        for n in 0..<10 {
            let id = Self.id("room\(n)")
            let record = Room(id: id, now: .zero).record(wallOffsetNanoseconds: 0)
            let s = Schedule(id: ScheduleID(1), name: "Standup", time: try LocalTime(hour: 0, minute: 0),
                             zone: try ZoneName("UTC"), recurrence: .weekly([.thursday]), length: .focusSessions(1),
                             warningMinutes: 0, since: WallTime(milliseconds: Self.epoch - 86_400_000))
            try store.store.apply([.saveRoom(record, passcode: nil), .saveSchedules(id, [s])])
            stored.append(StoredRoom(record: record, members: [], passcode: nil))
            schedules[id] = [s]
        }
        let t = TestHub(configuration: Self.configuration(maxRooms: 4),
                        clock: ManualServerClock(wallMs: Self.epoch + 120_000), store: store)
        t.hub.restore(stored, schedules: schedules)
        t.settle()
        #expect(t.hub.roomCount == 4, "the limit holds at start-up, for rooms with schedules too")
        #expect(t.hub.rooms.values.allSatisfy { $0.room.status == .running }, "those back start late, within the grace")
    }

    @Test func atStartUpRoomsWithNothingDueStayStored() throws {
        let store = try HeldStore()
        var schedules: [RoomID: [Schedule]] = [:]
        var stored: [StoredRoom] = []
        for n in 0..<10 {
            let id = Self.id("room\(n)")
            let record = Room(id: id, now: .zero).record(wallOffsetNanoseconds: 0)
            let s = Schedule(id: ScheduleID(1), name: "Off", time: try LocalTime(hour: 9, minute: 0),
                             zone: try ZoneName("UTC"), recurrence: .weekly([.thursday]), enabled: n % 2 == 0,
                             since: WallTime(milliseconds: Self.epoch))
            stored.append(StoredRoom(record: record, members: [], passcode: nil))
            schedules[id] = [s]
        }
        let t = TestHub(configuration: Self.configuration(maxRooms: 4), store: store)
        t.hub.restore(stored, schedules: schedules)
        t.settle()
        #expect(t.hub.roomCount == 0, "nothing due, nothing in memory")
        #expect(t.hub.rooms.index?.count == 5, "the five that are on wait in the index")
    }

    @Test func aClusterNodeTakesARoomWithSchedulesOnlyNearItsStartAndLetsItGoAfterItsSet() throws {
        typealias C = HubClusterScheduleTests
        let (t, cluster) = try C.node([try C.standup(at: LocalTime(hour: 0, minute: 30))])
        t.router!.keepScheduledRoomsRunning(try t.store!.store.loadSchedules())
        t.settle()
        #expect(cluster.holding.isEmpty, "its start is half an hour away: nobody needs to run it yet")
        C.pass(t, cluster, seconds: 29 * 60 - 1)
        #expect(cluster.holding.isEmpty && t.hub.roomCount == 0)
        #expect(cluster.released.isEmpty, "not taken and let go again and again either")
        C.pass(t, cluster, seconds: 2)
        #expect(cluster.holding == [Self.id("team")], "taken a minute before its start")
        C.pass(t, cluster, seconds: 60)
        #expect(t.hub.rooms[Self.id("team")]?.room.scheduledRun?.name == "Standup", "and started")
        // Its set (25 minutes) and its lifetime (10 minutes) over, it leaves memory and is not taken again.
        C.pass(t, cluster, seconds: 25 * 60 + 10 * 60 + 5)
        #expect(t.hub.roomCount == 0 && cluster.holding.isEmpty)
        C.pass(t, cluster, seconds: 10)
        #expect(t.hub.roomCount == 0 && cluster.holding.isEmpty)
        #expect(cluster.released == [Self.id("team")], "let go once, not taken again for the set it ran")
    }

    // MARK: Reads of a room out of memory

    @Test func theScheduleListAndCalendarOfARoomOutOfMemoryComeFromTheStore() throws {
        let t = TestHub(configuration: Self.configuration(), store: try HeldStore())
        try Self.scheduledAndLeft(t, "team", at: "09:30")
        t.pass(.seconds(61))
        #expect(t.hub.roomCount == 0)
        func get(_ path: String) throws -> String {
            let response = RecordedResponse()
            t.hub.receivedHTTP(HTTPRequest(method: .get, path: path, peer: "203.0.113.1"), responder: response)
            t.settle()
            let answer = try #require(response.response)
            #expect(answer.status == 200)
            return String(decoding: answer.body, as: UTF8.self)
        }
        let list = try WireCodec.decodeSchedulesBody(Array(try get("/api/rooms/team/schedules").utf8))
        #expect(list.schedules.map(\.id) == ["s1"])
        #expect(list.schedules.first?.next == Self.epoch + (9 * 60 + 30) * 60_000)
        #expect(try get("/api/rooms/team/calendar.ics").contains("BEGIN:VEVENT"))
        #expect(t.hub.roomCount == 0, "reading them brings nothing back")
    }
}

/// How many rooms may hold schedules: the bound on what an address can leave behind, since rooms are
/// nobody's and an address may make 30 a minute with 20 schedules each.
@Suite struct HubScheduledRoomLimitTests {
    @Test func roomsWithSchedulesInAndOutOfMemoryCountTowardTheLimit() throws {
        var configuration = HubRoomLifetimeTests.configuration(lifetime: .seconds(60))
        configuration.limits.maxScheduledRooms = 2
        let t = TestHub(configuration: configuration, store: try HeldStore())
        try HubRoomLifetimeTests.scheduledAndLeft(t, "first", at: "12:00")
        try HubRoomLifetimeTests.scheduledAndLeft(t, "second", at: "12:00")
        t.pass(.seconds(61))
        #expect(t.hub.roomCount == 0, "both left memory; their next starts wait in the index")

        let eve = t.connect(peer: "198.51.100.9")
        t.send(.join(room: "third", name: "Eve", token: nil), from: eve)
        t.send(HubRoomLifetimeTests.schedule("12:00"), ref: "add", from: eve)
        t.settle()
        let refused = try t.messages(to: eve).compactMap { message -> String? in
            if case let .error(code, _, field, .string("add")?, _) = message { "\(code.rawValue) \(field ?? "-")" } else { nil }
        }
        #expect(refused == ["room_limit schedules"], "a third room's first schedule is one too many")

        // A room that holds schedules already may add more (up to its own limit of 20).
        let ada = t.connect()
        t.send(.join(room: "first", name: "Ada", token: nil), from: ada)
        t.send(HubRoomLifetimeTests.schedule("13:00"), ref: "more", from: ada)
        t.settle()
        #expect(try t.messages(to: ada).map(\.label).contains("ok addSchedule"))
        // And once one room's schedules are gone, another room may have some.
        t.send(.schedule(.delete(id: "s1")), ref: "d1", from: ada)
        t.send(.schedule(.delete(id: "s2")), ref: "d2", from: ada)
        t.send(HubRoomLifetimeTests.schedule("12:00"), ref: "again", from: eve)
        t.settle()
        #expect(try t.messages(to: eve).map(\.label).contains("ok addSchedule"))
    }
}
