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

    /// From now on `/readyz` answers 503: called at the start of a shutdown, so that a proxy or Kubernetes
    /// that still asks stops sending new clients here.
    package func beginDraining() {
        draining = true
    }

    package func beginHandOff() {
        handingOff = true
    }

    /// Cancels every room timer and arms none from now on (see `stopTracking`). Idempotent.
    package func stopRoomTimers() {
        roomTimersStopped = true
        for entry in rooms.values { entry.cancelTimers() }
    }

    /// A cluster node's drain (docs/CLUSTER.md, "Draining a node"): from now on `/readyz` answers 503, the
    /// node takes no room and closing connections change none, but its own rooms go on ticking (a tick writes
    /// nothing) while `flush` writes what was queued, so that their members hear no gap for it. Once that is
    /// durable their timers stop, here on the service thread; what they wrote meanwhile (a phase's end) is
    /// flushed in turn; only then does `handOff` give their leases back: no tick leaves this node after the
    /// release. `flush` writes off this thread and calls its argument when done (or given up).
    package func drainForHandOff(flush: @escaping @Sendable (@escaping @Sendable () -> Void) -> Void,
                                 handOff: @escaping @Sendable () -> Void) {
        beginDraining()
        beginHandOff()
        stopTracking(keepingRoomsTicking: true)
        let stopTicking = LoopBound({ [self] in stopRoomTimers() }, loop: transport.loop)
        flush { [transport] in
            transport.post {
                stopTicking.value()
                flush(handOff)
            }
        }
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
