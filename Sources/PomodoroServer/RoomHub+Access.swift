import PomodoroCore
import PomodoroNet
import PomodoroProtocol

// Carrying out `RoomAccess` for the live room: letting an observer, an event-stream reader or a snapshot
// reader see it (after the passcode gate and a hash when needed, judged again against the lock the room has
// when the answer goes out), and applying the rule again to every watcher when the room's lock changes or a
// member is removed. Journal reads (`stats`, history, schedules, the calendar) follow the same rule in
// `RoomHub+Journal.swift`; joins in `JoinFlow`.

extension RoomHub {
    /// The close code of a watcher (observer) whose access a lock or a new passcode withdrew: it had shown
    /// neither the new passcode nor a member's token. Clients should not reconnect by themselves with what
    /// they showed before (it would only count as a wrong passcode).
    static let accessEndedCode: UInt16 = 4003

    /// Which member of the room `visitor` is now: by their connection, or their resume token.
    func member(of entry: RoomEntry, _ visitor: RoomAccess.Visitor) -> MemberID? {
        if let connection = visitor.connection, let session = sessions[connection], session.room == entry.room.id,
           let member = session.member, entry.connections[member] == connection {
            return member
        }
        return visitor.token.flatMap { entry.room.member(withToken: ResumeToken($0)) }
    }

    /// Whether a watcher with `grant` may still see the room as it is now.
    func stillSees(_ entry: RoomEntry, _ grant: RoomAccess.Grant) -> Bool {
        let isMember = grant.member.map { entry.room.member($0) != nil } ?? false
        return RoomAccess.verdict(lock: entry.passcode, isMember: isMember, opened: grant.opened, passcode: nil) == .allowed
    }

    /// Whether letting `visitor` see the open room `id` waits for a passcode check.
    func seeingWaits(_ id: RoomID, _ visitor: RoomAccess.Visitor) -> Bool {
        guard let entry = rooms[id] else { return false }
        let isMember = member(of: entry, visitor) != nil
        if case .check = RoomAccess.verdict(lock: entry.passcode, isMember: isMember, opened: nil,
                                            passcode: visitor.passcode) { return true }
        return false
    }

    /// Decides whether `visitor` (at `address`) may see the open room `id`, and calls `done` on the service
    /// thread with the room and why they may, or why not. A passcode is checked in the address's turn at the
    /// passcode gate against the lock the room has when the check starts (a wrong one counts), and the answer
    /// is judged again against the lock the room has when it is delivered: a lock changed meanwhile is
    /// checked anew, never skipped. `hint` says how a locked room is opened on this path.
    func letSee(_ id: RoomID, _ visitor: RoomAccess.Visitor, address: String, hint: String, opened: String? = nil,
                done: @escaping (Result<(RoomEntry, RoomAccess.Grant), Refusal>) -> Void) {
        guard let entry = openRoom(id, at: clock.now()) else { return done(.failure(Self.noOpenRoom)) }
        let member = member(of: entry, visitor)
        switch RoomAccess.verdict(lock: entry.passcode, isMember: member != nil, opened: opened,
                                  passcode: visitor.passcode) {
        case .allowed:
            let kept = entry.passcode.flatMap { $0.encoded == opened ? opened : nil }
            done(.success((entry, RoomAccess.Grant(member: member, opened: kept))))
        case .refused:
            done(.failure(Self.locked(hint)))
        case .check:
            whenPasscodeMayBeChecked(from: address, start: { [self] in
                // In its turn, against the room as it is now (it may have been unlocked, locked anew or closed).
                guard let entry = openRoom(id, at: clock.now()),
                      case .check(let passcode, let lock) = RoomAccess.verdict(
                        lock: entry.passcode, isMember: self.member(of: entry, visitor) != nil, opened: opened,
                        passcode: visitor.passcode) else {
                    passcodeChecked(from: address, wrong: false)
                    return letSee(id, visitor, address: address, hint: hint, opened: opened, done: done)
                }
                let transport = transport
                let finish = LoopBound({ [self] (check: PasscodeVerifier.Check) in
                    guard case .right(let upgraded) = check else {
                        passcodeChecked(from: address, wrong: true)
                        return done(.failure(Self.wrongPasscode))
                    }
                    passcodeChecked(from: address, wrong: false)
                    // Delivered against the lock the room has now.
                    letSee(id, visitor, address: address, hint: hint, opened: lock.encoded) { [self] result in
                        done(result)
                        if case .success = result, let upgraded { adopt(upgraded, replacing: lock, in: id) }
                    }
                }, loop: transport.loop)
                hashing.run { [workFactor = configuration.passcodeIterations] in
                    let check = lock.check(passcode, workFactor: workFactor)
                    transport.post { finish.value(check) }
                }
            }, refuse: {
                done(.failure(Self.tooManyWrongPasscodes))
            })
        }
    }

