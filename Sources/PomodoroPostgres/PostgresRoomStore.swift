import Foundation
import PomodoroCore
import PomodoroStore

/// A `RoomStore` in a PostgreSQL database, for servers that share one. It gives the same answers as
/// `SQLiteRoomStore` (the same logical schema under the same migration versions, the same running totals
/// and retention).
///
/// One connection writes (every `apply` and the retention sweep, one at a time, each batch one
/// transaction); queries take a connection from a small pool, made as needed up to `maxReaders`. A
/// connection that breaks is dropped and a new one made on next use.
///
/// Durability: every connection sets `synchronous_commit = on`, whatever the server's default, so a batch
/// is on the database server's disk (and on its synchronous standbys) when `apply` returns: the server
/// broadcasts a change only once it is durable.
///
/// ```swift
/// let store = try PostgresRoomStore.open(url: "postgres://pomodoro@db.internal/pomodoro")
/// ```
/// Throws `StoreError` when the database cannot be reached, when its schema cannot be brought up to date,
/// or when a newer server has migrated it; messages never contain the URL's password.
public final class PostgresRoomStore: RoomStore, @unchecked Sendable {
    /// The URL as messages show it: without the password.
    public let location: String
    /// What the writer deletes from the journal as it writes.
    public let retention: JournalRetention
    /// Reader connections at most.
    public static let maxReaders = 4

    private let url: String
    private let password: String?
    /// Guards `writer`; held for a whole batch, so batches never interleave.
    private let writeLock = NSLock()
    private var writer: PostgresConnection?
    /// Guards `idleReaders` and `readers`.
    private let readerCondition = NSCondition()
    private var idleReaders: [PostgresConnection] = []
    /// Reader connections in existence (idle or checked out, or being made).
    private var readers = 0
    /// Reads waiting for a connection (for tests).
    private var waitingForReader = 0

    private init(url: String, retention: JournalRetention, writer: PostgresConnection) {
        self.url = url
        self.location = Self.redacted(url)
        self.password = Self.password(in: url)
        self.retention = retention
        self.writer = writer
    }

    /// Connects to the database at `url` (a libpq URL, `postgres://USER[:PASSWORD]@HOST[:PORT]/DBNAME`, or a
    /// `key=value` string) and brings its schema up to date. Two servers opening one database at once take
    /// turns at migrating. Refuses a database that a newer version of the server has migrated further.
    public static func open(url: String, retention: JournalRetention = .standard) throws(StoreError)
        -> PostgresRoomStore {
        try open(url: url, migratedUpTo: nil, retention: retention)
    }

    /// `open(url:)`, stopping at migration `version` (for tests that build an older database).
    static func open(url: String, migratedUpTo version: String?,
                     retention: JournalRetention = .standard) throws(StoreError) -> PostgresRoomStore {
        let location = redacted(url)
        let secret = password(in: url)
        let connection = try withStoreError("connecting to \(location)", hiding: secret) { () throws(PostgresError) in
            try connect(url)
        }
        // Identity columns (10) and sha256() in the v4 migration (11).
        guard connection.serverVersion >= minimumServerVersion else {
            throw StoreError("\(location): PostgreSQL 11 or newer is needed (the server is version "
                             + "\(connection.serverVersion / 10_000))")
        }
        let outcome = try withStoreError("migrating \(location)", hiding: secret) { () throws(PostgresError) in
            try migrate(connection, upTo: version)
        }
        if case .newer(let versions) = outcome {
            throw StoreError("\(location): this database was migrated by a newer pomodoro-server (version "
                + "\(versions.joined(separator: ", "))); upgrade the server (this one knows "
                + "\(migrationVersions.joined(separator: ", ")))")
        }
        return PostgresRoomStore(url: url, retention: retention, writer: connection)
    }

    /// PostgreSQL 11, as `PQserverVersion` gives it.
    static let minimumServerVersion = 110_000

    /// Closes the connections; a later call makes new ones. (Dropping the last reference closes them too.)
    public func close() {
        writeLock.withLock { writer = nil }
        readerCondition.withLock {
            readers -= idleReaders.count
            idleReaders.removeAll()
        }
    }

