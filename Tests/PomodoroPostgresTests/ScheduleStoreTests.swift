import Testing
import PomodoroCore
import PomodoroStore
@testable import PomodoroPostgres
import PomodoroTestSupport

/// Schedules kept alike by both stores.
extension StoreConformanceTests {
    static func schedules() throws -> [Schedule] {
        let made = WallTime(seconds: 1_795_608_000)
        var writing = Schedule(id: ScheduleID(1), name: "Writing block; ✍️, \"quoted\"", time: try LocalTime(parsing: "14:00"),
                               zone: try ZoneName("Europe/Berlin"), recurrence: .weekly([.thursday, .monday]),
                               settings: RoomSettings(focus: 3000, shortBreak: 600, longBreak: 1200, longBreakEvery: 3,
                                                      autoStart: true),
                               length: .focusSessions(4), warningMinutes: 10, since: made)
        writing.handledThrough = made + 86_400
        writing.missed = 2
        let once = Schedule(id: ScheduleID(7), name: "Launch day", time: try LocalTime(parsing: "02:30"),
                            zone: try ZoneName("America/New_York"), recurrence: .once(try LocalDate(parsing: "2027-03-14")),
                            length: .untilStopped, warningMinutes: 0, enabled: false, since: made)
        return [writing, once]
    }

    @Test func schedulesRoundTripAlikeAndAreReplacedWhole() throws {
        try withBothStores { sqlite, postgres in
            let other = roomID("team-b")
            let all = try Self.schedules()
            try applyToBoth((sqlite, postgres), [
                .saveRoom(Sample.roomRecord(), passcode: nil), .saveRoom(Sample.roomRecord(other), passcode: nil),
                .saveSchedules(Sample.room, all), .saveSchedules(other, [all[1]]),
            ])
            for store in [sqlite as any RoomStore, postgres] {
                #expect(try store.loadSchedules(room: Sample.room) == all)
                #expect(try store.loadSchedules() == [Sample.room: all, other: [all[1]]])
            }
            // Saving a room's list replaces it: one removed, one changed.
            var changed = all[0]
            changed.enabled = false
            changed.name = "Renamed"
            try applyToBoth((sqlite, postgres), [.saveSchedules(Sample.room, [changed])])
            for store in [sqlite as any RoomStore, postgres] {
                #expect(try store.loadSchedules(room: Sample.room) == [changed])
                #expect(try store.loadSchedules(room: other) == [all[1]], "another room's stay")
                #expect(try store.loadSchedules(room: roomID("nobody")) == [])
            }
            try applyToBoth((sqlite, postgres), [.saveSchedules(Sample.room, [])])
            #expect(try sqlite.loadSchedules() == [other: [all[1]]])
            #expect(try postgres.loadSchedules() == [other: [all[1]]])
        }
    }

    @Test func schedulesAreCopiedFromOneStoreToTheOther() throws {
        try withBothStores { sqlite, postgres in
            try sqlite.apply([.saveRoom(Sample.roomRecord(), passcode: nil), .saveSchedules(Sample.room, try Self.schedules())])
            let report = try StoreCopy.copy(from: sqlite, to: postgres)
            #expect(report.verified && report.target.schedules == 2)
            #expect(try postgres.loadSchedules(room: Sample.room) == (try Self.schedules()))
        }
    }
}

/// The room's v8 columns kept alike by both stores: an aligned room's zones and a scheduled run under way.
extension StoreConformanceTests {
    static func roomsWithRunsAndZones() throws -> [RoomRecord] {
        let berlin = try ZoneName("Europe/Berlin")
        var aligned = Sample.roomRecord(roomID("aligned"), timer: .running(endsAtMs: 1_795_001_800_000), phase: .focus,
                                        pending: RoomSettings(focus: 3000, shortBreak: 600, aligned: try ZoneName("Asia/Kolkata")))
        aligned.settings.aligned = berlin
        // A run with its own settings, two of four done, the room's own (aligned) settings to put back.
        var run = Sample.roomRecord(roomID("run-own"), timer: .running(endsAtMs: 1_795_001_500_000), phase: .focus)
        run.scheduledRun = ScheduledRun(schedule: ScheduleID(3), name: "Writing block; ✍️", focusSessionsLeft: 2,
                                        focusSessionsDone: 2,
                                        roomSettings: RoomSettings(focus: 1500, shortBreak: 300, aligned: berlin))
        // A run until stopped with the room's settings.
        var open = Sample.roomRecord(roomID("run-open"), timer: .paused(remainingMs: 12_000), phase: .shortBreak)
        open.scheduledRun = ScheduledRun(schedule: ScheduleID(12), name: "Standup", focusSessionsLeft: nil,
                                         focusSessionsDone: 0, roomSettings: nil)
        return [aligned, run, open]
    }

    @Test func alignedZonesAndScheduledRunsRoundTripAlike() throws {
        try withBothStores { sqlite, postgres in
            let rooms = try Self.roomsWithRunsAndZones()
            try applyToBoth((sqlite, postgres), rooms.map { .saveRoom($0, passcode: nil) })
            for store in [sqlite as any RoomStore, postgres] {
                #expect(try store.loadRooms().map(\.record) == rooms.sorted { $0.id < $1.id })
            }
            // The run ends: its columns are emptied.
            var ended = rooms[1]
            ended.scheduledRun = nil
            try applyToBoth((sqlite, postgres), [.saveRoom(ended, passcode: nil)])
            for store in [sqlite as any RoomStore, postgres] {
                #expect(try store.loadRoom(ended.id)?.record == ended)
            }
        }
    }
}
