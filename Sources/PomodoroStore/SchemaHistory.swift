/// The tables of the schema's history as both SQL stores create them, written once with the column types
/// each store names in its `SQLColumnTypes`. Each store's migrations run these under the same versions, so a
/// version names the same logical schema in both. Like the migrations they belong to, they are never
/// edited: a change is a new migration. (Steps whose SQL differs between the stores beyond types, v3 and v4,
/// stay with each store.)
public enum SchemaHistory {
    /// Rooms and their members (what start-up brings back), and the focus journal.
    public static func v1(_ t: SQLColumnTypes) -> String {
        """
        CREATE TABLE room (
            id \(t.text) NOT NULL PRIMARY KEY,
            focus_s \(t.integer) NOT NULL,
            short_break_s \(t.integer) NOT NULL,
            long_break_s \(t.integer) NOT NULL,
            long_break_every \(t.integer) NOT NULL,
            auto_start \(t.boolean) NOT NULL,
            -- Settings waiting for the next phase: all NULL, or all set.
            pending_focus_s \(t.integer),
            pending_short_break_s \(t.integer),
            pending_long_break_s \(t.integer),
            pending_long_break_every \(t.integer),
            pending_auto_start \(t.boolean),
            phase \(t.text) NOT NULL,
            -- 'idle' (timer_ms NULL), 'ready' or 'paused' (timer_ms: remaining), 'running' (timer_ms:
            -- wall-clock end).
            timer_kind \(t.text) NOT NULL,
            timer_ms \(t.integer),
            phase_length_ms \(t.integer) NOT NULL,
            cycle \(t.integer) NOT NULL,
            focus_completed \(t.integer) NOT NULL,
            focus_ns \(t.integer) NOT NULL,
            interruptions \(t.integer) NOT NULL,
            control_mode \(t.text) NOT NULL,
            host \(t.text),
            next_member_number \(t.integer) NOT NULL,
            focus_started_at_ms \(t.integer),
            focus_credited_until_ms \(t.integer),
            -- An unsigned 64-bit counter, stored by its bit pattern.
            seq \(t.integer) NOT NULL,
            passcode \(t.text)
        );

        CREATE TABLE member (
            room_id \(t.text) NOT NULL REFERENCES room(id) ON DELETE CASCADE,
            id \(t.text) NOT NULL,
            ord \(t.integer) NOT NULL,
            name \(t.text) NOT NULL,
            token \(t.text) NOT NULL,
            task \(t.text) NOT NULL,
            away \(t.boolean) NOT NULL,
            connected \(t.boolean) NOT NULL,
            focus_completed \(t.integer) NOT NULL,
            focus_ns \(t.integer) NOT NULL,
            interruptions \(t.integer) NOT NULL,
            session_focus_ms \(t.integer) NOT NULL,
            PRIMARY KEY (room_id, id)
        );

        -- The journal. room_id is not a foreign key: the journal outlives the room's row.
        CREATE TABLE focus_session (
            id \(t.identity),
            room_id \(t.text) NOT NULL,
            started_at_ms \(t.integer) NOT NULL,
            ended_at_ms \(t.integer) NOT NULL,
            length_seconds \(t.integer) NOT NULL
        );
        CREATE INDEX focus_session_by_room_end ON focus_session(room_id, ended_at_ms);

        CREATE TABLE session_member (
            session_id \(t.integer) NOT NULL REFERENCES focus_session(id) ON DELETE CASCADE,
            ord \(t.integer) NOT NULL,
            member_id \(t.text) NOT NULL,
            name \(t.text) NOT NULL,
            task \(t.text) NOT NULL,
            focus_ms \(t.integer) NOT NULL,
            PRIMARY KEY (session_id, ord)
        );

        CREATE TABLE interruption (
            id \(t.identity),
            room_id \(t.text) NOT NULL,
            member_id \(t.text),
            name \(t.text),
            at_ms \(t.integer) NOT NULL
        );
        """
    }

    /// The running totals' tables (JournalTotals) and `journal_size`; `totalsFromJournalV5` fills them.
    public static func v5(_ t: SQLColumnTypes) -> String {
        """
        CREATE TABLE journal_day (
            room_id \(t.text) NOT NULL,
            scope \(t.smallInteger) NOT NULL,
            name \(t.text) NOT NULL,
            day \(t.integer) NOT NULL,
            sessions \(t.integer) NOT NULL,
            focus_ms \(t.integer) NOT NULL,
            interruptions \(t.integer) NOT NULL,
            first_end_ms \(t.integer),
            last_end_ms \(t.integer),
            PRIMARY KEY (room_id, day, scope, name)
        )\(t.withoutRowID);
        CREATE TABLE journal_quarter (
            room_id \(t.text) NOT NULL,
            scope \(t.smallInteger) NOT NULL,
            name \(t.text) NOT NULL,
            quarter \(t.integer) NOT NULL,
            sessions \(t.integer) NOT NULL,
            focus_ms \(t.integer) NOT NULL,
            interruptions \(t.integer) NOT NULL,
            PRIMARY KEY (room_id, quarter, scope, name)
        )\(t.withoutRowID);
        CREATE TABLE journal_size (
            room_id \(t.text) NOT NULL PRIMARY KEY,
            sessions \(t.integer) NOT NULL,
            interruptions \(t.integer) NOT NULL
        );
        """
    }

