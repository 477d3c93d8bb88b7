import PomodoroCore
import PomodoroNet
import PomodoroProtocol

// Observers: connections that watch a room without joining it. They get what its members get (the
// snapshot, then its ticks, states and events, crowd rules and all) but hold no place in it: they are not
// listed or counted, never host and earn nothing. Nobody in the room is told of them. One that showed a
// member's resume token presses the room's controls, and manages its API tokens, as that member
// (`RoomAccess.pressingMember`); any other presses nothing.

extension RoomHub {
    /// `observe`, in its connection's turn: an open room only (nothing is created or brought back), behind
    /// the same lock as a join: a locked room needs its passcode or one of its members' resume tokens
    /// (`RoomAccess`, judged when the answer goes out; the watch is judged again whenever the lock changes or
    /// a member is removed).
    func observe(room name: String, token: String?, passcode: String?, ref: Ref?, connection: ConnectionID,
                 at now: ClockReading) {
        guard let session = sessions[connection], session.room == nil, session.observing == nil else {
            reply(.error(code: .alreadyJoined, message: "already in or watching a room; send leave first", field: nil,
                         ref: ref), to: connection)
            return
        }
        let id: RoomID
        do {
            id = try RoomID(validating: name)
        } catch {
            return refuse(error, ref: ref, to: connection)
        }
        func fail(_ refusal: Refusal) {
            reply(.error(code: refusal.code, message: refusal.message, field: refusal.field, ref: ref), to: connection)
        }
        guard let entry = openRoom(id, at: now) else {
            // The router may find it open elsewhere (the connection's frames wait meanwhile).
            if !router.observesElsewhere(id, connection: connection, ref: ref) { fail(Self.noOpenRoom) }
            return
        }
        let serial = entry.serial
        let visitor = RoomAccess.Visitor(token: token, passcode: passcode)
        let waits = seeingWaits(id, visitor)
        if waits { suspend(connection) }
        letSee(id, visitor, address: session.address,
               hint: "observe with its passcode or a member's token") { [self] result in
            defer { if waits { resume(connection) } }
            guard sessions[connection] != nil else { return }
            let entry: RoomEntry, grant: RoomAccess.Grant
            switch result {
            case .failure(let refusal): return fail(refusal)
            case .success(let seen): (entry, grant) = seen
            }
            // The room may have closed (and even been made anew) while the passcode was checked.
            guard entry.serial == serial else { return fail(Self.noOpenRoom) }
            let now = clock.now()
            entry.observers.insert(connection)
            sessions[connection]?.observing = id
            sessions[connection]?.watchGrant = grant
            logger.debug("observer added", metadata: ["room": "\(id)", "observers": "\(entry.observers.count)"])
            reply(.observing(room: snapshot(of: entry, at: now), serverTime: now.wallMs, ref: ref), to: connection)
        }
    }

    package static let noOpenRoom = Refusal(code: .notFound, message: "no room of that name is open", field: "room")

    /// The room in memory, caught up to `now` (which may find it expired and drop it); nil for one this server
    /// may no longer act for (another server took it, `keepsRoom`), which leaves memory here and then, as when
    /// its timer finds it so (`lostRoom`): what reaches a room between its term's end and its next timer (an
    /// idle room has none) is not shown or carried out here, where no store would take its changes.
    func openRoom(_ id: RoomID, at now: ClockReading) -> RoomEntry? {
        guard let entry = rooms[id] else { return nil }
        guard keepsRoom(id, at: now) else { return nil }
        catchUp(entry, at: now)
        return rooms[id]
    }

