import PomodoroCore
@testable import PomodoroProtocol
import Testing

@Suite struct ScheduleWireTests {
    private func decode(_ json: String) throws(ProtocolError) -> ClientFrame {
        try WireCodec.decodeClientFrame([UInt8](json.utf8))
    }

    @Test func aWeeklyScheduleReadsIntoADraft() throws {
        let frame = try decode(#"{"type":"addSchedule","schedule":{"name":"Standup","time":"09:30","zone":"Europe/Berlin","days":["fri","mon"],"sessions":2},"ref":1}"#)
        guard case .schedule(.add(let fields)) = frame.message else { Issue.record("not an addSchedule"); return }
        let draft = try fields.draft()
        #expect(draft.recurrence == .weekly([.monday, .friday]))
        #expect(draft.time == (try LocalTime(parsing: "09:30")))
        #expect(draft.length == .focusSessions(2) && draft.warningMinutes == 5 && draft.enabled && draft.settings == nil)
    }

    @Test func aOneTimeScheduleRunsUntilStoppedWithoutSessions() throws {
        let fields = ScheduleFields(name: "Launch", time: "02:30", zone: "America/New_York", date: "2027-03-14",
                                    warning: 0, enabled: false)
        let draft = try fields.draft()
        #expect(draft.recurrence == .once(try LocalDate(parsing: "2027-03-14")))
        #expect(draft.length == .untilStopped && draft.warningMinutes == 0 && !draft.enabled)
    }

    @Test func wrongFieldsAreNamed() throws {
        let both = ScheduleFields(name: "x", time: "09:30", zone: "UTC", date: "2027-03-14", days: ["mon"])
        #expect(throws: RoomError.invalidArgument(field: "date", reason: "give either a date (one time) or days (every week), not both")) {
            try both.draft()
        }
        let neither = ScheduleFields(name: "x", time: "09:30", zone: "UTC")
        #expect(throws: RoomError.self) { try neither.draft() }
        let badDay = ScheduleFields(name: "x", time: "09:30", zone: "UTC", days: ["monday"])
        #expect(throws: RoomError.invalidArgument(field: "days", reason: "must be weekdays written mon, tue, wed, thu, fri, sat, sun")) {
            try badDay.draft()
        }
        #expect(throws: RoomError.invalidArgument(field: "zone", reason: "must be an IANA time zone such as Europe/Berlin")) {
            try ScheduleFields(name: "x", time: "09:30", zone: "CEST", days: ["mon"]).draft()
        }
    }

    @Test func theDecoderNamesTheFieldOfAWrongType() {
        #expect(throws: ProtocolError(.badRequest, "'schedule.days' must be an array of strings", field: "schedule.days", ref: .number(4))) {
            try decode(#"{"type":"addSchedule","ref":4,"schedule":{"name":"a","time":"09:30","zone":"UTC","days":"mon"}}"#)
        }
        #expect(throws: ProtocolError(.badRequest, "missing field 'id'", field: "id", ref: nil)) {
            try decode(#"{"type":"deleteSchedule"}"#)
        }
        #expect(throws: ProtocolError(.badRequest, "missing field 'schedule'", field: "schedule", ref: nil)) {
            try decode(#"{"type":"addSchedule"}"#)
        }
        #expect(throws: ProtocolError.self) { try decode(#"{"type":"scheduleEverything"}"#) }
    }

    @Test func aListedScheduleCarriesItsNextStart() throws {
        let s = Schedule(id: ScheduleID(3), name: "Standup", time: try LocalTime(parsing: "09:30"),
                         zone: try ZoneName("Europe/Berlin"), recurrence: .weekly([.tuesday, .monday]),
                         settings: RoomSettings(focus: 3000, shortBreak: 600), length: .focusSessions(2),
                         since: WallTime(seconds: 0), missed: 2)
        let payload = SchedulePayload(s, next: WallTime(seconds: 1_796_027_400))
        #expect(payload.id == "s3" && payload.missed == 2 && payload.next == 1_796_027_400_000)
        #expect(payload.fields.days == ["mon", "tue"] && payload.fields.date == nil)
        #expect(try payload.fields.draft().settings == s.settings)
    }
}
