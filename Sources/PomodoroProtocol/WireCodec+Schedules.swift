import PomodoroCore

// A room's schedules on the wire (docs/PROTOCOL.md, "Schedules"), encoded and decoded side by side: the
// requests, the `schedules` list, the schedule events and the snapshot's `nextSession`.

extension WireCodec {
    // MARK: Requests

    static func set(_ request: ScheduleRequest, into object: JSONBuilder) {
        switch request {
        case .list:
            break
        case .add(let fields):
            object.set("schedule", fieldsObject(fields))
        case let .change(id, fields):
            object.set("id", id)
            object.set("schedule", fieldsObject(fields))
        case let .setEnabled(id, enabled):
            object.set("id", id)
            object.set("enabled", enabled)
        case .delete(let id):
            object.set("id", id)
        }
    }

    /// A schedule's fields: `date` and `days` are both always there, one of them null; so are `settings`
    /// and `sessions` (null: the room's settings, until stopped). Missing `warning` and `enabled` are left
    /// out of a request (the server's defaults), always there in a list.
    static func fieldsObject(_ f: ScheduleFields) -> JSONBuilder {
        let object = JSONBuilder.object()
        object.set("name", f.name)
        object.set("time", f.time)
        object.set("zone", f.zone)
        object.set("date", f.date.map(JSONBuilder.string))
        if let days = f.days {
            object.set("days", JSONBuilder.strings(days))
        } else {
            object.set("days", .null)
        }
        object.set("settings", f.settings.map { settingsObject($0).value })
        object.set("sessions", f.sessions.map { JSONBuilder.integer(Int64($0)) })
        if let warning = f.warning { object.set("warning", warning) }
        if let enabled = f.enabled { object.set("enabled", enabled) }
        return object
    }

    // MARK: The list

    static func set(_ payload: SchedulesPayload, into object: JSONBuilder) {
        object.set("room", payload.room)
        let array = JSONBuilder.array(capacity: payload.schedules.count)
        for schedule in payload.schedules {
            let s = JSONBuilder.object()
            s.set("id", schedule.id)
            let fields = fieldsObject(schedule.fields)
            s.set("schedule", fields)
            s.set("missed", schedule.missed)
            s.set("next", schedule.next.map(JSONBuilder.integer))
            array.append(s)
        }
        object.set("schedules", array)
    }

    /// The body of `GET /api/rooms/{room}/schedules`: the `schedules` message without `type` and `ref`.
    public static func encodeSchedulesBody(_ payload: SchedulesPayload) -> [UInt8] {
        let object = JSONBuilder.object()
        set(payload, into: object)
        return object.serialize()
    }

    /// Reads a schedules body (for clients and tests).
    public static func decodeSchedulesBody(_ bytes: [UInt8]) throws(ProtocolError) -> SchedulesPayload {
        try withBytes(of: bytes) { (buffer) throws(ProtocolError) -> SchedulesPayload in
            try JSONNode.parse(buffer, maxDepth: serverMaxDepth) { (root) throws(ProtocolError) -> SchedulesPayload in
                guard root.kind == .object else { throw ProtocolError(.badJSON, "the body must be a JSON object") }
                return try FieldReader(root, path: "", ref: nil).schedules()
            }
        }
    }

    // MARK: Events and the snapshot

    static func set(_ event: ScheduleEventPayload, into object: JSONBuilder) {
        switch event {
        case let .warning(schedule, name, startsAt, minutes):
            object.set("schedule", schedule)
            object.set("name", name)
            object.set("startsAt", startsAt)
            object.set("minutes", minutes)
        case let .started(schedule, name, lateMs):
            object.set("schedule", schedule)
            object.set("name", name)
            object.set("lateMs", lateMs)
        case let .missed(schedule, name, occurrence, busy):
            object.set("schedule", schedule)
            object.set("name", name)
            object.set("occurrence", occurrence)
            object.set("busy", busy)
        case let .ended(schedule, name, focusSessions):
            object.set("schedule", schedule)
            object.set("name", name)
            object.set("focusSessions", focusSessions)
        }
    }

