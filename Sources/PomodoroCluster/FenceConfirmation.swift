import Foundation
import PomodoroCore
import PomodoroPostgres

/// Confirms this node's epochs against the rooms' fences in PostgreSQL, for an owner that cannot reach
/// Redis (docs/CLUSTER.md, "Failure modes").
///
/// Why this is enough to keep a room: nobody can take a room without first taking its lease in Redis and
/// then claiming it in the database, which raises its fence above this node's epoch. So while the fence still
/// holds this node's epoch, no other node has acted as the room's owner; and a term counted from the moment
/// the confirmation was *sent* (as a Redis renewal's is) ends at most one term after another node's claim,
/// which this node sees on its next confirmation at the latest. A database that cannot be reached confirms
/// nothing: the terms run out on the node's clock as before.
///
/// One statement per round for all the rooms, on a connection of its own (never the store's writer, which
/// may be waiting on a batch), bounded in time: for the keeper's thread only.
public final class FenceConfirmation {
    private let url: String
    /// How long connecting, and then the statement, may each take: well inside a term.
    public let timeout: Double
    private var connection: PostgresConnection?

    public init(url: String, timeout: Double = 0.4) {
        self.url = url
        self.timeout = timeout
    }

    /// What the fences say of each room this node holds.
    public enum Verdict: Equatable, Sendable {
        /// The fence is at this node's epoch: nobody claimed the room since.
        case confirmed
        /// The fence is above this node's epoch (another node claimed the room), or the room has none.
        case movedOn
    }

    /// The fences of `held` (room → this node's epoch), read in one statement from a primary.
    /// - Throws: `PostgresError` when the database cannot be reached or answered late, or when the server
    ///   reached is a standby (it cannot vouch that nobody claimed the room on the primary).
    public func confirm(_ held: [RoomID: Int64]) throws(PostgresError) -> [RoomID: Verdict] {
        guard !held.isEmpty else { return [:] }
        if connection?.isConnected != true {
            connection = nil
            connection = try PostgresConnection(url, within: timeout)
        }
        let rows: PostgresRows
        do throws(PostgresError) {
            rows = try connection!.query("""
                SELECT pg_is_in_recovery()::text AS standby, f.room_id, f.epoch::text AS epoch
                FROM (SELECT 1) AS one LEFT JOIN room_fence f ON f.room_id = ANY($1::text[])
                """, [Self.arrayLiteral(held.keys.map(\.rawValue))], within: timeout)
        } catch {
            if connection?.isConnected != true { connection = nil }
            throw error
        }
        if rows.count > 0, rows[0, "standby"] == "true" {
            connection = nil   // a standby now (a failover): the next round connects again, to the primary
            throw PostgresError(code: nil, message: "the database reached is a standby: it cannot confirm a fence")
        }
        var fences: [String: Int64] = [:]
        for index in 0..<rows.count {
            if let room = rows[index, "room_id"], let epoch = rows[index, "epoch"].flatMap({ Int64($0) }) {
                fences[room] = epoch
            }
        }
        return held.reduce(into: [:]) { verdicts, entry in
            verdicts[entry.key] = fences[entry.key.rawValue] == entry.value ? .confirmed : .movedOn
        }
    }

    /// `{"a","b"}`: a PostgreSQL text array with every element quoted and escaped.
    static func arrayLiteral(_ items: [String]) -> String {
        let quoted = items.map { item in
            "\"" + item.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
        }
        return "{" + quoted.joined(separator: ",") + "}"
    }
}
