import PomodoroStore

extension PostgresRoomStore {
    /// One step of the schema's history.
    struct Migration: Sendable {
        var version: String
        var sql: String
    }

    /// The schema's history, oldest first, under the same versions as `SQLiteRoomStore`'s, so a version names
    /// the same logical schema in both stores. A migration that has shipped is never edited: a change is a
    /// new migration. The tables are `SchemaHistory`'s, in PostgreSQL's `SQLColumnTypes`.
    static let migrations: [Migration] = [
        // Rooms and their members (what start-up brings back), and the focus journal.
        Migration(version: "v1", sql: SchemaHistory.v1(.postgres)),

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
        Migration(version: "v5", sql: SchemaHistory.v5(.postgres) + "\n" + SchemaHistory.v5Totals(.postgres)),
        // A room's schedules (Schedule, ScheduleRow): one row each, numbered within the room.
        Migration(version: "v6", sql: SchemaHistory.v6(.postgres)),
        // Whom the host removed from a room, until when: a restart keeps them out as the running server did.
        // A row that has ended is harmless (the room drops it on loading) and goes with the next removal.
        Migration(version: "v7", sql: SchemaHistory.v7(.postgres)),
        // A clock-aligned room's zone (and its pending settings'), and the scheduled run under way
        // (RoomRunColumns): a restart in the middle of a set carries on with it.
        Migration(version: "v8", sql: SchemaHistory.v8(.postgres)),
        // A room's named API tokens for the control API (their SHA-256 only).
        Migration(version: "api_tokens", sql: SchemaHistory.apiTokens(.postgres)),
        // A room's webhooks and their outbox (WebhookRows).
        Migration(version: "webhooks", sql: SchemaHistory.webhooks(.postgres)),
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
            try connection.execute(fenceRefusal)
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
            connection.rollBackAfterFailure()
            throw error
        }
    }

    enum MigrationOutcome {
        case upToDate
        /// The versions this server does not know.
        case newer([String])
    }
}
