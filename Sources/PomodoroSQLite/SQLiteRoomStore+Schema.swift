import GRDB
import PomodoroCore
import PomodoroStore

extension SQLiteRoomStore {
    /// The schema's history, oldest first. A migration that has shipped is never edited: a change is a new
    /// migration. Each speaks SQL only, not the record types, so it still means what it meant when it was
    /// written.
    static let migrator: DatabaseMigrator = {
        var migrator = DatabaseMigrator()

        // Rooms and their members (what start-up brings back), and the focus journal.
        migrator.registerMigration("v1") { db in
            try db.execute(sql: """
                CREATE TABLE room (
                    id TEXT NOT NULL PRIMARY KEY,
                    focus_s INTEGER NOT NULL,
                    short_break_s INTEGER NOT NULL,
                    long_break_s INTEGER NOT NULL,
                    long_break_every INTEGER NOT NULL,
                    auto_start INTEGER NOT NULL,
                    -- Settings waiting for the next phase: all NULL, or all set.
                    pending_focus_s INTEGER,
                    pending_short_break_s INTEGER,
                    pending_long_break_s INTEGER,
                    pending_long_break_every INTEGER,
                    pending_auto_start INTEGER,
                    phase TEXT NOT NULL,
                    -- 'idle' (timer_ms NULL), 'ready' or 'paused' (timer_ms: remaining), 'running' (timer_ms:
                    -- wall-clock end).
                    timer_kind TEXT NOT NULL,
                    timer_ms INTEGER,
                    phase_length_ms INTEGER NOT NULL,
                    cycle INTEGER NOT NULL,
                    focus_completed INTEGER NOT NULL,
                    focus_ns INTEGER NOT NULL,
                    interruptions INTEGER NOT NULL,
                    control_mode TEXT NOT NULL,
                    host TEXT,
                    next_member_number INTEGER NOT NULL,
                    focus_started_at_ms INTEGER,
                    focus_credited_until_ms INTEGER,
                    -- An unsigned 64-bit counter, stored by its bit pattern.
                    seq INTEGER NOT NULL,
                    passcode TEXT
                );

                CREATE TABLE member (
                    room_id TEXT NOT NULL REFERENCES room(id) ON DELETE CASCADE,
                    id TEXT NOT NULL,
                    ord INTEGER NOT NULL,
                    name TEXT NOT NULL,
                    token TEXT NOT NULL,
                    task TEXT NOT NULL,
                    away INTEGER NOT NULL,
                    connected INTEGER NOT NULL,
                    focus_completed INTEGER NOT NULL,
                    focus_ns INTEGER NOT NULL,
                    interruptions INTEGER NOT NULL,
                    session_focus_ms INTEGER NOT NULL,
                    PRIMARY KEY (room_id, id)
                );

                -- The journal. room_id is not a foreign key: the journal outlives the room's row.
                CREATE TABLE focus_session (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    room_id TEXT NOT NULL,
                    started_at_ms INTEGER NOT NULL,
                    ended_at_ms INTEGER NOT NULL,
                    length_seconds INTEGER NOT NULL
                );
                CREATE INDEX focus_session_by_room_end ON focus_session(room_id, ended_at_ms);

                CREATE TABLE session_member (
                    session_id INTEGER NOT NULL REFERENCES focus_session(id) ON DELETE CASCADE,
                    ord INTEGER NOT NULL,
                    member_id TEXT NOT NULL,
                    name TEXT NOT NULL,
                    task TEXT NOT NULL,
                    focus_ms INTEGER NOT NULL,
                    PRIMARY KEY (session_id, ord)
                );

                CREATE TABLE interruption (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    room_id TEXT NOT NULL,
                    member_id TEXT,
                    name TEXT,
                    at_ms INTEGER NOT NULL
                );
                """)
        }

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
            try db.execute(sql: """
                CREATE TABLE journal_day (
                    room_id TEXT NOT NULL,
                    scope INTEGER NOT NULL,
                    name TEXT NOT NULL,
                    day INTEGER NOT NULL,
                    sessions INTEGER NOT NULL,
                    focus_ms INTEGER NOT NULL,
                    interruptions INTEGER NOT NULL,
                    first_end_ms INTEGER,
                    last_end_ms INTEGER,
                    PRIMARY KEY (room_id, day, scope, name)
                ) WITHOUT ROWID;
                CREATE TABLE journal_quarter (
                    room_id TEXT NOT NULL,
                    scope INTEGER NOT NULL,
                    name TEXT NOT NULL,
                    quarter INTEGER NOT NULL,
                    sessions INTEGER NOT NULL,
                    focus_ms INTEGER NOT NULL,
                    interruptions INTEGER NOT NULL,
                    PRIMARY KEY (room_id, quarter, scope, name)
                ) WITHOUT ROWID;
                CREATE TABLE journal_size (
                    room_id TEXT NOT NULL PRIMARY KEY,
                    sessions INTEGER NOT NULL,
                    interruptions INTEGER NOT NULL
                );
                """)
            try db.execute(sql: StoreSchema.totalsFromJournalV5(.sqlite))
        }

