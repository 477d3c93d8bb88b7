import PomodoroCore

/// A SQL store's connection inside one write transaction, as the shared writing steps use it: the store
/// binds `ColumnValue`s its own way and reports what its database reports.
public protocol SQLWriting {
    associatedtype Failure: Error
    var statements: SQLStatements { get }
    /// Runs one statement with `values` bound in order; returns the rows it inserted, changed or deleted.
    @discardableResult
    func run(_ sql: String, _ values: [ColumnValue]) throws(Failure) -> Int
    /// Runs an `INSERT` of one row into a table with an `id` column; returns the new row's id.
    func insertReturningID(_ sql: String, _ values: [ColumnValue]) throws(Failure) -> Int64
    /// The first column of the first row `sql` returns, as an integer; nil without a row.
    func integer(_ sql: String, _ values: [ColumnValue]) throws(Failure) -> Int64?
    /// Runs one statement whose answer the caller does not need. A store may hold it and send it later with
    /// others (one round trip for many), provided the statements run in the order given, before anything
    /// whose answer is read, and that a failure fails the transaction. By default it is `run` at once.
    func send(_ sql: String, _ values: [ColumnValue]) throws(Failure)
}

extension SQLWriting {
    public func send(_ sql: String, _ values: [ColumnValue]) throws(Failure) {
        try run(sql, values)
    }
}

extension SQLWriting {
    /// Makes `changes` in order, then applies `retention` to the journal of each room they wrote to, at the
    /// latest moment written there. The caller holds the transaction.
    ///
    /// Rows of one kind go in multi-row statements (`RowsStatement`): a run of members saved one after the
    /// other, a session's participants, and the running totals and journal counts of the whole batch, merged
    /// and written at its end (in the same transaction, so nobody sees the journal without them).
    public func apply(_ changes: [StoreChange], retention: JournalRetention) throws(Failure) {
        var written: [RoomID: Int64] = [:]
        var totals = PendingTotals()
        var members = MemberRun()
        for change in changes {
            if case let .saveMember(room, member) = change {
                if !members.add(member, of: room) {
                    try send(rows: members.take(), with: statements.saveMembers)
                    _ = members.add(member, of: room)
                }
                continue
            }
            try send(rows: members.take(), with: statements.saveMembers)
            try apply(change, totals: &totals)
            switch change {
            case .focusCompleted(let session): written[session.room] = max(written[session.room] ?? .min, session.endedAtMs)
            case .interrupted(let interruption): written[interruption.room] = max(written[interruption.room] ?? .min, interruption.atMs)
            default: break
            }
        }
        try send(rows: members.take(), with: statements.saveMembers)
        for (table, statement) in statements.addTotals.enumerated() {
            try send(rows: totals.rows(ofTable: table), with: statement)
        }
        try send(rows: totals.countRows, with: statements.countJournalRows)
        guard retention != .keepEverything, !written.isEmpty else { return }
        // Without an age limit only the cap deletes: one look at the rooms' row counts says whether any of
        // them is over it (nearly always none), instead of one per room.
        if retention.maxAgeDays == nil, let cap = retention.maxRowsPerRoom,
           try !anyOverCap(Array(written.keys), cap: cap) { return }
        for (room, nowMs) in written { try prune(room: room, nowMs: nowMs, retention: retention) }
    }

    /// Whether any of `rooms` keeps more than `cap` sessions or interruptions.
    private func anyOverCap(_ rooms: [RoomID], cap: Int) throws(Failure) -> Bool {
        let p = statements.dialect.parameter
        var start = 0
        while start < rooms.count {
            let chunk = rooms[start..<min(start + 500, rooms.count)]
            let over = try integer("""
                SELECT COUNT(*) FROM journal_size WHERE room_id IN (\((1...chunk.count).map(p).joined(separator: ", ")))
                AND (sessions > \(p(chunk.count + 1)) OR interruptions > \(p(chunk.count + 2)))
                """, chunk.map { .text($0.rawValue) } + [.integer(cap), .integer(cap)])
            if (over ?? 0) > 0 { return true }
            start += chunk.count
        }
        return false
    }

    /// Makes one change; what it adds to the running totals and journal counts goes into `totals`.
    private func apply(_ change: StoreChange, totals: inout PendingTotals) throws(Failure) {
        let s = statements
        switch change {
        case let .saveRoom(room, passcode):
            try send(s.saveRoom, RowCodec.values(of: room, passcode: passcode))
        case let .saveMember(room, member):
            try send(s.saveMember, RowCodec.values(of: member, in: room))
        case let .removeMember(room, member):
            try send(s.removeMember, [.text(room.rawValue), .text(member.rawValue)])
        case let .focusCompleted(session):
            let id = try insertReturningID(s.insertSession, RowCodec.values(of: session))
            try send(rows: session.participants.enumerated().map { ord, participant in
                RowCodec.values(of: participant, at: ord, session: id)
            }, with: s.insertParticipants)
            for delta in JournalTotals.deltas(of: session) { totals.add(delta, room: session.room) }
            totals.count(room: session.room, sessions: 1, interruptions: 0)
        case let .interrupted(interruption):
            try send(s.insertInterruption, RowCodec.values(of: interruption))
            if let delta = JournalTotals.delta(of: interruption) { totals.add(delta, room: interruption.room) }
            totals.count(room: interruption.room, sessions: 0, interruptions: 1)
        case let .saveSchedules(room, schedules):
            try send(s.deleteSchedules, [.text(room.rawValue)])
            for schedule in schedules { try send(s.insertSchedule, RowCodec.values(of: schedule, in: room)) }
        case let .saveBans(room, bans):
            try send(s.deleteBans, [.text(room.rawValue)])
            for (ord, ban) in bans.enumerated() { try send(s.insertBan, RowCodec.values(of: ban, at: ord, in: room)) }
        case let .saveAPITokens(room, tokens):
            try send(s.deleteAPITokens, [.text(room.rawValue)])
            for token in tokens { try send(s.insertAPIToken, RowCodec.values(of: token, in: room)) }
        case let .webhook(change):
            try apply(change)
        }
    }