    /// A new connection with the session settings the store relies on.
    private static func connect(_ url: String) throws(PostgresError) -> PostgresConnection {
        let connection = try PostgresConnection(url)
        // Explicit, so a server-wide `off` cannot weaken the durability `apply` promises.
        try connection.execute("SET synchronous_commit = on")
        // The migrations' `IF NOT EXISTS` notices are not news; libpq would print them on stderr.
        try connection.execute("SET client_min_messages = warning")
        return connection
    }

    // MARK: Connections

    /// Runs `body` on the writer connection, alone, making a new connection if the last one broke.
    private func withWriter<T>(_ what: @autoclosure () -> String,
                               _ body: (PostgresConnection) throws(PostgresError) -> T) throws(StoreError) -> T {
        writeLock.lock()
        defer { writeLock.unlock() }
        return try withStoreError("\(what()) (\(location))", hiding: password) { () throws(PostgresError) -> T in
            if writer?.isConnected != true {
                writer = nil
                writer = try Self.connect(url)
            }
            return try body(writer!)
        }
    }

    /// Runs `body` in one transaction on the writer connection: committed if it returns, rolled back if it
    /// throws. A connection found broken at `BEGIN` (the database restarted since the last batch) is
    /// replaced and the batch begun again: nothing of it had reached the server. A connection lost later
    /// fails the batch, since a lost `COMMIT` may or may not have been applied.
    func inWriteTransaction<T>(_ what: @autoclosure () -> String,
                                       _ body: (PostgresConnection) throws(PostgresError) -> T) throws(StoreError) -> T {
        try withWriter(what()) { connection throws(PostgresError) -> T in
            // SET LOCAL as well as the session's setting: behind a pooler that hands each transaction to
            // any server connection, only what the transaction sets itself holds. One round trip.
            let begin = "BEGIN; SET LOCAL synchronous_commit = on"
            var connection = connection
            do throws(PostgresError) {
                try connection.execute(begin)
            } catch where !connection.isConnected {
                writer = nil
                connection = try Self.connect(url)
                writer = connection
                try connection.execute(begin)
            }
            do throws(PostgresError) {
                let result = try body(connection)
                try connection.execute("COMMIT")
                return result
            } catch {
                if connection.isConnected { try? connection.execute("ROLLBACK") }
                throw error
            }
        }
    }

    /// Runs `body` on a reader connection from the pool, waiting while all `maxReaders` are in use. Reads
    /// change nothing, so a read that fails because its connection broke is run once more on a new one.
    private func withReader<T>(_ what: @autoclosure () -> String,
                               _ body: (PostgresConnection) throws(PostgresError) -> T) throws(StoreError) -> T {
        readerCondition.lock()
        while idleReaders.isEmpty && readers >= Self.maxReaders {
            waitingForReader += 1
            readerCondition.wait()
            waitingForReader -= 1
        }
        var connection = idleReaders.popLast()
        if connection == nil { readers += 1 }
        readerCondition.unlock()

        defer {
            readerCondition.lock()
            if let connection, connection.isConnected {
                idleReaders.append(connection)
            } else {
                readers -= 1
            }
            readerCondition.signal()
            readerCondition.unlock()
        }
        return try withStoreError("\(what()) (\(location))", hiding: password) { () throws(PostgresError) -> T in
            if connection?.isConnected == false { connection = nil }
            let reused = connection != nil
            if connection == nil { connection = try Self.connect(url) }
            do throws(PostgresError) {
                return try body(connection!)
            } catch where reused && !connection!.isConnected {
                connection = try Self.connect(url)
                return try body(connection!)
            }
        }
    }

    /// Runs `body` in a read-only transaction on `connection`, so that its queries see one snapshot.
    private static func snapshot<T>(_ connection: PostgresConnection,
                                    _ body: () throws(PostgresError) -> T) throws(PostgresError) -> T {
        try connection.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
        do {
            let result = try body()
            try connection.execute("COMMIT")
            return result
        } catch {
            if connection.isConnected { try? connection.execute("ROLLBACK") }
            throw error
        }
    }

