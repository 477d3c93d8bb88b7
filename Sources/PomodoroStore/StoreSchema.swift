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
    public static let apiTokenColumns = ["room_id", "id", "name", "token_sha256", "created_at_ms", "last_used_at_ms",
                                         "created_by"]
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
