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

    /// From now on `/readyz` answers 503 and a WebSocket upgrade too: called at the start of a shutdown, so
    /// that a proxy or Kubernetes that still asks stops sending new clients here, and a client sent here all
    /// the same is answered at once (a proxy that retries on a 503 sends it to another server).
    package func beginDraining() {
        draining = true
        transport.refuseUpgrades()
    }

    package func beginHandOff() {
        handingOff = true
    }

    /// Cancels every room timer and arms none from now on (see `stopTracking`), a drain's tickers with them
    /// (`keepTickingUntilReleased`). Idempotent.
    package func stopRoomTimers() {
        roomTimersStopped = true
        for entry in rooms.values { entry.cancelTimers() }
        for ticker in drainTickers.values { ticker.timer.cancel() }
        drainTickers = [:]
        for timer in sendingBack.values { timer.cancel() }
        sendingBack = [:]
    }

    /// A draining node's rooms, their timers stopped before the store's last flush, go on ticking (nothing
    /// else: no phase ends, nothing written) until each is taken by another node (`lostRoom`, then
    /// `sendBackAfterNextSecond`) or the node closes: their members hear no gap for that flush, which can
    /// take seconds on a node whose store has a backlog (the members of the node drained before it,
    /// rejoining). Each tick is worked out from the room's phase, as the router works out those of rooms other servers run.
    func keepTickingUntilReleased() {
        let now = clock.now()
        for entry in rooms.values {
            let id = entry.room.id
            guard let next = Self.nextSecond(of: entry.room, at: now) else { continue }
            let ticker = transport.timer { [unowned self] in drainTick(id) }
            drainTickers[id] = (ticker, next.tick)
            ticker.schedule(afterNanoseconds: next.in.nanoseconds)
        }
    }

    /// A drain's ticker for room `id` fired: the room's second now due goes out, and the next is armed
    /// (none at the phase's end: the new owner's to announce).
    private func drainTick(_ id: RoomID) {
        guard let (ticker, due) = drainTickers[id], let entry = rooms[id] else { return }
        fanOut.broadcast(.tick(due), in: entry)
        guard let next = Self.nextSecond(of: entry.room, at: clock.now(), after: due.remainingMs) else {
            drainTickers[id] = nil
            return
        }
        drainTickers[id] = (ticker, next.tick)
        ticker.schedule(afterNanoseconds: next.in.nanoseconds)
    }

    /// A hand-off at shutdown ("Draining a node" in the operators' documents): from now on `/readyz`
    /// answers 503, the node takes no room and closing connections change none, but its own rooms go on
    /// ticking (a tick writes nothing) while `flush` writes what was queued, so that their members hear no
    /// gap for it. Once that is durable their timers stop, here on the service thread; what they wrote
    /// meanwhile (a phase's end) is flushed in turn, their members still hearing their ticks
    /// (`keepTickingUntilReleased`: nothing written, no phase ended); only then does `handOff` give them up.
    /// `flush` writes off this thread and calls its argument when done (or given up).
    package func drainForHandOff(flush: @escaping @Sendable (@escaping @Sendable () -> Void) -> Void,
                                 handOff: @escaping @Sendable () -> Void) {
        beginDraining()
        beginHandOff()
        stopTracking(keepingRoomsTicking: true)
        let stopTicking = LoopBound({ [self] in
            stopRoomTimers()
            keepTickingUntilReleased()
        }, loop: transport.loop)
        flush { [transport] in
            transport.post {
                stopTicking.value()
                flush(handOff)
            }
        }
    }

    /// A draining node's room now runs on another node (`lostRoom`): its members and observers here are sent
    /// back through the proxy (1012) right after the room's next second, which they hear first: a tick
    /// worked out from the phase the room had at its release (its timer stopped then), as the router works
    /// out those of rooms other servers run, nothing written. Their way back so starts from a second they heard, not
    /// from up to a second after it: the run of seconds a member misses is its way back, and no more.
    /// When that second is the phase's end (the new owner's to announce), or the room does not run, they
    /// are closed at once. Each room's members go at their room's second, so a node's closes spread over
    /// one second by themselves, within a second of the room's take (`sendingBack` counts the rooms waiting).
    func sendBackAfterNextSecond(_ connections: [ConnectionID], of room: Room) {
        // The second its ticker was about to send, if it ticked; else the next one.
        let ticking = drainTickers.removeValue(forKey: room.id)
        ticking?.timer.cancel()
        guard !connections.isEmpty else { return }
        let now = clock.now()
        let pending = ticking.flatMap { Self.nextSecond(of: room, at: now, after: $0.due.remainingMs + 1000) }
        guard let second = pending ?? Self.nextSecond(of: room, at: now) else {
            for connection in connections {
                transport.close(connection, code: Self.restartCloseCode, reason: Self.restartCloseReason)
            }
            return
        }
        let frame = OutboundFrame(WireCodec.encode(ServerMessage.tick(second.tick)))
        let id = room.id
        let timer = transport.timer { [unowned self] in
            sendingBack[id] = nil
            let open = connections.filter(isOpen)
            let sent = transport.send(frame, toAll: open)
            framesSent += sent
            metrics.sent(frames: sent, bytes: sent * frame.count)
            for connection in open {
                transport.close(connection, code: Self.restartCloseCode, reason: Self.restartCloseReason)
            }
        }
        sendingBack[id]?.cancel()
        sendingBack[id] = timer
        timer.schedule(afterNanoseconds: second.in.nanoseconds)
    }

    /// The tick of `room`'s next whole second after `now` (with `after`, the second after the one with that
    /// much left), and how long until it; nil when the room's timer does not run or that second is its
    /// phase's end. (A second due now is the room's own timer's, which may have sent it already.)
    static func nextSecond(of room: Room, at now: ClockReading,
                           after remaining: Int64? = nil) -> (tick: TickPayload, in: Duration)? {
        guard case .running(let deadline) = room.timer, deadline > now.monotonic else { return nil }
        let remainingMs = remaining.map { $0 - 1000 } ?? ((deadline - now.monotonic).milliseconds - 1) / 1000 * 1000
        guard remainingMs > 0 else { return nil }
        let at = deadline - .milliseconds(remainingMs)
        let tick = TickPayload(room: room.id.rawValue, phase: room.phase, remainingMs: remainingMs,
                               endsAt: now.wallMs(of: deadline), cycle: room.cycle, seq: room.seq,
                               serverTime: now.wallMs(of: at))
        return (tick, max(.zero, at - now.monotonic))
    }

    /// Once a stopping server's rooms are frozen (their timers stopped after the store wrote what it had:
    /// what is written from then on may not reach the store before the rooms are given up), nothing that
    /// must be saved is taken on, so nobody is told `ok` of a change that would be lost: a change is refused
    /// with `shutting_down` (send it again once back: the connection is closed with 1012 soon), a join or
    /// an observer's join is closed with 1012 at once (its client comes back where the room runs now).
    /// Reads (ping, stats, the schedules' list) are answered as ever. True when `frame` was refused.
    func refusedWhileFrozen(_ frame: ClientFrame, from connection: ConnectionID) -> Bool {
        guard handingOff && roomTimersStopped else { return false }
        switch frame.message {
        case .ping, .stats, .schedule(.list): return false
        case .join, .observe:
            transport.close(connection, code: Self.restartCloseCode, reason: Self.restartCloseReason)
        default:
            reply(.error(code: .shuttingDown, message: "this server is handing its rooms to another; send it again once back",
                         field: nil, ref: frame.ref), to: connection)
        }
        return true
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
