// A room and its members as a store keeps them: the changes to write, the rows, and a room built back
// from its rows after a restart.

extension Room {
    /// What a store has not been told yet, oldest first, and forgets it: the room's row (when anything in
    /// it changed), the members whose rows changed or who left, and new journal entries.
    ///
    /// Ticks alone change nothing here: a member's row holds the focus time credited up to its last change
    /// and the moment since which they have been earning, so a restart re-credits exactly the gap, and a
    /// member's change writes the room's row and theirs only (a phase boundary writes everyone who earns).
    /// `wallOffsetNanoseconds` turns the room's monotonic instants into wall-clock time.
    public mutating func takeStoreChanges(wallOffsetNanoseconds offset: Int64, passcode: String?) -> [StoreChange] {
        // Every change to a member comes with a new `seq`; members marked only by credited time wait for it.
        guard pending.isDue else { return [] }
        let taken = pending.take()
        func wall(_ instant: Instant) -> Int64 { Self.wallMs(instant, offset) }
        var changes: [StoreChange] = []
        if taken.roomDirty { changes.append(.saveRoom(record(wallOffsetNanoseconds: offset), passcode: passcode)) }
        for id in taken.removedMembers { changes.append(.removeMember(self.id, id)) }
        let saved = taken.dirtyMembers.compactMap { roster[$0] }.sorted { $0.joinOrder < $1.joinOrder }
        for member in saved {
            changes.append(.saveMember(self.id, memberRecord(member, wallOffsetNanoseconds: offset)))
        }
        // After the room's row, which a removal always changes: a store keeps bans with their room.
        if taken.bansDirty { changes.append(.saveBans(self.id, banRecords(wallOffsetNanoseconds: offset))) }
        if taken.apiTokensDirty { changes.append(.saveAPITokens(self.id, tokens.records)) }
        for entry in taken.journal {
            switch entry {
            case let .focusCompleted(startedAt, endedAt, length, participants):
                changes.append(.focusCompleted(FocusSessionRecord(
                    room: self.id, startedAtMs: wall(startedAt), endedAtMs: wall(endedAt),
                    lengthSeconds: Int(length.secondsRoundedUp),
                    participants: participants.map {
                        .init(member: $0.0, name: $0.name, task: $0.task, focusMs: $0.focus.milliseconds)
                    })))
            case let .interrupted(member, name, at):
                changes.append(.interrupted(InterruptionRecord(room: self.id, member: member, name: name,
                                                               atMs: wall(at))))
            }
        }
        return changes
    }

    /// The room's own row.
    public func record(wallOffsetNanoseconds offset: Int64) -> RoomRecord {
        let stored: StoredTimer = switch timer {
        case .idle: .idle
        case .ready(let r): .ready(remainingMs: r.milliseconds)
        case .running(let deadline): .running(endsAtMs: Self.wallMs(deadline, offset))
        case .paused(let r): .paused(remainingMs: r.milliseconds)
        }
        return RoomRecord(
            id: id, settings: settings, pendingSettings: pendingSettings, phase: phase, timer: stored,
            phaseLengthMs: phaseLength.milliseconds, cycle: cycle, stats: stats, controlMode: controlMode,
            host: hostID, nextMemberNumber: roster.nextMemberNumber,
            focusStartedAtMs: credit.focusStartedAt.map { Self.wallMs($0, offset) },
            focusCreditedUntilMs: credit.creditedUntil.map { Self.wallMs($0, offset) }, seq: seq,
            scheduledRun: scheduledRun)
    }

    /// The bans that run, as a store holds them (`Room(restoring:…, bans:)` brings them back).
    public func banRecords(wallOffsetNanoseconds offset: Int64) -> [BanRecord] {
        bans.records { Self.wallMs($0, offset) }
    }

    /// Every member's row, in join order, as a store holds them.
    public func memberRecords(wallOffsetNanoseconds offset: Int64) -> [MemberRecord] {
        roster.inOrder.map { memberRecord($0, wallOffsetNanoseconds: offset) }
    }

    private func memberRecord(_ member: Member, wallOffsetNanoseconds offset: Int64) -> MemberRecord {
        MemberRecord(id: member.id, joinOrder: member.joinOrder, name: member.name, tokenHash: member.tokenHash,
                     task: member.task, away: member.away, connected: member.connected, stats: member.stats,
                     sessionFocusMs: member.sessionFocusTime.milliseconds,
                     creditedSinceMs: member.creditedSince.map { Self.wallMs($0, offset) })
    }

