import GRDB
import PomodoroCore

// Records to rows and back. Column names here match the migrations in SQLiteRoomStore+Schema.swift.

extension SQLiteRoomStore {
    private static let roomColumns = [
        "id", "focus_s", "short_break_s", "long_break_s", "long_break_every", "auto_start",
        "pending_focus_s", "pending_short_break_s", "pending_long_break_s", "pending_long_break_every",
        "pending_auto_start", "phase", "timer_kind", "timer_ms", "phase_length_ms", "cycle",
        "focus_completed", "focus_ns", "interruptions", "control_mode", "host", "next_member_number",
        "focus_started_at_ms", "focus_credited_until_ms", "seq", "passcode",
    ] + RoomRunColumns.columns
    private static let memberColumns = [
        "room_id", "id", "ord", "name", "token_sha256", "task", "away", "connected",
        "focus_completed", "focus_ns", "interruptions", "session_focus_ms", "credited_since_ms",
    ]
    private static let saveRoomSQL = upsert(into: "room", columns: roomColumns, key: ["id"])
    private static let saveMemberSQL = upsert(into: "member", columns: memberColumns, key: ["room_id", "id"])

    /// Insert, or update in place. (Not `INSERT OR REPLACE`: that deletes the old row first, and deleting
    /// a room's row cascades to its members.)
    private static func upsert(into table: String, columns: [String], key: [String]) -> String {
        let updates = columns.filter { !key.contains($0) }.map { "\($0) = excluded.\($0)" }
        return """
            INSERT INTO \(table) (\(columns.joined(separator: ", ")))
            VALUES (\(Array(repeating: "?", count: columns.count).joined(separator: ", ")))
            ON CONFLICT (\(key.joined(separator: ", "))) DO UPDATE SET \(updates.joined(separator: ", "))
            """
    }

    static func apply(_ change: StoreChange, in db: Database) throws {
        switch change {
        case let .saveRoom(room, passcode):
            try db.execute(sql: saveRoomSQL, arguments: StatementArguments(values(of: room, passcode: passcode)))
        case let .saveMember(room, member):
            try db.execute(sql: saveMemberSQL, arguments: StatementArguments(values(of: member, in: room)))
        case let .removeMember(room, member):
            try db.execute(sql: "DELETE FROM member WHERE room_id = ? AND id = ?",
                           arguments: [room.rawValue, member.rawValue])
        case let .focusCompleted(session):
            try db.execute(
                sql: """
                    INSERT INTO focus_session (room_id, started_at_ms, ended_at_ms, length_seconds)
                    VALUES (?, ?, ?, ?)
                    """,
                arguments: [session.room.rawValue, session.startedAtMs, session.endedAtMs, session.lengthSeconds])
            let id = db.lastInsertedRowID
            for (ord, participant) in session.participants.enumerated() {
                try db.execute(
                    sql: """
                        INSERT INTO session_member (session_id, ord, member_id, name, task, focus_ms)
                        VALUES (?, ?, ?, ?, ?, ?)
                        """,
                    arguments: [id, ord, participant.member.rawValue, participant.name, participant.task,
                                participant.focusMs])
            }
            for delta in JournalTotals.deltas(of: session) { try addTotals(delta, room: session.room, in: db) }
            try countJournalRows(room: session.room, sessions: 1, interruptions: 0, in: db)
        case let .interrupted(interruption):
            try db.execute(sql: "INSERT INTO interruption (room_id, member_id, name, at_ms) VALUES (?, ?, ?, ?)",
                           arguments: [interruption.room.rawValue, interruption.member?.rawValue,
                                       interruption.name, interruption.atMs])
            if let delta = JournalTotals.delta(of: interruption) { try addTotals(delta, room: interruption.room, in: db) }
            try countJournalRows(room: interruption.room, sessions: 0, interruptions: 1, in: db)
        case let .saveSchedules(room, schedules):
            try db.execute(sql: "DELETE FROM schedule WHERE room_id = ?", arguments: [room.rawValue])
            for schedule in schedules {
                try db.execute(sql: insertScheduleSQL,
                               arguments: StatementArguments(values(of: ScheduleRow(schedule), in: room)))
            }
        case let .saveBans(room, bans):
            try db.execute(sql: "DELETE FROM room_ban WHERE room_id = ?", arguments: [room.rawValue])
            for (ord, ban) in bans.enumerated() {
                try db.execute(sql: """
                    INSERT INTO room_ban (room_id, ord, name_key, token_sha256, until_ms) VALUES (?, ?, ?, ?, ?)
                    """, arguments: [room.rawValue, ord, ban.nameKey, ban.tokenHash, ban.untilMs])
            }
        }
    }

