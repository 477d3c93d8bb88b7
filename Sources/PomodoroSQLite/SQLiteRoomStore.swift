import Foundation
import Glibc
import GRDB
import PomodoroCore
import PomodoroStore

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
    let pool: DatabasePool
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
        let s = Self.statements
        let (rooms, members, bans, tokens) = try withStoreError("loading rooms from \(path)") {
            try pool.read { db in
                (try db.rows(s.load(.room, room: nil)), try db.rows(s.load(.member, room: nil)),
                 try db.rows(s.load(.ban, room: nil)), try db.rows(s.load(.apiToken, room: nil)))
            }
        }
        var byRoom: [String: [MemberRecord]] = [:]
        for row in members { byRoom[try row.string("room_id"), default: []].append(try RowCodec.member(from: row)) }
        var bansByRoom: [String: [BanRecord]] = [:]
        for row in bans { bansByRoom[try row.string("room_id"), default: []].append(try RowCodec.ban(from: row)) }
        var tokensByRoom: [String: [APITokenRecord]] = [:]
        for row in tokens {
            tokensByRoom[try row.string("room_id"), default: []].append(try RowCodec.apiToken(from: row))
        }
        var result: [StoredRoom] = []
        for row in rooms {
            let id = try row.string("id")
            result.append(try RowCodec.storedRoom(from: row, members: byRoom[id] ?? [], bans: bansByRoom[id] ?? [],
                                                  apiTokens: tokensByRoom[id] ?? []))
        }
        return result
    }

    public func loadRoom(_ id: RoomID) throws(StoreError) -> StoredRoom? {
        let s = Self.statements
        let (rooms, members, bans, schedules, tokens) = try withStoreError("loading room \(id) from \(path)") {
            try pool.read { db in
                (try db.cachedRows(s.load(.room, room: id)), try db.cachedRows(s.load(.member, room: id)),
                 try db.cachedRows(s.load(.ban, room: id)),
                 // The room comes back whole: a room in memory without its schedules would save over them.
                 try db.cachedRows(s.schedules(room: id)), try db.cachedRows(s.load(.apiToken, room: id)))
            }
        }
        guard let row = rooms.first else { return nil }
        var list: [MemberRecord] = []
        for member in members { list.append(try RowCodec.member(from: member)) }
        var banList: [BanRecord] = []
        for ban in bans { banList.append(try RowCodec.ban(from: ban)) }
        var scheduleList: [Schedule] = []
        for schedule in schedules { scheduleList.append(try RowCodec.schedule(from: schedule, room: id)) }
        var tokenList: [APITokenRecord] = []
        for token in tokens { tokenList.append(try RowCodec.apiToken(from: token)) }
        return try RowCodec.storedRoom(from: row, members: list, bans: banList, schedules: scheduleList,
                                       apiTokens: tokenList)
    }

    public func loadSchedules() throws(StoreError) -> [RoomID: [Schedule]] {
        let rows = try withStoreError("loading schedules from \(path)") {
            try pool.read { db in try db.rows(Self.statements.schedules(room: nil)) }
        }
        var schedules: [RoomID: [Schedule]] = [:]
        for row in rows {
            let room = try RowCodec.scheduleRoom(from: row)
            schedules[room, default: []].append(try RowCodec.schedule(from: row, room: room))
        }
        return schedules
    }

    public func loadSchedules(room: RoomID) throws(StoreError) -> [Schedule] {
        let rows = try withStoreError("loading the schedules of \(room) from \(path)") {
            try pool.read { db in try db.rows(Self.statements.schedules(room: room)) }
        }
        var schedules: [Schedule] = []
        for row in rows { schedules.append(try RowCodec.schedule(from: row, room: room)) }
        return schedules
    }

    public func apply(_ changes: [StoreChange]) throws(StoreError) {
        guard !changes.isEmpty else { return }
        try withStoreError("applying \(changes.count) changes to \(path)") {
            try pool.write { db in try SQLiteWriting(db: db).apply(changes, retention: retention) }
        }
    }

    public func sessions(room: RoomID, endedFrom from: Int64?, before: Int64?, limit: Int?) throws(StoreError)
        -> [FocusSessionRecord] {
        let query = Self.statements.sessions(room: room, from: from, before: before, limit: limit)
        let rows = try withStoreError("reading the sessions of room \(room) from \(path)") {
            try pool.read { db in try db.rows(query) }
        }
        return try SessionRows.all(rows, room: room)
    }

    /// Reads the rows one at a time through a cursor and stops at the page's end, so a page of large
    /// sessions never holds more than the page.
    public func historyPage(room: RoomID, before: Int64?, limit: Int, maxBytes: Int) throws(StoreError) -> HistoryPage {
        let query = Self.statements.sessions(room: room, from: nil, before: before, limit: max(limit, 0) + 1,
                                             newestFirst: true)
        return try withStoreError("reading the history of room \(room) from \(path)") {
            try pool.read { db in
                let rows = try Row.fetchCursor(db, sql: query.sql, arguments: StatementArguments(query.values))
                var page = SessionRows(room: room, limit: limit, maxBytes: maxBytes)
                while let row = try rows.next() {
                    if let done = try page.add(SQLiteRow(row: row)) { return done }
                }
                return HistoryPage(sessions: page.sessions, more: false)
            }
        }
    }

    public func interruptions(room: RoomID, from: Int64?, before: Int64?) throws(StoreError)
        -> [InterruptionRecord] {
        let rows = try withStoreError("reading the interruptions of room \(room) from \(path)") {
            try pool.read { db in try db.rows(Self.statements.interruptions(room: room, from: from, before: before)) }
        }
        var result: [InterruptionRecord] = []
        for row in rows { result.append(try RowCodec.interruption(from: row, room: room)) }
        return result
    }

    public func journalTotals(room: RoomID, quarters: Range<Int64>) throws(StoreError) -> JournalTotals {
        let queries = Self.statements.totals(room: room, quarters: quarters)
        let (days, window) = try withStoreError("reading the running totals of room \(room) from \(path)") {
            try pool.read { db in (try db.rows(queries.days), try db.rows(queries.quarters)) }
        }
        var dayBuckets: [JournalTotals.Bucket] = []
        for row in days { dayBuckets.append(try RowCodec.bucket(from: row)) }
        var quarterBuckets: [JournalTotals.Bucket] = []
        for row in window { quarterBuckets.append(try RowCodec.bucket(from: row)) }
        return JournalTotals(days: dayBuckets, quarters: quarterBuckets, quarterRange: quarters)
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
                try String.fetchAll(db, sql: Self.statements.journalRooms)
            }
            var total = 0
            for raw in rooms {
                guard let room = try? RoomID(validating: raw) else { continue }
                while true {
                    let deleted = try pool.write { db in
                        try SQLiteWriting(db: db).prune(room: room, nowMs: nowMs, retention: retention)
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
