import PomodoroCore
import PomodoroNet
import PomodoroProtocol
import PomodoroStore

// The join workflow as the hub carries it out: `JoinFlow` decides each step; this file looks rooms up, runs
// the hashes, creates or brings back rooms and admits members. Whatever goes off the service thread holds
// the connection's later frames until the join is answered.

extension RoomHub {
    /// A `join`, in its connection's turn.
    func join(_ request: JoinFlow.Request, connection: ConnectionID, at now: ClockReading) {
        guard let session = sessions[connection], session.room == nil else {
            reply(.error(code: .alreadyJoined, message: "already in a room; send leave first", field: nil,
                         ref: request.ref), to: connection)
            return
        }
        let id: RoomID
        do {
            id = try RoomID(validating: request.room)
        } catch {
            refuse(error, ref: request.ref, to: connection)
            return
        }
        // Catching up may also find the room expired and drop it, or one another server took: then the join
        // creates it anew, or is relayed to where it runs (`openRoom`).
        _ = openRoom(id, at: now)
        // A room not in memory may be made or brought back: the join takes its place in the address's
        // rooms-per-minute first (a round trip when the limits are counted elsewhere; its frames wait meanwhile).
        if rooms[id] == nil, roomPlaces[connection] == nil, configuration.limits.roomsCreatedPerAddressPerMinute > 0 {
            suspend(connection)
            addressLimits.reserveRoom(for: session.address) { [self] reservation in
                guard sessions[connection] != nil else {
                    if let reservation { addressLimits.settleRoom(reservation, kept: false) }
                    return
                }
                roomPlaces[connection] = reservation.map(RoomPlace.reserved) ?? .refused
                let now = clock.now()
                _ = openRoom(id, at: now)
                startJoin(request, room: id, connection: connection, at: now)
                resume(connection)
            }
            return
        }
        startJoin(request, room: id, connection: connection, at: now)
    }

    private func startJoin(_ request: JoinFlow.Request, room id: RoomID, connection: ConnectionID, at now: ClockReading) {
        var flow = JoinFlow(request, room: id, hasStore: store != nil)
        let action = flow.start(sighting(of: id, for: request, connection: connection, at: now))
        carryOut(action, of: flow, for: connection, at: now)
    }

    /// Feeds an answer to the connection's waiting join, with the room as it is now, and carries out what the
    /// join does next. A connection that has gone meanwhile has no join left: the answer is dropped.
    func step(_ connection: ConnectionID,
                      _ answer: (inout JoinFlow, JoinFlow.Sighting) -> JoinFlow.Action) {
        guard var flow = joins[connection], sessions[connection] != nil else { return }
        let now = clock.now()
        let action = answer(&flow, sighting(of: flow.room, for: flow.request, connection: connection, at: now))
        carryOut(action, of: flow, for: connection, at: now)
    }

    /// What a join sees of its room now.
    private func sighting(of id: RoomID, for request: JoinFlow.Request, connection: ConnectionID,
                          at now: ClockReading) -> JoinFlow.Sighting {
        if let entry = rooms[id] {
            let resumes = request.token.map { entry.room.hasMember(withToken: ResumeToken($0)) } ?? false
            return .live(serial: entry.serial, lock: entry.passcode, resumes: resumes)
        }
        return .absent(creation: creationRefusal(for: connection, at: now))
    }

