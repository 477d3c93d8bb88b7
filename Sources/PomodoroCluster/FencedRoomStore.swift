import Foundation
import PomodoroCore
import PomodoroStore

/// The store a cluster node writes through: a `FenceableRoomStore` (PostgreSQL's) whose every write carries the epoch of
/// this node's lease on each room it touches, so the database refuses it once another node has claimed the
/// room (see `PostgresRoomStore+Fencing`).
///
/// The node records an epoch with `own` when it takes a room and removes it with `disown` the moment its
/// lease ends; a batch that touches a room this node does not own is refused here, before the database.
/// Reads pass straight through.
public final class FencedRoomStore: RoomStore, Sendable {
    public let base: any FenceableRoomStore
    /// The epochs this node owns its rooms under: written by the cluster's thread, read by the store's writer.
    private let epochs = LockedState<[RoomID: Int64]>([:])

    public init(base: any FenceableRoomStore) { self.base = base }

    /// From now on this node writes `room` as its owner under `epoch`.
    public func own(_ room: RoomID, epoch: Int64) { epochs.withLock { $0[room] = epoch } }
    /// This node no longer owns `room`: its writes for it are refused from now on.
    public func disown(_ room: RoomID) { epochs.withLock { _ = $0.removeValue(forKey: room) } }
    /// The epoch this node owns `room` under, if it does.
    public func epoch(of room: RoomID) -> Int64? { epochs.withLock { $0[room] } }

    /// Claims the room in the database under `epoch` (raising its fence), loads it, and records the epoch.
    public func claim(_ room: RoomID, epoch: Int64) throws(StoreError) -> StoredRoom? {
        let stored = try base.claim(room: room, epoch: epoch)
        own(room, epoch: epoch)
        return stored
    }

    /// Claims several rooms at once, each under its epoch (`FenceableRoomStore.claim(rooms:)`: one
    /// transaction), and records the epochs of those claimed.
    public func claim(rooms: [RoomID: Int64]) throws(StoreError) -> [RoomID: RoomClaim] {
        let claims = try base.claim(rooms: rooms)
        epochs.withLock { epochs in
            for (room, claim) in claims { if case .claimed = claim, let epoch = rooms[room] { epochs[room] = epoch } }
        }
        return claims
    }

    public func apply(_ changes: [StoreChange]) throws(StoreError) {
        let held = epochs.withLock { $0 }
        var fences: [RoomID: Int64] = [:]
        for room in Set(changes.map(\.room)) {
            guard let epoch = held[room] else {
                throw StoreError("room \(room) is not owned by this node: its changes are not written", isFenced: true)
            }
            fences[room] = epoch
        }
        try base.apply(changes, fences: fences)
    }

    public func loadRooms() throws(StoreError) -> [StoredRoom] { try base.loadRooms() }
    public func loadRoom(_ id: RoomID) throws(StoreError) -> StoredRoom? { try base.loadRoom(id) }
    public func loadSchedules() throws(StoreError) -> [RoomID: [Schedule]] { try base.loadSchedules() }
    public func loadSchedules(room: RoomID) throws(StoreError) -> [Schedule] { try base.loadSchedules(room: room) }
    public func sessions(room: RoomID, endedFrom from: Int64?, before: Int64?, limit: Int?) throws(StoreError)
        -> [FocusSessionRecord] {
        try base.sessions(room: room, endedFrom: from, before: before, limit: limit)
    }
    public func interruptions(room: RoomID, from: Int64?, before: Int64?) throws(StoreError) -> [InterruptionRecord] {
        try base.interruptions(room: room, from: from, before: before)
    }
    public func journalTotals(room: RoomID, quarters: Range<Int64>) throws(StoreError) -> JournalTotals {
        try base.journalTotals(room: room, quarters: quarters)
    }
    public func historyPage(room: RoomID, before: Int64?, limit: Int, maxBytes: Int) throws(StoreError) -> HistoryPage {
        try base.historyPage(room: room, before: before, limit: limit, maxBytes: maxBytes)
    }
    /// Retention is left to the nodes' sweeps as on a single server; each room's rows are pruned by whoever
    /// writes them, so this passes through.
    @discardableResult
    public func pruneJournal(nowMs: Int64) throws(StoreError) -> Int { try base.pruneJournal(nowMs: nowMs) }
}

extension StoreChange {
    /// The room a change belongs to.
    public var room: RoomID {
        switch self {
        case .saveRoom(let record, _): record.id
        case .saveMember(let room, _), .removeMember(let room, _), .saveSchedules(let room, _),
             .saveBans(let room, _), .saveAPITokens(let room, _):
            room
        case .focusCompleted(let session): session.room
        case .interrupted(let interruption): interruption.room
        case .webhook(let change): change.room
        }
    }
}
