import PomodoroCore
import PomodoroStore

// Records to rows and back, in PostgreSQL's text format. Column names match PostgresRoomStore+Schema.swift
// (and SQLiteRoomStore's schema, which they mirror).

/// One row of a result, read by column name; a value that is missing or does not parse is a `StoreError`.
struct Row {
    let rows: PostgresRows
    let index: Int

    func text(_ column: String) throws(StoreError) -> String? {
        guard let position = rows.columns.firstIndex(of: column) else {
            throw StoreError("no column \(column) in the result")
        }
        return rows.values[index][position]
    }

    func string(_ column: String) throws(StoreError) -> String {
        guard let value = try text(column) else { throw StoreError("column \(column) is NULL") }
        return value
    }

    func int64(_ column: String) throws(StoreError) -> Int64? {
        guard let value = try text(column) else { return nil }
        guard let number = Int64(value) else { throw StoreError("column \(column) is not a number: \(value)") }
        return number
    }

    func int64(_ column: String) throws(StoreError) -> Int64 {
        guard let value: Int64 = try int64(column) else { throw StoreError("column \(column) is NULL") }
        return value
    }

    func int(_ column: String) throws(StoreError) -> Int? { try int64(column).map { Int($0) } }
    func int(_ column: String) throws(StoreError) -> Int { Int(try int64(column) as Int64) }

    func bool(_ column: String) throws(StoreError) -> Bool? {
        switch try text(column) {
        case nil: return nil
        case "t": return true
        case "f": return false
        case let value?: throw StoreError("column \(column) is not a boolean: \(value)")
        }
    }

    func bool(_ column: String) throws(StoreError) -> Bool {
        guard let value: Bool = try bool(column) else { throw StoreError("column \(column) is NULL") }
        return value
    }
}

extension PostgresRows {
    var rows: [Row] { (0..<count).map { Row(rows: self, index: $0) } }
}

extension PostgresRoomStore {
    /// The room row's columns up to schema v7; v8 adds `RoomRunColumns`. (Tests write an older server's
    /// rows with these.)
    static let roomColumnsBeforeV8 = [
        "id", "focus_s", "short_break_s", "long_break_s", "long_break_every", "auto_start",
        "pending_focus_s", "pending_short_break_s", "pending_long_break_s", "pending_long_break_every",
        "pending_auto_start", "phase", "timer_kind", "timer_ms", "phase_length_ms", "cycle",
        "focus_completed", "focus_ns", "interruptions", "control_mode", "host", "next_member_number",
        "focus_started_at_ms", "focus_credited_until_ms", "seq", "passcode",
    ]
    private static let roomColumns = roomColumnsBeforeV8 + RoomRunColumns.columns
    private static let memberColumns = [
        "room_id", "id", "ord", "name", "token_sha256", "task", "away", "connected",
        "focus_completed", "focus_ns", "interruptions", "session_focus_ms", "credited_since_ms",
    ]
    private static let saveRoomSQL = upsert(into: "room", columns: roomColumns, key: ["id"])
    private static let saveMemberSQL = upsert(into: "member", columns: memberColumns, key: ["room_id", "id"])

    /// Insert, or update in place (so a room's members stay).
    private static func upsert(into table: String, columns: [String], key: [String]) -> String {
        let updates = columns.filter { !key.contains($0) }.map { "\($0) = excluded.\($0)" }
        return """
            INSERT INTO \(table) (\(columns.joined(separator: ", ")))
            VALUES (\(columns.indices.map { "$\($0 + 1)" }.joined(separator: ", ")))
            ON CONFLICT (\(key.joined(separator: ", "))) DO UPDATE SET \(updates.joined(separator: ", "))
            """
    }

