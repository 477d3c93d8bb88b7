import Foundation
import Glibc
import GRDB
import PomodoroCore

/// A `RoomStore` in one SQLite file, through GRDB: a `DatabasePool` in WAL mode, so queries read a
/// committed snapshot while the writer goes on.
///
/// Durability is `PRAGMA synchronous = NORMAL` in WAL mode: a commit appends to the `-wal` file, which is
/// fsynced only at checkpoints.
/// - A process crash or `kill -9` loses nothing that `apply` returned from: the committed pages are in the
///   WAL file, and the kernel writes them out after the process is gone. This is what the server
///   promises (docs/PROTOCOL.md, "Durability").
/// - Power loss or a kernel crash may roll back the last transactions before the cut; the file stays
///   consistent. FULL would keep them too, at one fsync per commit.
/// Why not FULL: every broadcast of a room waits for its commit, and on this project's benchmark machine
/// an fsync per commit held ticks back by seconds after 10,000 joins at once (p99 1.2–3.4 s against
/// 0.36 s with NORMAL, `make bench-storm`, docs/PERFORMANCE.md).
public final class SQLiteRoomStore: RoomStore {
    private let pool: DatabasePool
    /// The database file.
    public let path: String
    /// What the writer deletes from the journal as it writes.
    public let retention: JournalRetention

    private init(pool: DatabasePool, path: String, retention: JournalRetention) {
        self.pool = pool
        self.path = path
        self.retention = retention
    }

    /// Opens the database at `path`, creating the file and its folder if need be, and brings its schema
    /// up to date. Refuses a database that a newer version of the server has migrated further.
    public static func open(path: String, retention: JournalRetention = .standard) throws(StoreError)
        -> SQLiteRoomStore {
        try open(path: path, migratedUpTo: nil, retention: retention)
    }

    /// `open(path:)`, stopping at migration `version` (for tests that build an older database).
    static func open(path: String, migratedUpTo version: String?,
                     retention: JournalRetention = .standard) throws(StoreError) -> SQLiteRoomStore {
        try createPrivately(path)
        var configuration = Configuration()
        configuration.label = "pomodoro.store"
        // Another process (a backup, the sqlite3 shell) may hold the lock for a moment: wait rather than
        // fail the batch. Only the writer thread waits, never the service thread.
        configuration.busyMode = .timeout(5)
        let pool = try withStoreError("opening \(path)") {
            try DatabasePool(path: path, configuration: configuration)
        }
        // GRDB sets NORMAL when it turns WAL on, after any `prepareDatabase` hook; the writer is one
        // connection for the pool's life, so setting it here holds. See the type's comment.
        try withStoreError("setting synchronous on \(path)") {
            try pool.writeWithoutTransaction { try $0.execute(sql: "PRAGMA synchronous = NORMAL") }
        }
        try withStoreError("migrating \(path)") {
            let unknown = try pool.read(migrator.appliedIdentifiers).subtracting(migrator.migrations)
            if !unknown.isEmpty {
                throw StoreError("\(path) was migrated by a newer version of the server (it has "
                    + "\(unknown.sorted().joined(separator: ", ")); this one knows "
                    + "\(migrator.migrations.joined(separator: ", ")))")
            }
            if let version {
                try migrator.migrate(pool, upTo: version)
            } else {
                try migrator.migrate(pool)
            }
        }
        return SQLiteRoomStore(pool: pool, path: path, retention: retention)
    }

    /// Creates the database's folder (0700) and an empty database file (0600) when they do not exist yet,
    /// whatever the process's umask: the file holds who was in which room and their tasks. SQLite gives the
    /// `-wal` and `-shm` files the database file's mode. Existing folders and files keep theirs.
    private static func createPrivately(_ path: String) throws(StoreError) {
        let folder = URL(fileURLWithPath: path).deletingLastPathComponent().path
        if !FileManager.default.fileExists(atPath: folder) {
            try withStoreError("creating the folder \(folder)") {
                try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
                guard chmod(folder, 0o700) == 0 else { throw StoreError("chmod: \(String(cString: strerror(errno)))") }
            }
        }
        let fd = Glibc.open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        if fd < 0 {
            guard errno == EEXIST else {
                throw StoreError("creating \(path): \(String(cString: strerror(errno)))")
            }
            return
        }
        defer { Glibc.close(fd) }
        guard fchmod(fd, 0o600) == 0 else {
            throw StoreError("setting the mode of \(path): \(String(cString: strerror(errno)))")
        }
    }

    /// Closes the connections. Every later call fails. (Dropping the last reference closes them too.)
    public func close() throws(StoreError) {
        try withStoreError("closing \(path)") { try pool.close() }
    }