    /// Does what the join decided. The connection's frames wait from its first step off the service thread
    /// until the join is answered.
    private func carryOut(_ action: JoinFlow.Action, of flow: JoinFlow, for connection: ConnectionID,
                          at now: ClockReading) {
        let waited = joins[connection] != nil
        if action.ends {
            joins[connection] = nil
        } else {
            if !waited { suspend(connection) }
            joins[connection] = flow
        }
        let request = flow.request, id = flow.room
        switch action {
        case .lookUp:
            lookUp(id, for: connection)
        case .hash(let passcode):
            hash(for: connection, { [workFactor = configuration.passcodeIterations] in
                PasscodeVerifier(passcode: passcode, iterations: workFactor) }, isWrong: { _ in false }) { [self] lock in
                step(connection) { flow, room in flow.hashed(lock, room: room) }
            }
        case .check(let passcode, let lock):
            hash(for: connection, { [workFactor = configuration.passcodeIterations] in lock.check(passcode, workFactor: workFactor) },
                 isWrong: { if case .wrong = $0 { true } else { false } }) { [self] check in
                guard case .right(let upgraded) = check else {
                    return step(connection) { flow, room in flow.checked(matched: false, room: room) }
                }
                step(connection) { flow, room in flow.checked(matched: true, room: room) }
                if let upgraded { adopt(upgraded, replacing: lock, in: id) }
            }
        case .create(let lock):
            var room = Room(id: id, settings: configuration.defaultSettings, policy: configuration.roomPolicy,
                            controlMode: request.control ?? .anyone, now: now.monotonic)
            room.wallOffsetNanoseconds = now.wallOffsetNanoseconds
            let entry = makeEntry(room, passcode: lock)
            rooms.enter(entry)
            logger.debug("room created", metadata: ["room": "\(id)", "locked": "\(lock != nil)"])
            admit(request, to: entry, connection: connection, at: now, madeForIt: true)
        case .bringBack(let stored):
            let entry = bringBack(stored, at: now)
            logger.debug("room brought back", metadata: ["room": "\(entry.room.id)"])
            admit(request, to: entry, connection: connection, at: now, madeForIt: true)
        case .admit:
            guard let entry = rooms[id] else { preconditionFailure("admitted to a room that is not in memory") }
            admit(request, to: entry, connection: connection, at: now)
        case .refuse(let refusal):
            reply(.error(code: refusal.code, message: refusal.message, field: refusal.field, ref: request.ref),
                  to: connection)
        }
        if action.ends { settleRoomPlace(of: connection, kept: action.makesRoom) }
        if action.ends && waited { resume(connection) }
        if action.ends { letGoIfUnused(id) }
    }

    /// Asks the router for a room not in memory, off the service thread; joins of one room share one ask.
    private func lookUp(_ id: RoomID, for connection: ConnectionID) {
        if lookups[id] != nil {
            lookups[id]!.append(connection)
            return
        }
        lookups[id] = [connection]
        router.find(id)
    }

    /// Waits for `id` to be found from now on (a router's own take of it); false when one is under way.
    package func awaitLookUp(_ id: RoomID) -> Bool {
        guard lookups[id] == nil else { return false }
        lookups[id] = []
        return true
    }

    /// The router's answer for `id`: each join waiting for it takes its next step, but those `elsewhere`
    /// takes to the node that runs the room (returning true).
    package func lookedUp(_ id: RoomID, _ found: RoomFound, elsewhere carry: (ConnectionID) -> Bool = { _ in false }) {
        for connection in lookups.removeValue(forKey: id) ?? [] {
            if case .elsewhere = found, carry(connection) { continue }
            step(connection) { flow, room in
                switch found {
                case .stored(let result): flow.lookedUp(self.answer(result, to: flow.request), room: room)
                case .elsewhere(let node): flow.lookedUp(.elsewhere(node: node), room: room)
                case .coordinatorAway: flow.lookedUp(.coordinatorAway, room: room)
                }
            }
        }
    }

    /// A join of `connection` waits no more here: its frames go to another node from now on.
    package func joinLeaves(_ connection: ConnectionID) {
        joins[connection] = nil
        settleRoomPlace(of: connection, kept: false)
    }

    /// The store's answer as a join weighs it: the stored room's lock, and whether the joiner's token is one
    /// of its members'.
    private func answer(_ result: Result<StoredRoom?, StoreError>, to request: JoinFlow.Request) -> JoinFlow.LookUp {
        switch result {
        case .success(let stored?):
            let resumes = request.token.map {
                restored(stored, at: clock.now()).hasMember(withToken: ResumeToken($0))
            } ?? false
            return .found(stored, lock: PasscodeVerifier.lock(stored: stored.passcode, room: stored.record.id,
                                                              logger: logger),
                          resumes: resumes)
        case .success(nil): return .notFound
        case .failure: return .failed
        }
    }

    /// A join's passcode hash or check, in the turn its address gets at the passcode gate; `done` runs only
    /// if the connection is still there. Refused by the gate, the join is refused.
    private func hash<T: Sendable>(for connection: ConnectionID, _ work: @escaping @Sendable () -> T,
                                   isWrong: @escaping (T) -> Bool, done: @escaping (T) -> Void) {
        guard let address = sessions[connection]?.address else { return }
        hashPasscode(from: address, work, isWrong: isWrong, done: { [self] result in
            guard sessions[connection] != nil else { return }
            done(result)
        }, refused: { [self] in
            step(connection) { flow, _ in flow.gateRefused() }
        })
    }

