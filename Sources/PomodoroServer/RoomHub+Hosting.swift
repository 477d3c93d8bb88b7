import PomodoroCore
import PomodoroNet
import PomodoroProtocol

// The host's tools beside the controls: changing or taking away the room's passcode (hashed off the
// service thread, like every passcode), and removing a member, whose connection is told why and closed.

extension RoomHub {
    /// The close code a removed member's connection gets, after `error removed`: clients should not
    /// reconnect by themselves (their name and token are refused until the ban ends).
    static let removedCloseCode: UInt16 = 4002

    /// `passcode` and `kick`, from a member of a room.
    func handleHosting(_ message: ClientMessage, ref: Ref?, from connection: ConnectionID, at now: ClockReading) {
        guard let (entry, member) = membership(of: connection, ref: ref) else { return }
        switch message {
        case .passcode(let passcode): changePasscode(to: passcode, in: entry, by: member, ref: ref, connection: connection)
        case .kick(let target): remove(MemberID(target), from: entry, by: member, ref: ref, connection: connection, at: now)
        default: break
        }
    }

    /// Locks the room with `passcode` (nil unlocks it). The new lock is hashed off the service thread while
    /// the connection's later frames wait; it applies to joins from then on (members inside stay, resume
    /// tokens still work), to every watcher at once (`reapplyAccess`), and the store gets it with the room's
    /// row the change saves.
    private func changePasscode(to passcode: String?, in entry: RoomEntry, by member: MemberID, ref: Ref?,
                                connection: ConnectionID) {
        do { try entry.room.checkHost(member) } catch { return refuse(error, ref: ref, to: connection) }
        guard let passcode else {
            return lock(entry, with: nil, by: member, ref: ref, connection: connection, at: clock.now())
        }
        guard PasscodeVerifier.allowedLength.contains(passcode.count) else {
            return reply(.error(code: .badRequest, message: "passcode must be 4–64 characters", field: "passcode",
                                ref: ref), to: connection)
        }
        suspend(connection)
        let transport = transport
        let done = LoopBound({ [self] (lock: PasscodeVerifier) in
            defer { resume(connection) }
            // The room may have gone (and been made anew) while the passcode was hashed.
            guard sessions[connection] != nil, rooms[entry.room.id] === entry else { return }
            self.lock(entry, with: lock, by: member, ref: ref, connection: connection, at: clock.now())
        }, loop: transport.loop)
        hashing.run { [workFactor = configuration.passcodeIterations] in
            let lock = PasscodeVerifier(passcode: passcode, iterations: workFactor)
            transport.post { done.value(lock) }
        }
    }

    private func lock(_ entry: RoomEntry, with lock: PasscodeVerifier?, by member: MemberID, ref: Ref?,
                      connection: ConnectionID, at now: ClockReading) {
        do {
            catchUp(entry, at: now)
            // Asked again: the host may have handed the role on while the passcode was hashed.
            try entry.room.checkHost(member)
            entry.passcode = lock
            let outcome = try entry.room.lockChanged(locked: lock != nil, by: member, now: now.monotonic)
            logger.info("room's passcode changed", metadata: ["room": "\(entry.room.id)", "locked": "\(lock != nil)"])
            // Everyone who watches is judged against the new lock at once, before anyone hears of it.
            reapplyAccess(to: entry, after: .lock)
            reply(.ok(command: "passcode", appliesFrom: nil, ref: ref), to: connection)
            publish(outcome, in: entry, at: now)
        } catch {
            refuse(error, ref: ref, to: connection)
        }
    }

    /// Removes `target` for good: their connection (if any) gets `error removed` and is closed with 4002,
    /// the others hear `memberLeft` with reason `removed`.
    private func remove(_ target: MemberID, from entry: RoomEntry, by member: MemberID, ref: Ref?,
                        connection: ConnectionID, at now: ClockReading) {
        do {
            catchUp(entry, at: now)
            let outcome = try entry.room.remove(target, by: member, now: now.monotonic)
            if let removed = entry.connections.removeValue(forKey: target) {
                sessions[removed]?.room = nil
                sessions[removed]?.member = nil
                reply(.error(ProtocolError.removed(for: entry.room.policy.removalBan)), to: removed)
                transport.close(removed, code: Self.removedCloseCode, reason: "removed by the host")
            }
            logger.info("member removed by the host", metadata: ["room": "\(entry.room.id)", "member": "\(target)"])
            // Whoever watches by the removed member's token goes with them (unless the room is open to all).
            reapplyAccess(to: entry, after: .removed(target))
            reply(.ok(command: "kick", appliesFrom: nil, ref: ref), to: connection)
            publish(outcome, in: entry, at: now)
        } catch {
            refuse(error, ref: ref, to: connection)
        }
    }
}