    // MARK: RoomStore

    public func loadRooms() throws(StoreError) -> [StoredRoom] {
        try withStoreError("loading rooms from \(path)") {
            try pool.read { db in
                var members: [String: [MemberRecord]] = [:]
                for row in try Row.fetchAll(db, sql: "SELECT * FROM member ORDER BY room_id, ord, id") {
                    members[try row.decode(forColumn: "room_id"), default: []].append(try Self.member(from: row))
                }
                var bans: [String: [BanRecord]] = [:]
                for row in try Row.fetchAll(db, sql: "SELECT * FROM room_ban ORDER BY room_id, ord") {
                    bans[try row.decode(forColumn: "room_id"), default: []].append(try Self.ban(from: row))
                }
                return try Row.fetchAll(db, sql: "SELECT * FROM room ORDER BY id").map { row in
                    let record = try Self.room(from: row)
                    return StoredRoom(record: record, members: members[record.id.rawValue] ?? [],
                                      passcode: try row.decode(forColumn: "passcode"),
                                      bans: bans[record.id.rawValue] ?? [])
                }
            }
        }
    }

    public func loadSchedules() throws(StoreError) -> [RoomID: [Schedule]] {
        let rows = try withStoreError("loading schedules from \(path)") {
            try pool.read { db in
                try Row.fetchAll(db, sql: "SELECT * FROM schedule ORDER BY room_id, id").map { row in
                    (try row.decode(forColumn: "room_id") as String, try Self.scheduleRow(row))
                }
            }
        }
        var schedules: [RoomID: [Schedule]] = [:]
        for (name, row) in rows {
            let room = try Self.storedRoomID(name)
            schedules[room, default: []].append(try row.schedule(room: room))
        }
        return schedules
    }

    public func loadSchedules(room: RoomID) throws(StoreError) -> [Schedule] {
        let rows = try withStoreError("loading the schedules of \(room) from \(path)") {
            try pool.read { db in
                try Row.fetchAll(db, sql: "SELECT * FROM schedule WHERE room_id = ? ORDER BY id",
                                 arguments: [room.rawValue]).map(Self.scheduleRow)
            }
        }
        var schedules: [Schedule] = []
        for row in rows { schedules.append(try row.schedule(room: room)) }
        return schedules
    }

    private static func storedRoomID(_ name: String) throws(StoreError) -> RoomID {
        do { return try RoomID(validating: name) } catch { throw StoreError("a stored schedule's room \(name): \(error)") }
    }

    public func loadRoom(_ id: RoomID) throws(StoreError) -> StoredRoom? {
        let read = try withStoreError("loading room \(id) from \(path)") {
            try pool.read { db -> (StoredRoom, [ScheduleRow])? in
                guard let row = try Row.fetchOne(db, sql: "SELECT * FROM room WHERE id = ?", arguments: [id.rawValue])
                else { return nil }
                let members = try Row.fetchAll(db, sql: "SELECT * FROM member WHERE room_id = ? ORDER BY ord, id",
                                               arguments: [id.rawValue]).map(Self.member(from:))
                let bans = try Row.fetchAll(db, sql: "SELECT * FROM room_ban WHERE room_id = ? ORDER BY ord",
                                            arguments: [id.rawValue]).map(Self.ban(from:))
                // The room comes back whole: a room in memory without its schedules would save over them.
                let schedules = try Row.fetchAll(db, sql: "SELECT * FROM schedule WHERE room_id = ? ORDER BY id",
                                                 arguments: [id.rawValue]).map(Self.scheduleRow)
                return (StoredRoom(record: try Self.room(from: row), members: members,
                                   passcode: try row.decode(forColumn: "passcode"), bans: bans), schedules)
            }
        }
        guard var (room, rows) = read else { return nil }
        for row in rows { room.schedules.append(try row.schedule(room: id)) }
        return room
    }

    public func apply(_ changes: [StoreChange]) throws(StoreError) {
        guard !changes.isEmpty else { return }
        try withStoreError("applying \(changes.count) changes to \(path)") {
            try pool.write { db in
                // The latest moment each room's journal was written at: retention counts from there.
                var written: [RoomID: Int64] = [:]
                for change in changes {
                    try Self.apply(change, in: db)
                    switch change {
                    case .focusCompleted(let session): written[session.room] = max(written[session.room] ?? .min, session.endedAtMs)
                    case .interrupted(let interruption): written[interruption.room] = max(written[interruption.room] ?? .min, interruption.atMs)
                    default: break
                    }
                }
                if retention != .keepEverything {
                    for (room, nowMs) in written { try Self.prune(room: room, nowMs: nowMs, retention: retention, in: db) }
                }
            }
        }
    }

