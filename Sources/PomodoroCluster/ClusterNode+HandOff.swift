import Dispatch
import PomodoroCore
import PomodoroStore

/// A node's drain (SIGTERM, `POST /api/admin/drain`): its rooms given back together and handed to live
/// nodes, and the taking side's batch (docs/CLUSTER.md, "Draining a node").
extension ClusterNode {
    /// What came of a drain's hand-off.
    package struct HandOff: Sendable, Equatable {
        /// The rooms given back, by the node asked to take each (empty when no other node was alive).
        package var handed: [RoomID: String] = [:]
        /// Rooms no other node held yet when the bound ran out (their leases are given back all the same).
        package var notTaken: [RoomID] = []
    }

    /// How often a drain reads whether its rooms were taken.
    static let handOffPoll = DispatchTimeInterval.milliseconds(20)

    /// Drains this node: gives every room's lease back at once (one script), and asks live nodes to take
    /// them (`BusMessage.handOff`, one message per node with all the rooms handed to it; each room to the
    /// node that owns fewest, counting those handed to it now), then waits, until `bound` has passed at
    /// most, for another node to hold every one. Call it once the store has written what the node had: from
    /// the release on, the fence refuses this node's writes. `completion` runs on another thread.
    package func handOff(within bound: Duration, completion: @escaping @Sendable (HandOff) -> Void) {
        queue.async { [self] in
            let giveUpAt = monotonic() + bound
            var report = HandOff()
            // Off the list of nodes at once: another node draining meanwhile hands this one nothing.
            heartbeat.withLock { $0?.cancel() }
            try? registry.leave(node: node, on: leases.value)
            let held = keeper.held.sorted { $0.key.rawValue < $1.key.rawValue }
            var load: [String: Int] = [:]
            for seen in (try? registry.nodes(on: leases.value)) ?? [] where seen.node != node && seen.silentForMs < 2_000
                && listening(seen.node) {
                load[seen.node] = seen.roomsOwned
            }
            var byTarget: [String: [RoomID]] = [:]
            for (room, _) in held {
                guard let target = load.min(by: { ($0.value, $0.key) < ($1.value, $1.key) })?.key else { break }
                load[target, default: 0] += 1
                report.handed[room] = target
                byTarget[target, default: []].append(room)
            }
            for (room, _) in held { store.disown(room) }
            keeper.forget(held.map(\.key))
            // Released here and now, all in one script, not on the keeper's next round: the nodes asked take
            // them at once.
            _ = try? leases.value.release(held.map { (room: $0.key.rawValue, holder: LeaseHolder(node: node, epoch: $0.value)) })
            for (target, rooms) in byTarget.sorted(by: { $0.key < $1.key }) {
                // Its time stamp is the release's: with the taker's "took a room handed off", the hand-off's
                // time (make bench-rolling reads both from the nodes' JSON logs).
                for room in rooms {
                    logger.info("draining: room released for hand-off", metadata: ["room": "\(room)", "to": "\(target)"])
                }
                // On this queue's own connection, right after the release: not behind the relayed members'
                // frames waiting on `publishing` (a backlog of most of a second was seen under load, while
                // members' joins elsewhere took the rooms first).
                let message = BusMessage.handOff(rooms: rooms.map(\.rawValue), from: node).encoded
                _ = try? leases.value.command(["PUBLISH", BusMessage.nodeChannel(target), message])
            }
            logger.notice("draining: rooms handed off", metadata: [
                "rooms": "\(held.count)", "nodes": "\(byTarget.keys.sorted())"])
            awaitHandOff(Set(report.handed.keys), report: report, giveUpAt: giveUpAt, completion: completion)
        }
    }

    /// On `queue`: reads again (one `MGET`), every `handOffPoll` until `giveUpAt`, whether another node holds
    /// each room.
    private func awaitHandOff(_ waiting: Set<RoomID>, report: HandOff, giveUpAt: Instant,
                              completion: @escaping @Sendable (HandOff) -> Void) {
        let rooms = Array(waiting)
        let left: Set<RoomID>
        if let holders = try? leases.value.holders(rooms: rooms.map(\.rawValue)) {
            left = Set(zip(rooms, holders).filter { $0.1 == nil || $0.1?.node == node }.map(\.0))
        } else {
            left = waiting
        }
        // Each room taken by its new owner: its members here are sent there now (close 1012, through
        // `whenLost` and the hub's `lostRoom`), not after the slowest room of the drain.
        for room in waiting.subtracting(left) { lost(room) }
        guard !left.isEmpty, monotonic() < giveUpAt else {
            var report = report
            report.notTaken = left.sorted { $0.rawValue < $1.rawValue }
            return completion(report)
        }
        queue.asyncAfter(deadline: .now() + Self.handOffPoll) { [self] in
            awaitHandOff(left, report: report, giveUpAt: giveUpAt, completion: completion)
        }
    }

    /// Takes the rooms a draining node handed this one, together (`RoomTakeover.take(all:)`: one Redis script
    /// for every lease, one claim transaction for every fence), and answers each room as `take` does, the
    /// rooms taken together in one call of `completion` (on another thread). A room whose lease another
    /// node holds (a join took it first), or that must be taken alone (Redis forgot its epoch), is taken
    /// as a join would (`take`), answered in a call of its own.
    package func takeHandedOff(_ rooms: [RoomID], completion: @escaping @Sendable ([(RoomID, ClusterTake)]) -> Void) {
        queue.async { [self] in
            let batch: RoomTakeover.Batch
            do {
                batch = try takeover.take(all: rooms, leases: leases.value, store: store, now: monotonic)
            } catch {
                return completion(rooms.map { ($0, .failed("\(error)")) })
            }
            var answers: [(RoomID, ClusterTake)] = []
            var alone = batch.takeAlone
            for room in rooms {
                switch batch.outcomes[room] {
                case .owned(let term, let stored, _)?:
                    keeper.hold(room, term: term)
                    answers.append((room, .owned(stored)))
                case .ownedElsewhere(let holder)? where holder.node == node && keeper.held[room] == holder.epoch
                    && waitingToAct.value[room] == nil:
                    answers.append((room, .elsewhere(node: node)))   // taken here meanwhile
                case .ownedElsewhere?, .fenceHeld?:
                    alone.append(room)
                case nil:
                    break
                }
            }
            if !answers.isEmpty { completion(answers) }
            for room in alone {
                attempt(room, giveUpAt: monotonic() + LeaseTerm.timeToLive + Self.retryInterval) { completion([(room, $0)]) }
            }
        }
    }
}