    static func apply(_ change: StoreChange, on connection: PostgresConnection) throws(PostgresError) {
        switch change {
        case let .saveRoom(room, passcode):
            try connection.query(saveRoomSQL, values(of: room, passcode: passcode))
        case let .saveMember(room, member):
            try connection.query(saveMemberSQL, values(of: member, in: room))
        case let .removeMember(room, member):
            try connection.query("DELETE FROM member WHERE room_id = $1 AND id = $2", [room.rawValue, member.rawValue])
        case let .focusCompleted(session):
            let inserted = try connection.query("""
                INSERT INTO focus_session (room_id, started_at_ms, ended_at_ms, length_seconds)
                VALUES ($1, $2, $3, $4) RETURNING id
                """, [session.room.rawValue, String(session.startedAtMs), String(session.endedAtMs),
                      String(session.lengthSeconds)])
            let id = inserted.values[0][0]
            for (ord, participant) in session.participants.enumerated() {
                try connection.query("""
                    INSERT INTO session_member (session_id, ord, member_id, name, task, focus_ms)
                    VALUES ($1, $2, $3, $4, $5, $6)
                    """, [id, String(ord), participant.member.rawValue, participant.name, participant.task,
                          String(participant.focusMs)])
            }
            for delta in JournalTotals.deltas(of: session) { try addTotals(delta, room: session.room, on: connection) }
            try countJournalRows(room: session.room, sessions: 1, interruptions: 0, on: connection)
        case let .interrupted(interruption):
            try connection.query("INSERT INTO interruption (room_id, member_id, name, at_ms) VALUES ($1, $2, $3, $4)",
                                 [interruption.room.rawValue, interruption.member?.rawValue, interruption.name,
                                  String(interruption.atMs)])
            if let delta = JournalTotals.delta(of: interruption) {
                try addTotals(delta, room: interruption.room, on: connection)
            }
            try countJournalRows(room: interruption.room, sessions: 0, interruptions: 1, on: connection)
        case let .saveSchedules(room, schedules):
            try connection.query("DELETE FROM schedule WHERE room_id = $1", [room.rawValue])
            for schedule in schedules {
                try connection.query(insertScheduleSQL, values(of: ScheduleRow(schedule), in: room))
            }
        case let .saveBans(room, bans):
            try connection.query("DELETE FROM room_ban WHERE room_id = $1", [room.rawValue])
            for (ord, ban) in bans.enumerated() {
                try connection.query("""
                    INSERT INTO room_ban (room_id, ord, name_key, token_sha256, until_ms) VALUES ($1, $2, $3, $4, $5)
                    """, [room.rawValue, String(ord), ban.nameKey, ban.tokenHash, String(ban.untilMs)])
            }
        }
    }

    // MARK: Bans

    static func ban(from row: Row) throws(StoreError) -> BanRecord {
        BanRecord(nameKey: try row.string("name_key"), tokenHash: try row.string("token_sha256"),
                  untilMs: try row.int64("until_ms"))
    }

    // MARK: Schedules

    private static let insertScheduleSQL = """
        INSERT INTO schedule (room_id, \(ScheduleRow.columns.joined(separator: ", ")))
        VALUES (\((0...ScheduleRow.columns.count).map { "$\($0 + 1)" }.joined(separator: ", ")))
        """

    private static func values(of r: ScheduleRow, in room: RoomID) -> [String?] {
        [room.rawValue, String(r.number), r.name, r.time, r.zone, r.date, r.weekdays, r.focusS.map { String($0) },
         r.shortBreakS.map { String($0) }, r.longBreakS.map { String($0) }, r.longBreakEvery.map { String($0) },
         r.autoStart.map { String($0) }, r.sessions.map { String($0) }, String(r.warningMinutes), String(r.enabled),
         String(r.sinceMs), String(r.handledThroughMs), String(r.missed)]
    }

    static func scheduleRow(_ row: Row) throws(StoreError) -> ScheduleRow {
        ScheduleRow(number: try row.int64("id"), name: try row.string("name"), time: try row.string("time"),
                    zone: try row.string("zone"), date: try row.text("date"), weekdays: try row.text("weekdays"),
                    focusS: try row.int64("focus_s"), shortBreakS: try row.int64("short_break_s"),
                    longBreakS: try row.int64("long_break_s"), longBreakEvery: try row.int64("long_break_every"),
                    autoStart: try row.bool("auto_start"), sessions: try row.int64("sessions"),
                    warningMinutes: try row.int64("warning_min"), enabled: try row.bool("enabled"),
                    sinceMs: try row.int64("since_ms"), handledThroughMs: try row.int64("handled_through_ms"),
                    missed: try row.int64("missed"))
    }