    public func sessions(room: RoomID, endedFrom from: Int64?, before: Int64?, limit: Int?) throws(StoreError)
        -> [FocusSessionRecord] {
        var conditions = ["room_id = ?"]
        var arguments: [(any DatabaseValueConvertible)?] = [room.rawValue]
        if let from { conditions.append("ended_at_ms >= ?"); arguments.append(from) }
        if let before { conditions.append("ended_at_ms < ?"); arguments.append(before) }
        arguments.append(limit.map { max($0, 0) } ?? -1)    // SQLite: a negative LIMIT is no limit
        // The newest `limit` sessions, then each with its participants, oldest first.
        let sql = """
            SELECT s.id, s.started_at_ms, s.ended_at_ms, s.length_seconds,
                   p.member_id, p.name, p.task, p.focus_ms
            FROM (SELECT * FROM focus_session WHERE \(conditions.joined(separator: " AND "))
                  ORDER BY ended_at_ms DESC, id DESC LIMIT ?) AS s
            LEFT JOIN session_member AS p ON p.session_id = s.id
            ORDER BY s.ended_at_ms, s.id, p.ord
            """
        return try withStoreError("reading the sessions of room \(room) from \(path)") {
            try pool.read { db in
                var result: [FocusSessionRecord] = []
                var lastID: Int64?
                for row in try Row.fetchAll(db, sql: sql, arguments: StatementArguments(arguments)) {
                    let id: Int64 = try row.decode(forColumn: "id")
                    if id != lastID {
                        lastID = id
                        result.append(try Self.session(from: row, room: room))
                    }
                    if let participant = try Self.participant(from: row) {
                        result[result.count - 1].participants.append(participant)
                    }
                }
                return result
            }
        }
    }

    /// A session of a row of `focus_session` joined with `session_member`, without its participants.
    private static func session(from row: Row, room: RoomID) throws -> FocusSessionRecord {
        FocusSessionRecord(room: room, startedAtMs: try row.decode(forColumn: "started_at_ms"),
                           endedAtMs: try row.decode(forColumn: "ended_at_ms"),
                           lengthSeconds: try row.decode(forColumn: "length_seconds"), participants: [])
    }

    /// The participant of such a row; nil for a session nobody was present for.
    private static func participant(from row: Row) throws -> FocusSessionRecord.Participant? {
        guard let member: String = try row.decode(forColumn: "member_id") else { return nil }
        return .init(member: MemberID(member), name: try row.decode(forColumn: "name"),
                     task: try row.decode(forColumn: "task"), focusMs: try row.decode(forColumn: "focus_ms"))
    }

    /// Reads the rows one at a time through a cursor and stops at the page's end, so a page of large
    /// sessions never holds more than the page.
    public func historyPage(room: RoomID, before: Int64?, limit: Int, maxBytes: Int) throws(StoreError) -> HistoryPage {
        var arguments: [(any DatabaseValueConvertible)?] = [room.rawValue]
        if let before { arguments.append(before) }
        arguments.append(max(limit, 0) + 1)
        let sql = """
            SELECT s.id, s.started_at_ms, s.ended_at_ms, s.length_seconds,
                   p.member_id, p.name, p.task, p.focus_ms
            FROM (SELECT * FROM focus_session WHERE room_id = ?\(before == nil ? "" : " AND ended_at_ms < ?")
                  ORDER BY ended_at_ms DESC, id DESC LIMIT ?) AS s
            LEFT JOIN session_member AS p ON p.session_id = s.id
            ORDER BY s.ended_at_ms DESC, s.id DESC, p.ord
            """
        return try withStoreError("reading the history of room \(room) from \(path)") {
            try pool.read { db in
                let rows = try Row.fetchCursor(db, sql: sql, arguments: StatementArguments(arguments))
                var page: [FocusSessionRecord] = []
                var bytes = 0
                var lastID: Int64?
                while let row = try rows.next() {
                    let id: Int64 = try row.decode(forColumn: "id")
                    if id != lastID {
                        // A new session: the one before it is complete and counted.
                        if let previous = page.last { bytes += HistoryPage.estimatedBytes(of: previous) }
                        if page.count == limit || bytes >= maxBytes { return HistoryPage(sessions: page, more: true) }
                        lastID = id
                        page.append(try Self.session(from: row, room: room))
                    }
                    if let participant = try Self.participant(from: row) {
                        page[page.count - 1].participants.append(participant)
                    }
                }
                return HistoryPage(sessions: page, more: false)
            }
        }
    }