    // MARK: RoomStore

    // Text is ordered `COLLATE "C"`: byte order, as SQLite's, whatever collation the database was made with.

    public func loadRooms() throws(StoreError) -> [StoredRoom] {
        let (rooms, members, bans) = try withReader("loading rooms") { connection throws(PostgresError) in
            try Self.snapshot(connection) { () throws(PostgresError) in
                (try connection.query("SELECT * FROM room ORDER BY id COLLATE \"C\""),
                 try connection.query("SELECT * FROM member ORDER BY room_id COLLATE \"C\", ord, id COLLATE \"C\""),
                 try connection.query("SELECT * FROM room_ban ORDER BY room_id COLLATE \"C\", ord"))
            }
        }
        var byRoom: [String: [MemberRecord]] = [:]
        for row in members.rows { byRoom[try row.string("room_id"), default: []].append(try Self.member(from: row)) }
        var bansByRoom: [String: [BanRecord]] = [:]
        for row in bans.rows { bansByRoom[try row.string("room_id"), default: []].append(try Self.ban(from: row)) }
        var result: [StoredRoom] = []
        for row in rooms.rows {
            let record = try Self.room(from: row)
            result.append(StoredRoom(record: record, members: byRoom[record.id.rawValue] ?? [],
                                     passcode: try row.text("passcode"), bans: bansByRoom[record.id.rawValue] ?? []))
        }
        return result
    }

    public func loadRoom(_ id: RoomID) throws(StoreError) -> StoredRoom? {
        let (rooms, members, bans, schedules) = try withReader("loading room \(id)") { connection throws(PostgresError) in
            try Self.snapshot(connection) { () throws(PostgresError) in
                (try connection.query("SELECT * FROM room WHERE id = $1", [id.rawValue]),
                 try connection.query("SELECT * FROM member WHERE room_id = $1 ORDER BY ord, id COLLATE \"C\"",
                                      [id.rawValue]),
                 try connection.query("SELECT * FROM room_ban WHERE room_id = $1 ORDER BY ord", [id.rawValue]),
                 // The room comes back whole: a room in memory without its schedules would save over them.
                 try connection.query("SELECT * FROM schedule WHERE room_id = $1 ORDER BY id", [id.rawValue]))
            }
        }
        guard let row = rooms.rows.first else { return nil }
        var list: [MemberRecord] = []
        for member in members.rows { list.append(try Self.member(from: member)) }
        var banList: [BanRecord] = []
        for ban in bans.rows { banList.append(try Self.ban(from: ban)) }
        var scheduleList: [Schedule] = []
        for schedule in schedules.rows { scheduleList.append(try Self.scheduleRow(schedule).schedule(room: id)) }
        return StoredRoom(record: try Self.room(from: row), members: list, passcode: try row.text("passcode"),
                          bans: banList, schedules: scheduleList)
    }

    public func loadSchedules() throws(StoreError) -> [RoomID: [Schedule]] {
        let rows = try withReader("loading schedules") { connection throws(PostgresError) in
            try connection.query("SELECT * FROM schedule ORDER BY room_id COLLATE \"C\", id")
        }
        var schedules: [RoomID: [Schedule]] = [:]
        for row in rows.rows {
            let raw = try row.string("room_id")
            let room: RoomID
            do { room = try RoomID(validating: raw) } catch {
                throw StoreError("a stored schedule's room id is not valid: \(raw.debugDescription)")
            }
            schedules[room, default: []].append(try Self.scheduleRow(row).schedule(room: room))
        }
        return schedules
    }

    public func loadSchedules(room: RoomID) throws(StoreError) -> [Schedule] {
        let rows = try withReader("loading the schedules of \(room)") { connection throws(PostgresError) in
            try connection.query("SELECT * FROM schedule WHERE room_id = $1 ORDER BY id", [room.rawValue])
        }
        var schedules: [Schedule] = []
        for row in rows.rows { schedules.append(try Self.scheduleRow(row).schedule(room: room)) }
        return schedules
    }

    public func apply(_ changes: [StoreChange]) throws(StoreError) {
        try apply(changes, fences: [:])
    }

