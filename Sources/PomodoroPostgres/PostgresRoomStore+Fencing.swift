import PomodoroCore
import PomodoroStore

/// Fencing for a cluster (docs/CLUSTER.md): each room's highest owner epoch seen by the database.
///
/// A node that takes a room's lease in Redis gets an epoch higher than every owner's before; it `claim`s
/// the room under that epoch before it loads it, and writes with `apply(_:fences:)`. Both raise the room's
/// fence to their epoch in the same transaction as the rest of their work; a claim is refused unless its
/// epoch is higher than the fence, a write when the fence is higher than its epoch. So once a new owner has claimed a room, nothing an older owner sends afterwards lands,
/// even a batch it had queued before it stalled: the row lock on the fence orders the two, and PostgreSQL's
/// `ON CONFLICT DO UPDATE … WHERE` checks the newest version of the row.
extension PostgresRoomStore {
    static let fenceTable = """
        CREATE TABLE IF NOT EXISTS room_fence (
            room_id text NOT NULL PRIMARY KEY,
            epoch bigint NOT NULL
        )
        """

    /// Claims `room` for the owner under `epoch` and loads it, in one transaction: raises the room's fence
    /// to `epoch`, so that writes under older epochs are refused from now on, then reads the room as the
    /// fence saw it. Returns nil for a room that was never stored (the fence is raised all the same).
    /// - Throws: `StoreError` with `isFenced` when the room was already claimed under a higher epoch.
    public func claim(room: RoomID, epoch: Int64) throws(StoreError) -> StoredRoom? {
        let (rooms, members, tokens) = try inWriteTransaction("claiming room \(room) under epoch \(epoch)") {
            connection throws(PostgresError) in
            try Self.raiseFence(room: room, to: epoch, strictly: true, on: connection)
            return (try connection.query(Self.statements.load(.room, room: room)),
                    try connection.query(Self.statements.load(.member, room: room)),
                    // The room's API tokens come with it: the control API answers on its new owner.
                    try connection.query(Self.statements.load(.apiToken, room: room)))
        }
        guard let row = rooms.rows.first else { return nil }
        var list: [MemberRecord] = []
        for member in members.rows { list.append(try RowCodec.member(from: member)) }
        var tokenList: [APITokenRecord] = []
        for token in tokens.rows { tokenList.append(try RowCodec.apiToken(from: token)) }
        return try RowCodec.storedRoom(from: row, members: list, bans: [], apiTokens: tokenList)
    }

    /// Claims many rooms at once (a node taking the rooms a draining node handed it), in one transaction:
    /// one statement raises every room's fence to its epoch where it is lower (`claim(room:epoch:)`'s rule,
    /// room by room), and four read the rooms claimed, their members, API tokens and schedules. A room whose
    /// fence is already at its epoch or above is `.fenced` and left as it was. The fences are raised in the
    /// rooms' order, as a writer's batch raises them, so that the two never wait for each other in a cycle.
    public func claim(rooms: [RoomID: Int64]) throws(StoreError) -> [RoomID: RoomClaim] {
        guard !rooms.isEmpty else { return [:] }
        let c = Self.statements.dialect.byteOrder
        typealias Loaded = (rooms: PostgresRows, members: PostgresRows, tokens: PostgresRows, schedules: PostgresRows)
        let (raised, loaded) = try inWriteTransaction("claiming \(rooms.count) rooms") {
            connection throws(PostgresError) -> (PostgresRows, Loaded?) in
            let raised = try connection.query(Self.raiseFencesSQL + "\nRETURNING room_id", Self.fenceParameters(rooms))
            let claimed = (0..<raised.count).compactMap { raised[$0, "room_id"] }
            guard !claimed.isEmpty else { return (raised, nil) }
            let list = [FenceReader.arrayLiteral(claimed)]
            return (raised, (
                try connection.query("SELECT * FROM room WHERE id = ANY($1::text[])", list),
                try connection.query("SELECT * FROM member WHERE room_id = ANY($1::text[]) ORDER BY room_id\(c), ord, id\(c)", list),
                // The rooms' API tokens come with them: the control API answers on their new owner.
                try connection.query("SELECT * FROM api_token WHERE room_id = ANY($1::text[]) ORDER BY room_id\(c), created_at_ms, id\(c)", list),
                try connection.query("SELECT * FROM schedule WHERE room_id = ANY($1::text[]) ORDER BY room_id\(c), id", list)))
        }
        let byName = Dictionary(uniqueKeysWithValues: rooms.keys.map { ($0.rawValue, $0) })
        var claims: [RoomID: RoomClaim] = rooms.mapValues { _ in .fenced }
        for index in 0..<raised.count {
            if let name = raised[index, "room_id"], let room = byName[name] { claims[room] = .claimed(nil) }
        }
        guard let (roomRows, memberRows, tokenRows, scheduleRows) = loaded else { return claims }
        var members: [String: [MemberRecord]] = [:]
        for row in memberRows.rows { members[try row.string("room_id"), default: []].append(try RowCodec.member(from: row)) }
        var tokens: [String: [APITokenRecord]] = [:]
        for row in tokenRows.rows { tokens[try row.string("room_id"), default: []].append(try RowCodec.apiToken(from: row)) }
        var schedules: [String: [Schedule]] = [:]
        for row in scheduleRows.rows {
            let room = try RowCodec.scheduleRoom(from: row)
            schedules[room.rawValue, default: []].append(try RowCodec.schedule(from: row, room: room))
        }
        for row in roomRows.rows {
            let id = try row.string("id")
            guard let room = byName[id] else { continue }
            claims[room] = .claimed(try RowCodec.storedRoom(from: row, members: members[id] ?? [], bans: [],
                                                            schedules: schedules[id] ?? [], apiTokens: tokens[id] ?? []))
        }
        return claims
    }

