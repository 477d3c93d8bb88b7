@testable import PomodoroServer
import PomodoroCore
import PomodoroProtocol
import PomodoroStore
import PomodoroTestSupport
import Testing

/// A scheduled set interrupted by a restart carries on as that set, and a clock-aligned room through the hub.
@Suite struct HubScheduleRunTests {
    static let epoch = HubScheduleTests.epoch  // Thursday 2026-01-01 00:00 UTC, the manual clock's start

    /// A room stored in the middle of a scheduled set of three: the first focus done, the second focus
    /// 10 minutes from its end, nobody in the room.
    static func midSet() throws -> StoredRoom {
        let id = try RoomID(validating: "team")
        var record = Room(id: id, now: .zero).record(wallOffsetNanoseconds: 0)
        record.phase = .focus
        record.timer = .running(endsAtMs: epoch + 600_000)
        record.phaseLengthMs = 1_500_000
        record.cycle = 2
        record.scheduledRun = ScheduledRun(schedule: ScheduleID(1), name: "Standup", focusSessionsLeft: 2,
                                           focusSessionsDone: 1, roomSettings: nil)
        return StoredRoom(record: record, members: [], passcode: nil)
    }

    @Test func aRestartMidSetComesBackAsTheSetAndStopsAfterItsLastFocus() throws {
        let t = TestHub()
        t.hub.restore([try Self.midSet()])
        t.settle()
        let room = try RoomID(validating: "team")
        let entry = try #require(t.hub.rooms[room], "a room in a scheduled set comes back, nobody in it as it is")
        #expect(entry.room.scheduledRun?.focusSessionsDone == 1 && entry.room.status == .running)
        // What a member joining sees: the set's progress in the snapshot, not only the room's cycle.
        let ada = t.connect()
        t.send(.join(room: "team", name: "Ada", token: nil), from: ada)
        t.settle()
        let joined = try #require(try t.messages(to: ada).compactMap(\.snapshot).last)
        #expect(joined.scheduledRun == ScheduledRunPayload(schedule: "s1", name: "Standup", focusSessions: 3, focusDone: 1))
        t.pass(.seconds(600))
        #expect(entry.room.phase == .shortBreak && entry.room.status == .running, "the break runs by itself")
        t.pass(.seconds(300))
        #expect(entry.room.phase == .focus && entry.room.cycle == 3)
        t.pass(.seconds(1500))
        #expect(entry.room.status == .idle && entry.room.scheduledRun == nil, "stopped after the third focus")
        let ended = try #require(try t.messages(to: ada).compactMap(\.snapshot).last)
        #expect(ended.status == .idle && ended.scheduledRun == nil, "the run is left out once it is over")
        #expect(entry.room.stats.focusSessions == 2, "the two completed after the restart")
    }

    @Test func anAlignedRoomStartsOnTheClockThroughTheHub() throws {
        // 00:10:00.25 UTC: a 25/5 room on Berlin's clock (01:10) runs its focus to 01:25 Berlin, 00:25 UTC.
        let t = TestHub(clock: ManualServerClock(wallMs: Self.epoch + 600_250))
        let ada = t.connect()
        t.send(.join(room: "team", name: "Ada", token: nil), from: ada)
        t.send(.configure(RoomSettings(aligned: try ZoneName("Europe/Berlin"))), from: ada)
        t.send(.start, from: ada)
        t.settle()
        let state = try #require(try t.messages(to: ada).compactMap(\.snapshot).last)
        #expect(state.settings.aligned == (try ZoneName("Europe/Berlin")))
        #expect(state.status == .running && state.endsAt == Self.epoch + 25 * 60_000)
        t.transport.clearSent()
        t.send(.extend(seconds: 60), from: ada)
        t.settle()
        #expect(try t.messages(to: ada).map(\.label) == ["error invalid_state"])
    }
}
