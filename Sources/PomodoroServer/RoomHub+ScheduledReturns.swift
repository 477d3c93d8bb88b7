import PomodoroCore
import PomodoroNet
import PomodoroProtocol
import PomodoroStore

// Rooms with schedules that are not in memory, on one server: their next start is kept in the registry's
// `ScheduleIndex`, and the room is read back from the store `ServerConfiguration.scheduledReturnLeadSeconds` (60) before it.
// Back in memory, its own schedule timer starts it on the second (`RoomHub+Schedules.swift`). A room
// brought back counts toward `--max-rooms` like any other: when the server holds all it may, the start
// is passed over and counted as missed once the room comes back. (A router that keeps every room's schedules
// does the same its own way: `RoomRouter.indexesScheduledReturns`.)

extension RoomHub {
    /// At start-up: the schedules of every room the store keeps. A room in memory already has its own; the
    /// others go into the index, and those with a start that fell due while the server was down, or that
    /// comes within the lead, come back now (from `stored`, within `--max-rooms`) to deal with it.
    func restoreSchedules(_ schedules: [RoomID: [Schedule]], rooms stored: [StoredRoom]) {
        let now = clock.now()
        let wall = WallTime(milliseconds: now.wallMs)
        for (id, list) in schedules where rooms[id] == nil && !list.isEmpty {
            rooms.index?.set(id, schedules: list, now: wall)
        }
        let byID = Dictionary(stored.map { ($0.record.id, $0) }, uniquingKeysWith: { first, _ in first })
        for id in rooms.index?.due(at: wall) ?? [] {
            guard var room = byID[id] else { continue }
            guard !rooms.isFull else {
                passOver(id, at: now)
                continue
            }
            room.schedules = schedules[id] ?? room.schedules
            bringBack(room, at: now)
            logger.info("room back for its schedules", metadata: ["room": "\(id)", "schedules": "\(room.schedules.count)"])
        }
        armReturns()
    }

    /// Arms the timer for the index's next wake-up (at once when it has passed).
    func armReturns() {
        guard !stopped, let index = rooms.index else { return }
        guard let wake = index.nextWakeup else {
            returnTimer?.cancel()
            return
        }
        if returnTimer == nil { returnTimer = transport.timer { [unowned self] in returnsDue() } }
        returnTimer?.schedule(afterNanoseconds: Self.nanoseconds(until: wake, from: clock.now()))
    }

    /// Brings back the rooms whose start is within the lead, then waits for the next.
    func returnsDue() {
        guard !stopped, rooms.index != nil else { return }
        let now = clock.now()
        let wall = WallTime(milliseconds: now.wallMs)
        rooms.index?.prune(at: wall)
        for id in rooms.index?.due(at: wall) ?? [] { bringBackForSchedule(id, at: now) }
        armReturns()
    }

    /// Reads the room back from the store (whole, with its schedules) and brings it into memory, if the
    /// server may hold another room. Either way the index moves on to the room's next start: a room in
    /// memory is not in the index, and a start passed over is counted as missed when the room returns.
    private func bringBackForSchedule(_ id: RoomID, at now: ClockReading) {
        guard rooms[id] == nil, !returning.contains(id) else { return }
        guard let store, rooms.count + returning.count < configuration.limits.maxRooms else {
            return passOver(id, at: now)
        }
        let next = rooms.index?[id]?.next
        rooms.index?.passOver(id, through: max(WallTime(milliseconds: now.wallMs), next ?? WallTime(seconds: 0)))
        returning.insert(id)
        store.read({ (store: any RoomStore) throws(StoreError) in try store.loadRoom(id) }, completion: back { [self] result in
            returning.remove(id)
            guard !stopped else { return }
            switch result {
            case .success(let stored?):
                // A join may have brought it back meanwhile.
                guard rooms[id] == nil else { break }
                guard !rooms.isFull else {
                    logger.warning("a room could not come back for its scheduled start: the server holds as many rooms as it may",
                                   metadata: ["room": "\(id)", "maxRooms": "\(configuration.limits.maxRooms)"])
                    break
                }
                bringBack(stored, at: clock.now())
                logger.info("room back for its schedules", metadata: ["room": "\(id)", "schedules": "\(stored.schedules.count)"])
            case .success(nil):
                rooms.index?.remove(id)
            case .failure(let error):
                logger.error("could not read a room back for its scheduled start", metadata: ["room": "\(id)", "error": "\(error)"])
            }
            armReturns()
        })
    }

    /// The server holds as many rooms as it may: the room's start now is passed over (its book counts it as
    /// missed when the room comes back).
    private func passOver(_ id: RoomID, at now: ClockReading) {
        logger.warning("a room could not come back for its scheduled start: the server holds as many rooms as it may",
                       metadata: ["room": "\(id)", "maxRooms": "\(configuration.limits.maxRooms)"])
        let next = rooms.index?[id]?.next
        rooms.index?.passOver(id, through: max(WallTime(milliseconds: now.wallMs), next ?? WallTime(seconds: 0)))
    }
}
