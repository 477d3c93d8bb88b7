import PomodoroCore
import PomodoroStore

/// What a node heard about rooms' schedules, read from the store.
package enum ScheduleNews: Sendable {
    /// One room's schedules as the store has them now (empty: it has none left).
    case room(RoomID, [Schedule])
    /// Every room's (after notices may have been missed).
    case all([RoomID: [Schedule]])
}

/// What the hub needs of the cluster for rooms with schedules (docs/CLUSTER.md, "Schedules on a cluster"):
/// finding rooms nobody runs, taking one only if it is free, and telling the other nodes of a change.
/// Completions run on another thread.
package protocol HubClusterSchedules: AnyObject, Sendable {
    /// Takes `room` if no node holds its lease now (once: no waiting for a lease to lapse).
    func takeIfFree(_ room: RoomID, completion: @escaping @Sendable (ClusterTake) -> Void)
    /// Which of `rooms` no node holds a lease on now; nil when Redis could not be read.
    func unheld(_ rooms: [RoomID], completion: @escaping @Sendable ([RoomID]?) -> Void)
    /// Tells every node that `room`'s schedules changed in the store.
    func announceSchedules(_ room: RoomID)
}

extension ClusterNode: HubClusterSchedules {
    package func takeIfFree(_ room: RoomID, completion: @escaping @Sendable (ClusterTake) -> Void) {
        take(room, patience: .zero, completion: completion)
    }

    package func unheld(_ rooms: [RoomID], completion: @escaping @Sendable ([RoomID]?) -> Void) {
        scheduleWatch.unheld(rooms.map(\.rawValue)) { result in
            completion(try? result.get().compactMap { try? RoomID(validating: $0) })
        }
    }

    package func announceSchedules(_ room: RoomID) { scheduleWatch.announce(room.rawValue) }

    /// Hands what the node hears about schedules to `body`, read from the store (on the watch's thread).
    /// A read that fails is made up for by reading every room's schedules again a second later (not at the
    /// next periodic reread, which may come after the start the notice was about), until one succeeds.
    package func whenSchedulesHeard(_ body: @escaping @Sendable (ScheduleNews) -> Void) {
        let store = store, watch = scheduleWatch, logger = logger
        scheduleWatch.onEvent { event in
            do throws(StoreError) {
                switch event {
                case .changed(let name):
                    guard let room = try? RoomID(validating: name) else { return }
                    body(.room(room, try store.loadSchedules(room: room)))
                case .rereadAll:
                    body(.all(try store.loadSchedules()))
                }
                watch.readSucceeded()
            } catch {
                if watch.readFailed() {
                    logger.warning("could not read rooms' schedules from the store; reading them again every second",
                                   metadata: ["error": "\(error)"])
                }
            }
        }
    }
}
