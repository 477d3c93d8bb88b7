import PomodoroCore
import Testing

/// The next start of each room out of memory, on wall times chosen by hand (Thursday 2026-01-01, 00:00 UTC).
@Suite struct ScheduleIndexTests {
    static let epoch = WallTime(seconds: 1_767_225_600)
    static let team = try! RoomID(validating: "team"), other = try! RoomID(validating: "other")

    static func weekly(_ hour: Int, _ minute: Int, id: Int = 1, enabled: Bool = true, sessions: Int = 1,
                       since: WallTime = epoch) throws -> Schedule {
        Schedule(id: ScheduleID(id), name: "s\(id)", time: try LocalTime(hour: hour, minute: minute),
                 zone: try ZoneName("UTC"), recurrence: .weekly([.thursday]), length: .focusSessions(sessions),
                 warningMinutes: 5, enabled: enabled, since: since)
    }

    @Test func aRoomIsDueItsLeadBeforeItsEarliestStartThatIsOn() throws {
        var index = ScheduleIndex(lead: 60)
        index.set(Self.team, schedules: [try Self.weekly(9, 0), try Self.weekly(8, 0, id: 2, enabled: false),
                                         try Self.weekly(10, 0, id: 3)], now: Self.epoch)
        #expect(index[Self.team]?.next == Self.epoch + 9 * 3600, "the switched-off 08:00 does not count")
        #expect(index.nextWakeup == Self.epoch + 9 * 3600 - 60)
        #expect(index.due(at: Self.epoch + 9 * 3600 - 61).isEmpty)
        #expect(index.due(at: Self.epoch + 9 * 3600 - 60) == [Self.team])
    }

    @Test func roomsAreDueSoonestFirstAndAStartThatPassedIsDueAtOnce() throws {
        var index = ScheduleIndex(lead: 60)
        index.set(Self.team, schedules: [try Self.weekly(9, 0)], now: Self.epoch)
        // Handled through a week ago: this morning's 00:30 was never dealt with (the server was down).
        index.set(Self.other, schedules: [try Self.weekly(0, 30, since: Self.epoch - 7 * 86_400)], now: Self.epoch)
        #expect(index.due(at: Self.epoch + 9 * 3600) == [Self.other, Self.team])
        #expect(index[Self.other]?.next == Self.epoch - 7 * 86_400 + 1800)
    }

    @Test func aStartPassedOverLeavesTheNextOne() throws {
        var index = ScheduleIndex(lead: 60)
        index.set(Self.team, schedules: [try Self.weekly(9, 0)], now: Self.epoch)
        index.passOver(Self.team, through: Self.epoch + 9 * 3600)
        #expect(index[Self.team]?.next == Self.epoch + 9 * 3600 + 7 * 86_400)
        #expect(index.due(at: Self.epoch + 9 * 3600).isEmpty)
    }

    @Test func roomsWithNothingOnAreForgottenUnlessASetMayStillRun() throws {
        var index = ScheduleIndex(lead: 60)
        index.set(Self.team, schedules: [try Self.weekly(9, 0, enabled: false)], now: Self.epoch)
        #expect(index.count == 0)
        #expect(index.nextWakeup == nil)

        // A cluster node watches sets: a set handled at 09:00 (one 25-minute focus) may run until 09:25 and
        // the slack after it.
        var watching = ScheduleIndex(lead: 60, watchesSets: true)
        var ran = try Self.weekly(9, 0, enabled: false)
        ran.handledThrough = Self.epoch + 9 * 3600
        watching.set(Self.team, schedules: [ran], now: Self.epoch + 9 * 3600)
        #expect(watching.mayBeRunning(Self.team, at: Self.epoch + 9 * 3600 + 1500))
        let over = Self.epoch + 9 * 3600 + 1500 + ScheduleIndex.setSlack
        #expect(!watching.mayBeRunning(Self.team, at: over))
        watching.prune(at: over)
        #expect(watching.count == 0)
    }
}
