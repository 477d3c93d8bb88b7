import PomodoroCore

/// Every statement the SQL stores run on their tables (besides migrations), written once for a dialect:
/// each store makes one `SQLStatements` and binds `RowCodec`'s values to them.
public struct SQLStatements: Sendable {
    public let dialect: SQLDialect
    public let saveRoom: String
    public let saveMember: String
    public let removeMember: String
    public let insertSession: String
    /// A session's participants, any number of rows.
    public let insertParticipants: RowsStatement
    public let insertInterruption: String
    public let deleteSchedules: String
    public let insertSchedule: String
    public let deleteBans: String
    public let insertBan: String
    public let deleteAPITokens: String
    public let insertAPIToken: String
    /// Members saved, any number of rows (each member once in a statement).
    public let saveMembers: RowsStatement
    /// Adds to `journal_day` and `journal_quarter` (in `StoreSchema.totalsTables`' order), one row per bucket
    /// (each bucket once in a statement).
    public let addTotals: [RowsStatement]
    /// Adds to `journal_size`, one row per room (each room once in a statement).
    public let countJournalRows: RowsStatement

    public init(_ dialect: SQLDialect) {
        self.dialect = dialect
        let p = dialect.parameter
        saveRoom = Self.upsert(into: "room", columns: StoreSchema.roomColumns, key: ["id"], dialect)
        saveMember = Self.upsert(into: "member", columns: StoreSchema.memberColumns, key: ["room_id", "id"], dialect)
        saveMembers = RowsStatement(into: "member", columns: StoreSchema.memberColumns,
                                    tail: Self.onConflict(columns: StoreSchema.memberColumns, key: ["room_id", "id"]), dialect)
        removeMember = "DELETE FROM member WHERE room_id = \(p(1)) AND id = \(p(2))"
        insertSession = Self.insert(into: "focus_session", columns: StoreSchema.sessionColumns, dialect)
        insertParticipants = RowsStatement(into: "session_member", columns: StoreSchema.participantColumns, dialect)
        insertInterruption = Self.insert(into: "interruption", columns: StoreSchema.interruptionColumns, dialect)
        deleteSchedules = "DELETE FROM schedule WHERE room_id = \(p(1))"
        insertSchedule = Self.insert(into: "schedule", columns: StoreSchema.scheduleColumns, dialect)
        deleteBans = "DELETE FROM room_ban WHERE room_id = \(p(1))"
        insertBan = Self.insert(into: "room_ban", columns: StoreSchema.banColumns, dialect)
        deleteAPITokens = "DELETE FROM api_token WHERE room_id = \(p(1))"
        insertAPIToken = Self.insert(into: "api_token", columns: StoreSchema.apiTokenColumns, dialect)
        addTotals = StoreSchema.totalsTables.map { table, bucket, _, ends in
            let add = ["sessions", "focus_ms", "interruptions"].map { "\($0) = \(table).\($0) + excluded.\($0)" }
            let endUpdates = ends ? [
                "first_end_ms = \(dialect.least("\(table).first_end_ms", "excluded.first_end_ms"))",
                "last_end_ms = \(dialect.greatest("\(table).last_end_ms", "excluded.last_end_ms"))",
            ] : []
            return RowsStatement(into: table, columns: StoreSchema.totalsColumns(bucket: bucket, ends: ends),
                                 tail: "\nON CONFLICT (room_id, \(bucket), scope, name) DO UPDATE SET "
                                     + (add + endUpdates).joined(separator: ", "), dialect)
        }
        countJournalRows = RowsStatement(
            into: "journal_size", columns: ["room_id", "sessions", "interruptions"],
            tail: "\nON CONFLICT (room_id) DO UPDATE SET sessions = journal_size.sessions + excluded.sessions, "
                + "interruptions = journal_size.interruptions + excluded.interruptions", dialect)
    }

    static func insert(into table: String, columns: [String], _ dialect: SQLDialect) -> String {
        "INSERT INTO \(table) (\(columns.joined(separator: ", "))) VALUES (\(dialect.parameters(columns.count)))"
    }

    /// Insert, or update in place. (Not a delete and insert: deleting a room's row cascades to its members.)
    static func upsert(into table: String, columns: [String], key: [String], _ dialect: SQLDialect) -> String {
        insert(into: table, columns: columns, dialect) + onConflict(columns: columns, key: key)
    }

    /// The clause that makes an insert of `columns` an upsert on `key`.
    static func onConflict(columns: [String], key: [String]) -> String {
        let updates = columns.filter { !key.contains($0) }.map { "\($0) = excluded.\($0)" }
        return "\nON CONFLICT (\(key.joined(separator: ", "))) DO UPDATE SET \(updates.joined(separator: ", "))"
    }

    // MARK: Reads

    /// A statement and the values of its parameters.
    public struct Query: Sendable {
        public var sql: String
        public var values: [ColumnValue]
    }

