import PomodoroCore

// The room snapshot of `welcome` and `state`, its members, their counters and the settings object.

extension WireCodec {
    static func snapshot(_ s: SnapshotPayload) -> JSONBuilder {
        let object = JSONBuilder.object()
        object.set("id", s.room)
        object.set("phase", s.phase.rawValue)
        object.set("status", s.status.rawValue)
        object.set("running", s.running)
        object.set("remainingMs", s.remainingMs)
        object.set("phaseLengthMs", s.phaseLengthMs)
        object.set("endsAt", s.endsAt.map(JSONBuilder.integer))  // always present: null when not running
        object.set("cycle", s.cycle)
        object.set("settings", settingsObject(s.settings))
        object.set("pendingSettings", s.pendingSettings.map { settingsObject($0).value })  // always present
        let members = JSONBuilder.array(capacity: s.members.count)
        for member in s.members { members.append(memberObject(member)) }
        object.set("members", members)
        object.set("memberCount", s.memberCount)
        object.set("presentCount", s.presentCount)
        object.set("membersTruncated", s.membersTruncated)
        object.set("stats", stats(s.stats))
        object.set("seq", s.seq)
        object.set("serverTime", s.serverTime)
        object.set("control", s.control.rawValue)
        object.set("host", s.host.map(JSONBuilder.string))  // always present: null when nobody hosts
        object.set("locked", s.locked)
        // Left out when no session is coming, so rooms without schedules read as before.
        if let next = s.nextSession { object.set("nextSession", nextSessionObject(next)) }
        // Likewise left out while the room runs on its own.
        if let run = s.scheduledRun { object.set("scheduledRun", scheduledRunObject(run)) }
        return object
    }

    static func stats(_ s: StatsPayload) -> JSONBuilder {
        let object = JSONBuilder.object()
        object.set("focusCompleted", s.focusCompleted)
        object.set("focusSeconds", s.focusSeconds)
        object.set("interruptions", s.interruptions)
        return object
    }

    /// The five settings, as in `configure` and in snapshots.
    static func set(_ settings: RoomSettings, into object: JSONBuilder) {
        object.set("focus", settings.focus)
        object.set("shortBreak", settings.shortBreak)
        object.set("longBreak", settings.longBreak)
        object.set("longBreakEvery", settings.longBreakEvery)
        object.set("autoStart", settings.autoStart)
        // Only when set, so a room that is not aligned looks as it did before the field existed.
        if let zone = settings.aligned { object.set("aligned", zone.identifier) }
    }

    /// A member object: `{id, name, present, connected, task, stats}` (a snapshot's `members`, and `you`).
    static func memberObject(_ member: MemberPayload) -> JSONBuilder {
        let m = JSONBuilder.object()
        m.set("id", member.id)
        m.set("name", member.name)
        m.set("present", member.present)
        m.set("connected", member.connected)
        m.set("task", member.task)
        m.set("stats", stats(member.stats))
        return m
    }

    static func settingsObject(_ settings: RoomSettings) -> JSONBuilder {
        let object = JSONBuilder.object()
        set(settings, into: object)
        return object
    }
}

extension FieldReader {
    func snapshot() throws(ProtocolError) -> SnapshotPayload {
        let endsAt: Int64? = optionalValue("endsAt") == nil ? nil : try int64("endsAt")
        var members: [MemberPayload] = []
        for m in try objects("members") { members.append(try m.member()) }
        return SnapshotPayload(
            room: try string("id"), phase: try enumeration("phase"), status: try enumeration("status"),
            running: try bool("running"), remainingMs: try int64("remainingMs"),
            phaseLengthMs: try int64("phaseLengthMs"), endsAt: endsAt, cycle: try int("cycle"),
            settings: try object("settings").settings(), pendingSettings: try optionalObject("pendingSettings")?.settings(),
            members: members, memberCount: try optionalInt("memberCount"),
            presentCount: try optionalInt("presentCount"), membersTruncated: try optionalBool("membersTruncated"),
            stats: try object("stats").stats(), seq: try uint64("seq"),
            serverTime: try int64("serverTime"), control: try enumeration("control"),
            host: try optionalString("host"), locked: try bool("locked"), nextSession: try nextSession(),
            scheduledRun: try scheduledRun())
    }

    func member() throws(ProtocolError) -> MemberPayload {
        MemberPayload(id: try string("id"), name: try string("name"), present: try bool("present"),
                      connected: try bool("connected"), task: try string("task"), stats: try object("stats").stats())
    }

    func stats() throws(ProtocolError) -> StatsPayload {
        StatsPayload(focusCompleted: try int("focusCompleted"), focusSeconds: try int64("focusSeconds"),
                     interruptions: try int("interruptions"))
    }

    /// The five settings, all required (as in `configure` and in snapshots), and `aligned`, an IANA zone
    /// (absent or null: not aligned).
    func settings() throws(ProtocolError) -> RoomSettings {
        var aligned: ZoneName?
        if let zone = try optionalString("aligned") {
            do { aligned = try ZoneName(zone) } catch {
                throw ProtocolError(.badRequest, "aligned must be an IANA time zone such as Europe/Berlin",
                                    field: "aligned")
            }
        }
        return RoomSettings(focus: try int("focus"), shortBreak: try int("shortBreak"), longBreak: try int("longBreak"),
                            longBreakEvery: try int("longBreakEvery"), autoStart: try bool("autoStart"),
                            aligned: aligned)
    }
}

extension WireCodec {
    /// The body of `GET /api/rooms/{room}`: the snapshot object alone, as `state.room` carries it.
    public static func encodeSnapshotBody(_ room: SnapshotPayload) -> [UInt8] {
        snapshot(room).serialize()
    }

    /// Reads a snapshot body (for clients and tests).
    public static func decodeSnapshotBody(_ bytes: [UInt8]) throws(ProtocolError) -> SnapshotPayload {
        try decodeObject(bytes) { (fields) throws(ProtocolError) in try fields.snapshot() }
    }
}