    /// A room's schedules (Schedule, ScheduleRow): one row each, numbered within the room.
    public static func v6(_ t: SQLColumnTypes) -> String {
        """
        CREATE TABLE schedule (
            room_id \(t.text) NOT NULL REFERENCES room(id) ON DELETE CASCADE,
            id \(t.integer) NOT NULL,
            name \(t.text) NOT NULL,
            time \(t.text) NOT NULL,
            zone \(t.text) NOT NULL,
            -- One of the two: a one-time schedule's date, or a weekly one's days ('mon,wed').
            date \(t.text),
            weekdays \(t.text),
            -- The settings to run with: all NULL (the room's), or all set.
            focus_s \(t.integer),
            short_break_s \(t.integer),
            long_break_s \(t.integer),
            long_break_every \(t.integer),
            auto_start \(t.boolean),
            -- NULL: until stopped.
            sessions \(t.integer),
            warning_min \(t.integer) NOT NULL,
            enabled \(t.boolean) NOT NULL,
            since_ms \(t.integer) NOT NULL,
            handled_through_ms \(t.integer) NOT NULL,
            missed \(t.integer) NOT NULL,
            PRIMARY KEY (room_id, id)
        )\(t.withoutRowID);
        """
    }

    /// Whom the host removed from a room, until when.
    public static func v7(_ t: SQLColumnTypes) -> String {
        """
        CREATE TABLE room_ban (
            room_id \(t.text) NOT NULL REFERENCES room(id) ON DELETE CASCADE,
            ord \(t.integer) NOT NULL,
            name_key \(t.text) NOT NULL,
            token_sha256 \(t.text) NOT NULL,
            until_ms \(t.integer) NOT NULL,
            PRIMARY KEY (room_id, ord)
        )\(t.withoutRowID);
        """
    }

    /// A clock-aligned room's zone (and its pending settings'), and the scheduled run under way (RoomRunColumns).
    public static func v8(_ t: SQLColumnTypes) -> String {
        """
        ALTER TABLE room ADD COLUMN aligned_zone \(t.text);
        ALTER TABLE room ADD COLUMN pending_aligned_zone \(t.text);
        ALTER TABLE room ADD COLUMN run_schedule \(t.integer);
        ALTER TABLE room ADD COLUMN run_name \(t.text);
        ALTER TABLE room ADD COLUMN run_left \(t.integer);
        ALTER TABLE room ADD COLUMN run_done \(t.integer);
        ALTER TABLE room ADD COLUMN run_own_focus_s \(t.integer);
        ALTER TABLE room ADD COLUMN run_own_short_break_s \(t.integer);
        ALTER TABLE room ADD COLUMN run_own_long_break_s \(t.integer);
        ALTER TABLE room ADD COLUMN run_own_long_break_every \(t.integer);
        ALTER TABLE room ADD COLUMN run_own_auto_start \(t.boolean);
        ALTER TABLE room ADD COLUMN run_own_aligned_zone \(t.text);
        """
    }

    /// A room's named API tokens for the control API: the SHA-256 of each token, never the token (migration
    /// "api_tokens").
    public static func apiTokens(_ t: SQLColumnTypes) -> String {
        """
        CREATE TABLE api_token (
            room_id \(t.text) NOT NULL REFERENCES room(id) ON DELETE CASCADE,
            id \(t.text) NOT NULL,
            name \(t.text) NOT NULL,
            token_sha256 \(t.text) NOT NULL,
            created_at_ms \(t.integer) NOT NULL,
            last_used_at_ms \(t.integer),
            created_by \(t.text),
            PRIMARY KEY (room_id, id)
        )\(t.withoutRowID);
        """
    }

    /// The statements of schema v5 that build the running totals and `journal_size` from the journal as it
    /// stands: per room and per named member, sessions, focus and interruptions per bucket (floored, as
    /// `JournalTotals`). Part of migration v5 in both stores, so it names its tables and columns itself
    /// rather than through `StoreSchema`'s lists, and is never edited (a later change is a new migration).
    public static func v5Totals(_ dialect: SQLDialect) -> String {
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

/// A store's names for the schema's column types.
public struct SQLColumnTypes: Sendable {
    public var text: String
    /// 64 bits: times in milliseconds, counts, settings.
    public var integer: String
    /// The totals' `scope` (0 or 1).
    public var smallInteger: String
    public var boolean: String
    /// A journal table's `id`: an integer primary key the database numbers, with its constraint.
    public var identity: String
    /// What follows the closing parenthesis of a table keyed by its primary key alone.
    public var withoutRowID: String

    public init(text: String, integer: String, smallInteger: String, boolean: String, identity: String,
                withoutRowID: String) {
        self.text = text
        self.integer = integer
        self.smallInteger = smallInteger
        self.boolean = boolean
        self.identity = identity
        self.withoutRowID = withoutRowID
    }
}