    // MARK: Running totals

    private static let addDaySQL = """
        INSERT INTO journal_day (room_id, scope, name, day, sessions, focus_ms, interruptions, first_end_ms,
                                 last_end_ms)
        VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
        ON CONFLICT (room_id, day, scope, name) DO UPDATE SET
            sessions = journal_day.sessions + excluded.sessions,
            focus_ms = journal_day.focus_ms + excluded.focus_ms,
            interruptions = journal_day.interruptions + excluded.interruptions,
            first_end_ms = LEAST(journal_day.first_end_ms, excluded.first_end_ms),
            last_end_ms = GREATEST(journal_day.last_end_ms, excluded.last_end_ms)
        """
    private static let addQuarterSQL = """
        INSERT INTO journal_quarter (room_id, scope, name, quarter, sessions, focus_ms, interruptions)
        VALUES ($1, $2, $3, $4, $5, $6, $7)
        ON CONFLICT (room_id, quarter, scope, name) DO UPDATE SET
            sessions = journal_quarter.sessions + excluded.sessions,
            focus_ms = journal_quarter.focus_ms + excluded.focus_ms,
            interruptions = journal_quarter.interruptions + excluded.interruptions
        """

    /// Adds one record's share to the day and quarter it falls in, in the transaction that writes it.
    /// (PostgreSQL's LEAST and GREATEST ignore NULLs, as the SQLite store's coalescing does.)
    private static func addTotals(_ delta: JournalTotals.Delta, room: RoomID,
                                  on connection: PostgresConnection) throws(PostgresError) {
        let scope = delta.name == nil ? "0" : "1"
        let end = delta.sessions > 0 ? String(delta.atMs) : nil
        try connection.query(addDaySQL, [room.rawValue, scope, delta.name ?? "",
                                         String(floorDivide(delta.atMs, JournalTotals.dayMs)), String(delta.sessions),
                                         String(delta.focusMs), String(delta.interruptions), end, end])
        try connection.query(addQuarterSQL, [room.rawValue, scope, delta.name ?? "",
                                             String(floorDivide(delta.atMs, JournalTotals.quarterMs)),
                                             String(delta.sessions), String(delta.focusMs), String(delta.interruptions)])
    }

    private static func floorDivide(_ value: Int64, _ divisor: Int64) -> Int64 {
        let quotient = value / divisor
        return value % divisor < 0 ? quotient - 1 : quotient
    }

    private static func countJournalRows(room: RoomID, sessions: Int, interruptions: Int,
                                         on connection: PostgresConnection) throws(PostgresError) {
        try connection.query("""
            INSERT INTO journal_size (room_id, sessions, interruptions) VALUES ($1, $2, $3)
            ON CONFLICT (room_id) DO UPDATE SET sessions = journal_size.sessions + excluded.sessions,
                interruptions = journal_size.interruptions + excluded.interruptions
            """, [room.rawValue, String(sessions), String(interruptions)])
    }

    static func bucket(from row: Row) throws(StoreError) -> JournalTotals.Bucket {
        let scope: Int = try row.int("scope")
        return JournalTotals.Bucket(
            name: scope == 0 ? nil : try row.string("name"), index: try row.int64("bucket"),
            sessions: try row.int("sessions"), focusMs: try row.int64("focus_ms"),
            interruptions: try row.int("interruptions"), firstEndMs: try row.int64("first_end_ms"),
            lastEndMs: try row.int64("last_end_ms"))
    }

    // MARK: Retention

