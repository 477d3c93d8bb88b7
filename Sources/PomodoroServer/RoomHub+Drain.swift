import PomodoroCore
import PomodoroNet

// Draining a cluster node (docs/CLUSTER.md, "Draining a node").
//
// A node that stops hands each of its rooms to a live node at once: it writes what it had, gives the
// room's lease back, and tells the chosen node (`BusMessage.handOff`), which takes the room under a new
// epoch and runs it from the store whether or not any member is there. Only then are the node's own
// connections closed with 1012, and its members come back through the proxy to whichever node, where
// they find the room running. This file is both sides: the node handed a room, and the draining node's
// refusal to take any room meanwhile.

extension RoomHub {
    /// The close code and reason that send a client back at once through the proxy (PROTOCOL.md §11).
    package static let restartCloseCode: UInt16 = 1012
    package static let restartCloseReason = WebSocketClient.restartReason

    /// Another node, draining, gave `id`'s lease back and asks this one to run the room: take it (waiting a
    /// lease's time to live at most, should its release not have reached Redis yet) and bring it back from
    /// the store, with its members as they were (they come back with their tokens) and its timer going on
    /// from its stored end. A join or a follower here that took it first has it already; another node that
    /// won the race keeps it.
    package func takeHandedOff(_ id: RoomID, from node: String) {
        guard let cluster, !stopped, rooms[id] == nil, !handedOffTaking.contains(id) else { return }
        guard !rooms.isFull else {
            logger.warning("a room handed off was not taken: this node holds as many rooms as it may",
                           metadata: ["room": "\(id)", "from": "\(node)"])
            return
        }
        handedOffTaking.insert(id)
        let transport = transport
        cluster.take(id) { taken in
            transport.post { [self] in
                handedOffTaking.remove(id)
                switch taken {
                case .owned(let stored):
                    metrics.leaseTaken()
                    guard !stopped, rooms[id] == nil, let stored else { return releaseIfUnused(id) }
                    let entry = bringBack(stored, at: clock.now(), handedOff: true)
                    logger.info("took a room handed off by a draining node", metadata: [
                        "room": "\(id)", "from": "\(node)", "members": "\(entry.room.memberCount)"])
                    // Members of this node relayed to the draining one are in the room here now.
                    rehome(id, after: taken)
                case .elsewhere(let owner):
                    logger.debug("a room handed off runs elsewhere", metadata: ["room": "\(id)", "owner": "\(owner)"])
                    rehome(id, after: taken)
                case .failed(let reason):
                    logger.warning("could not take a room handed off", metadata: ["room": "\(id)", "error": "\(reason)"])
                    releaseIfUnused(id)
                }
            }
        }
    }

    /// From now on this node takes no room: a join that would take one is closed with 1012, and its client
    /// comes back through the proxy to another node (the schedules' sweep stopped with `stopTracking`).
    package var isHandingOff: Bool { handingOff }

    package func beginHandOff() {
        handingOff = true
    }

    /// Closes the joins waiting for `id` with 1012 when the node is handing its rooms off; false otherwise.
    func refuseTakeWhileHandingOff(_ id: RoomID) -> Bool {
        guard handingOff else { return false }
        for connection in lookups.removeValue(forKey: id) ?? [] {
            transport.close(connection, code: Self.restartCloseCode, reason: Self.restartCloseReason)
        }
        return true
    }
}
