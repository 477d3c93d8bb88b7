import PomodoroCore

/// Records to rows and back, once for every SQL store: the values each table's columns take (in the order
/// `StoreSchema` lists them) and the records read back from a `StoreRow`. A store binds the values and
/// adapts its rows; what a column means is decided here alone.
public enum RowCodec {
    // MARK: Rooms

    /// The values of `StoreSchema.roomColumns`.
    public static func values(of room: RoomRecord, passcode: String?) -> [ColumnValue] {
        valuesBeforeV8(of: room, passcode: passcode) + RoomRunColumns(room).values
    }

    /// The values of `StoreSchema.roomColumnsBeforeV8` (tests write an older server's rows with these).
    public static func valuesBeforeV8(of room: RoomRecord, passcode: String?) -> [ColumnValue] {
        let settings = room.settings, pending = room.pendingSettings
        let (timerKind, timerMs): (String, Int64?) = switch room.timer {
        case .idle: ("idle", nil)
        case .ready(let remainingMs): ("ready", remainingMs)
        case .running(let endsAtMs): ("running", endsAtMs)
        case .paused(let remainingMs): ("paused", remainingMs)
        }
        return [
            .text(room.id.rawValue), .integer(settings.focus), .integer(settings.shortBreak),
            .integer(settings.longBreak), .integer(settings.longBreakEvery), .boolean(settings.autoStart),
            .integer(pending?.focus), .integer(pending?.shortBreak), .integer(pending?.longBreak),
            .integer(pending?.longBreakEvery), .boolean(pending?.autoStart),
            .text(room.phase.rawValue), .text(timerKind), .integer(timerMs), .integer(room.phaseLengthMs),
            .integer(room.cycle),
        ] + values(of: room.stats) + [
            .text(room.controlMode.rawValue), .text(room.host?.rawValue), .integer(room.nextMemberNumber),
            .integer(room.focusStartedAtMs), .integer(room.focusCreditedUntilMs),
            .integer(Int64(bitPattern: room.seq)), .text(passcode),
        ]
    }

    public static func room(from row: some StoreRow) throws(StoreError) -> RoomRecord {
        let raw = try row.string("id")
        let id: RoomID
        do { id = try RoomID(validating: raw) } catch {
            throw StoreError("a stored room id is not valid: \(raw.debugDescription)")
        }
        let settings = RoomSettings(
            focus: try row.int("focus_s"), shortBreak: try row.int("short_break_s"),
            longBreak: try row.int("long_break_s"), longBreakEvery: try row.int("long_break_every"),
            autoStart: try row.bool("auto_start"))
        var pending: RoomSettings?
        if let focus = try row.optionalInt("pending_focus_s") {
            pending = RoomSettings(
                focus: focus, shortBreak: try row.int("pending_short_break_s"),
                longBreak: try row.int("pending_long_break_s"), longBreakEvery: try row.int("pending_long_break_every"),
                autoStart: try row.bool("pending_auto_start"))
        }
        let phaseName = try row.string("phase")
        guard let phase = Phase(rawValue: phaseName) else {
            throw StoreError("room \(id): unknown phase \(phaseName.debugDescription)")
        }
        let modeName = try row.string("control_mode")
        guard let controlMode = ControlMode(rawValue: modeName) else {
            throw StoreError("room \(id): unknown control mode \(modeName.debugDescription)")
        }
        var record = RoomRecord(
            id: id, settings: settings, pendingSettings: pending, phase: phase, timer: try timer(from: row, room: id),
            phaseLengthMs: try row.int64("phase_length_ms"), cycle: try row.int("cycle"),
            stats: try stats(from: row), controlMode: controlMode, host: try row.text("host").map(MemberID.init),
            nextMemberNumber: try row.int("next_member_number"),
            focusStartedAtMs: try row.integer("focus_started_at_ms"),
            focusCreditedUntilMs: try row.integer("focus_credited_until_ms"),
            seq: UInt64(bitPattern: try row.int64("seq")))
        try RoomRunColumns(from: row).apply(to: &record)
        return record
    }

    private static func timer(from row: some StoreRow, room id: RoomID) throws(StoreError) -> StoredTimer {
        let kind = try row.string("timer_kind")
        let ms = try row.integer("timer_ms")
        switch (kind, ms) {
        case ("idle", nil): return .idle
        case ("ready", let ms?): return .ready(remainingMs: ms)
        case ("running", let ms?): return .running(endsAtMs: ms)
        case ("paused", let ms?): return .paused(remainingMs: ms)
        default:
            throw StoreError("room \(id): timer \(kind.debugDescription) with timer_ms " + (ms.map(String.init) ?? "NULL"))
        }
    }

