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
public final class PostgresRoomStore: RoomStore, @unchecked Sendable {  // safe: its vars are touched only under `writeLock` or `readerCondition`, and a connection (not Sendable) has one owner at a time: the writer under the lock, or the one read that took it from the pool
    /// The URL as messages show it: without the password.
    public let location: String
    /// What the writer deletes from the journal as it writes.
    public let retention: JournalRetention
    /// Reader connections at most.
    public static let maxReaders = 4

    /// The URL as given, password and all (for the cluster's own connections to the same database).
    package let url: String
    let password: String?
    /// The connection fences are confirmed on (`PostgresRoomStore+FenceConfirmation.swift`).
    let fenceReader: FenceReader
    /// Guards `writer`; held for a whole batch, so batches never interleave.
    private let writeLock = NSLock()
    private var writer: PostgresConnection?
    /// Whether the writer prepares its statements (see `PostgresConnection.pipeline`); touched under
    /// `writeLock`.
    private var preparesStatements = true
    /// Guards `idleReaders` and `readers`.
    private let readerCondition = NSCondition()
    private var idleReaders: [PostgresConnection] = []
    /// Reader connections in existence (idle or checked out, or being made).
    private var readers = 0
    /// Reads waiting for a connection (for tests).
    private var waitingForReader = 0