    /// Deletes, oldest first and at most `JournalRetention.batch` of each kind, the room's journal rows that
    /// are older than the retention's age at `nowMs` or past its per-room cap; running totals stay. Returns
    /// how many rows it deleted. The same steps as `SQLiteRoomStore`'s, so both keep the same rows.
    @discardableResult
    static func prune(room: RoomID, nowMs: Int64, retention: JournalRetention,
                      on connection: PostgresConnection) throws(PostgresError) -> Int {
        var total = 0
        let tables = [(table: "focus_session", time: "ended_at_ms", count: "sessions"),
                      (table: "interruption", time: "at_ms", count: "interruptions")]
        for (table, time, count) in tables {
            var excess = 0
            if let cap = retention.maxRowsPerRoom {
                let size = try connection.query("SELECT \(count) FROM journal_size WHERE room_id = $1", [room.rawValue])
                let rows = size.count == 0 ? 0 : Int(size.values[0][0] ?? "0") ?? 0
                excess = max(0, rows - cap)
            }
            var deleted = 0
            if excess > 0 {
                deleted += try connection.query("""
                    DELETE FROM \(table) WHERE id IN (SELECT id FROM \(table) WHERE room_id = $1
                                                     ORDER BY \(time), id LIMIT $2)
                    """, [room.rawValue, String(min(excess, JournalRetention.batch))]).affected
            }
            if let days = retention.maxAgeDays {
                deleted += try connection.query("""
                    DELETE FROM \(table) WHERE id IN (SELECT id FROM \(table) WHERE room_id = $1 AND \(time) < $2
                                                     ORDER BY \(time), id LIMIT $3)
                    """, [room.rawValue, String(nowMs - Int64(days) * JournalTotals.dayMs),
                          String(JournalRetention.batch)]).affected
            }
            if deleted > 0 {
                try connection.query("UPDATE journal_size SET \(count) = \(count) - $1 WHERE room_id = $2",
                                     [String(deleted), room.rawValue])
            }
            total += deleted
        }
        return total
    }

    // MARK: Rooms

    private static func values(of room: RoomRecord, passcode: String?) -> [String?] {
        valuesBeforeV8(of: room, passcode: passcode) + RoomRunColumns(room).values.map { value -> String? in
            switch value {
            case .text(let text): text
            case .integer(let number): number.map { String($0) }
            case .boolean(let flag): flag.map { String($0) }
            }
        }
    }

    /// The values of `roomColumnsBeforeV8`.
    static func valuesBeforeV8(of room: RoomRecord, passcode: String?) -> [String?] {
        let pending = room.pendingSettings
        let (timerKind, timerMs): (String, Int64?) = switch room.timer {
        case .idle: ("idle", nil)
        case .ready(let remainingMs): ("ready", remainingMs)
        case .running(let endsAtMs): ("running", endsAtMs)
        case .paused(let remainingMs): ("paused", remainingMs)
        }
        return [
            room.id.rawValue, String(room.settings.focus), String(room.settings.shortBreak),
            String(room.settings.longBreak), String(room.settings.longBreakEvery), String(room.settings.autoStart),
            pending.map { String($0.focus) }, pending.map { String($0.shortBreak) },
            pending.map { String($0.longBreak) }, pending.map { String($0.longBreakEvery) },
            pending.map { String($0.autoStart) },
            room.phase.rawValue, timerKind, timerMs.map { String($0) }, String(room.phaseLengthMs), String(room.cycle),
            String(room.stats.focusSessions), String(storedNanoseconds(room.stats.focusTime)),
            String(room.stats.interruptions), room.controlMode.rawValue, room.host?.rawValue,
            String(room.nextMemberNumber), room.focusStartedAtMs.map { String($0) },
            room.focusCreditedUntilMs.map { String($0) }, String(Int64(bitPattern: room.seq)), passcode,
        ]
    }

