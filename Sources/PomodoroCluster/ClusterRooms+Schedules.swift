import PomodoroCore
import PomodoroNet
import PomodoroServer
import PomodoroStore

// Schedules on a cluster node (docs/CLUSTER.md, "Schedules on a cluster").
//
// On one server a room with schedules comes back into memory shortly before its next start, so that it
// starts at their time with nobody in it (`RoomHub+ScheduledReturns.swift`). A cluster keeps the same
// promise: every room whose start is near, or whose set may be running, is run by some node. Each node knows
// every room's schedules (read from the store at start, again when a node announces a change, and every
// 30 s), keeps their next starts in a `ScheduleIndex`, and once a second looks for such rooms whose lease
// nobody holds: it takes those (only if still free: of several nodes trying, one wins; and only while it
// holds fewer rooms than `--max-rooms`) and brings them back with their schedules, read after its claim.
// From then on the owner's own schedule timer starts the room on time, exactly as on one server; a room
// whose owner died is taken by a survivor within a lease's time to live and a sweep, and a set under way
// goes on from the store as after a restart. Rooms leave a node's memory by the one rule
// (`RoomRegistry`), schedules or not; a room taken for a set that turns out not to be running goes at once,
// and the node does not take it again for that set.

/// A cluster node's view of the rooms with schedules, on the service thread.
final class ScheduledRooms {
    /// Every room's schedules as last read from the store; rooms without any are left out.
    var known: [RoomID: [Schedule]] = [:]
    /// Wakes the next sweep.
    var timer: (any HubTimer)?
    /// A read of the leases is under way.
    var looking = false
    /// Rooms being taken for their schedules.
    var taking: Set<RoomID> = []
    /// The next start of every room in `known`, and until when a set of it may run.
    var index: ScheduleIndex
    /// Rooms this node let go, with the latest occurrence their schedules had dealt with then: a room is
    /// not taken again for a set that may be running until a later occurrence has been dealt with.
    var letGo: [RoomID: WallTime] = [:]

    init(lead: Int64) {
        index = ScheduleIndex(lead: lead, watchesSets: true)
    }

    /// `known` and the index, as the store has them now.
    func update(_ id: RoomID, _ list: [Schedule], now: WallTime) {
        known[id] = list.isEmpty ? nil : list
        if list.isEmpty { index.remove(id) } else { index.set(id, schedules: list, now: now) }
    }

    func replaceAll(_ all: [RoomID: [Schedule]], now: WallTime) {
        known = all.filter { !$0.value.isEmpty }
        index = ScheduleIndex(lead: index.lead, watchesSets: true)
        for (id, list) in known { index.set(id, schedules: list, now: now) }
        letGo = letGo.filter { known[$0.key] != nil }
    }
}

extension ClusterRooms {
    /// How often a node looks for rooms with schedules that no node runs.
    static let scheduledRoomsSweep: Duration = .seconds(1)

    /// At start on a cluster node: every room's schedules, from the store. From now on each room with some
    /// is kept run by some node.
    package func keepScheduledRoomsRunning(_ schedules: [RoomID: [Schedule]]) {
        scheduledRooms.replaceAll(schedules, now: WallTime(milliseconds: hub.clock.now().wallMs))
        hub.logger.info("rooms with schedules", metadata: ["rooms": "\(scheduledRooms.known.count)"])
        sweepScheduledRooms()
    }

    /// What another node (or this one) changed, read from the store.
    package func schedulesHeard(_ news: ScheduleNews) {
        let now = WallTime(milliseconds: hub.clock.now().wallMs)
        switch news {
        case let .room(id, list):
            scheduledRooms.update(id, list, now: now)
        case .all(let all):
            scheduledRooms.replaceAll(all, now: now)
        }
    }

    /// Tells the other nodes that the room's schedules changed, once the change is committed (so that what
    /// they read is the change).
    package func schedulesChanged(_ entry: RoomEntry) {
        let id = entry.room.id, cluster = cluster
        entry.announce { cluster.announceSchedules(id) }
    }

    package func knownSchedules(of id: RoomID) -> [Schedule]? { scheduledRooms.known[id] }

    /// Every room with schedules the cluster has counts toward `--max-scheduled-rooms`.
    package var scheduledRoomCount: Int? { scheduledRooms.known.count }