    public func interruptions(room: RoomID, from: Int64?, before: Int64?) throws(StoreError)
        -> [InterruptionRecord] {
        var conditions = ["room_id = ?"]
        var arguments: [(any DatabaseValueConvertible)?] = [room.rawValue]
        if let from { conditions.append("at_ms >= ?"); arguments.append(from) }
        if let before { conditions.append("at_ms < ?"); arguments.append(before) }
        let sql = """
            SELECT member_id, name, at_ms FROM interruption WHERE \(conditions.joined(separator: " AND "))
            ORDER BY at_ms, id
            """
        return try withStoreError("reading the interruptions of room \(room) from \(path)") {
            try pool.read { db in
                try Row.fetchAll(db, sql: sql, arguments: StatementArguments(arguments)).map { row in
                    let member: String? = try row.decode(forColumn: "member_id")
                    return InterruptionRecord(room: room, member: member.map(MemberID.init),
                                              name: try row.decode(forColumn: "name"),
                                              atMs: try row.decode(forColumn: "at_ms"))
                }
            }
        }
    }

    public func journalTotals(room: RoomID, quarters: Range<Int64>) throws(StoreError) -> JournalTotals {
        try withStoreError("reading the running totals of room \(room) from \(path)") {
            try pool.read { db in
                let days = try Row.fetchAll(db, sql: """
                    SELECT scope, name, day AS bucket, sessions, focus_ms, interruptions, first_end_ms, last_end_ms
                    FROM journal_day WHERE room_id = ? ORDER BY day
                    """, arguments: [room.rawValue]).map(Self.bucket(from:))
                let window = try Row.fetchAll(db, sql: """
                    SELECT scope, name, quarter AS bucket, sessions, focus_ms, interruptions,
                           NULL AS first_end_ms, NULL AS last_end_ms
                    FROM journal_quarter WHERE room_id = ? AND quarter >= ? AND quarter < ? ORDER BY quarter
                    """, arguments: [room.rawValue, quarters.lowerBound, quarters.upperBound]).map(Self.bucket(from:))
                return JournalTotals(days: days, quarters: window, quarterRange: quarters)
            }
        }
    }

    /// Applies the retention to every room's journal at `nowMs` (the writer only prunes rooms as they
    /// write), one transaction per batch, until nothing is left to delete. Returns the rows deleted.
    /// Runs on the caller's thread and takes the writer connection between batches: call it off the
    /// service thread.
    @discardableResult
    public func pruneJournal(nowMs: Int64) throws(StoreError) -> Int {
        guard retention != .keepEverything else { return 0 }
        return try withStoreError("deleting old journal rows from \(path)") {
            let rooms = try pool.read { db in
                try String.fetchAll(db, sql: "SELECT room_id FROM journal_size ORDER BY room_id")
            }
            var total = 0
            for raw in rooms {
                guard let room = try? RoomID(validating: raw) else { continue }
                while true {
                    let deleted = try pool.write { db in
                        try Self.prune(room: room, nowMs: nowMs, retention: retention, in: db)
                    }
                    total += deleted
                    if deleted == 0 { break }
                }
            }
            return total
        }
    }

    // MARK: For tests

    /// Runs `sql` on the writer connection (tests use it to build an older database by hand).
    func execute(sql: String) throws(StoreError) {
        try withStoreError("executing SQL on \(path)") { try pool.writeWithoutTransaction { try $0.execute(sql: sql) } }
    }

    /// The first column of every row `sql` returns, as text, read on the writer connection (where the
    /// connection-level pragmas are set).
    func column(sql: String) throws(StoreError) -> [String] {
        try withStoreError("reading SQL on \(path)") {
            try pool.writeWithoutTransaction { db in
                try Row.fetchAll(db, sql: sql).map { row in
                    switch (row[0] as DatabaseValue).storage {
                    case .null: "NULL"
                    case .int64(let value): String(value)
                    case .double(let value): String(value)
                    case .string(let value): value
                    case .blob(let value): value.base64EncodedString()
                    }
                }
            }
        }
    }

    /// The migrations applied to the database, oldest first.
    func appliedMigrations() throws(StoreError) -> [String] {
        try withStoreError("reading the migrations of \(path)") { try pool.read(Self.migrator.appliedMigrations) }
    }
}

/// The one place an error from SQLite, GRDB or the file system becomes a `StoreError`, saying what was
/// being done. A `StoreError` thrown inside (a row that does not decode) passes through as it is.
/// Statement arguments are not in GRDB's messages, so no token or passcode reaches a log this way.
func withStoreError<T>(_ what: @autoclosure () -> String, _ body: () throws -> T) throws(StoreError) -> T {
    do {
        return try body()
    } catch let error as StoreError {
        throw error
    } catch {
        throw StoreError("\(what()): \(error)")
    }
}