    /// The room's fence: the highest epoch that claimed or wrote it (nil when none did).
    public func fence(room: RoomID) throws(StoreError) -> Int64? {
        let rows = try inWriteTransaction("reading the fence of room \(room)") { connection throws(PostgresError) in
            try connection.query("SELECT epoch FROM room_fence WHERE room_id = $1", [room.rawValue])
        }
        return rows.values.first?.first.flatMap { $0.flatMap { Int64($0) } }
    }

    /// Raises the fence of `room` to `epoch`, or throws `PostgresError.fenced` when it is higher already.
    /// A write under an equal fence passes (the owner writing again); a claim (`strictly`) needs a higher
    /// epoch than any before, so that a Redis that forgot its counters and hands out an epoch again cannot
    /// give a second node the first one's epoch.
    static func raiseFence(room: RoomID, to epoch: Int64, strictly: Bool = false,
                           on connection: PostgresConnection) throws(PostgresError) {
        let statement = fenceStatement(room: room, epoch: epoch, strictly: strictly)
        try checkFence(try connection.query(statement.sql, statement.parameters), room: room, epoch: epoch, strictly: strictly)
    }

    /// The statement that raises the fence of `room` to `epoch` (see `raiseFence`); `checkFence` reads its answer.
    static func fenceStatement(room: RoomID, epoch: Int64, strictly: Bool = false) -> PostgresStatement {
        PostgresStatement("""
            INSERT INTO room_fence (room_id, epoch) VALUES ($1, $2::bigint)
            ON CONFLICT (room_id) DO UPDATE SET epoch = excluded.epoch
            WHERE room_fence.epoch \(strictly ? "<" : "<=") excluded.epoch
            """, [room.rawValue, String(epoch)])
    }

    /// Raises the error `PostgresError.fenced` inside PostgreSQL, for `fencesStatements`: a fenced write fails
    /// the statement, and with it the pipeline and the transaction it went in, without a round trip of its
    /// own. Created (again) with the fence table, outside the versioned history.
    static let fenceRefusal = """
        CREATE OR REPLACE FUNCTION pomodoro_fence_refused(room text, epoch bigint) RETURNS void
        LANGUAGE plpgsql AS $$
        BEGIN
            RAISE EXCEPTION 'room % belongs to a newer owner than epoch %', room, epoch USING ERRCODE = 'PF001';
        END
        $$
        """

    /// Two statements that raise the fence of every room of a batch to its epoch (a write's rule:
    /// `raiseFence` without `strictly`) and fail with `PostgresError.fenced`, naming the first room whose
    /// fence is higher. Their answers need not be read: they are sent ahead of the batch's changes, in its
    /// first pipeline, and a refusal fails the pipeline and the transaction before any change is written.
    ///
    /// The first locks every room's fence row, in the rooms' order (as `claim(rooms:)` takes them, so that
    /// the two never wait for each other in a cycle), inserts the new ones and updates only those lower than
    /// the epoch: `ON CONFLICT DO UPDATE` locks the row even where its `WHERE` is false, so the owner
    /// writing again under its own epoch, the common case, writes no new row version. The second, in a
    /// snapshot taken after those locks (READ COMMITTED), finds a fence above its epoch: a claim committed
    /// before the lock was taken; none can commit after it until this transaction ends.
    static func fencesStatements(_ fences: [RoomID: Int64]) -> [PostgresStatement] {
        let parameters = fenceParameters(fences)
        return [
            PostgresStatement(raiseFencesSQL, parameters),
            PostgresStatement("""
                SELECT pomodoro_fence_refused(w.room_id, w.epoch)
                FROM (SELECT c.room_id, c.epoch
                      FROM unnest($1::text[], $2::bigint[]) WITH ORDINALITY AS c(room_id, epoch, n)
                      JOIN room_fence f ON f.room_id = c.room_id AND f.epoch > c.epoch
                      ORDER BY c.n LIMIT 1) AS w
                """, parameters),
        ]
    }

    /// Raises the fence of each room of `$1` to its epoch in `$2` where it is lower, in the arrays' order; for
    /// a claim (which adds `RETURNING`) and a writer's batch alike.
    static let raiseFencesSQL = """
        INSERT INTO room_fence (room_id, epoch)
        SELECT room_id, epoch FROM unnest($1::text[], $2::bigint[]) WITH ORDINALITY AS c(room_id, epoch, n)
        ORDER BY n
        ON CONFLICT (room_id) DO UPDATE SET epoch = excluded.epoch
        WHERE room_fence.epoch < excluded.epoch
        """

    /// `raiseFencesSQL`'s parameters (and the refusal's): the rooms, then their epochs, in the rooms' order,
    /// the one order in which claims and writers' batches lock fences, so that they never wait in a cycle.
    static func fenceParameters(_ fences: [RoomID: Int64]) -> [String?] {
        let order = fences.sorted { $0.key.rawValue < $1.key.rawValue }
        return [FenceReader.arrayLiteral(order.map(\.key.rawValue)), "{" + order.map { String($0.value) }.joined(separator: ",") + "}"]
    }

    /// Throws `PostgresError.fenced` unless `fenceStatement`'s answer `rows` says the fence was raised.
    static func checkFence(_ rows: PostgresRows, room: RoomID, epoch: Int64, strictly: Bool = false) throws(PostgresError) {
        guard rows.affected == 1 else {
            throw PostgresError(code: PostgresError.fenced,
                                message: "room \(room) belongs to \(strictly ? "an owner as new as" : "a newer owner than") epoch \(epoch)")
        }
    }
}

extension PostgresError {
    /// Our own code (outside SQLSTATE's standard classes) for a write refused by a room's fence.
    public static let fenced = "PF001"
}