    /// A room with schedules left this node's memory: what this node knows of its schedules is its book as
    /// the room left (the notice of its last change may not have come back yet), and it is not taken again
    /// for the set it may have run.
    package func left(_ entry: RoomEntry) {
        guard let last = entry.schedules.schedules.map(\.handledThrough).max() else { return }
        let id = entry.room.id
        scheduledRooms.update(id, entry.schedules.schedules, now: WallTime(milliseconds: hub.clock.now().wallMs))
        scheduledRooms.letGo[id] = last
    }

    /// Looks for rooms with schedules that nobody runs, and takes them; then waits for the next sweep.
    func sweepScheduledRooms() {
        guard !hub.stopped else { return }
        if scheduledRooms.timer == nil {
            scheduledRooms.timer = hub.transport.timer { [unowned self] in sweepScheduledRooms() }
        }
        scheduledRooms.timer?.schedule(afterNanoseconds: Self.scheduledRoomsSweep.nanoseconds)
        guard !scheduledRooms.looking else { return }
        let wall = WallTime(milliseconds: hub.clock.now().wallMs)
        scheduledRooms.index.prune(at: wall)
        let due = Set(scheduledRooms.index.due(at: wall))
        let candidates = scheduledRooms.index.entries.keys.filter { id in
            guard mayTakeForSchedules(id) else { return false }
            if due.contains(id) { return true }
            // A set that may be running with nobody in it, on a node that died; not one this node let go.
            return scheduledRooms.index.mayBeRunning(id, at: wall)
                && scheduledRooms.letGo[id] != scheduledRooms.index[id]?.lastHandled
        }.sorted()
        guard !candidates.isEmpty else { return }
        scheduledRooms.looking = true
        let back = back
        cluster.unheld(candidates) { free in back { $0.unheld(free) } }
    }

    /// The rooms found free, on the service thread.
    private func unheld(_ free: [RoomID]?) {
        scheduledRooms.looking = false
        for id in free ?? [] where mayTakeForSchedules(id) {
            // A room taken counts toward --max-rooms, as every room in memory does.
            let maxRooms = hub.configuration.limits.maxRooms
            guard hub.rooms.count + scheduledRooms.taking.count < maxRooms else {
                hub.logger.warning("a room with schedules was not taken: this node holds as many rooms as it may",
                                   metadata: ["room": "\(id)", "maxRooms": "\(maxRooms)"])
                break
            }
            takeForSchedules(id)
        }
    }

    /// Whether this node may try to take `id` for its schedules: not in memory here, and no join nor other
    /// take of it under way.
    private func mayTakeForSchedules(_ id: RoomID) -> Bool {
        hub.rooms[id] == nil && !hub.awaits(id) && !scheduledRooms.taking.contains(id)
    }

    /// Takes `id` if it is still free, and brings it back with its schedules.
    private func takeForSchedules(_ id: RoomID) {
        guard !hub.stopped else { return }
        scheduledRooms.taking.insert(id)
        let back = back
        cluster.takeIfFree(id) { taken in back { $0.tookForSchedules(id, taken) } }
    }

    /// The answer to `takeForSchedules`, on the service thread.
    private func tookForSchedules(_ id: RoomID, _ taken: ClusterTake) {
        scheduledRooms.taking.remove(id)
        switch taken {
        case .owned(let stored):
            metrics.leasesTaken.increment()
            // A join that came in meanwhile is behind this take on the node's queue: it finds the room here.
            guard !hub.stopped, hub.rooms[id] == nil, let stored else { return hub.letGoIfUnused(id) }
            hub.logger.info("took a room for its schedules", metadata: [
                "room": "\(id)", "schedules": "\(stored.schedules.count)"])
            guard !hub.rooms.isFull else {
                hub.logger.warning("a room with schedules was not taken: this node holds as many rooms as it may",
                                   metadata: ["room": "\(id)"])
                return hub.letGoIfUnused(id)
            }
            let now = hub.clock.now()
            let entry = hub.bringBack(stored, at: now)
            // Taken for a set that is not running and no start near (it ended, or was reset): it goes
            // again at once, and is not taken again for that set.
            hub.dropIfExpired(id, entry, at: now, lifetime: false)
        case .elsewhere:
            break
        case .failed(let reason):
            hub.logger.warning("could not take a room for its schedules", metadata: ["room": "\(id)", "error": "\(reason)"])
            hub.letGoIfUnused(id)
        }
    }
}