    static func locked(_ hint: String) -> Refusal {
        Refusal(code: .badPasscode, message: "this room is locked: \(hint)", field: "passcode")
    }

    static let wrongPasscode = Refusal(code: .badPasscode, message: "wrong passcode", field: "passcode")
    static let tooManyWrongPasscodes = Refusal(code: .rateLimited, message: "too many wrong passcodes; try again in a minute",
                                               field: "passcode")

    // MARK: Watchers when the room changes

    /// What made the room's watchers be judged again.
    enum AccessChange {
        /// The room was locked, unlocked or given a new passcode.
        case lock
        /// The host removed this member.
        case removed(MemberID)
    }

    /// Applies the rule again to every watcher of the room, at once: an observer or event-stream reader that
    /// may no longer see it is told why and closed. One let in by a member the host removed gets `removed`
    /// (an observer is then closed with 4002, as the member was); one whose lock went gets `bad_passcode` (an
    /// observer is closed with 4003). Members themselves stay (a lock applies to joins from then on).
    func reapplyAccess(to entry: RoomEntry, after change: AccessChange) {
        if case .lock = change { access.lockChanged(entry.room.id) }
        for connection in entry.observers {
            let grant = sessions[connection]?.watchGrant ?? RoomAccess.Grant()
            guard !stillSees(entry, grant) else { continue }
            entry.observers.remove(connection)
            sessions[connection]?.observing = nil
            sessions[connection]?.watchGrant = nil
            let (error, code) = withdrawal(of: grant, after: change, in: entry)
            reply(.error(error), to: connection)
            transport.close(connection, code: code, reason: code == Self.removedCloseCode ? "removed by the host"
                                                                                             : "access ended")
        }
        entry.streams.removeAll { stream in
            let grant = (stream as? WatchingStream)?.grant ?? RoomAccess.Grant()
            guard !stillSees(entry, grant) else { return false }
            let (error, _) = withdrawal(of: grant, after: change, in: entry)
            let message = ServerMessage.error(error)
            stream.send(Array("event: \(message.type)\ndata: ".utf8) + WireCodec.encode(message) + Array("\n\n".utf8))
            stream.finish()
            return true
        }
    }

    private func withdrawal(of grant: RoomAccess.Grant, after change: AccessChange,
                            in entry: RoomEntry) -> (ProtocolError, UInt16) {
        if case .removed(let member) = change, grant.member == member {
            return (ProtocolError.removed(for: entry.room.policy.removalBan), Self.removedCloseCode)
        }
        return (ProtocolError(code: .badPasscode,
                              message: "the room's lock changed: watch it again with its passcode or a member's token",
                              field: "passcode", ref: nil),
                Self.accessEndedCode)
    }

    /// The room's lock was hashed anew for the same passcode (`adopt`): watchers who opened the old hash
    /// opened this one.
    func lockRehashed(in entry: RoomEntry, from old: String, to new: String) {
        for connection in entry.observers where sessions[connection]?.watchGrant?.opened == old {
            sessions[connection]?.watchGrant?.opened = new
        }
        for case let stream as WatchingStream in entry.streams where stream.grant.opened == old {
            stream.grant.opened = new
        }
    }
}

/// An event stream with the grant its reader was let in by (see `RoomHub.reapplyAccess`).
final class WatchingStream: HubEventStream {
    let base: any HubEventStream
    var grant: RoomAccess.Grant

    init(_ base: any HubEventStream, grant: RoomAccess.Grant) {
        self.base = base
        self.grant = grant
    }

    func send(_ piece: [UInt8]) -> Bool { base.send(piece) }
    func finish() { base.finish() }
}
