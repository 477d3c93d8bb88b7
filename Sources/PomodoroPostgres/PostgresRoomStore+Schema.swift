import PomodoroStore

extension PostgresRoomStore {
    /// One step of the schema's history.
    struct Migration: Sendable {
        var version: String
        var sql: String
    }

    /// The schema's history, oldest first, under the same versions as `SQLiteRoomStore`'s, so a version names
    /// the same logical schema in both stores. A migration that has shipped is never edited: a change is a
    /// new migration. Times are milliseconds since 1970 as bigint; journal ids are identity columns.
    static let migrations: [Migration] = [
        // Rooms and their members (what start-up brings back), and the focus journal.
        Migration(version: "v1", sql: """
            CREATE TABLE room (
                id text NOT NULL PRIMARY KEY,
                focus_s bigint NOT NULL,
                short_break_s bigint NOT NULL,
                long_break_s bigint NOT NULL,
                long_break_every bigint NOT NULL,
                auto_start boolean NOT NULL,
                -- Settings waiting for the next phase: all NULL, or all set.
                pending_focus_s bigint,
                pending_short_break_s bigint,
                pending_long_break_s bigint,
                pending_long_break_every bigint,
                pending_auto_start boolean,
                phase text NOT NULL,
                -- 'idle' (timer_ms NULL), 'ready' or 'paused' (timer_ms: remaining), 'running' (timer_ms:
                -- wall-clock end).
                timer_kind text NOT NULL,
                timer_ms bigint,
                phase_length_ms bigint NOT NULL,
                cycle bigint NOT NULL,
                focus_completed bigint NOT NULL,
                focus_ns bigint NOT NULL,
                interruptions bigint NOT NULL,
                control_mode text NOT NULL,
                host text,
                next_member_number bigint NOT NULL,
                focus_started_at_ms bigint,
                focus_credited_until_ms bigint,
                -- An unsigned 64-bit counter, stored by its bit pattern.
                seq bigint NOT NULL,
                passcode text
            );

            CREATE TABLE member (
                room_id text NOT NULL REFERENCES room(id) ON DELETE CASCADE,
                id text NOT NULL,
                ord bigint NOT NULL,
                name text NOT NULL,
                token text NOT NULL,
                task text NOT NULL,
                away boolean NOT NULL,
                connected boolean NOT NULL,
                focus_completed bigint NOT NULL,
                focus_ns bigint NOT NULL,
                interruptions bigint NOT NULL,
                session_focus_ms bigint NOT NULL,
                PRIMARY KEY (room_id, id)
            );

            -- The journal. room_id is not a foreign key: the journal outlives the room's row.
            CREATE TABLE focus_session (
                id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                room_id text NOT NULL,
                started_at_ms bigint NOT NULL,
                ended_at_ms bigint NOT NULL,
                length_seconds bigint NOT NULL
            );
            CREATE INDEX focus_session_by_room_end ON focus_session(room_id, ended_at_ms);

            CREATE TABLE session_member (
                session_id bigint NOT NULL REFERENCES focus_session(id) ON DELETE CASCADE,
                ord bigint NOT NULL,
                member_id text NOT NULL,
                name text NOT NULL,
                task text NOT NULL,
                focus_ms bigint NOT NULL,
                PRIMARY KEY (session_id, ord)
            );

            CREATE TABLE interruption (
                id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                room_id text NOT NULL,
                member_id text,
                name text,
                at_ms bigint NOT NULL
            );
            """),

        // The report reads a room's interruptions over a time range.
        Migration(version: "v2", sql: "CREATE INDEX interruption_by_room_time ON interruption(room_id, at_ms)"),

        // Each member keeps the moment since which they earn focus time (see SQLiteRoomStore's v3).
        Migration(version: "v3", sql: """
            ALTER TABLE member ADD COLUMN credited_since_ms bigint;
            UPDATE member SET credited_since_ms = (
                SELECT room.focus_credited_until_ms FROM room
                WHERE room.id = member.room_id AND room.phase = 'focus' AND room.timer_kind = 'running')
            WHERE connected AND NOT away;
            """),

        // A member row keeps the SHA-256 of the resume token (64 lowercase hex digits, as `ResumeToken.hash`),
        // not the token.
        Migration(version: "v4", sql: """
            ALTER TABLE member RENAME COLUMN token TO token_sha256;
            UPDATE member SET token_sha256 = encode(sha256(convert_to(token_sha256, 'UTF8')), 'hex');
            """),

        // Running totals of the journal (JournalTotals), built from the journal as it stands; from now on the
        // writer keeps them in the transaction that writes each journal row, and deleting rows leaves them be.
        Migration(version: "v5", sql: """
            CREATE TABLE journal_day (
                room_id text NOT NULL,
                scope integer NOT NULL,
                name text NOT NULL,
                day bigint NOT NULL,
                sessions bigint NOT NULL,
                focus_ms bigint NOT NULL,
                interruptions bigint NOT NULL,
                first_end_ms bigint,
                last_end_ms bigint,
                PRIMARY KEY (room_id, day, scope, name)
            );
            CREATE TABLE journal_quarter (
                room_id text NOT NULL,
                scope integer NOT NULL,
                name text NOT NULL,
                quarter bigint NOT NULL,
                sessions bigint NOT NULL,
                focus_ms bigint NOT NULL,
                interruptions bigint NOT NULL,
                PRIMARY KEY (room_id, quarter, scope, name)
            );
            CREATE TABLE journal_size (
                room_id text NOT NULL PRIMARY KEY,
                sessions bigint NOT NULL,
                interruptions bigint NOT NULL
            );
            """ + "\n" + StoreSchema.totalsFromJournalV5(.postgres)),
        // A room's schedules (Schedule, ScheduleRow): one row each, numbered within the room.
        Migration(version: "v6", sql: """
            CREATE TABLE schedule (
                room_id text NOT NULL REFERENCES room(id) ON DELETE CASCADE,
                id bigint NOT NULL,
                name text NOT NULL,
                time text NOT NULL,
                zone text NOT NULL,
                -- One of the two: a one-time schedule's date, or a weekly one's days ('mon,wed').
                date text,
                weekdays text,
                -- The settings to run with: all NULL (the room's), or all set.
                focus_s bigint,
                short_break_s bigint,
                long_break_s bigint,
                long_break_every bigint,
                auto_start boolean,
                -- NULL: until stopped.
                sessions bigint,
                warning_min bigint NOT NULL,
                enabled boolean NOT NULL,
                since_ms bigint NOT NULL,
                handled_through_ms bigint NOT NULL,
                missed bigint NOT NULL,
                PRIMARY KEY (room_id, id)
            );
            """),
        // Whom the host removed from a room, until when: a restart keeps them out as the running server did.
        // A row that has ended is harmless (the room drops it on loading) and goes with the next removal.
        Migration(version: "v7", sql: """
            CREATE TABLE room_ban (
                room_id text NOT NULL REFERENCES room(id) ON DELETE CASCADE,
                ord bigint NOT NULL,
                name_key text NOT NULL,
                token_sha256 text NOT NULL,
                until_ms bigint NOT NULL,
                PRIMARY KEY (room_id, ord)
            );
            """),
        // A clock-aligned room's zone (and its pending settings'), and the scheduled run under way
        // (RoomRunColumns): a restart in the middle of a set carries on with it.
        Migration(version: "v8", sql: """
            ALTER TABLE room
                ADD COLUMN aligned_zone text,
                ADD COLUMN pending_aligned_zone text,
                ADD COLUMN run_schedule bigint,
                ADD COLUMN run_name text,
                ADD COLUMN run_left bigint,
                ADD COLUMN run_done bigint,
                ADD COLUMN run_own_focus_s bigint,
                ADD COLUMN run_own_short_break_s bigint,
                ADD COLUMN run_own_long_break_s bigint,
                ADD COLUMN run_own_long_break_every bigint,
                ADD COLUMN run_own_auto_start boolean,
                ADD COLUMN run_own_aligned_zone text;
            """),
    ]

