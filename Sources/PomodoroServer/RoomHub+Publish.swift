import PomodoroCore
import PomodoroNet
import PomodoroProtocol
import PomodoroStore

// A live room's side of the hub: making and bringing back rooms, their timers, what a room call produced
// turned into broadcasts for the fan-out (`FanOut`: crowds throttled, held until the store has what they
// announce), and expiry.

extension RoomHub {
    // MARK: Rooms in memory

    /// Rebuilds one stored room, catches it up to `now`, and writes what that changed. The room comes back
    /// whole: `RoomStore.loadRoom` reads its schedules with it, and what fell due meanwhile is dealt with now.
    @discardableResult
    package func bringBack(_ stored: StoredRoom, at now: ClockReading, handedOff: Bool = false) -> RoomEntry {
        let id = stored.record.id
        var room = restored(stored, at: now)
        // Whatever takes a room another server ran until now (a hand-off, a join, its schedules) brings it
        // back as handed off: its members are on their way.
        let handedOff = handedOff || (router.takesRoomsFromOtherNodes && room.membersWereHere(at: now.monotonic))
        let outcome = room.resumeAfterRestart(at: now.monotonic, handedOff: handedOff)
        let entry = makeEntry(room, passcode: PasscodeVerifier.lock(stored: stored.passcode, room: id, logger: logger))
        rooms.enter(entry)
        webhooksBroughtBack(id)
        publish(outcome, in: entry, at: now)
        adoptSchedules(stored.schedules, into: entry)
        return entry
    }

    /// A stored room as a `Room` on this boot's clock: nothing is registered, written or sent.
    func restored(_ stored: StoredRoom, at now: ClockReading) -> Room {
        Room(restoring: stored.record, members: stored.members, bans: stored.bans, apiTokens: stored.apiTokens,
             policy: configuration.roomPolicy,
             now: now.monotonic, wallOffsetNanoseconds: now.wallOffsetNanoseconds)
    }

    func makeEntry(_ room: Room, passcode: PasscodeVerifier?) -> RoomEntry {
        let id = room.id
        let timer = transport.timer { [unowned self] in timerFired(id) }
        let stateTimer = transport.timer { [unowned self] in stateDue(id) }
        defer { nextRoomSerial += 1 }
        return RoomEntry(room: room, serial: nextRoomSerial, timer: timer, stateTimer: stateTimer, passcode: passcode,
                         schedulePolicy: configuration.schedulePolicy)
    }

    func snapshot(of entry: RoomEntry, at now: ClockReading) -> SnapshotPayload {
        var payload = SnapshotPayload(entry.room.snapshot(at: now.monotonic), clock: now, locked: entry.passcode != nil)
        payload.nextSession = nextSession(of: entry, at: now)
        return payload
    }

    /// Brings a room up to `now` and broadcasts what that produced (a phase that ended a moment before its
    /// timer fired), so a command that is then refused cannot swallow it.
    func catchUp(_ entry: RoomEntry, at now: ClockReading) {
        let outcome = entry.room.advance(to: now.monotonic)
        if outcome.stateChanged || outcome.tick != nil || !outcome.events.isEmpty {
            publish(outcome, in: entry, at: now)
        }
    }

    private func timerFired(_ id: RoomID) {
        guard let entry = rooms[id] else { return }
        let now = clock.now()
        guard keepsRoom(id, at: now) else { return }
        let outcome = entry.room.advance(to: now.monotonic)
        publish(outcome, in: entry, at: now)
    }

    // MARK: Broadcasting

