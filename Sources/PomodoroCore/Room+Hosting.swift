// The host's tools beside the controls: removing a member (who may not come back for a while) and
// changing the room's lock. The lock itself (its slow hash) is the server's; the room only hears that it
// changed, so members see it and the store gets the room's row with the new lock.

extension Room {
    /// Throws `forbidden` unless `id` is a connected member holding the host role (`unknownMember` when
    /// not in the room). The server asks before hashing a new passcode, and again once it is hashed.
    public func checkHost(_ id: MemberID) throws(RoomError) {
        guard roster[id]?.connected == true else { throw .unknownMember }
        try access.checkHost(id)
    }

    /// Host only: removes `target` from the room for good; they may not join again, by name or by their
    /// resume token, for `policy.removalBan`. Everyone hears `memberLeft` with reason `removed`.
    public mutating func remove(_ target: MemberID, by id: MemberID, now: Instant) throws(RoomError) -> Outcome {
        try checkHost(id)
        guard target != id else { throw .invalidState("the host cannot remove themselves; use leave") }
        guard let member = roster[target] else {
            throw .invalidArgument(field: "member", reason: "is not a member of this room")
        }
        var outcome = Outcome()
        advanceInternal(to: now, into: &outcome)
        creditFocus(until: now)
        if member.isPresent && isFocusRunning {
            pending.record(.interrupted(target, name: member.name, at: now))
        }
        revokeAPITokens(madeBy: target)
        bans.forgetEnded(at: now)
        bans.ban(name: member.name, tokenHash: member.tokenHash, until: now + policy.removalBan)
        pending.bansChanged()
        remove(target, reason: .removed, into: &outcome)
        roomMayBeQuiet(now)
        changed(&outcome)
        return outcome
    }

    /// Host only: the server locked the room anew (`locked`), or took its lock away. The room's row is
    /// saved with the next change (this one), which carries the server's new lock.
    public mutating func lockChanged(locked: Bool, by id: MemberID, now: Instant) throws(RoomError) -> Outcome {
        try checkHost(id)
        var outcome = Outcome()
        advanceInternal(to: now, into: &outcome)
        creditFocus(until: now)
        outcome.events.append(.lockChanged(locked: locked, by: id))
        changed(&outcome)
        return outcome
    }

    /// Throws `banned` when whoever joins as `name` with `token` was removed by the host and their ban runs.
    func checkBan(name: String, token: ResumeToken?, at now: Instant) throws(RoomError) {
        guard !bans.isEmpty, let end = bans.end(name: name, tokenHash: token?.hash, at: now) else { return }
        throw .banned(remaining: end - now)
    }
}
