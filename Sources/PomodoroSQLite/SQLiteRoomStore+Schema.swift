import GRDB
import PomodoroCore
import PomodoroStore

extension SQLiteRoomStore {
    /// The schema's history, oldest first. A migration that has shipped is never edited: a change is a new
    /// migration. Each speaks SQL only, not the record types, so it still means what it meant when it was
    /// written. The tables are `SchemaHistory`'s, in SQLite's `SQLColumnTypes`.
    static let migrator: DatabaseMigrator = {
        var migrator = DatabaseMigrator()

        // Rooms and their members (what start-up brings back), and the focus journal.
        migrator.registerMigration("v1") { db in try db.execute(sql: SchemaHistory.v1(.sqlite)) }

        // The report reads a room's interruptions over a time range; without this index that is a scan of
        // every interruption of every room.
        migrator.registerMigration("v2") { db in
            try db.execute(sql: "CREATE INDEX interruption_by_room_time ON interruption(room_id, at_ms)")
        }

        // Each member keeps the moment since which they earn focus time, so that one member's change writes
        // their row alone instead of every present member's. Rows written before were credited up to the
        // room's focus_credited_until_ms, which from now on speaks for the room's own time only: members
        // present in a running focus take it over as their own.
        migrator.registerMigration("v3") { db in
            try db.execute(sql: """
                ALTER TABLE member ADD COLUMN credited_since_ms INTEGER;
                UPDATE member SET credited_since_ms = (
                    SELECT room.focus_credited_until_ms FROM room
                    WHERE room.id = member.room_id AND room.phase = 'focus' AND room.timer_kind = 'running')
                WHERE connected = 1 AND away = 0;
                """)
        }

        // A member row keeps the SHA-256 of the resume token, not the token: a copy of the database no
        // longer lets anyone take a member's place. SQLite has no SHA-256 of its own, so the existing tokens
        // are hashed here, row by row, in the migration's transaction.
        migrator.registerMigration("v4") { db in
            try db.execute(sql: "ALTER TABLE member RENAME COLUMN token TO token_sha256")
            let rows = try Row.fetchAll(db, sql: "SELECT room_id, id, token_sha256 FROM member")
            for row in rows {
                let token: String = row["token_sha256"]
                try db.execute(sql: "UPDATE member SET token_sha256 = ? WHERE room_id = ? AND id = ?",
                               arguments: [ResumeToken(token).hash, row["room_id"] as String, row["id"] as String])
            }
        }

        // Running totals of the journal (JournalTotals): per room, per person (scope 0: the room, name '';
        // scope 1: a member, by name), per UTC day and per 15 minutes of UTC time; and how many journal rows
        // each room has, for the per-room cap. Built here from the journal as it stands; from now on the
        // writer keeps them in the transaction that writes each journal row, and deleting rows leaves them be.
        migrator.registerMigration("v5") { db in
            try db.execute(sql: SchemaHistory.v5(.sqlite))
            try db.execute(sql: SchemaHistory.v5Totals(.sqlite))
        }

        // A room's schedules (Schedule, ScheduleRow): one row each, numbered within the room.
        migrator.registerMigration("v6") { db in try db.execute(sql: SchemaHistory.v6(.sqlite)) }

        // Whom the host removed from a room, until when: a restart keeps them out as the running server did.
        // A row that has ended is harmless (the room drops it on loading) and goes with the next removal.
        migrator.registerMigration("v7") { db in try db.execute(sql: SchemaHistory.v7(.sqlite)) }

        // A clock-aligned room's zone (and its pending settings'), and the scheduled run under way
        // (RoomRunColumns): a restart in the middle of a set carries on with it.
        migrator.registerMigration("v8") { db in try db.execute(sql: SchemaHistory.v8(.sqlite)) }

        // A room's named API tokens for the control API (their SHA-256 only).
        migrator.registerMigration("api_tokens") { db in try db.execute(sql: SchemaHistory.apiTokens(.sqlite)) }
        // A room's webhooks and their outbox (WebhookRows).
        migrator.registerMigration("webhooks") { db in try db.execute(sql: SchemaHistory.webhooks(.sqlite)) }

        return migrator
    }()

    /// The migrations' identifiers, oldest first.
    static var migrationIdentifiers: [String] { migrator.migrations }
}