    /// Broadcasts what a room call produced (events, then a tick, then the new state), each encoded once,
    /// and re-arms the room's timer for its next wake-up (or drops the room when it has expired).
    ///
    /// A crowd (a room above its member-list limit) hears no events about single members, and a state
    /// that only members changed waits until `crowdStateInterval` has passed since the last one. A small
    /// room never reaches the limit and hears everything at once.
    func publish(_ outcome: Outcome, in entry: RoomEntry, at now: ClockReading,
                 stateAlreadySentTo skip: ConnectionID? = nil) {
        let roomID = entry.room.id
        // A server that may no longer act for the room neither writes nor broadcasts for it again.
        guard keepsRoom(roomID, at: now) else { return }
        for case .memberLeft(let member, _, _) in outcome.events { entry.forget(member) }
        let crowd = entry.room.policy.isCrowd(memberCount: entry.room.memberCount)
        var messages: [ServerMessage] = outcome.events.filter { !(crowd && $0.isAboutOneMember) }.map {
            .event(room: roomID.rawValue, EventPayload($0), serverTime: now.wallMs)
        }
        if let run = outcome.scheduleEnded {
            messages.append(.event(room: roomID.rawValue, .schedule(.ended(schedule: run.schedule.description, name: run.name,
                                                                          focusSessions: run.focusSessionsDone)),
                                   serverTime: now.wallMs))
        }
        let tickMessage = outcome.tick.map { TickPayload($0, room: roomID, clock: now) }
        var sendsState = outcome.stateChanged
        if sendsState && crowd && outcome.changedOnlyMembers {
            sendsState = stateMayGoNow(entry, at: now)
        }
        let state: ServerMessage? = sendsState ? .state(stateSent(in: entry, at: now)) : nil
        if let tick = outcome.tick { metrics.tick(tick, reached: .wakeup, at: now.monotonic) }
        let sendTick = { [self] in
            guard let tick = outcome.tick, let tickMessage else { return }
            // Measured as it goes out: a tick held behind a commit goes out late.
            let letOut = clock.now().monotonic
            metrics.tickSent(tick, at: letOut)
            metrics.tick(tick, reached: .letOut, at: letOut)
            fanOut.broadcast(.tick(tickMessage), in: entry, timing: tick)
        }
        save(entry, at: now, webhooks: webhookChanges(outcome, in: entry, at: now))
        // A tick is not a change: it goes out at its moment, ahead of any commit in flight, unless it carries
        // a change of the timer still held (then it waits for that change's commit, in order).
        let tickFirst = tickMessage.map(entry.tickMayPass) ?? false
        if tickFirst { sendTick() }
        entry.announce { [self] in
            for message in messages { fanOut.broadcast(message, in: entry) }
            if !tickFirst { sendTick() }
            if let state { fanOut.broadcast(state, in: entry, except: skip) }
        }
        // Members the crowd's list leaves out, whose own object changed (a task, a presence, their stats), hear
        // themselves alone.
        if crowd, !outcome.changedMembers.isEmpty {
            tellUnlisted(entry.room.unlistedMembers(outcome.changedMembers, at: now.monotonic), in: entry)
        }
        if dropIfExpired(roomID, entry, at: now) { return }
        // A room kept past its empty lifetime (members within their grace, a scheduled start coming) has that
        // moment behind it: not a wake-up.
        if let wakeup = entry.room.nextWakeup(after: now.monotonic) {
            arm(entry.timer, for: wakeup)
        } else {
            entry.timer.cancel()
        }
    }

    /// Tells each of `members`, whom the room's list leaves out (a big room, docs/PROTOCOL.md "Big rooms"), how
    /// the room sees them (`you`), after the room's broadcasts of the change and behind the same commit; to the
    /// member's connection at that moment, if they still have one.
    private func tellUnlisted(_ members: [MemberSnapshot], in entry: RoomEntry) {
        guard !members.isEmpty else { return }
        let roomID = entry.room.id.rawValue
        entry.announce { [self] in
            for member in members {
                guard let connection = entry.connections[member.id] else { continue }
                _ = fanOut.send(.you(room: roomID, member: MemberPayload(member)), to: connection)
            }
        }
    }

    /// Arms a room's timer for `deadline`, unless the server is stopping (see `stopRoomTimers`). Not from the
    /// `now` of the publish: that is older by the broadcasts just written (`HubTimer.schedule(at:on:)`).
    private func arm(_ timer: any HubTimer, for deadline: Instant) {
        guard !roomTimersStopped else { return }
        timer.schedule(at: deadline, on: clock)
    }

    /// Whether a crowd's member-only state may go out now; if not, one is scheduled for when it may.
    private func stateMayGoNow(_ entry: RoomEntry, at now: ClockReading) -> Bool {
        guard let last = entry.lastStateAt, now.monotonic - last < Self.crowdStateInterval else { return true }
        if !entry.statePending {
            entry.statePending = true
            arm(entry.stateTimer, for: last + Self.crowdStateInterval)
        }
        return false
    }

    /// The snapshot for a `state` about to be broadcast: it stands for any state still waiting.
    private func stateSent(in entry: RoomEntry, at now: ClockReading) -> SnapshotPayload {
        entry.lastStateAt = now.monotonic
        if entry.statePending {
            entry.statePending = false
            entry.stateTimer.cancel()
        }
        return snapshot(of: entry, at: now)
    }

    /// A crowd's waiting `state` is due: the room as it is now, behind any commit still in flight.
    private func stateDue(_ id: RoomID) {
        guard let entry = rooms[id], entry.statePending else { return }
        let now = clock.now()
        guard keepsRoom(id, at: now) else { return }
        catchUp(entry, at: now)
        guard entry.statePending else { return }   // the catch-up's own state stood for it
        let state = ServerMessage.state(stateSent(in: entry, at: now))
        entry.announce { [self] in fanOut.broadcast(state, in: entry) }
    }

    // MARK: Commits and expiry

