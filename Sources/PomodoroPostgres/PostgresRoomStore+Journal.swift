import Foundation
import PomodoroCore
import PomodoroStore

/// The journal's reads for the stats and history (`sessions`, `historyPage`, `interruptions`, `journalTotals`)
/// and its pruning, through the shared row codec like the rest of the store.
extension PostgresRoomStore {
    public func sessions(room: RoomID, endedFrom from: Int64?, before: Int64?, limit: Int?) throws(StoreError)
        -> [FocusSessionRecord] {
        let query = Self.statements.sessions(room: room, from: from, before: before, limit: limit)
        let rows = try withReader("reading the sessions of room \(room)") { connection throws(PostgresError) in
            try connection.query(query)
        }
        return try SessionRows.all(rows.rows, room: room)
    }

    /// Reads the rows through a cursor, a chunk at a time, and stops at the page's end, so a page of large
    /// sessions never holds more than the page and a chunk.
    public func historyPage(room: RoomID, before: Int64?, limit: Int, maxBytes: Int) throws(StoreError) -> HistoryPage {
        var query = Self.statements.sessions(room: room, from: nil, before: before, limit: max(limit, 0) + 1,
                                             newestFirst: true)
        query.sql = "DECLARE history NO SCROLL CURSOR FOR\n" + query.sql
        let chunk = 256
        return try withReader("reading the history of room \(room)") {
            connection throws(PostgresError) -> Result<HistoryPage, StoreError> in
            try Self.snapshot(connection) { () throws(PostgresError) -> Result<HistoryPage, StoreError> in
                try connection.query(query)
                var page = SessionRows(room: room, limit: limit, maxBytes: maxBytes)
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

    public func interruptions(room: RoomID, from: Int64?, before: Int64?) throws(StoreError)
        -> [InterruptionRecord] {
        let rows = try withReader("reading the interruptions of room \(room)") { connection throws(PostgresError) in
            try connection.query(Self.statements.interruptions(room: room, from: from, before: before))
        }
        var result: [InterruptionRecord] = []
        for row in rows.rows { result.append(try RowCodec.interruption(from: row, room: room)) }
        return result
    }

    public func journalTotals(room: RoomID, quarters: Range<Int64>) throws(StoreError) -> JournalTotals {
        let queries = Self.statements.totals(room: room, quarters: quarters)
        let (days, window) = try withReader("reading the running totals of room \(room)") {
            connection throws(PostgresError) in
            try Self.snapshot(connection) { () throws(PostgresError) in
                (try connection.query(queries.days), try connection.query(queries.quarters))
            }
        }
        var dayBuckets: [JournalTotals.Bucket] = []
        for row in days.rows { dayBuckets.append(try RowCodec.bucket(from: row)) }
        var quarterBuckets: [JournalTotals.Bucket] = []
        for row in window.rows { quarterBuckets.append(try RowCodec.bucket(from: row)) }
        return JournalTotals(days: dayBuckets, quarters: quarterBuckets, quarterRange: quarters)
    }

    /// Applies the retention to every room's journal at `nowMs` (the writer only prunes rooms as they
    /// write), one transaction per batch, until nothing is left to delete. Returns the rows deleted. Takes
    /// the writer connection between batches: call it off the service thread.
    @discardableResult
    public func pruneJournal(nowMs: Int64) throws(StoreError) -> Int {
        guard retention != .keepEverything else { return 0 }
        let rooms = try withReader("listing the rooms with a journal") { connection throws(PostgresError) in
            try connection.query(Self.statements.journalRooms)
                .values.compactMap { $0[0] }
        }
        let retention = retention
        var total = 0
        for raw in rooms {
            guard let room = try? RoomID(validating: raw) else { continue }
            while true {
                let deleted = try inWriteTransaction("deleting old journal rows") { connection throws(PostgresError) in
                    try PostgresWriting(connection: connection).prune(room: room, nowMs: nowMs, retention: retention)
                }
                total += deleted
                if deleted == 0 { break }
            }
        }
        return total
    }
}
