import Dispatch
import PomodoroCore
import PomodoroNet
import PomodoroProtocol

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

    /// A draining node's room now runs on another node (`lostRoom`): its members and observers here are sent
    /// back through the proxy (1012) right after the room's next second, which they hear first: a tick
    /// worked out from the phase the room had at its release (its timer stopped then), as a node relaying
    /// members works out theirs, nothing written. Their way back so starts from a second they heard, not
    /// from up to a second after it: the run of seconds a member misses is its way back, and no more.
    /// When that second is the phase's end (the new owner's to announce), or the room does not run, they
    /// are closed at once. Each room's members go at their room's second, so a node's closes spread over
    /// one second by themselves, within a second of the room's take (`sendingBack` counts the rooms waiting).
    func sendBackAfterNextSecond(_ connections: [ConnectionID], of room: Room) {
        guard !connections.isEmpty else { return }
        let now = clock.now()
        guard let second = Self.nextSecond(of: room, at: now) else {
            for connection in connections {
                transport.close(connection, code: Self.restartCloseCode, reason: Self.restartCloseReason)
            }
            return
        }
        let frame = OutboundFrame(WireCodec.encode(ServerMessage.tick(second.tick)))
        let hub = LoopBound(self, loop: transport.loop)
        sendingBack += 1
        DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(Int(second.in.nanoseconds))) { [transport] in
            transport.post {
                let hub = hub.value
                hub.sendingBack -= 1
                let open = connections.filter(hub.isOpen)
                let sent = hub.transport.send(frame, toAll: open)
                hub.framesSent += sent
                hub.metrics.sent(frames: sent, bytes: sent * frame.count)
                for connection in open {
                    hub.transport.close(connection, code: Self.restartCloseCode, reason: Self.restartCloseReason)
                }
            }
        }
    }

    /// The tick of `room`'s next whole second at or after `now`, and how long until it; nil when the room's
    /// timer does not run or that second is its phase's end.
    static func nextSecond(of room: Room, at now: ClockReading) -> (tick: TickPayload, in: Duration)? {
        guard case .running(let deadline) = room.timer, deadline > now.monotonic else { return nil }
        let remainingMs = (deadline - now.monotonic).milliseconds / 1000 * 1000
        guard remainingMs > 0 else { return nil }
        let at = deadline - .milliseconds(remainingMs)
        let tick = TickPayload(room: room.id.rawValue, phase: room.phase, remainingMs: remainingMs,
                               endsAt: now.wallMs(of: deadline), cycle: room.cycle, seq: room.seq,
                               serverTime: now.wallMs(of: at))
        return (tick, max(.zero, at - now.monotonic))
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