    static func room(from row: Row) throws(StoreError) -> RoomRecord {
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
        if let focus: Int = try row.int("pending_focus_s") {
            pending = RoomSettings(
                focus: focus, shortBreak: try row.int("pending_short_break_s"),
                longBreak: try row.int("pending_long_break_s"),
                longBreakEvery: try row.int("pending_long_break_every"),
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
        let timerKind = try row.string("timer_kind")
        let timerMs: Int64? = try row.int64("timer_ms")
        let timer: StoredTimer
        switch (timerKind, timerMs) {
        case ("idle", nil): timer = .idle
        case ("ready", let ms?): timer = .ready(remainingMs: ms)
        case ("running", let ms?): timer = .running(endsAtMs: ms)
        case ("paused", let ms?): timer = .paused(remainingMs: ms)
        default:
            throw StoreError("room \(id): timer \(timerKind.debugDescription) with timer_ms "
                             + (timerMs.map(String.init) ?? "NULL"))
        }
        var record = RoomRecord(
            id: id, settings: settings, pendingSettings: pending, phase: phase, timer: timer,
            phaseLengthMs: try row.int64("phase_length_ms"), cycle: try row.int("cycle"),
            stats: try stats(from: row), controlMode: controlMode, host: try row.text("host").map(MemberID.init),
            nextMemberNumber: try row.int("next_member_number"),
            focusStartedAtMs: try row.int64("focus_started_at_ms"),
            focusCreditedUntilMs: try row.int64("focus_credited_until_ms"),
            seq: UInt64(bitPattern: try row.int64("seq")))
        let run = RoomRunColumns(
            alignedZone: try row.text("aligned_zone"), pendingAlignedZone: try row.text("pending_aligned_zone"),
            runSchedule: try row.int64("run_schedule"), runName: try row.text("run_name"),
            runLeft: try row.int64("run_left"), runDone: try row.int64("run_done"),
            runOwnFocusS: try row.int64("run_own_focus_s"), runOwnShortBreakS: try row.int64("run_own_short_break_s"),
            runOwnLongBreakS: try row.int64("run_own_long_break_s"),
            runOwnLongBreakEvery: try row.int64("run_own_long_break_every"),
            runOwnAutoStart: try row.bool("run_own_auto_start"), runOwnAlignedZone: try row.text("run_own_aligned_zone"))
        try run.apply(to: &record)
        return record
    }

    // MARK: Members

    private static func values(of member: MemberRecord, in room: RoomID) -> [String?] {
        [
            room.rawValue, member.id.rawValue, String(member.joinOrder), member.name, member.tokenHash, member.task,
            String(member.away), String(member.connected), String(member.stats.focusSessions),
            String(storedNanoseconds(member.stats.focusTime)), String(member.stats.interruptions),
            String(member.sessionFocusMs), member.creditedSinceMs.map { String($0) },
        ]
    }

    static func member(from row: Row) throws(StoreError) -> MemberRecord {
        MemberRecord(
            id: MemberID(try row.string("id")), joinOrder: try row.int("ord"), name: try row.string("name"),
            tokenHash: try row.string("token_sha256"), task: try row.string("task"), away: try row.bool("away"),
            connected: try row.bool("connected"), stats: try stats(from: row),
            sessionFocusMs: try row.int64("session_focus_ms"), creditedSinceMs: try row.int64("credited_since_ms"))
    }

    /// The stats columns, named alike in `room` and `member`.
    private static func stats(from row: Row) throws(StoreError) -> FocusStats {
        FocusStats(focusSessions: try row.int("focus_completed"), focusTime: .nanoseconds(try row.int64("focus_ns") as Int64),
                   interruptions: try row.int("interruptions"))
    }

    /// Whole nanoseconds, the resolution the core credits focus time in (as the SQLite store keeps it).
    private static func storedNanoseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }

    // MARK: Journal

    /// A session of a row of `focus_session` joined with `session_member`, without its participants.
    static func session(from row: Row, room: RoomID) throws(StoreError) -> FocusSessionRecord {
        FocusSessionRecord(room: room, startedAtMs: try row.int64("started_at_ms"),
                           endedAtMs: try row.int64("ended_at_ms"), lengthSeconds: try row.int("length_seconds"),
                           participants: [])
    }

    /// The participant of such a row; nil for a session nobody was present for.
    static func participant(from row: Row) throws(StoreError) -> FocusSessionRecord.Participant? {
        guard let member = try row.text("member_id") else { return nil }
        return .init(member: MemberID(member), name: try row.string("name"), task: try row.string("task"),
                     focusMs: try row.int64("focus_ms"))
    }

    /// Sessions from rows of `focus_session` joined with `session_member`, in the rows' order, each with
    /// its participants.
    static func sessions(from rows: PostgresRows, room: RoomID) throws(StoreError) -> [FocusSessionRecord] {
        var result: [FocusSessionRecord] = []
        var lastID: Int64?
        for row in rows.rows {
            let id: Int64 = try row.int64("id")
            if id != lastID {
                lastID = id
                result.append(try session(from: row, room: room))
            }
            if let participant = try participant(from: row) {
                result[result.count - 1].participants.append(participant)
            }
        }
        return result
    }
}
