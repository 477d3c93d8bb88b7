/// The tables both SQL stores keep, described once: their columns in the order `RowCodec` gives values,
/// and the statements that read and write them, written for a `SQLDialect`. The migrations that create the
/// tables stay with each store (types and DDL differ); the schema they build is the same under the same
/// versions.
public enum StoreSchema {
    /// The room row's columns up to schema v8, which adds `RoomRunColumns`.
    public static let roomColumnsBeforeV8 = [
        "id", "focus_s", "short_break_s", "long_break_s", "long_break_every", "auto_start",
        "pending_focus_s", "pending_short_break_s", "pending_long_break_s", "pending_long_break_every",
        "pending_auto_start", "phase", "timer_kind", "timer_ms", "phase_length_ms", "cycle",
        "focus_completed", "focus_ns", "interruptions", "control_mode", "host", "next_member_number",
        "focus_started_at_ms", "focus_credited_until_ms", "seq", "passcode",
    ]
    public static let roomColumns = roomColumnsBeforeV8 + RoomRunColumns.columns
    public static let memberColumns = [
        "room_id", "id", "ord", "name", "token_sha256", "task", "away", "connected",
        "focus_completed", "focus_ns", "interruptions", "session_focus_ms", "credited_since_ms",
    ]
    public static let banColumns = ["room_id", "ord", "name_key", "token_sha256", "until_ms"]
    public static let scheduleColumns = ["room_id"] + ScheduleRow.columns
    public static let sessionColumns = ["room_id", "started_at_ms", "ended_at_ms", "length_seconds"]
    public static let participantColumns = ["session_id", "ord", "member_id", "name", "task", "focus_ms"]
    public static let interruptionColumns = ["room_id", "member_id", "name", "at_ms"]
    /// `journal_day`'s and `journal_quarter`'s columns: the bucket's column is `day` or `quarter`, and only
    /// days keep when their first and last sessions ended.
    public static func totalsColumns(bucket: String, ends: Bool) -> [String] {
        ["room_id", "scope", "name", bucket, "sessions", "focus_ms", "interruptions"]
            + (ends ? ["first_end_ms", "last_end_ms"] : [])
    }

    /// The two totals tables: name, bucket column, bucket length, whether it keeps session ends.
    public static let totalsTables: [(table: String, bucket: String, length: Int64, ends: Bool)] = [
        ("journal_day", "day", JournalTotals.dayMs, true), ("journal_quarter", "quarter", JournalTotals.quarterMs, false),
    ]

    /// The journal's tables that retention deletes from: each one's time column and its count in
    /// `journal_size`.
    public static let journalTables = [(table: "focus_session", time: "ended_at_ms", count: "sessions"),
                                       (table: "interruption", time: "at_ms", count: "interruptions")]

    /// The statements of schema v5 that build the running totals and `journal_size` from the journal as it
    /// stands: per room and per named member, sessions, focus and interruptions per bucket (floored, as
    /// `JournalTotals`). Part of migration v5 in both stores, so it names its tables and columns itself
    /// rather than through the lists above, and is never edited (a later change is a new migration).
    public static func totalsFromJournalV5(_ dialect: SQLDialect) -> String {
        let tables: [(table: String, column: String, length: Int64, ends: Bool)] = [
            ("journal_day", "day", 86_400_000, true), ("journal_quarter", "quarter", 900_000, false),
        ]
        return tables.map { table, column, length, ends in
            func bucket(_ time: String) -> String { dialect.floorDivision(time, length) }
            let endColumns = ends ? ", first_end_ms, last_end_ms" : ""
            func endValues(_ time: String) -> String { ends ? ", MIN(\(time)), MAX(\(time))" : "" }
            let nullEnds = ends ? ", \(dialect.nullInteger), \(dialect.nullInteger)" : ""
            let columns = "room_id, scope, name, \(column), sessions, focus_ms, interruptions\(endColumns)"
            let addInterruptions = """
                ON CONFLICT (room_id, \(column), scope, name)
                DO UPDATE SET interruptions = \(table).interruptions + excluded.interruptions
                """
            return """
                INSERT INTO \(table) (\(columns))
                SELECT room_id, 0, '', \(bucket("ended_at_ms")), COUNT(*), SUM(length_seconds * 1000), 0
                       \(endValues("ended_at_ms"))
                FROM focus_session GROUP BY 1, 4;

                INSERT INTO \(table) (\(columns))
                SELECT s.room_id, 1, p.name, \(bucket("s.ended_at_ms")), COUNT(DISTINCT s.id), SUM(p.focus_ms), 0
                       \(endValues("s.ended_at_ms"))
                FROM session_member AS p JOIN focus_session AS s ON s.id = p.session_id GROUP BY 1, 3, 4;

                INSERT INTO \(table) (\(columns))
                SELECT room_id, 0, '', \(bucket("at_ms")), 0, 0, COUNT(*)\(nullEnds)
                FROM interruption WHERE member_id IS NULL GROUP BY 1, 4
                \(addInterruptions);

                INSERT INTO \(table) (\(columns))
                SELECT room_id, 1, name, \(bucket("at_ms")), 0, 0, COUNT(*)\(nullEnds)
                FROM interruption WHERE member_id IS NOT NULL AND name IS NOT NULL GROUP BY 1, 3, 4
                \(addInterruptions);

                """
        }.joined() + """
            INSERT INTO journal_size (room_id, sessions, interruptions)
            SELECT room_id, COUNT(*), 0 FROM focus_session GROUP BY room_id;
            INSERT INTO journal_size (room_id, sessions, interruptions)
            SELECT room_id, 0, COUNT(*) FROM interruption WHERE true GROUP BY room_id
            ON CONFLICT (room_id) DO UPDATE SET interruptions = excluded.interruptions;
            """
    }
}

/// How one SQL store writes what the statements share: the SQLite and PostgreSQL stores each make one.
public struct SQLDialect: Sendable {
    /// The placeholder of the `n`th parameter, from 1: `?`, or `$n`.
    public var parameter: @Sendable (Int) -> String
    /// What follows a text column in `ORDER BY` to order it by its bytes, whatever the database's collation.
    public var byteOrder: String
    /// The `LIMIT` of the `n`th parameter (PostgreSQL needs its type), and the value that means no limit.
    public var limit: @Sendable (Int) -> String
    public var noLimit: ColumnValue
    /// The smaller and the larger of two integer expressions, either of which may be NULL (then the other).
    public var least: @Sendable (String, String) -> String
    public var greatest: @Sendable (String, String) -> String
    /// An integer time column divided by `length` and rounded down (towards negative infinity).
    public var floorDivision: @Sendable (String, Int64) -> String
    /// NULL as an integer, in a `SELECT` list that inserts it.
    public var nullInteger: String

    public init(parameter: @escaping @Sendable (Int) -> String, byteOrder: String,
                limit: @escaping @Sendable (Int) -> String, noLimit: ColumnValue,
                least: @escaping @Sendable (String, String) -> String,
                greatest: @escaping @Sendable (String, String) -> String,
                floorDivision: @escaping @Sendable (String, Int64) -> String, nullInteger: String) {
        self.parameter = parameter
        self.byteOrder = byteOrder
        self.limit = limit
        self.noLimit = noLimit
        self.least = least
        self.greatest = greatest
        self.floorDivision = floorDivision
        self.nullInteger = nullInteger
    }

    /// `n` placeholders from the first.
    func parameters(_ count: Int, from first: Int = 1) -> String {
        (first..<first + count).map(parameter).joined(separator: ", ")
    }
}
