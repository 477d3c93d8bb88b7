import PomodoroCore

/// The running totals and journal counts one transaction adds, merged per row they add to and kept in the
/// order first added, so that they are written at the transaction's end in a few multi-row upserts (an
/// upsert may touch each row once per statement): a focus completed in a room of ten adds 22 totals rows
/// and a count, which were 23 statements.
struct PendingTotals {
    private struct Key: Hashable {
        var room: RoomID
        var name: String?
        var index: Int64
    }

    /// Per totals table, in `StoreSchema.totalsTables`' order.
    private var buckets: [[Key: JournalTotals.Bucket]] = StoreSchema.totalsTables.map { _ in [:] }
    private var order: [[Key]] = StoreSchema.totalsTables.map { _ in [] }
    private var counts: [RoomID: (sessions: Int, interruptions: Int)] = [:]
    private var countOrder: [RoomID] = []

    /// Adds a record's share to the buckets of each table it falls in.
    mutating func add(_ delta: JournalTotals.Delta, room: RoomID) {
        for (table, (_, _, length, _)) in StoreSchema.totalsTables.enumerated() {
            let bucket = delta.bucket(of: length)
            let key = Key(room: room, name: bucket.name, index: bucket.index)
            if buckets[table][key] == nil {
                buckets[table][key] = bucket
                order[table].append(key)
            } else {
                buckets[table][key]!.merge(bucket)
            }
        }
    }

    /// Counts journal rows written for `room`.
    mutating func count(room: RoomID, sessions: Int, interruptions: Int) {
        if let counted = counts[room] {
            counts[room] = (counted.sessions + sessions, counted.interruptions + interruptions)
        } else {
            counts[room] = (sessions, interruptions)
            countOrder.append(room)
        }
    }

    /// The rows for totals table number `table`, each bucket once.
    func rows(ofTable table: Int) -> [[ColumnValue]] {
        let ends = StoreSchema.totalsTables[table].ends
        return order[table].map { RowCodec.values(of: buckets[table][$0]!, in: $0.room, ends: ends) }
    }

    /// The rows for `journal_size`, each room once.
    var countRows: [[ColumnValue]] {
        countOrder.map { room in
            let counted = counts[room]!
            return [.text(room.rawValue), .integer(counted.sessions), .integer(counted.interruptions)]
        }
    }
}