    /// The tables a stored room is loaded from.
    public enum RoomTable: String, Sendable {
        case room
        case member
        case ban = "room_ban"
        case apiToken = "api_token"
    }

    /// Every room, member or ban, or those of one room, in the order a store loads them: rooms by id,
    /// members by join order, bans by their order.
    public func load(_ table: RoomTable, room: RoomID?) -> Query {
        let c = dialect.byteOrder
        let order = switch table {
        case .room: "id\(c)"
        case .member: "ord, id\(c)"
        case .ban: "ord"
        case .apiToken: "created_at_ms, id\(c)"
        }
        guard let room else {
            return Query(sql: "SELECT * FROM \(table.rawValue) ORDER BY \(table == .room ? "" : "room_id\(c), ")\(order)",
                         values: [])
        }
        let key = table == .room ? "id" : "room_id"
        return Query(sql: "SELECT * FROM \(table.rawValue) WHERE \(key) = \(dialect.parameter(1))"
                        + (table == .room ? "" : " ORDER BY \(order)"), values: [.text(room.rawValue)])
    }

    /// Every room's schedules, by room then id, or one room's by id.
    public func schedules(room: RoomID?) -> Query {
        guard let room else { return Query(sql: "SELECT * FROM schedule ORDER BY room_id\(dialect.byteOrder), id", values: []) }
        return Query(sql: "SELECT * FROM schedule WHERE room_id = \(dialect.parameter(1)) ORDER BY id",
                     values: [.text(room.rawValue)])
    }

    /// The room's sessions that ended in `[from, before)`, the newest `limit` of them (all without), each
    /// with its participants: one row per participant, oldest session first (`newestFirst`: newest first).
    public func sessions(room: RoomID, from: Int64?, before: Int64?, limit: Int?, newestFirst: Bool = false) -> Query {
        var query = conditions(room: room, time: "ended_at_ms", from: from, before: before)
        query.values.append(limit.map { .integer(max($0, 0)) } ?? dialect.noLimit)
        let order = newestFirst ? " DESC" : ""
        query.sql = """
            SELECT s.id, s.started_at_ms, s.ended_at_ms, s.length_seconds,
                   p.member_id, p.name, p.task, p.focus_ms
            FROM (SELECT * FROM focus_session WHERE \(query.sql)
                  ORDER BY ended_at_ms DESC, id DESC LIMIT \(dialect.limit(query.values.count))) AS s
            LEFT JOIN session_member AS p ON p.session_id = s.id
            ORDER BY s.ended_at_ms\(order), s.id\(order), p.ord
            """
        return query
    }

    /// The room's interruptions in `[from, before)`, oldest first.
    public func interruptions(room: RoomID, from: Int64?, before: Int64?) -> Query {
        var query = conditions(room: room, time: "at_ms", from: from, before: before)
        query.sql = "SELECT member_id, name, at_ms FROM interruption WHERE \(query.sql)\nORDER BY at_ms, id"
        return query
    }

    /// `room_id = …` and the time bounds given, with their values.
    private func conditions(room: RoomID, time: String, from: Int64?, before: Int64?) -> Query {
        var query = Query(sql: "room_id = \(dialect.parameter(1))", values: [.text(room.rawValue)])
        for (bound, comparison) in [(from, ">="), (before, "<")] {
            guard let bound else { continue }
            query.values.append(.integer(bound))
            query.sql += " AND \(time) \(comparison) \(dialect.parameter(query.values.count))"
        }
        return query
    }

    /// The room's running totals per day, and per quarter in `quarters`, read alike (`bucket`, and NULL ends
    /// for quarters), by bucket, scope and name.
    public func totals(room: RoomID, quarters: Range<Int64>) -> (days: Query, quarters: Query) {
        let p = dialect.parameter, order = "scope, name\(dialect.byteOrder)"
        return (Query(sql: """
                    SELECT scope, name, day AS bucket, sessions, focus_ms, interruptions, first_end_ms, last_end_ms
                    FROM journal_day WHERE room_id = \(p(1)) ORDER BY day, \(order)
                    """, values: [.text(room.rawValue)]),
                Query(sql: """
                    SELECT scope, name, quarter AS bucket, sessions, focus_ms, interruptions,
                           NULL AS first_end_ms, NULL AS last_end_ms
                    FROM journal_quarter WHERE room_id = \(p(1)) AND quarter >= \(p(2)) AND quarter < \(p(3))
                    ORDER BY quarter, \(order)
                    """, values: [.text(room.rawValue), .integer(quarters.lowerBound), .integer(quarters.upperBound)]))
    }

    /// The rooms that have a journal, for the retention sweep.
    public var journalRooms: String { "SELECT room_id FROM journal_size ORDER BY room_id\(dialect.byteOrder)" }
}