    private init(url: String, retention: JournalRetention, writer: PostgresConnection) {
        self.url = url
        fenceReader = FenceReader(url: url)
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
    func withWriter<T>(_ what: @autoclosure () -> String,
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

    /// `BEGIN` with the settings every write transaction sets itself: `SET LOCAL` as well as the session's
    /// setting, because behind a pooler that hands each transaction to any server connection, only what the
    /// transaction sets itself holds.
    static let beginStatements = [PostgresStatement("BEGIN"), PostgresStatement("SET LOCAL synchronous_commit = on")]
    /// The same, as one text for `execute` (one round trip), where `BEGIN` goes on its own.
    static let beginSQL = beginStatements.map(\.sql).joined(separator: "; ")

    /// Runs `body` in one transaction on the writer connection: committed if it returns, rolled back if it
    /// throws. A connection found broken before anything of the batch reached the server (the database
    /// restarted since the last batch) is replaced and the batch begun again. A connection lost later fails
    /// the batch, since a lost `COMMIT` may or may not have been applied.
    ///
    /// With `beginsInBody`, `body` sends `beginStatements` itself, ahead of its first statements in one
    /// pipeline (`PostgresWriting.start`), so that `BEGIN` costs no round trip of its own; a connection lost
    /// in that body before `COMMIT` is replaced and the body run once more, since nothing of it committed.
    func inWriteTransaction<T>(_ what: @autoclosure () -> String, beginsInBody: Bool = false,
                               _ body: (PostgresConnection) throws(PostgresError) -> T) throws(StoreError) -> T {
        try withWriter(what()) { connection throws(PostgresError) -> T in
            var connection = connection
            if !beginsInBody {
                do throws(PostgresError) {
                    try connection.execute(Self.beginSQL)
                } catch where !connection.isConnected {
                    connection = try reconnectWriter()
                    try connection.execute(Self.beginSQL)
                }
            }
            let result: T
            do throws(PostgresError) {
                do throws(PostgresError) {
                    result = try body(connection)
                } catch where beginsInBody && !connection.isConnected && error.code == nil {
                    connection = try reconnectWriter()
                    result = try body(connection)
                }
            } catch {
                connection.rollBackAfterFailure()
                // Lost before COMMIT was sent (the primary went away, a failover): nothing of the batch
                // committed, so it is an outage, tried again in order, like a connection refused.
                guard connection.isConnected || error.code != nil else {
                    throw PostgresError(code: PostgresError.connectionLostBeforeCommit, message: error.message)
                }
                throw error
            }
            do throws(PostgresError) {
                try connection.execute("COMMIT")
                return result
            } catch {
                connection.rollBackAfterFailure()
                throw error
            }
        }
    }

    /// A new writer connection in place of one found broken (called with the writer's lock held).
    private func reconnectWriter() throws(PostgresError) -> PostgresConnection {
        writer = nil
        let connection = try Self.connect(url)
        writer = connection
        return connection
    }

    /// Runs `body` on a reader connection from the pool, waiting while all `maxReaders` are in use. Reads
    /// change nothing, so a read that fails because its connection broke is run once more on a new one.
    func withReader<T>(_ what: @autoclosure () -> String,
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
    static func snapshot<T>(_ connection: PostgresConnection,
                                    _ body: () throws(PostgresError) -> T) throws(PostgresError) -> T {
        try connection.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
        do {
            let result = try body()
            try connection.execute("COMMIT")
            return result
        } catch {
            connection.rollBackAfterFailure()
            throw error
        }
    }

    // MARK: RoomStore

    public func loadRooms() throws(StoreError) -> [StoredRoom] {
        let s = Self.statements
        let (rooms, members, bans, tokens) = try withReader("loading rooms") { connection throws(PostgresError) in
            try Self.snapshot(connection) { () throws(PostgresError) in
                (try connection.query(s.load(.room, room: nil)), try connection.query(s.load(.member, room: nil)),
                 try connection.query(s.load(.ban, room: nil)), try connection.query(s.load(.apiToken, room: nil)))
            }
        }
        var byRoom: [String: [MemberRecord]] = [:]
        for row in members.rows { byRoom[try row.string("room_id"), default: []].append(try RowCodec.member(from: row)) }
        var bansByRoom: [String: [BanRecord]] = [:]
        for row in bans.rows { bansByRoom[try row.string("room_id"), default: []].append(try RowCodec.ban(from: row)) }
        var tokensByRoom: [String: [APITokenRecord]] = [:]
        for row in tokens.rows {
            tokensByRoom[try row.string("room_id"), default: []].append(try RowCodec.apiToken(from: row))
        }
        var result: [StoredRoom] = []
        for row in rooms.rows {
            let id = try row.string("id")
            result.append(try RowCodec.storedRoom(from: row, members: byRoom[id] ?? [], bans: bansByRoom[id] ?? [],
                                                  apiTokens: tokensByRoom[id] ?? []))
        }
        return result
    }

    public func loadRoom(_ id: RoomID) throws(StoreError) -> StoredRoom? {
        let s = Self.statements
        let (rooms, members, bans, schedules, tokens) = try withReader("loading room \(id)") { connection throws(PostgresError) in
            try Self.snapshot(connection) { () throws(PostgresError) in
                (try connection.query(s.load(.room, room: id)), try connection.query(s.load(.member, room: id)),
                 try connection.query(s.load(.ban, room: id)),
                 // The room comes back whole: a room in memory without its schedules would save over them.
                 try connection.query(s.schedules(room: id)), try connection.query(s.load(.apiToken, room: id)))
            }
        }
        guard let row = rooms.rows.first else { return nil }
        var list: [MemberRecord] = []
        for member in members.rows { list.append(try RowCodec.member(from: member)) }
        var banList: [BanRecord] = []
        for ban in bans.rows { banList.append(try RowCodec.ban(from: ban)) }
        var scheduleList: [Schedule] = []
        for schedule in schedules.rows { scheduleList.append(try RowCodec.schedule(from: schedule, room: id)) }
        var tokenList: [APITokenRecord] = []
        for token in tokens.rows { tokenList.append(try RowCodec.apiToken(from: token)) }
        return try RowCodec.storedRoom(from: row, members: list, bans: banList, schedules: scheduleList,
                                       apiTokens: tokenList)
    }

    public func loadSchedules() throws(StoreError) -> [RoomID: [Schedule]] {
        let rows = try withReader("loading schedules") { connection throws(PostgresError) in
            try connection.query(Self.statements.schedules(room: nil))
        }
        var schedules: [RoomID: [Schedule]] = [:]
        for row in rows.rows {
            let room = try RowCodec.scheduleRoom(from: row)
            schedules[room, default: []].append(try RowCodec.schedule(from: row, room: room))
        }
        return schedules
    }

    public func loadSchedules(room: RoomID) throws(StoreError) -> [Schedule] {
        let rows = try withReader("loading the schedules of \(room)") { connection throws(PostgresError) in
            try connection.query(Self.statements.schedules(room: room))
        }
        var schedules: [Schedule] = []
        for row in rows.rows { schedules.append(try RowCodec.schedule(from: row, room: room)) }
        return schedules
    }

    public func apply(_ changes: [StoreChange]) throws(StoreError) {
        try apply(changes, fences: [:])
    }

    /// `apply`, as the owner of each room in `fences` under that epoch: the batch is refused whole
    /// (`StoreError.isFenced`) when any of those rooms has since been claimed under a higher epoch; see
    /// `claim(room:epoch:)`.
    ///
    /// The batch's statements go to the server in a pipeline (`PostgresWriting`): one round trip begins the
    /// transaction, raises the fences and takes the new sessions' ids (when there are any: otherwise these go
    /// with the changes), one sends every change (and reads whether a room is over the journal's cap), then
    /// `COMMIT`.
    public func apply(_ changes: [StoreChange], fences: [RoomID: Int64]) throws(StoreError) {
        guard !changes.isEmpty else { return }
        let retention = retention
        let sessions = changes.reduce(0) { count, change in
            if case .focusCompleted = change { count + 1 } else { count }
        }
        var unprepared = false
        let write = { (connection: PostgresConnection) throws(PostgresError) in
            let writing = PostgresWriting(connection: connection, prepared: self.preparesStatements)
            do throws(PostgresError) {
                try writing.start(begin: true, fences: fences, sessions: sessions)
                try writing.apply(changes, retention: retention)
                try writing.flush()
            } catch where error.code == PostgresError.preparedStatementMissing
                            || error.code == PostgresError.preparedStatementExists {
                // A pooler between us and the server runs our transactions on connections that do not have
                // our prepared statements: from now on the writer sends its statements unprepared.
                self.preparesStatements = false
                unprepared = true
                throw error
            }
        }
        do {
            try inWriteTransaction("applying \(changes.count) changes", beginsInBody: true, write)
        } catch where unprepared {
            try inWriteTransaction("applying \(changes.count) changes", beginsInBody: true, write)
        }
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
        // Versions are names ("api_tokens" after "v8"), so their order is the history's, not the text's.
        let applied = try column(sql: "SELECT version FROM schema_migrations ORDER BY version")
        let known = Self.migrationVersions
        return known.filter(applied.contains) + applied.filter { !known.contains($0) }
    }
}
