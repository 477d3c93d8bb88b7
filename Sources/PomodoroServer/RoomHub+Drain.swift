import PomodoroCore
import PomodoroNet

// Draining: a server that stops and hands its rooms to others (the
// router does the handing) takes no room meanwhile; a join that would take one is sent back with 1012.

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
