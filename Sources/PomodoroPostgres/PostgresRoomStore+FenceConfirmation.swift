import PomodoroCore
import PomodoroStore

/// Confirms a cluster node's epochs against the rooms' fences, for an owner that cannot reach Redis
/// (docs/CLUSTER.md, "Without Redis: the fence keeps the room").
///
/// Why this is enough to keep a room: nobody can take a room without first taking its lease in Redis and
/// then claiming it here, which raises its fence above the owner's epoch. So while the fence still holds the
/// owner's epoch, no other node has acted as the room's owner; and a term counted from the moment the
/// confirmation was *sent* (as a Redis renewal's is) ends at most one term after another node's claim, which
/// the owner sees on its next confirmation at the latest. A database that cannot be reached confirms nothing.
///
/// One statement per round for all the rooms, on a connection of its own (never the writer, which may be
/// waiting on a batch), bounded in time (`PostgresConnection(_:within:)`, `query(_:_:within:)`).
extension PostgresRoomStore: FenceConfirming {
    public func confirmFences(_ held: [RoomID: Int64], within seconds: Double) throws(StoreError) -> [RoomID: Bool] {
        guard !held.isEmpty else { return [:] }
        return try withStoreError("confirming \(held.count) rooms' fences (\(location))", hiding: password) {
            () throws(PostgresError) -> [RoomID: Bool] in
            try fenceReader.confirm(held, within: seconds)
        }
    }
}

/// The connection `confirmFences` reads on, made again when it broke or an answer came late.
final class FenceReader: Sendable {
    private let url: String
    /// The connection, one confirmation at a time (the keeper's thread is the only caller).
    private let connection = LockedState<PostgresConnection?>(nil)

    init(url: String) { self.url = url }

    func confirm(_ held: [RoomID: Int64], within seconds: Double) throws(PostgresError) -> [RoomID: Bool] {
        let rows = try connection.withLock { connection throws(PostgresError) -> PostgresRows in
            if connection?.isConnected != true {
                connection = nil
                connection = try PostgresConnection(url, within: seconds)
            }
            let rows: PostgresRows
            do throws(PostgresError) {
                rows = try connection!.query("""
                    SELECT pg_is_in_recovery()::text AS standby, f.room_id, f.epoch::text AS epoch
                    FROM (SELECT 1) AS one LEFT JOIN room_fence f ON f.room_id = ANY($1::text[])
                    """, [Self.arrayLiteral(held.keys.map(\.rawValue))], within: seconds)
            } catch {
                if connection?.isConnected != true { connection = nil }
                throw error
            }
            if rows.count > 0, rows[0, "standby"] == "true" {
                connection = nil   // a standby now (a failover): the next round connects again, to the primary
                throw PostgresError(code: nil, message: "the database reached is a standby: it cannot confirm a fence")
            }
            return rows
        }
        var fences: [String: Int64] = [:]
        for index in 0..<rows.count {
            if let room = rows[index, "room_id"], let epoch = rows[index, "epoch"].flatMap({ Int64($0) }) {
                fences[room] = epoch
            }
        }
        return held.reduce(into: [:]) { confirmed, entry in confirmed[entry.key] = fences[entry.key.rawValue] == entry.value }
    }

    /// `{"a","b"}`: a PostgreSQL text array with every element quoted, its `\` and `"` escaped with a backslash.
    /// Built from the UTF-8 bytes: a fenced batch writes one for its rooms (Foundation's string replacing cost
    /// a writer more than the rest of the batch's parameters).
    static func arrayLiteral(_ items: [String]) -> String {
        let backslash = UInt8(ascii: "\\"), quote = UInt8(ascii: "\"")
        var bytes: [UInt8] = [UInt8(ascii: "{")]
        bytes.reserveCapacity(items.reduce(2) { $0 + $1.utf8.count + 3 })
        for (index, item) in items.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            bytes.append(quote)
            for byte in item.utf8 {
                if byte == backslash || byte == quote { bytes.append(backslash) }
                bytes.append(byte)
            }
            bytes.append(quote)
        }
        bytes.append(UInt8(ascii: "}"))
        return String(decoding: bytes, as: UTF8.self)
    }
}
