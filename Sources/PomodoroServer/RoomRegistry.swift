import PomodoroCore
import PomodoroProtocol

/// The rooms in memory: the only place a room enters or leaves it, and the one rule for when it may leave.
///
/// A room may leave memory when no member is connected, no session is under way (a running phase; a
/// scheduled set runs its phases back to back, so a set running is one), and its empty lifetime has passed
/// since both became true, whatever schedules it holds. Members within their grace do not hold it past its
/// lifetime: their places are in the store, and their token brings the room back with them in it. A room whose scheduled start is
/// less than the index's lead away stays for it (it was brought back for it, or is about to be), and so
/// does a room with schedules on a server without a store, which would have nothing to bring it back from.
///
/// A room that leaves takes nothing with it: everything it holds is in the store, and its schedules' next
/// start goes into `index`, from which the hub brings it back shortly before it (`RoomHub+ScheduledReturns`).
/// Every room in memory counts toward `capacity` (`--max-rooms`), however it came back; the callers check
/// `isFull` before they bring one in. Confined to the service thread, like the hub that holds it.
package final class RoomRegistry {
    private(set) var entries: [RoomID: RoomEntry] = [:]
    /// How many rooms may be in memory at once (`--max-rooms`).
    let capacity: Int
    /// Whether rooms are kept in a store: a room that leaves memory can then come back from it.
    let keepsStored: Bool
    /// The next start of every room with schedules that is not in memory; nil when the router keeps every
    /// room's schedules itself (`RoomRouter.indexesScheduledReturns`).
    var index: ScheduleIndex?

    /// How many seconds before a scheduled start its room is back in memory (its store read and catch-up
    /// take well under a second; the rest is margin for a loaded server).
    let leadSeconds: Int64

    /// - Parameter index: whether to keep `index`.
    init(capacity: Int, keepsStored: Bool, leadSeconds: Int64, index: Bool) {
        self.capacity = capacity
        self.keepsStored = keepsStored
        self.leadSeconds = leadSeconds
        self.index = index ? ScheduleIndex(lead: leadSeconds) : nil
    }

    package subscript(id: RoomID) -> RoomEntry? { entries[id] }
    package var count: Int { entries.count }
    var isEmpty: Bool { entries.isEmpty }
    var values: Dictionary<RoomID, RoomEntry>.Values { entries.values }
    var keys: Dictionary<RoomID, RoomEntry>.Keys { entries.keys }
    /// Whether another room would be one too many.
    package var isFull: Bool { entries.count >= capacity }

    // MARK: Entering and leaving

    /// A room made or brought back. A room of that name still in memory would be one nobody can reach
    /// again: it is stopped and replaced (callers check first; this does not happen).
    func enter(_ entry: RoomEntry) {
        let id = entry.room.id
        if let stale = entries[id], stale !== entry {
            assertionFailure("room \(id) entered memory twice")
            stale.cancelTimers()
        }
        entries[id] = entry
        index?.remove(id)
    }

    /// Takes the room out of memory, its timers stopped; its schedules' next start is kept in `index`.
    /// Whether it may go is `reasonToStay`'s to say; a room another server took is removed regardless.
    @discardableResult
    func remove(_ id: RoomID, at now: ClockReading) -> RoomEntry? {
        guard let entry = entries.removeValue(forKey: id) else { return nil }
        entry.cancelTimers()
        if !entry.schedules.schedules.isEmpty {
            index?.set(id, schedules: entry.schedules.schedules, now: WallTime(milliseconds: now.wallMs))
        }
        return entry
    }

    // MARK: The rule

    /// What keeps a room in memory.
    enum Stay: Equatable {
        /// Members connected to it.
        case members
        /// A phase runs (a scheduled set's included).
        case sessionUnderWay
        /// Its empty lifetime has not passed.
        case lifetime
        /// One of its schedules starts within the index's lead.
        case scheduledStart
        /// It holds schedules and there is no store to bring it back from.
        case nowhereToReturnFrom
    }

    /// Why `entry` must stay in memory at `now`, or nil when it may leave. `lifetime: false` for a room
    /// that a refused join has just made or brought back: nobody was ever in it this time, so it goes at once.
    func reasonToStay(_ entry: RoomEntry, at now: ClockReading, lifetime: Bool = true) -> Stay? {
        let room = entry.room
        if room.connectedCount > 0 { return .members }
        if room.status == .running { return .sessionUnderWay }
        if lifetime && !room.isExpired(at: now.monotonic) { return .lifetime }
        let schedules = entry.schedules
        if !schedules.schedules.isEmpty && !keepsStored { return .nowhereToReturnFrom }
        let wall = WallTime(milliseconds: now.wallMs)
        // A start due this very second and not yet dealt with counts too: the room's timers may wake it first.
        if let next = schedules.nextSession(after: wall - 1), next.at - wall <= leadSeconds { return .scheduledStart }
        return nil
    }
}
