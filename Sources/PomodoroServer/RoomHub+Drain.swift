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

    /// From now on this node takes no room: a join that would take one is closed with 1012, and its client
    /// comes back through the proxy to another node (the schedules' sweep stopped with `stopTracking`).
    package var isHandingOff: Bool { handingOff }

    package func beginHandOff() {
        handingOff = true
    }

    /// Closes the joins waiting for `id` with 1012 when the node is handing its rooms off; false otherwise.
    package func refuseTakeWhileHandingOff(_ id: RoomID) -> Bool {
        guard handingOff else { return false }
        for connection in lookups.removeValue(forKey: id) ?? [] {
            transport.close(connection, code: Self.restartCloseCode, reason: Self.restartCloseReason)
        }
        return true
    }
}