    /// Hands the room's changes to the store's writer and holds the room's broadcasts until they are
    /// committed: what members hear of (a start, a completed focus, a new task) is already durable, so a
    /// crash right after cannot take it back. The service thread never waits, and a tick passes the held
    /// broadcasts unless it carries a held change of the timer (`RoomEntry.tickMayPass`).
    private func save(_ entry: RoomEntry, at now: ClockReading, webhooks: [StoreChange] = []) {
        guard store != nil else { return }
        let changes = entry.room.takeStoreChanges(wallOffsetNanoseconds: now.wallOffsetNanoseconds,
                                                  passcode: entry.passcode?.encoded)
        commit(changes + webhooks, of: entry)
    }

    /// Hands `changes` of the room to the store's writer; the room's broadcasts wait until they are committed.
    func commit(_ changes: [StoreChange], of entry: RoomEntry) {
        guard let store, !changes.isEmpty else { return }
        if entry.held == nil { entry.held = [] }
        entry.uncommitted += 1
        let roomID = entry.room.id
        let committing = entry.serial
        let handedAt = clock.now().monotonic
        store.enqueue(changes, completion: back { [self] error in
            metrics.committed(after: clock.now().monotonic - handedAt)
            if let error {
                logger.error("could not commit a room's changes", metadata: ["room": "\(roomID)", "error": "\(error)"])
            }
            // The room may have been dropped meanwhile (and even made anew, with commits of its own):
            // then nobody is left to hear what it held.
            guard let entry = rooms[roomID], entry.serial == committing else { return }
            entry.uncommitted -= 1
            guard entry.uncommitted == 0 else { return }
            let waiting = entry.held ?? []
            entry.held = nil
            for announce in waiting { announce() }
        })
    }

    /// Takes the room out of memory if the one rule (`RoomRegistry.reasonToStay`) lets it go: its schedules
    /// bring it back shortly before their next start. `lifetime: false` for a room a refused join has just
    /// made or brought back.
    @discardableResult
    package func dropIfExpired(_ id: RoomID, _ entry: RoomEntry, at now: ClockReading, lifetime: Bool = true) -> Bool {
        guard rooms[id] === entry, rooms.reasonToStay(entry, at: now, lifetime: lifetime) == nil else { return false }
        rooms.remove(id, at: now)
        router.left(entry)
        dismissObservers(of: entry)
        letGoIfUnused(id)
        armReturns()
        logger.debug("room dropped", metadata: ["room": "\(id)", "schedules": "\(entry.schedules.schedules.count)"])
        return true
    }

    // MARK: Rooms another server takes

    /// Whether this server may act for the room now (`RoomRouter.owns`), asked at the moment it acts or
    /// answers: one it may no longer act for leaves memory there and then (`lostRoom`), whoever asked.
    func keepsRoom(_ id: RoomID, at now: ClockReading) -> Bool {
        guard router.owns(id, at: now) else {
            lostRoom(id)
            return false
        }
        return true
    }

    /// The router says this server may no longer act for the room (another server took it): the room leaves
    /// memory at once, unwritten and unannounced, and its members and observers are closed with 4005 (room
    /// moved) so that their clients reconnect and resume where it runs now. A server handing its rooms off
    /// (draining) gave them up itself: its members are closed with 1012, as all its connections soon are, and
    /// come back through the proxy at once, right after the room's next second (`sendBackAfterNextSecond`).
    package func lostRoom(_ id: RoomID) {
        guard let entry = rooms.remove(id, at: clock.now()) else { return }
        entry.held = nil
        let (code, reason) = handingOff ? (Self.restartCloseCode, Self.restartCloseReason) : (UInt16(4005), "room moved")
        var sentBack: [ConnectionID] = []
        for connection in entry.connections.values {
            sessions[connection]?.room = nil
            sessions[connection]?.member = nil
            // Handing the room off, a member whose connection another server holds is not sent away: that
            // server joins it to the room's new owner, as whenever a room moves.
            if handingOff && connection.isRemote { continue }
            if handingOff { sentBack.append(connection) } else { transport.close(connection, code: code, reason: reason) }
        }
        for connection in entry.observers {
            sessions[connection]?.observing = nil
            if handingOff { sentBack.append(connection) } else { transport.close(connection, code: code, reason: reason) }
        }
        if handingOff { sendBackAfterNextSecond(sentBack, of: entry.room) }
        for stream in entry.streams { stream.finish() }
        router.lost(id)
    }

    /// Tells the router a room is done with once nothing here holds or waits for it.
    package func letGoIfUnused(_ id: RoomID) {
        guard rooms[id] == nil, lookups[id] == nil, !joins.values.contains(where: { $0.room == id }) else { return }
        router.letGo(id)
    }
}
