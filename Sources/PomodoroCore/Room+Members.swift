// Members coming and going: join (new or returning), a lost connection, leaving for good, expiry.

extension Room {
    /// Adds a member, or gives a returning member their place back when `token` matches one in the room.
    /// `freshToken` is used for a new member: the core makes no random numbers of its own.
    public mutating func join(name rawName: String, token: ResumeToken?, freshToken: ResumeToken,
                              now: Instant) throws(RoomError) -> JoinResult {
        let name = try TextRules.clean(rawName, field: "name", allowEmpty: false, maxLength: policy.maxNameLength)
        var outcome = Outcome()
        advanceInternal(to: now, into: &outcome)
        try checkBan(name: name, token: token, at: now)
        if let token, let id = roster.member(withTokenHash: token.hash) {
            creditFocus(until: now)
            let wasConnected = roster[id]!.connected
            let announcedAway = !roster[id]!.awayForRestart
            roster.update(id) { member in
                member.connected = true
                member.disconnectedAt = nil
                member.silentlyLost = false
                member.awayForRestart = false
                member.name = name
            }
            recredit(id, at: now)
            pending.memberChanged(id)
            // Back after a restart that was nobody's doing: the state shows them here again, and nothing is
            // said, as nothing was said of their going.
            if !wasConnected && announcedAway { outcome.events.append(.memberReturned(id)) }
            roomBecameBusy()
            changed(&outcome)
            return JoinResult(memberID: id, token: token, resumed: true, outcome: outcome)
        }
        guard roster.count < policy.maxMembers else { throw .roomFull }
        creditFocus(until: now)
        let earns = isFocusRunning
        let id = roster.add(name: name, tokenHash: freshToken.hash) { member in
            if earns { member.creditedSince = now }
        }
        pending.memberChanged(id)
        outcome.events.append(.memberJoined(id, name: name))
        // The creator hosts; so does whoever arrives in a room its host left for good.
        if access.memberJoined(id) { outcome.events.append(.hostChanged(id)) }
        roomBecameBusy()
        changed(&outcome)
        return JoinResult(memberID: id, token: freshToken, resumed: false, outcome: outcome)
    }

    /// The member's connection ended (`ended`: closed by their client, or lost): they show as away and keep
    /// their place for the grace period, or for the short `silentGrace` when `silent` (the connection said
    /// nothing after joining as a new member).
    public mutating func disconnect(_ id: MemberID, now: Instant, silent: Bool = false,
                                    ended: ConnectionEnd = .lost) -> Outcome {
        var outcome = Outcome()
        advanceInternal(to: now, into: &outcome)
        guard let member = roster[id], member.connected else { return outcome }
        creditFocus(until: now)
        // A restart is the server's doing: no interruption of theirs.
        let interrupted = ended != .restart && roster[id]!.isPresent && isFocusRunning
        if interrupted { pending.record(.interrupted(id, name: member.name, at: now)) }
        roster.update(id) { member in
            if interrupted { member.stats.interruptions += 1 }
            member.silentlyLost = silent
        }
        markDisconnected(id, at: now, ended: ended, into: &outcome)
        roomMayBeQuiet(now)
        changed(&outcome)
        return outcome
    }

    /// The member shows as away and keeps their place for the grace period from `now`; `ended` is how their
    /// connection ended, when one did.
    /// A restart (`ended` `.restart`) is not announced, and neither is the member's return from it.
    mutating func markDisconnected(_ id: MemberID, at now: Instant, ended: ConnectionEnd?,
                                   into outcome: inout Outcome) {
        let restart = ended == .restart
        roster.update(id) { member in
            member.connected = false
            member.disconnectedAt = now
            member.awayForRestart = restart
        }
        recredit(id, at: now)
        pending.memberChanged(id)
        if !restart { outcome.events.append(.memberAway(id, reason: .disconnected, connection: ended)) }
    }

    /// The member leaves for good.
    public mutating func leave(_ id: MemberID, now: Instant) -> Outcome {
        var outcome = Outcome()
        advanceInternal(to: now, into: &outcome)
        guard let member = roster[id] else { return outcome }
        creditFocus(until: now)
        if member.isPresent && isFocusRunning {
            pending.record(.interrupted(id, name: member.name, at: now))
        }
        remove(id, reason: .left, into: &outcome)
        roomMayBeQuiet(now)
        changed(&outcome)
        return outcome
    }

    /// How long a disconnected member keeps their place.
    func grace(of member: Member) -> Duration {
        member.silentlyLost ? min(policy.silentGrace, policy.reconnectGrace) : policy.reconnectGrace
    }

    mutating func remove(_ id: MemberID, reason: LeaveReason, into outcome: inout Outcome) {
        guard let gone = roster.remove(id) else { return }
        pending.memberRemoved(id)
        outcome.events.append(.memberLeft(id, name: gone.name, reason: reason))
        // The role passes to the longest-present member: the earliest joined who is connected, else the
        // earliest joined at all.
        let roster = self.roster
        if access.memberLeft(id, successor: { roster.ids.first { roster[$0]!.connected } ?? roster.ids.first }) {
            outcome.events.append(.hostChanged(hostID))
        }
    }
}