    // MARK: Bans

    static func ban(from row: Row) throws -> BanRecord {
        BanRecord(nameKey: try row.decode(forColumn: "name_key"), tokenHash: try row.decode(forColumn: "token_sha256"),
                  untilMs: try row.decode(forColumn: "until_ms"))
    }

    // MARK: Schedules

    private static let insertScheduleSQL = """
        INSERT INTO schedule (room_id, \(ScheduleRow.columns.joined(separator: ", ")))
        VALUES (\(Array(repeating: "?", count: ScheduleRow.columns.count + 1).joined(separator: ", ")))
        """

    private static func values(of r: ScheduleRow, in room: RoomID) -> [(any DatabaseValueConvertible)?] {
        [room.rawValue, r.number, r.name, r.time, r.zone, r.date, r.weekdays, r.focusS, r.shortBreakS, r.longBreakS,
         r.longBreakEvery, r.autoStart, r.sessions, r.warningMinutes, r.enabled, r.sinceMs, r.handledThroughMs,
         r.missed]
    }

    static func scheduleRow(_ row: Row) throws -> ScheduleRow {
        ScheduleRow(number: try row.decode(forColumn: "id"), name: try row.decode(forColumn: "name"),
                    time: try row.decode(forColumn: "time"), zone: try row.decode(forColumn: "zone"),
                    date: try row.decode(forColumn: "date"), weekdays: try row.decode(forColumn: "weekdays"),
                    focusS: try row.decode(forColumn: "focus_s"), shortBreakS: try row.decode(forColumn: "short_break_s"),
                    longBreakS: try row.decode(forColumn: "long_break_s"),
                    longBreakEvery: try row.decode(forColumn: "long_break_every"),
                    autoStart: try row.decode(forColumn: "auto_start"), sessions: try row.decode(forColumn: "sessions"),
                    warningMinutes: try row.decode(forColumn: "warning_min"), enabled: try row.decode(forColumn: "enabled"),
                    sinceMs: try row.decode(forColumn: "since_ms"),
                    handledThroughMs: try row.decode(forColumn: "handled_through_ms"),
                    missed: try row.decode(forColumn: "missed"))
    }

    // MARK: Running totals

    private static let addDaySQL = """
        INSERT INTO journal_day (room_id, scope, name, day, sessions, focus_ms, interruptions, first_end_ms,
                                 last_end_ms)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
        ON CONFLICT (room_id, day, scope, name) DO UPDATE SET
            sessions = sessions + excluded.sessions, focus_ms = focus_ms + excluded.focus_ms,
            interruptions = interruptions + excluded.interruptions,
            first_end_ms = min(coalesce(first_end_ms, excluded.first_end_ms), coalesce(excluded.first_end_ms, first_end_ms)),
            last_end_ms = max(coalesce(last_end_ms, excluded.last_end_ms), coalesce(excluded.last_end_ms, last_end_ms))
        """
    private static let addQuarterSQL = """
        INSERT INTO journal_quarter (room_id, scope, name, quarter, sessions, focus_ms, interruptions)
        VALUES (?, ?, ?, ?, ?, ?, ?)
        ON CONFLICT (room_id, quarter, scope, name) DO UPDATE SET
            sessions = sessions + excluded.sessions, focus_ms = focus_ms + excluded.focus_ms,
            interruptions = interruptions + excluded.interruptions
        """

    /// Adds one record's share to the day and quarter it falls in, in the transaction that writes it.
    private static func addTotals(_ delta: JournalTotals.Delta, room: RoomID, in db: Database) throws {
        let scope = delta.name == nil ? 0 : 1
        let day = delta.bucket(of: JournalTotals.dayMs)
        try db.execute(sql: addDaySQL, arguments: [room.rawValue, scope, delta.name ?? "", day.index, day.sessions,
                                                   day.focusMs, day.interruptions, day.firstEndMs, day.lastEndMs])
        let quarter = delta.bucket(of: JournalTotals.quarterMs)
        try db.execute(sql: addQuarterSQL, arguments: [room.rawValue, scope, delta.name ?? "", quarter.index,
                                                       quarter.sessions, quarter.focusMs, quarter.interruptions])
    }

    private static func countJournalRows(room: RoomID, sessions: Int, interruptions: Int, in db: Database) throws {
        try db.execute(sql: """
            INSERT INTO journal_size (room_id, sessions, interruptions) VALUES (?, ?, ?)
            ON CONFLICT (room_id) DO UPDATE SET sessions = sessions + excluded.sessions,
                interruptions = interruptions + excluded.interruptions
            """, arguments: [room.rawValue, sessions, interruptions])
    }