    /// Why this connection may not create a room now (`room_limit`), or nil when it may.
    private func creationRefusal(for connection: ConnectionID, at now: ClockReading) -> Refusal? {
        let limits = configuration.limits
        // Every room in memory counts, however it came (a join, a restart, a scheduled start, the router's take),
        // and so do those on their way back for a scheduled start.
        guard rooms.count + returning.count < limits.maxRooms else {
            return Refusal(code: .roomLimit, message: "the server holds as many rooms as it may", field: "room")
        }
        if case .refused? = roomPlaces[connection] {
            return Refusal(code: .roomLimit, message: "too many new rooms from this address; try again in a minute",
                                    field: "room")
        }
        return nil
    }

    /// The connection's join is over: its place in the rooms-per-minute limit counts for a minute if it made
    /// or brought back a room (`kept`), else it is handed back.
    package func settleRoomPlace(of connection: ConnectionID, kept: Bool) {
        guard let place = roomPlaces.removeValue(forKey: connection) else { return }
        if case .reserved(let reservation) = place { addressLimits.settleRoom(reservation, kept: kept) }
    }

    /// Adds the member to the room (or gives them their place back) and welcomes them. `madeForIt`: this
    /// join created the room or brought it back.
    private func admit(_ request: JoinFlow.Request, to entry: RoomEntry, connection: ConnectionID, at now: ClockReading,
                       madeForIt: Bool = false) {
        let roomID = entry.room.id
        let address = sessions[connection]?.address ?? "?"
        // A refused join leaves the room as the one rule has it: a room made or brought back for this join
        // alone goes again at once; any other stays for its members, its session, its lifetime and its
        // scheduled start, as if the join had not come.
        func turnAway() {
            dropIfExpired(roomID, entry, at: now, lifetime: !madeForIt)
        }
        catchUp(entry, at: now)
        let token = request.token.map(ResumeToken.init)
        let perAddress = configuration.limits.membersPerAddressPerRoom
        if perAddress > 0, entry.membersFrom[address, default: 0] >= perAddress,
           !(token.map(entry.room.hasMember(withToken:)) ?? false) {
            reply(.error(code: .roomFull, message: "this address holds as many members of this room as it may",
                         field: nil, ref: request.ref), to: connection)
            return turnAway()
        }
        do {
            let result = try entry.room.join(name: request.name, token: token, freshToken: tokens.make(),
                                             now: now.monotonic)
            if let previous = entry.connections[result.memberID], previous != connection {
                // The same member joined again (a second tab, or a reconnection before the old socket died):
                // the newer connection wins, so the member is never shown twice.
                sessions[previous]?.room = nil
                sessions[previous]?.member = nil
                reply(.error(code: .replaced, message: "this member joined from another connection",
                             field: nil, ref: nil), to: previous)
                transport.close(previous, code: 4001, reason: "replaced")
            }
            entry.connections[result.memberID] = connection
            sessions[connection]?.room = roomID
            sessions[connection]?.member = result.memberID
            sessions[connection]?.silentNewMember = !result.resumed
            if !result.resumed { entry.counted(result.memberID, from: address) }
            logger.debug("member joined", metadata: ["room": "\(roomID)", "member": "\(result.memberID)",
                                                     "resumed": "\(result.resumed)"])
            reply(.welcome(you: YouPayload(id: result.memberID.rawValue, token: result.token.rawValue,
                                           resumed: result.resumed),
                           room: snapshot(of: entry, at: now), serverTime: now.wallMs,
                           limits: LimitsPayload(entry.room.policy, passcodeLength: PasscodeVerifier.allowedLength),
                           ref: request.ref),
                  to: connection)
            // A big room's list may leave the member out: they hear how the room sees them alone.
            if let unlisted = entry.room.unlistedMembers([result.memberID], at: now.monotonic).first {
                reply(.you(room: roomID.rawValue, member: MemberPayload(unlisted)), to: connection)
            }
            publish(result.outcome, in: entry, at: now, stateAlreadySentTo: connection)
        } catch {
            refuse(error, ref: request.ref, to: connection)
            turnAway()
        }
    }
}

extension JoinFlow.Action {
    /// Whether carrying it out makes a room or brings one back: what the rooms-per-minute limit counts.
    fileprivate var makesRoom: Bool {
        switch self {
        case .create, .bringBack: true
        case .lookUp, .hash, .check, .admit, .refuse: false
        }
    }
}