    /// Sends `rows` (each one row's values) with `statement`, at most `RowsStatement.maxRows` to a statement.
    private func send(rows: [[ColumnValue]], with statement: RowsStatement) throws(Failure) {
        var start = 0
        while start < rows.count {
            let chunk = rows[start..<min(start + RowsStatement.maxRows, rows.count)]
            try send(statement.text(rows: chunk.count), chunk.flatMap { $0 })
            start += chunk.count
        }
    }

    /// Deletes, oldest first and at most `JournalRetention.batch` of each kind, the room's journal rows that
    /// are older than the retention's age at `nowMs` or past its per-room cap; running totals stay. Returns
    /// how many rows it deleted.
    @discardableResult
    public func prune(room: RoomID, nowMs: Int64, retention: JournalRetention) throws(Failure) -> Int {
        let p = statements.dialect.parameter, id = ColumnValue.text(room.rawValue)
        var total = 0
        for (table, time, count) in StoreSchema.journalTables {
            var excess = 0
            if let cap = retention.maxRowsPerRoom {
                let rows = try integer("SELECT \(count) FROM journal_size WHERE room_id = \(p(1))", [id]) ?? 0
                excess = max(0, Int(rows) - cap)
            }
            var deleted = 0
            if excess > 0 {
                deleted += try run("""
                    DELETE FROM \(table) WHERE id IN (SELECT id FROM \(table) WHERE room_id = \(p(1))
                                                     ORDER BY \(time), id LIMIT \(p(2)))
                    """, [id, .integer(min(excess, JournalRetention.batch))])
            }
            if let days = retention.maxAgeDays {
                deleted += try run("""
                    DELETE FROM \(table) WHERE id IN (SELECT id FROM \(table) WHERE room_id = \(p(1)) AND \(time) < \(p(2))
                                                     ORDER BY \(time), id LIMIT \(p(3)))
                    """, [id, .integer(nowMs - Int64(days) * JournalTotals.dayMs), .integer(JournalRetention.batch)])
            }
            if deleted > 0 {
                try run("UPDATE journal_size SET \(count) = \(count) - \(p(1)) WHERE room_id = \(p(2))",
                        [.integer(deleted), id])
            }
            total += deleted
        }
        return total
    }
}

/// Sessions from the rows of `SQLStatements.sessions` as they come (one per participant), up to a page's
/// end: at most `limit` sessions, ending once they reach about `maxBytes` (see `HistoryPage`). Without
/// bounds it takes every row.
public struct SessionRows {
    public let room: RoomID
    public let limit: Int
    public let maxBytes: Int
    public private(set) var sessions: [FocusSessionRecord] = []
    private var bytes = 0
    private var lastID: Int64?

    public init(room: RoomID, limit: Int = .max, maxBytes: Int = .max) {
        self.room = room
        self.limit = limit
        self.maxBytes = maxBytes
    }

    /// Takes one row; returns the page once a row shows it is complete (it does not take that row).
    public mutating func add(_ row: some StoreRow) throws(StoreError) -> HistoryPage? {
        let id = try row.int64("id")
        if id != lastID {
            // A new session: the one before it is complete and counted.
            if let previous = sessions.last { bytes += HistoryPage.estimatedBytes(of: previous) }
            if sessions.count == limit || bytes >= maxBytes { return HistoryPage(sessions: sessions, more: true) }
            lastID = id
            sessions.append(try RowCodec.session(from: row, room: room))
        }
        if let participant = try RowCodec.participant(from: row) {
            sessions[sessions.count - 1].participants.append(participant)
        }
        return nil
    }

    /// The sessions of `rows`, each with its participants, in the rows' order.
    public static func all(_ rows: some Sequence<some StoreRow>, room: RoomID) throws(StoreError) -> [FocusSessionRecord] {
        var assembler = SessionRows(room: room)
        for row in rows { _ = try assembler.add(row) }
        return assembler.sessions
    }
}

/// Members saved one after the other, for one multi-row upsert: each member once (a member saved again
/// ends the run, so that the later row is written after the earlier one).
private struct MemberRun {
    private var rows: [[ColumnValue]] = []
    private var members: Set<[String]> = []

    /// Adds the member's row; false, adding nothing, when the run has that member already.
    mutating func add(_ member: MemberRecord, of room: RoomID) -> Bool {
        guard members.insert([room.rawValue, member.id.rawValue]).inserted else { return false }
        rows.append(RowCodec.values(of: member, in: room))
        return true
    }

    /// The run's rows; the run starts anew.
    mutating func take() -> [[ColumnValue]] {
        defer { rows.removeAll(); members.removeAll() }
        return rows
    }
}