    static func nextSessionObject(_ next: NextSessionPayload) -> JSONBuilder {
        let object = JSONBuilder.object()
        object.set("schedule", next.schedule)
        object.set("name", next.name)
        object.set("startsAt", next.startsAt)
        return object
    }

    static func scheduledRunObject(_ run: ScheduledRunPayload) -> JSONBuilder {
        let object = JSONBuilder.object()
        object.set("schedule", run.schedule)
        object.set("name", run.name)
        object.set("focusSessions", run.focusSessions.map { JSONBuilder.integer(Int64($0)) })  // null: until stopped
        object.set("focusDone", run.focusDone)
        return object
    }
}

extension FieldReader {
    /// The schedule request of `type`, or nil when `type` is not one.
    func scheduleRequest(type: String) throws(ProtocolError) -> ScheduleRequest? {
        switch type {
        case "schedules": return .list
        case "addSchedule": return .add(try object("schedule").scheduleFields())
        case "changeSchedule": return .change(id: try string("id"), try object("schedule").scheduleFields())
        case "switchSchedule": return .setEnabled(id: try string("id"), enabled: try bool("enabled"))
        case "deleteSchedule": return .delete(id: try string("id"))
        default: return nil
        }
    }

    func scheduleFields() throws(ProtocolError) -> ScheduleFields {
        var days: [String]?
        if let value = optionalValue("days") {
            guard value.kind == .array else { throw failure("days", "'\(name("days"))' must be an array of strings") }
            days = []
            for element in value.elements {
                guard let day = element.string else {
                    throw failure("days", "'\(name("days"))' must be an array of strings")
                }
                days?.append(day)
            }
        }
        return ScheduleFields(name: try string("name"), time: try string("time"), zone: try string("zone"),
                              date: try optionalString("date"), days: days,
                              settings: try optionalObject("settings")?.settings(),
                              sessions: try optionalInt("sessions"), warning: try optionalInt("warning"),
                              enabled: try optionalBool("enabled"))
    }

    func schedules() throws(ProtocolError) -> SchedulesPayload {
        var list: [SchedulePayload] = []
        for s in try objects("schedules") {
            list.append(SchedulePayload(id: try s.string("id"), fields: try s.object("schedule").scheduleFields(),
                                        missed: try s.int("missed"), next: try s.optionalInt64("next")))
        }
        return SchedulesPayload(room: try string("room"), schedules: list)
    }

    /// The schedule event of `kind`, or nil when `kind` is not one.
    func scheduleEvent(kind: String) throws(ProtocolError) -> ScheduleEventPayload? {
        switch kind {
        case "scheduleWarning":
            return .warning(schedule: try string("schedule"), name: try string("name"),
                            startsAt: try int64("startsAt"), minutes: try int("minutes"))
        case "scheduleStarted":
            return .started(schedule: try string("schedule"), name: try string("name"), lateMs: try int64("lateMs"))
        case "scheduleMissed":
            return .missed(schedule: try string("schedule"), name: try string("name"),
                           occurrence: try int64("occurrence"), busy: try bool("busy"))
        case "scheduleEnded":
            return .ended(schedule: try string("schedule"), name: try string("name"),
                          focusSessions: try int("focusSessions"))
        default:
            return nil
        }
    }

    func nextSession() throws(ProtocolError) -> NextSessionPayload? {
        guard let next = try optionalObject("nextSession") else { return nil }
        return NextSessionPayload(schedule: try next.string("schedule"), name: try next.string("name"),
                                  startsAt: try next.int64("startsAt"))
    }

    func scheduledRun() throws(ProtocolError) -> ScheduledRunPayload? {
        guard let run = try optionalObject("scheduledRun") else { return nil }
        let sessions = try run.optionalInt("focusSessions")
        let done = try run.int("focusDone")
        guard done >= 0, sessions.map({ $0 >= 1 }) ?? true else {
            throw ProtocolError(.badRequest, "scheduledRun counts must not be negative", field: "scheduledRun")
        }
        return ScheduledRunPayload(schedule: try run.string("schedule"), name: try run.string("name"),
                                   focusSessions: sessions, focusDone: done)
    }
}
