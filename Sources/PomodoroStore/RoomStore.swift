import PomodoroCore

/// Where rooms, members and the focus journal are kept between runs of the server.
///
/// This is the whole interface the server sees: nothing outside this module knows the store is SQLite, so
/// a shared database can take its place. Every call may wait on disk; the server makes them off its
/// service thread (`StoreWriter` for changes, a reader queue for queries).
public protocol RoomStore: Sendable {
    /// Every stored room, with its members in join order. The server brings back those with members at
    /// start-up; a room whose members have all gone stays stored (its settings, stats and lock) until
    /// someone joins it again.
    func loadRooms() throws(StoreError) -> [StoredRoom]
    /// One stored room, with or without members, whole: its schedules with it (a room brought back without
    /// them would save over them); nil when it was never stored.
    func loadRoom(_ id: RoomID) throws(StoreError) -> StoredRoom?
    /// Every room's schedules, by room, each room's in id order (`StoreChange.saveSchedules` writes them).
    func loadSchedules() throws(StoreError) -> [RoomID: [Schedule]]
    /// One room's schedules, in id order.
    func loadSchedules(room: RoomID) throws(StoreError) -> [Schedule]
    /// Makes `changes` durable in order, all or none.
    func apply(_ changes: [StoreChange]) throws(StoreError)
    /// The room's completed focus sessions that ended in `[from, before)` (either bound may be open),
    /// oldest first; with `limit`, the newest `limit` of them (still oldest first).
    func sessions(room: RoomID, endedFrom from: Int64?, before: Int64?, limit: Int?) throws(StoreError)
        -> [FocusSessionRecord]
    /// The room's interruptions in `[from, before)`, oldest first.
    func interruptions(room: RoomID, from: Int64?, before: Int64?) throws(StoreError) -> [InterruptionRecord]
    /// The room's running totals (see `JournalTotals`): every UTC day, and the quarters in `quarters`.
    /// They keep the numbers of journal rows that retention has deleted.
    func journalTotals(room: RoomID, quarters: Range<Int64>) throws(StoreError) -> JournalTotals
    /// The room's sessions that ended before `before` (or all), newest first: at most `limit`, and ending
    /// once they reach about `maxBytes` (see `HistoryPage`).
    func historyPage(room: RoomID, before: Int64?, limit: Int, maxBytes: Int) throws(StoreError) -> HistoryPage
    /// Applies the store's journal retention to every room at `nowMs`; returns the rows deleted. A store
    /// without retention deletes nothing.
    @discardableResult
    func pruneJournal(nowMs: Int64) throws(StoreError) -> Int
}

extension RoomStore {
    @discardableResult
    public func pruneJournal(nowMs: Int64) throws(StoreError) -> Int { 0 }
}

/// A store failed; `message` says what and where, for the log.
public struct StoreError: Error, Equatable, Sendable, CustomStringConvertible {
    public var message: String
    /// The database could not be reached, and nothing of the request reached it: the same request may
    /// succeed once it is back (`StoreWriter` retries such batches).
    public var isTransient: Bool
    /// The store refused the write because another server has taken the room since (a cluster's fence: see
    /// docs/CLUSTER.md). Trying again cannot help; this server no longer owns the room.
    public var isFenced: Bool
    public init(_ message: String, isTransient: Bool = false, isFenced: Bool = false) {
        self.message = message
        self.isTransient = isTransient
        self.isFenced = isFenced
    }
    public var description: String { message }
}

/// A store whose writes a cluster can fence (docs/CLUSTER.md): each room has an owner epoch in the database,
/// raised by `claim`, and a write carrying an older epoch than the room's is refused. PostgreSQL is one.
public protocol FenceableRoomStore: RoomStore, FenceConfirming {
    /// Raises `room`'s fence to `epoch` and loads it, in one transaction (nil: never stored).
    /// - Throws: `StoreError` with `isFenced` when the room was claimed under a higher epoch already.
    func claim(room: RoomID, epoch: Int64) throws(StoreError) -> StoredRoom?
    /// The room's fence: the highest epoch that claimed or wrote it (nil when none did).
    func fence(room: RoomID) throws(StoreError) -> Int64?
    /// Applies `changes`, each room's under the epoch `fences` gives it; refused if a fence is higher.
    func apply(_ changes: [StoreChange], fences: [RoomID: Int64]) throws(StoreError)
    /// Claims several rooms, each under its epoch (`rooms`), as `claim(room:epoch:)` does each, and loads them
    /// with their schedules: `.fenced` for a room claimed under an epoch as high already (left as it was).
    func claim(rooms: [RoomID: Int64]) throws(StoreError) -> [RoomID: RoomClaim]
}

/// What came of claiming one room of several (`FenceableRoomStore.claim(rooms:)`).
public enum RoomClaim: Sendable {
    /// Claimed: the room as stored, with its schedules (nil when it was never stored).
    case claimed(StoredRoom?)
    /// Its fence was already at the epoch or above: another owner as new claimed it.
    case fenced
}

extension FenceableRoomStore {
    /// One claim after another (a store with no statement for many at once).
    public func claim(rooms: [RoomID: Int64]) throws(StoreError) -> [RoomID: RoomClaim] {
        var claims: [RoomID: RoomClaim] = [:]
        for (room, epoch) in rooms.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
            do {
                var stored = try claim(room: room, epoch: epoch)
                if stored != nil { stored!.schedules = try loadSchedules(room: room) }
                claims[room] = .claimed(stored)
            } catch where error.isFenced {
                claims[room] = .fenced
            }
        }
        return claims
    }
}

/// Reads rooms' fences in bounded time, for a cluster owner that cannot reach Redis (docs/CLUSTER.md,
/// "Without Redis: the fence keeps the room").
public protocol FenceConfirming: Sendable {
    /// Which rooms of `held` (room → epoch) still have their fence at that epoch, read in one statement from
    /// the primary on a connection kept for this alone, `seconds` at most to connect and as long for the
    /// answer.
    /// - Throws: `StoreError` when the database cannot say (unreachable, late, or a standby).
    func confirmFences(_ held: [RoomID: Int64], within seconds: Double) throws(StoreError) -> [RoomID: Bool]
}