    static func bucket(from row: Row) throws -> JournalTotals.Bucket {
        let scope: Int = try row.decode(forColumn: "scope")
        return JournalTotals.Bucket(
            name: scope == 0 ? nil : try row.decode(String.self, forColumn: "name"),
            index: try row.decode(forColumn: "bucket"), sessions: try row.decode(forColumn: "sessions"),
            focusMs: try row.decode(forColumn: "focus_ms"), interruptions: try row.decode(forColumn: "interruptions"),
            firstEndMs: try row.decode(forColumn: "first_end_ms"), lastEndMs: try row.decode(forColumn: "last_end_ms"))
    }

    // MARK: Retention

    /// Deletes, oldest first and at most `JournalRetention.batch` of each kind, the room's journal rows
    /// that are older than the retention's age at `nowMs` or past its per-room cap. Running totals stay.
    /// Returns how many rows it deleted.
    @discardableResult
    static func prune(room: RoomID, nowMs: Int64, retention: JournalRetention, in db: Database) throws -> Int {
        var total = 0
        let tables = [(table: "focus_session", time: "ended_at_ms", count: "sessions"),
                      (table: "interruption", time: "at_ms", count: "interruptions")]
        for (table, time, count) in tables {
            var excess = 0
            if let cap = retention.maxRowsPerRoom {
                let rows = try Int.fetchOne(db, sql: "SELECT \(count) FROM journal_size WHERE room_id = ?",
                                            arguments: [room.rawValue]) ?? 0
                excess = max(0, rows - cap)
            }
            var deleted = 0
            if excess > 0 {
                try db.execute(sql: """
                    DELETE FROM \(table) WHERE id IN (SELECT id FROM \(table) WHERE room_id = ?
                                                     ORDER BY \(time), id LIMIT ?)
                    """, arguments: [room.rawValue, min(excess, JournalRetention.batch)])
                deleted += db.changesCount
            }
            if let days = retention.maxAgeDays {
                try db.execute(sql: """
                    DELETE FROM \(table) WHERE id IN (SELECT id FROM \(table) WHERE room_id = ? AND \(time) < ?
                                                     ORDER BY \(time), id LIMIT ?)
                    """, arguments: [room.rawValue, nowMs - Int64(days) * JournalTotals.dayMs, JournalRetention.batch])
                deleted += db.changesCount
            }
            if deleted > 0 {
                try db.execute(sql: "UPDATE journal_size SET \(count) = \(count) - ? WHERE room_id = ?",
                               arguments: [deleted, room.rawValue])
            }
            total += deleted
        }
        return total
    }

    // MARK: Rooms

    private static func values(of room: RoomRecord, passcode: String?) -> [(any DatabaseValueConvertible)?] {
        let pending = room.pendingSettings
        let (timerKind, timerMs): (String, Int64?) = switch room.timer {
        case .idle: ("idle", nil)
        case .ready(let remainingMs): ("ready", remainingMs)
        case .running(let endsAtMs): ("running", endsAtMs)
        case .paused(let remainingMs): ("paused", remainingMs)
        }
        return [
            room.id.rawValue, room.settings.focus, room.settings.shortBreak, room.settings.longBreak,
            room.settings.longBreakEvery, room.settings.autoStart,
            pending?.focus, pending?.shortBreak, pending?.longBreak, pending?.longBreakEvery, pending?.autoStart,
            room.phase.rawValue, timerKind, timerMs, room.phaseLengthMs, room.cycle,
            room.stats.focusSessions, room.stats.focusTime.storedNanoseconds, room.stats.interruptions,
            room.controlMode.rawValue, room.host?.rawValue, room.nextMemberNumber,
            room.focusStartedAtMs, room.focusCreditedUntilMs, Int64(bitPattern: room.seq), passcode,
        ] + RoomRunColumns(room).values.map { value -> (any DatabaseValueConvertible)? in
            switch value {
            case .text(let text): text
            case .integer(let number): number
            case .boolean(let flag): flag
            }
        }
    }