    /// A stored room from its `room` row, with its members and bans.
    public static func storedRoom(from row: some StoreRow, members: [MemberRecord], bans: [BanRecord],
                                  schedules: [Schedule] = [], apiTokens: [APITokenRecord] = []) throws(StoreError)
        -> StoredRoom {
        StoredRoom(record: try room(from: row), members: members, passcode: try row.text("passcode"), bans: bans,
                   schedules: schedules, apiTokens: apiTokens)
    }

    // MARK: Members

    /// The values of `StoreSchema.memberColumns`.
    public static func values(of member: MemberRecord, in room: RoomID) -> [ColumnValue] {
        [.text(room.rawValue), .text(member.id.rawValue), .integer(member.joinOrder), .text(member.name),
         .text(member.tokenHash), .text(member.task), .boolean(member.away), .boolean(member.connected)]
            + values(of: member.stats) + [.integer(member.sessionFocusMs), .integer(member.creditedSinceMs)]
    }

    public static func member(from row: some StoreRow) throws(StoreError) -> MemberRecord {
        MemberRecord(
            id: MemberID(try row.string("id")), joinOrder: try row.int("ord"), name: try row.string("name"),
            tokenHash: try row.string("token_sha256"), task: try row.string("task"), away: try row.bool("away"),
            connected: try row.bool("connected"), stats: try stats(from: row),
            sessionFocusMs: try row.int64("session_focus_ms"), creditedSinceMs: try row.integer("credited_since_ms"))
    }

    /// The stats columns, named alike in `room` and `member`.
    private static func values(of stats: FocusStats) -> [ColumnValue] {
        [.integer(stats.focusSessions), .integer(stats.focusTime.storedNanoseconds), .integer(stats.interruptions)]
    }

    private static func stats(from row: some StoreRow) throws(StoreError) -> FocusStats {
        FocusStats(focusSessions: try row.int("focus_completed"), focusTime: .nanoseconds(try row.int64("focus_ns")),
                   interruptions: try row.int("interruptions"))
    }

    // MARK: Bans and schedules

    /// The values of `StoreSchema.banColumns`.
    public static func values(of ban: BanRecord, at ord: Int, in room: RoomID) -> [ColumnValue] {
        [.text(room.rawValue), .integer(ord), .text(ban.nameKey), .text(ban.tokenHash), .integer(ban.untilMs)]
    }

    public static func ban(from row: some StoreRow) throws(StoreError) -> BanRecord {
        BanRecord(nameKey: try row.string("name_key"), tokenHash: try row.string("token_sha256"),
                  untilMs: try row.int64("until_ms"))
    }

    /// The values of `StoreSchema.apiTokenColumns`.
    public static func values(of token: APITokenRecord, in room: RoomID) -> [ColumnValue] {
        [.text(room.rawValue), .text(token.id), .text(token.name), .text(token.tokenHash), .integer(token.createdAtMs),
         .integer(token.lastUsedAtMs), .text(token.createdBy?.rawValue)]
    }

    public static func apiToken(from row: some StoreRow) throws(StoreError) -> APITokenRecord {
        APITokenRecord(id: try row.string("id"), name: try row.string("name"), tokenHash: try row.string("token_sha256"),
                       createdAtMs: try row.int64("created_at_ms"), lastUsedAtMs: try row.integer("last_used_at_ms"),
                       createdBy: try row.text("created_by").map(MemberID.init))
    }

    /// The values of `StoreSchema.scheduleColumns`.
    public static func values(of schedule: Schedule, in room: RoomID) -> [ColumnValue] {
        let r = ScheduleRow(schedule)
        return [.text(room.rawValue), .integer(r.number), .text(r.name), .text(r.time), .text(r.zone), .text(r.date),
                .text(r.weekdays), .integer(r.focusS), .integer(r.shortBreakS), .integer(r.longBreakS),
                .integer(r.longBreakEvery), .boolean(r.autoStart), .integer(r.sessions), .integer(r.warningMinutes),
                .boolean(r.enabled), .integer(r.sinceMs), .integer(r.handledThroughMs), .integer(r.missed)]
    }

    /// The schedule of a `schedule` row of `room`.
    public static func schedule(from row: some StoreRow, room: RoomID) throws(StoreError) -> Schedule {
        try ScheduleRow(
            number: try row.int64("id"), name: try row.string("name"), time: try row.string("time"),
            zone: try row.string("zone"), date: try row.text("date"), weekdays: try row.text("weekdays"),
            focusS: try row.integer("focus_s"), shortBreakS: try row.integer("short_break_s"),
            longBreakS: try row.integer("long_break_s"), longBreakEvery: try row.integer("long_break_every"),
            autoStart: try row.boolean("auto_start"), sessions: try row.integer("sessions"),
            warningMinutes: try row.int64("warning_min"), enabled: try row.bool("enabled"),
            sinceMs: try row.int64("since_ms"), handledThroughMs: try row.int64("handled_through_ms"),
            missed: try row.int64("missed")
        ).schedule(room: room)
    }