    /// A room as a store kept it, with its members as they were; call `resumeAfterRestart(at:)` next.
    ///
    /// `now` and `wallOffsetNanoseconds` are this run's clock: stored wall-clock times become instants on
    /// it, so a deadline that was 10 minutes away when the last run wrote it is `endsAt - now` away now.
    /// Bans kept by the store that ended by `now` are dropped; the others keep their wall-clock end.
    public init(restoring record: RoomRecord, members stored: [MemberRecord], bans storedBans: [BanRecord] = [],
                apiTokens: [APITokenRecord] = [], policy: RoomPolicy = .standard, now: Instant, wallOffsetNanoseconds offset: Int64) {
        func instant(_ ms: Int64) -> Instant { Instant(nanoseconds: ms * 1_000_000 - offset) }
        self.init(id: record.id, settings: record.settings, policy: policy, controlMode: record.controlMode,
                  now: now)
        pendingSettings = record.pendingSettings
        phase = record.phase
        timer = switch record.timer {
        case .idle: .idle
        case .ready(let ms): .ready(remaining: .milliseconds(ms))
        case .running(let endsAt): .running(deadline: instant(endsAt))
        case .paused(let ms): .paused(remaining: .milliseconds(ms))
        }
        phaseLength = .milliseconds(record.phaseLengthMs)
        cycle = record.cycle
        stats = record.stats
        seq = record.seq
        scheduledRun = record.scheduledRun
        wallOffsetNanoseconds = offset
        access = HostRules(mode: record.controlMode, host: record.host)
        roster = Roster(nextMemberNumber: record.nextMemberNumber)
        bans = Bans(restoring: storedBans, instant: instant, now: now)
        tokens = APITokens(apiTokens)
        credit = FocusCredit(creditedUntil: record.focusCreditedUntilMs.map(instant),
                             focusStartedAt: record.focusStartedAtMs.map(instant))
        for row in stored.sorted(by: { $0.joinOrder < $1.joinOrder }) {
            var member = Member(id: row.id, name: row.name, tokenHash: row.tokenHash)
            member.joinOrder = row.joinOrder
            member.task = row.task
            member.away = row.away
            member.connected = row.connected
            // Gone before the restart: their grace period starts again now.
            if !row.connected { member.disconnectedAt = now }
            member.stats = row.stats
            member.sessionFocusTime = .milliseconds(row.sessionFocusMs)
            // Rows written before members kept their own span got it from the store's migration v3.
            if isFocusRunning && member.isPresent { member.creditedSince = row.creditedSinceMs.map(instant) }
            roster.restore(member)
        }
        if case .running(let deadline) = timer {
            // The countdown shows whole seconds from here on; a tick goes out at the next boundary.
            shownSeconds = (deadline - now).secondsRoundedUp + 1
            quietSince = nil
        }
    }

    /// Brings a restored room up to `now`: a phase that ended while the server was down completes on its
    /// deadline (credited to those present when the server stopped) without starting the next one, a
    /// running phase goes on, and every member shows as disconnected, their place kept for the grace
    /// period so they return with their token.
    ///
    /// A scheduled run of a set number of focus sessions carries on instead: it runs its set by itself, so
    /// the phases that ended while the server was down complete each on its deadline, the next starting at
    /// once, and the run ends after its last focus as it would have. A run until stopped waits, ready, like
    /// any room (a long outage does not run it for the whole time).
    ///
    /// A room `handedOff` by a draining node was never down: its members were sent back (close 1012) and
    /// are on their way, through a cluster that may be restarting node after node. For as long as their
    /// places are kept (`RoomPolicy.reconnectGrace`) its phases follow each other as if they were there,
    /// so that a phase ending before the first of them is back does not leave the room waiting for a
    /// start nobody will give.
    public mutating func resumeAfterRestart(at now: Instant, handedOff: Bool = false) -> Outcome {
        var outcome = Outcome()
        membersBackBy = handedOff ? now + policy.reconnectGrace : nil
        while case .running(let deadline) = timer, deadline <= now {
            creditFocus(until: deadline)
            complete(at: deadline, into: &outcome, mayAutoStart: scheduledRun?.focusSessionsLeft != nil || handedOff)
        }
        creditFocus(until: now)
        if case .running(let deadline) = timer { shownSeconds = (deadline - now).secondsRoundedUp }
        // The server went, not their connections: they are shown disconnected until they are back, without an
        // event either way (a room's members would otherwise hear each of the others go and come back at
        // every restart of a server and every move of the room between nodes).
        for id in roster.ids where roster[id]!.connected {
            markDisconnected(id, at: now, ended: .restart, into: &outcome)
        }
        roomMayBeQuiet(now)
        changed(&outcome)
        return outcome
    }

    /// Whether a room just restored (`init(restoring:)`, before `resumeAfterRestart`) was live on the node
    /// that wrote it moments ago: some of its members were connected there, and its phase, if running, ended
    /// no longer ago than their grace (`RoomPolicy.reconnectGrace`). On a cluster, a room another node ran
    /// until now (it drained, or went down) is taken by whatever reaches it first, a hand-off, a member's
    /// join or its schedules: brought back `handedOff` whichever it was, it follows its phases while its
    /// members are on their way. A room left empty, or stopped for longer than the grace, waits as after
    /// any restart.
    public func membersWereHere(at now: Instant) -> Bool {
        guard roster.ids.contains(where: { roster[$0]!.connected }) else { return false }
        if case .running(let deadline) = timer { return deadline + policy.reconnectGrace > now }
        return true
    }

    private static func wallMs(_ instant: Instant, _ offset: Int64) -> Int64 {
        instant.wallMilliseconds(offsetNanoseconds: offset)
    }
}