    static func room(from row: Row) throws -> RoomRecord {
        let raw: String = try row.decode(forColumn: "id")
        let id: RoomID
        do { id = try RoomID(validating: raw) } catch {
            throw StoreError("a stored room id is not valid: \(raw.debugDescription)")
        }
        let settings = RoomSettings(
            focus: try row.decode(forColumn: "focus_s"), shortBreak: try row.decode(forColumn: "short_break_s"),
            longBreak: try row.decode(forColumn: "long_break_s"),
            longBreakEvery: try row.decode(forColumn: "long_break_every"),
            autoStart: try row.decode(forColumn: "auto_start"))
        var pending: RoomSettings?
        if let focus: Int = try row.decode(forColumn: "pending_focus_s") {
            pending = RoomSettings(
                focus: focus, shortBreak: try row.decode(forColumn: "pending_short_break_s"),
                longBreak: try row.decode(forColumn: "pending_long_break_s"),
                longBreakEvery: try row.decode(forColumn: "pending_long_break_every"),
                autoStart: try row.decode(forColumn: "pending_auto_start"))
        }
        let phaseName: String = try row.decode(forColumn: "phase")
        guard let phase = Phase(rawValue: phaseName) else {
            throw StoreError("room \(id): unknown phase \(phaseName.debugDescription)")
        }
        let modeName: String = try row.decode(forColumn: "control_mode")
        guard let controlMode = ControlMode(rawValue: modeName) else {
            throw StoreError("room \(id): unknown control mode \(modeName.debugDescription)")
        }
        let timerKind: String = try row.decode(forColumn: "timer_kind")
        let timerMs: Int64? = try row.decode(forColumn: "timer_ms")
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
        let host: String? = try row.decode(forColumn: "host")
        var record = RoomRecord(
            id: id, settings: settings, pendingSettings: pending, phase: phase, timer: timer,
            phaseLengthMs: try row.decode(forColumn: "phase_length_ms"), cycle: try row.decode(forColumn: "cycle"),
            stats: try stats(from: row), controlMode: controlMode, host: host.map(MemberID.init),
            nextMemberNumber: try row.decode(forColumn: "next_member_number"),
            focusStartedAtMs: try row.decode(forColumn: "focus_started_at_ms"),
            focusCreditedUntilMs: try row.decode(forColumn: "focus_credited_until_ms"),
            seq: UInt64(bitPattern: try row.decode(Int64.self, forColumn: "seq")))
        let run = RoomRunColumns(
            alignedZone: try row.decode(forColumn: "aligned_zone"),
            pendingAlignedZone: try row.decode(forColumn: "pending_aligned_zone"),
            runSchedule: try row.decode(forColumn: "run_schedule"), runName: try row.decode(forColumn: "run_name"),
            runLeft: try row.decode(forColumn: "run_left"), runDone: try row.decode(forColumn: "run_done"),
            runOwnFocusS: try row.decode(forColumn: "run_own_focus_s"),
            runOwnShortBreakS: try row.decode(forColumn: "run_own_short_break_s"),
            runOwnLongBreakS: try row.decode(forColumn: "run_own_long_break_s"),
            runOwnLongBreakEvery: try row.decode(forColumn: "run_own_long_break_every"),
            runOwnAutoStart: try row.decode(forColumn: "run_own_auto_start"),
            runOwnAlignedZone: try row.decode(forColumn: "run_own_aligned_zone"))
        try run.apply(to: &record)
        return record
    }

    // MARK: Members

    private static func values(of member: MemberRecord, in room: RoomID) -> [(any DatabaseValueConvertible)?] {
        [
            room.rawValue, member.id.rawValue, member.joinOrder, member.name, member.tokenHash, member.task,
            member.away, member.connected, member.stats.focusSessions, member.stats.focusTime.storedNanoseconds,
            member.stats.interruptions, member.sessionFocusMs, member.creditedSinceMs,
        ]
    }

    static func member(from row: Row) throws -> MemberRecord {
        MemberRecord(
            id: MemberID(try row.decode(String.self, forColumn: "id")), joinOrder: try row.decode(forColumn: "ord"),
            name: try row.decode(forColumn: "name"), tokenHash: try row.decode(forColumn: "token_sha256"),
            task: try row.decode(forColumn: "task"), away: try row.decode(forColumn: "away"),
            connected: try row.decode(forColumn: "connected"), stats: try stats(from: row),
            sessionFocusMs: try row.decode(forColumn: "session_focus_ms"),
            creditedSinceMs: try row.decode(forColumn: "credited_since_ms"))
    }

    /// The stats columns, named alike in `room` and `member`.
    private static func stats(from row: Row) throws -> FocusStats {
        FocusStats(focusSessions: try row.decode(forColumn: "focus_completed"),
                   focusTime: .nanoseconds(try row.decode(Int64.self, forColumn: "focus_ns")),
                   interruptions: try row.decode(forColumn: "interruptions"))
    }
}

extension Duration {
    /// Whole nanoseconds, the resolution the core credits focus time in.
    var storedNanoseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}