    /// The room a `schedule` row belongs to.
    public static func scheduleRoom(from row: some StoreRow) throws(StoreError) -> RoomID {
        let raw = try row.string("room_id")
        do { return try RoomID(validating: raw) } catch {
            throw StoreError("a stored schedule's room id is not valid: \(raw.debugDescription)")
        }
    }

    // MARK: Journal

    /// The values of `StoreSchema.sessionColumns`.
    public static func values(of session: FocusSessionRecord) -> [ColumnValue] {
        [.text(session.room.rawValue), .integer(session.startedAtMs), .integer(session.endedAtMs),
         .integer(session.lengthSeconds)]
    }

    /// The values of `StoreSchema.participantColumns`.
    public static func values(of participant: FocusSessionRecord.Participant, at ord: Int,
                              session id: Int64) -> [ColumnValue] {
        [.integer(id), .integer(ord), .text(participant.member.rawValue), .text(participant.name),
         .text(participant.task), .integer(participant.focusMs)]
    }

    /// A session of a row of `focus_session` joined with `session_member`, without its participants.
    public static func session(from row: some StoreRow, room: RoomID) throws(StoreError) -> FocusSessionRecord {
        FocusSessionRecord(room: room, startedAtMs: try row.int64("started_at_ms"),
                           endedAtMs: try row.int64("ended_at_ms"), lengthSeconds: try row.int("length_seconds"),
                           participants: [])
    }

    /// The participant of such a row; nil for a session nobody was present for.
    public static func participant(from row: some StoreRow) throws(StoreError) -> FocusSessionRecord.Participant? {
        guard let member = try row.text("member_id") else { return nil }
        return .init(member: MemberID(member), name: try row.string("name"), task: try row.string("task"),
                     focusMs: try row.int64("focus_ms"))
    }

    /// The values of `StoreSchema.interruptionColumns`.
    public static func values(of interruption: InterruptionRecord) -> [ColumnValue] {
        [.text(interruption.room.rawValue), .text(interruption.member?.rawValue), .text(interruption.name),
         .integer(interruption.atMs)]
    }

    public static func interruption(from row: some StoreRow, room: RoomID) throws(StoreError) -> InterruptionRecord {
        InterruptionRecord(room: room, member: try row.text("member_id").map(MemberID.init),
                           name: try row.text("name"), atMs: try row.int64("at_ms"))
    }

    // MARK: Running totals

    /// The values of `StoreSchema.dayColumns` (with `ends`) or `quarterColumns`: one record's share of the
    /// bucket of `length` it falls in. Scope 0 is the room (name ''), 1 a member by name.
    public static func values(of delta: JournalTotals.Delta, in room: RoomID, length: Int64,
                              ends: Bool) -> [ColumnValue] {
        values(of: delta.bucket(of: length), in: room, ends: ends)
    }

    /// A totals row adding `bucket`'s numbers.
    static func values(of bucket: JournalTotals.Bucket, in room: RoomID, ends: Bool) -> [ColumnValue] {
        [.text(room.rawValue), .integer(bucket.name == nil ? 0 : 1), .text(bucket.name ?? ""),
         .integer(bucket.index), .integer(bucket.sessions), .integer(bucket.focusMs),
         .integer(bucket.interruptions)] + (ends ? [.integer(bucket.firstEndMs), .integer(bucket.lastEndMs)] : [])
    }

    /// A bucket of `journal_day` or `journal_quarter`, its day or quarter selected `AS bucket`.
    public static func bucket(from row: some StoreRow) throws(StoreError) -> JournalTotals.Bucket {
        JournalTotals.Bucket(
            name: try row.int("scope") == 0 ? nil : try row.string("name"), index: try row.int64("bucket"),
            sessions: try row.int("sessions"), focusMs: try row.int64("focus_ms"),
            interruptions: try row.int("interruptions"), firstEndMs: try row.integer("first_end_ms"),
            lastEndMs: try row.integer("last_end_ms"))
    }
}

extension RoomRunColumns {
    /// The columns of a `room` row.
    init(from row: some StoreRow) throws(StoreError) {
        self.init(
            alignedZone: try row.text("aligned_zone"), pendingAlignedZone: try row.text("pending_aligned_zone"),
            runSchedule: try row.integer("run_schedule"), runName: try row.text("run_name"),
            runLeft: try row.integer("run_left"), runDone: try row.integer("run_done"),
            runOwnFocusS: try row.integer("run_own_focus_s"), runOwnShortBreakS: try row.integer("run_own_short_break_s"),
            runOwnLongBreakS: try row.integer("run_own_long_break_s"),
            runOwnLongBreakEvery: try row.integer("run_own_long_break_every"),
            runOwnAutoStart: try row.boolean("run_own_auto_start"),
            runOwnAlignedZone: try row.text("run_own_aligned_zone"))
    }
}

extension Duration {
    /// Whole nanoseconds, the resolution the core credits focus time in.
    var storedNanoseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}