    /// `apply`, as the owner of each room in `fences` under that epoch: the batch is refused whole
    /// (`StoreError.isFenced`) when any of those rooms has since been claimed under a higher epoch; see
    /// `claim(room:epoch:)`.
    public func apply(_ changes: [StoreChange], fences: [RoomID: Int64]) throws(StoreError) {
        guard !changes.isEmpty else { return }
        let retention = retention
        try inWriteTransaction("applying \(changes.count) changes") { connection throws(PostgresError) in
            for (room, epoch) in fences.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
                try Self.raiseFence(room: room, to: epoch, on: connection)
            }
            // The latest moment each room's journal was written at: retention counts from there.
            var written: [RoomID: Int64] = [:]
            for change in changes {
                try Self.apply(change, on: connection)
                switch change {
                case .focusCompleted(let session):
                    written[session.room] = max(written[session.room] ?? .min, session.endedAtMs)
                case .interrupted(let interruption):
                    written[interruption.room] = max(written[interruption.room] ?? .min, interruption.atMs)
                default: break
                }
            }
            if retention != .keepEverything {
                for (room, nowMs) in written {
                    try Self.prune(room: room, nowMs: nowMs, retention: retention, on: connection)
                }
            }
        }
    }

    public func sessions(room: RoomID, endedFrom from: Int64?, before: Int64?, limit: Int?) throws(StoreError)
        -> [FocusSessionRecord] {
        var conditions = ["room_id = $1"]
        var parameters: [String?] = [room.rawValue]
        if let from { parameters.append(String(from)); conditions.append("ended_at_ms >= $\(parameters.count)") }
        if let before { parameters.append(String(before)); conditions.append("ended_at_ms < $\(parameters.count)") }
        // LIMIT NULL is no limit.
        parameters.append(limit.map { String(max($0, 0)) })
        // The newest `limit` sessions, then each with its participants, oldest first.
        let sql = """
            SELECT s.id, s.started_at_ms, s.ended_at_ms, s.length_seconds,
                   p.member_id, p.name, p.task, p.focus_ms
            FROM (SELECT * FROM focus_session WHERE \(conditions.joined(separator: " AND "))
                  ORDER BY ended_at_ms DESC, id DESC LIMIT $\(parameters.count)::bigint) AS s
            LEFT JOIN session_member AS p ON p.session_id = s.id
            ORDER BY s.ended_at_ms, s.id, p.ord
            """
        let rows = try withReader("reading the sessions of room \(room)") { connection throws(PostgresError) in
            try connection.query(sql, parameters)
        }
        return try Self.sessions(from: rows, room: room)
    }

    /// Reads the rows through a cursor, a chunk at a time, and stops at the page's end, so a page of large
    /// sessions never holds more than the page and a chunk.
    public func historyPage(room: RoomID, before: Int64?, limit: Int, maxBytes: Int) throws(StoreError) -> HistoryPage {
        var parameters: [String?] = [room.rawValue]
        if let before { parameters.append(String(before)) }
        parameters.append(String(max(limit, 0) + 1))
        let sql = """
            DECLARE history NO SCROLL CURSOR FOR
            SELECT s.id, s.started_at_ms, s.ended_at_ms, s.length_seconds,
                   p.member_id, p.name, p.task, p.focus_ms
            FROM (SELECT * FROM focus_session WHERE room_id = $1\(before == nil ? "" : " AND ended_at_ms < $2")
                  ORDER BY ended_at_ms DESC, id DESC LIMIT $\(parameters.count)::bigint) AS s
            LEFT JOIN session_member AS p ON p.session_id = s.id
            ORDER BY s.ended_at_ms DESC, s.id DESC, p.ord
            """
        let chunk = 256
        return try withReader("reading the history of room \(room)") {
            connection throws(PostgresError) -> Result<HistoryPage, StoreError> in
            try Self.snapshot(connection) { () throws(PostgresError) -> Result<HistoryPage, StoreError> in
                try connection.query(sql, parameters)
                var page = PageAssembler(room: room, limit: limit, maxBytes: maxBytes)
                while true {
                    let rows = try connection.query("FETCH \(chunk) FROM history")
                    do throws(StoreError) {
                        for row in rows.rows { if let done = try page.add(row) { return .success(done) } }
                    } catch {
                        return .failure(error)
                    }
                    if rows.count < chunk { return .success(HistoryPage(sessions: page.sessions, more: false)) }
                }
            }
        }.get()
    }

    /// A history page as its rows come, newest first: the same cut as `HistoryPage.cut`.
    private struct PageAssembler {
        let room: RoomID
        let limit: Int
        let maxBytes: Int
        var sessions: [FocusSessionRecord] = []
        var bytes = 0
        var lastID: Int64?

        /// Takes one row; returns the page once a row shows it is complete.
        mutating func add(_ row: Row) throws(StoreError) -> HistoryPage? {
            let id: Int64 = try row.int64("id")
            if id != lastID {
                // A new session: the one before it is complete and counted.
                if let previous = sessions.last { bytes += HistoryPage.estimatedBytes(of: previous) }
                if sessions.count == limit || bytes >= maxBytes { return HistoryPage(sessions: sessions, more: true) }
                lastID = id
                sessions.append(try PostgresRoomStore.session(from: row, room: room))
            }
            if let participant = try PostgresRoomStore.participant(from: row) {
                sessions[sessions.count - 1].participants.append(participant)
            }
            return nil
        }
    }

    public func interruptions(room: RoomID, from: Int64?, before: Int64?) throws(StoreError)
        -> [InterruptionRecord] {
        var conditions = ["room_id = $1"]
        var parameters: [String?] = [room.rawValue]
        if let from { parameters.append(String(from)); conditions.append("at_ms >= $\(parameters.count)") }
        if let before { parameters.append(String(before)); conditions.append("at_ms < $\(parameters.count)") }
        let sql = """
            SELECT member_id, name, at_ms FROM interruption WHERE \(conditions.joined(separator: " AND "))
            ORDER BY at_ms, id
            """
        let rows = try withReader("reading the interruptions of room \(room)") { connection throws(PostgresError) in
            try connection.query(sql, parameters)
        }
        var result: [InterruptionRecord] = []
        for row in rows.rows {
            result.append(InterruptionRecord(room: room, member: try row.text("member_id").map(MemberID.init),
                                             name: try row.text("name"), atMs: try row.int64("at_ms")))
        }
        return result
    }

    public func journalTotals(room: RoomID, quarters: Range<Int64>) throws(StoreError) -> JournalTotals {
        let (days, window) = try withReader("reading the running totals of room \(room)") {
            connection throws(PostgresError) in
            try Self.snapshot(connection) { () throws(PostgresError) in
                (try connection.query("""
                    SELECT scope, name, day AS bucket, sessions, focus_ms, interruptions, first_end_ms, last_end_ms
                    FROM journal_day WHERE room_id = $1 ORDER BY day, scope, name COLLATE "C"
                    """, [room.rawValue]),
                 try connection.query("""
                    SELECT scope, name, quarter AS bucket, sessions, focus_ms, interruptions,
                           NULL AS first_end_ms, NULL AS last_end_ms
                    FROM journal_quarter WHERE room_id = $1 AND quarter >= $2 AND quarter < $3
                    ORDER BY quarter, scope, name COLLATE "C"
                    """, [room.rawValue, String(quarters.lowerBound), String(quarters.upperBound)]))
            }
        }
        var dayBuckets: [JournalTotals.Bucket] = []
        for row in days.rows { dayBuckets.append(try Self.bucket(from: row)) }
        var quarterBuckets: [JournalTotals.Bucket] = []
        for row in window.rows { quarterBuckets.append(try Self.bucket(from: row)) }
        return JournalTotals(days: dayBuckets, quarters: quarterBuckets, quarterRange: quarters)
    }

    /// Applies the retention to every room's journal at `nowMs` (the writer only prunes rooms as they
    /// write), one transaction per batch, until nothing is left to delete. Returns the rows deleted. Takes
    /// the writer connection between batches: call it off the service thread.
    @discardableResult
    public func pruneJournal(nowMs: Int64) throws(StoreError) -> Int {
        guard retention != .keepEverything else { return 0 }
        let rooms = try withReader("listing the rooms with a journal") { connection throws(PostgresError) in
            try connection.query("SELECT room_id FROM journal_size ORDER BY room_id COLLATE \"C\"")
                .values.compactMap { $0[0] }
        }
        let retention = retention
        var total = 0
        for raw in rooms {
            guard let room = try? RoomID(validating: raw) else { continue }
            while true {
                let deleted = try inWriteTransaction("deleting old journal rows") { connection throws(PostgresError) in
                    try Self.prune(room: room, nowMs: nowMs, retention: retention, on: connection)
                }
                total += deleted
                if deleted == 0 { break }
            }
        }
        return total
    }

    // MARK: For tests

    /// Runs `sql` on the writer connection (tests use it to build an older database by hand).
    func execute(sql: String) throws(StoreError) {
        try withWriter("executing SQL") { connection throws(PostgresError) in try connection.execute(sql) }
    }

    /// The first column of every row `sql` returns, as text ("NULL" for NULL).
    func column(sql: String) throws(StoreError) -> [String] {
        try withWriter("reading SQL") { connection throws(PostgresError) in
            try connection.query(sql).values.map { $0[0] ?? "NULL" }
        }
    }

    /// Reader connections in existence, and reads waiting for one.
    var readerPool: (readers: Int, waiting: Int) { readerCondition.withLock { (readers, waitingForReader) } }

    /// The migrations applied to the database, oldest first (`migrationVersions` once `open` has run).
    public func appliedMigrations() throws(StoreError) -> [String] {
        try column(sql: "SELECT version FROM schema_migrations ORDER BY version")
    }

    // MARK: Messages without the password

    /// `url` without its password, for messages: the password of a URL's user part or of a `password`
    /// parameter (`?password=…`, or `password=…` in a `key=value` string) becomes `***`.
    public static func redacted(_ url: String) -> String {
        guard let secret = password(in: url), !secret.isEmpty else { return url }
        return url.replacingOccurrences(of: secret, with: "***")
    }

    /// The password as it is written in `url`, if any.
    static func password(in url: String) -> String? {
        if let scheme = url.range(of: "://") {
            let rest = url[scheme.upperBound...]
            let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" } ?? rest.endIndex
            let authority = rest[..<authorityEnd]
            if let at = authority.lastIndex(of: "@"), let colon = authority[..<at].firstIndex(of: ":") {
                let secret = String(authority[authority.index(after: colon)..<at])
                if !secret.isEmpty { return secret }
            }
            if let query = url.firstIndex(of: "?") {
                for pair in url[url.index(after: query)...].split(separator: "&") where pair.hasPrefix("password=") {
                    return String(pair.dropFirst("password=".count))
                }
            }
            return nil
        }
        // key=value: the value may be quoted.
        guard let key = url.range(of: #"(^|\s)password\s*=\s*"#, options: .regularExpression) else { return nil }
        let rest = url[key.upperBound...]
        if rest.first == "'" {
            let body = rest.dropFirst()
            return String(body[..<(body.firstIndex(of: "'") ?? body.endIndex)])
        }
        return String(rest[..<(rest.firstIndex { $0 == " " } ?? rest.endIndex)])
    }
}

/// The one place a `PostgresError` becomes a `StoreError`, saying what was being done and where. Parameters
/// are not in PostgreSQL's messages; the password is taken out of the message in case libpq repeats the
/// URL, in its written and percent-decoded forms.
func withStoreError<T>(_ what: @autoclosure () -> String, hiding password: String?,
                       _ body: () throws(PostgresError) -> T) throws(StoreError) -> T {
    do {
        return try body()
    } catch {
        var message = "\(what()): \(error)"
        for secret in [password, password?.removingPercentEncoding].compactMap({ $0 }) where !secret.isEmpty {
            message = message.replacingOccurrences(of: secret, with: "***")
        }
        throw StoreError(message, isTransient: error.isUnreachable, isFenced: error.code == PostgresError.fenced)
    }
}