    /// A frame from an observer: `ping`, `stats`, `schedules` (the list) and `leave` (which ends the watch)
    /// are answered as for anyone, and a control or `apiToken` pressed by a watch that showed a member's token
    /// goes the way of that member's own (`pressingMember(of:for:ref:)`); anything else, a schedule change too,
    /// is refused with `observer`. Returns whether the frame was dealt with here.
    func observerFrame(_ frame: ClientFrame, from connection: ConnectionID, at now: ClockReading) -> Bool {
        guard let id = sessions[connection]?.observing else { return false }
        if let press = Self.press(frame.message),
           RoomAccess.pressingMember(of: sessions[connection]?.watchGrant ?? RoomAccess.Grant(), for: press) != nil {
            return false
        }
        switch frame.message {
        case .ping, .stats:
            return false
        case .schedule(.list):
            // Reading the schedules is looking, as stats is; changing them (any other schedule message) is not.
            guard let entry = rooms[id] else { return true }
            reply(.schedules(listing(entry, at: WallTime(milliseconds: now.wallMs)), ref: frame.ref), to: connection)
        case .leave:
            stopObserving(connection, room: id)
            reply(.ok(command: "leave", appliesFrom: nil, ref: frame.ref), to: connection)
        case .join, .observe:
            reply(.error(code: .alreadyJoined, message: "already watching a room; send leave first", field: nil,
                         ref: frame.ref), to: connection)
        default:
            reply(.error(Self.observerRefusal(frame)), to: connection)
        }
        return true
    }

    /// What a frame would press as a member, if a watch may press it at all.
    static func press(_ message: ClientMessage) -> RoomAccess.Press? {
        if case .apiToken = message { return .apiTokens }
        return roomCommand(message).map { .command($0) }
    }

    private static func observerRefusal(_ frame: ClientFrame) -> ProtocolError {
        let showing = press(frame.message).map(RoomAccess.mayPress) == true ? " (or observe with the resume token of a member who may)" : ""
        return ProtocolError(code: .observer,
                             message: "observers cannot \(frame.message.type); join the room to take part\(showing)",
                             ref: frame.ref)
    }

    /// The room and member a press of `connection` (a room command, `apiToken`) speaks for: a member's
    /// connection, its own membership (`membership(of:ref:)`); an observer's, the member whose resume token its
    /// watch showed (`RoomAccess.pressingMember`), whom the room then judges when it carries the press out. Nil
    /// when answered here.
    func pressingMember(of connection: ConnectionID, for press: RoomAccess.Press, ref: Ref?) -> (RoomEntry, MemberID)? {
        guard let session = sessions[connection], let id = session.observing else {
            return membership(of: connection, ref: ref)
        }
        guard let member = RoomAccess.pressingMember(of: session.watchGrant ?? RoomAccess.Grant(), for: press),
              let entry = rooms[id], keepsRoom(id, at: clock.now()) else {
            return nil
        }
        return (entry, member)
    }

    /// The room refused an observer's press because the member it speaks for is not in it, or not
    /// connected, now (`Room.handle`'s or `Room.mayManageAPITokens`'s `unknownMember`): said as an observer's refusal, not as `not_joined`.
    func memberGoneRefusal(_ member: MemberID, ref: Ref?) -> ProtocolError {
        ProtocolError(code: .observer,
                      message: "\(member), the member whose resume token this watch showed, is not in the room or not "
                          + "connected now; join the room to take part",
                      ref: ref)
    }

    func stopObserving(_ connection: ConnectionID, room id: RoomID) {
        sessions[connection]?.observing = nil
        sessions[connection]?.watchGrant = nil
        rooms[id]?.observers.remove(connection)
    }

    /// A room dropped from memory: its observers are told so with a close (4004), as there is nothing left
    /// to watch.
    func dismissObservers(of entry: RoomEntry) {
        for connection in entry.observers {
            sessions[connection]?.observing = nil
            transport.close(connection, code: Self.roomClosedCode, reason: "room closed")
        }
        entry.observers.removeAll()
        for stream in entry.streams { stream.finish() }
        entry.streams.removeAll()
    }

    static let roomClosedCode: UInt16 = 4004

    /// Observers watching rooms now (for `/metrics`).
    var observerCount: Int { rooms.values.reduce(0) { $0 + $1.observers.count } }
}
