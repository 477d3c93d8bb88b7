import PomodoroCore
import PomodoroNet
import PomodoroStore

// Schedules on a cluster node (docs/CLUSTER.md, "Schedules on a cluster").
//
// On one server a room with schedules stays in memory, so that it starts at their time with nobody in it.
// A cluster keeps the same promise: every room with schedules is run by some node at all times. Each node
// knows every room's schedules (read from the store at start, again when a node announces a change, and
// every 30 s), and once a second looks for rooms with schedules whose lease nobody holds: it takes those
// (only if still free: of several nodes trying, one wins) and brings them back with their schedules, read
// after its claim. From then on the owner's own schedule timer starts the room on time, exactly as on one
// server; a room whose owner died is taken by a survivor within a lease's time to live and a sweep, and
// a set under way goes on from the store as after a restart.

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
}

extension RoomHub {
    /// How often a node looks for rooms with schedules that no node runs.
    static let scheduledRoomsSweep: Duration = .seconds(1)

    /// At start on a cluster node: every room's schedules, from the store. From now on each room with some
    /// is kept run by some node.
    package func keepScheduledRoomsRunning(_ schedules: [RoomID: [Schedule]]) {
        scheduledRooms.known = schedules.filter { !$0.value.isEmpty }
        logger.info("rooms with schedules", metadata: ["rooms": "\(scheduledRooms.known.count)"])
        sweepScheduledRooms()
    }

    /// What another node (or this one) changed, read from the store.
    package func schedulesHeard(_ news: ScheduleNews) {
        switch news {
        case let .room(id, list):
            scheduledRooms.known[id] = list.isEmpty ? nil : list
        case .all(let all):
            scheduledRooms.known = all.filter { !$0.value.isEmpty }
        }
    }

    /// Tells the other nodes that the room's schedules changed, once the change is committed (so that what
    /// they read is the change).
    func announceSchedulesCommitted(_ entry: RoomEntry) {
        guard let cluster else { return }
        let id = entry.room.id
        entry.announce { cluster.announceSchedules(id) }
    }

    /// A room brought back with its schedules (a cluster node's take reads them after its claim): they are
    /// its book, and what fell due meanwhile is dealt with now, as after a restart.
    func adoptSchedules(_ schedules: [Schedule], into entry: RoomEntry) {
        guard !schedules.isEmpty else { return }
        entry.schedules = ScheduleBook(schedules: schedules, policy: configuration.schedulePolicy)
        scheduleTimerFired(entry.room.id)
    }

    /// Looks for rooms with schedules that nobody runs, and takes them; then waits for the next sweep.
    func sweepScheduledRooms() {
        guard let cluster, !stopped else { return }
        if scheduledRooms.timer == nil {
            scheduledRooms.timer = transport.timer { [unowned self] in sweepScheduledRooms() }
        }
        scheduledRooms.timer?.schedule(afterNanoseconds: Self.scheduledRoomsSweep.nanoseconds)
        guard !scheduledRooms.looking else { return }
        let candidates = scheduledRooms.known.keys.filter(mayTakeForSchedules).sorted()
        guard !candidates.isEmpty else { return }
        scheduledRooms.looking = true
        let transport = transport
        cluster.unheld(candidates) { free in
            transport.post { [self] in
                scheduledRooms.looking = false
                for id in free ?? [] where mayTakeForSchedules(id) { takeForSchedules(id) }
            }
        }
    }

    /// Whether this node may try to take `id` for its schedules: not in memory here, and no join nor other
    /// take of it under way.
    private func mayTakeForSchedules(_ id: RoomID) -> Bool {
        rooms[id] == nil && lookups[id] == nil && !scheduledRooms.taking.contains(id)
            && !joins.values.contains { $0.room == id }
    }

    /// Takes `id` if it is still free, and brings it back with its schedules.
    private func takeForSchedules(_ id: RoomID) {
        guard let cluster, !stopped else { return }
        scheduledRooms.taking.insert(id)
        let transport = transport
        cluster.takeIfFree(id) { taken in
            transport.post { [self] in
                scheduledRooms.taking.remove(id)
                switch taken {
                case .owned(let stored):
                    metrics.leaseTaken()
                    // A join that came in meanwhile is behind this take on the node's queue: it finds the room here.
                    guard !stopped, rooms[id] == nil, let stored else { return releaseIfUnused(id) }
                    logger.info("took a room for its schedules", metadata: [
                        "room": "\(id)", "schedules": "\(stored.schedules.count)"])
                    bringBack(stored, at: clock.now())
                    // A room whose schedules were all deleted meanwhile expires and is let go as any other.
                case .elsewhere:
                    break
                case .failed(let reason):
                    logger.warning("could not take a room for its schedules", metadata: ["room": "\(id)", "error": "\(reason)"])
                    releaseIfUnused(id)
                }
            }
        }
    }
}