    /// The schema versions this server knows, oldest first.
    public static var migrationVersions: [String] { migrations.map(\.version) }

    /// Key of the advisory lock that the migrations run under: two servers opening one database at once
    /// take turns, and the second finds the work done. (Any fixed number; this one spells "pomodoro".)
    static let migrationLockKey = "8101668279397847663"

    /// Brings the schema up to `version` (or the newest), in one transaction under the advisory lock.
    /// Refuses a database that has a migration this server does not know.
    static func migrate(_ connection: PostgresConnection, upTo version: String?) throws(PostgresError)
        -> MigrationOutcome {
        try connection.execute("BEGIN")
        do {
            try connection.query("SELECT pg_advisory_xact_lock($1::bigint)", [migrationLockKey])
            try connection.execute("""
                CREATE TABLE IF NOT EXISTS schema_migrations (
                    version text NOT NULL PRIMARY KEY,
                    applied_at timestamptz NOT NULL DEFAULT now()
                )
                """)
            // Outside the versioned history, like schema_migrations: a cluster's fences (see
            // PostgresRoomStore+Fencing), which a single server never reads.
            try connection.execute(fenceTable)
            let applied = try connection.query("SELECT version FROM schema_migrations ORDER BY version")
                .values.compactMap { $0[0] }
            let known = Set(migrationVersions)
            let unknown = applied.filter { !known.contains($0) }
            if !unknown.isEmpty {
                try connection.execute("ROLLBACK")
                return .newer(unknown)
            }
            for migration in migrations {
                if !applied.contains(migration.version) {
                    try connection.execute(migration.sql)
                    try connection.query("INSERT INTO schema_migrations (version) VALUES ($1)", [migration.version])
                }
                if migration.version == version { break }
            }
            try connection.execute("COMMIT")
            return .upToDate
        } catch {
            try? connection.execute("ROLLBACK")
            throw error
        }
    }

    enum MigrationOutcome {
        case upToDate
        /// The versions this server does not know.
        case newer([String])
    }
}
