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
        let rows = try connection.query("""
            INSERT INTO room_fence (room_id, epoch) VALUES ($1, $2::bigint)
            ON CONFLICT (room_id) DO UPDATE SET epoch = excluded.epoch
            WHERE room_fence.epoch \(strictly ? "<" : "<=") excluded.epoch
            """, [room.rawValue, String(epoch)])
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