        // A room's schedules (Schedule, ScheduleRow): one row each, numbered within the room.
        migrator.registerMigration("v6") { db in
            try db.execute(sql: """
                CREATE TABLE schedule (
                    room_id TEXT NOT NULL REFERENCES room(id) ON DELETE CASCADE,
                    id INTEGER NOT NULL,
                    name TEXT NOT NULL,
                    time TEXT NOT NULL,
                    zone TEXT NOT NULL,
                    -- One of the two: a one-time schedule's date, or a weekly one's days ('mon,wed').
                    date TEXT,
                    weekdays TEXT,
                    -- The settings to run with: all NULL (the room's), or all set.
                    focus_s INTEGER,
                    short_break_s INTEGER,
                    long_break_s INTEGER,
                    long_break_every INTEGER,
                    auto_start INTEGER,
                    -- NULL: until stopped.
                    sessions INTEGER,
                    warning_min INTEGER NOT NULL,
                    enabled INTEGER NOT NULL,
                    since_ms INTEGER NOT NULL,
                    handled_through_ms INTEGER NOT NULL,
                    missed INTEGER NOT NULL,
                    PRIMARY KEY (room_id, id)
                ) WITHOUT ROWID;
                """)
        }

        // Whom the host removed from a room, until when: a restart keeps them out as the running server did.
        // A row that has ended is harmless (the room drops it on loading) and goes with the next removal.
        migrator.registerMigration("v7") { db in
            try db.execute(sql: """
                CREATE TABLE room_ban (
                    room_id TEXT NOT NULL REFERENCES room(id) ON DELETE CASCADE,
                    ord INTEGER NOT NULL,
                    name_key TEXT NOT NULL,
                    token_sha256 TEXT NOT NULL,
                    until_ms INTEGER NOT NULL,
                    PRIMARY KEY (room_id, ord)
                ) WITHOUT ROWID;
                """)
        }

        // A clock-aligned room's zone (and its pending settings'), and the scheduled run under way
        // (RoomRunColumns): a restart in the middle of a set carries on with it.
        migrator.registerMigration("v8") { db in
            try db.execute(sql: """
                ALTER TABLE room ADD COLUMN aligned_zone TEXT;
                ALTER TABLE room ADD COLUMN pending_aligned_zone TEXT;
                ALTER TABLE room ADD COLUMN run_schedule INTEGER;
                ALTER TABLE room ADD COLUMN run_name TEXT;
                ALTER TABLE room ADD COLUMN run_left INTEGER;
                ALTER TABLE room ADD COLUMN run_done INTEGER;
                ALTER TABLE room ADD COLUMN run_own_focus_s INTEGER;
                ALTER TABLE room ADD COLUMN run_own_short_break_s INTEGER;
                ALTER TABLE room ADD COLUMN run_own_long_break_s INTEGER;
                ALTER TABLE room ADD COLUMN run_own_long_break_every INTEGER;
                ALTER TABLE room ADD COLUMN run_own_auto_start INTEGER;
                ALTER TABLE room ADD COLUMN run_own_aligned_zone TEXT;
                """)
        }

        return migrator
    }()

    /// The migrations' identifiers, oldest first.
    static var migrationIdentifiers: [String] { migrator.migrations }
}
