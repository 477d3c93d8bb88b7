import PomodoroCore
import PomodoroNet
import PomodoroProtocol
import PomodoroStore

// Each frame of a connection in its turn: counted against its rate, held behind a request still at work,
// decoded once and dispatched to the part of the hub that answers it (a join, an observer, hosting,
// schedules, stats, or a room command).

extension RoomHub {
    // MARK: Messages

    package func received(_ text: [UInt8], from connection: ConnectionID) {
        receive(.frame(text), from: connection)
    }

    /// A frame (or another node's answer to one) for `connection`: counted against the connection's rate, held
    /// while an earlier request is at work, else taken now. A frame the router carries elsewhere is counted
    /// here like any other, before it goes anywhere; another node's connection is not counted again here,
    /// since its node did (they may come bunched).
    package func receive(_ inbound: Inbound, from connection: ConnectionID) {
        guard var session = sessions[connection] else { return }
        // Being closed (it flooded): nothing more of it is taken, as once a local connection is closed.
        if router.ignores(connection) { return }
        let now = clock.now()
        if !connection.isRemote, !session.bucket.take(at: now.monotonic) {
            sessions[connection] = session
            return strike(connection, "too many messages; at most \(configuration.limits.messagesPerSecond) a second")
        }
        if session.suspended > 0 {
            // An earlier request is still at work: this frame takes effect after it, in order.
            guard session.pending.count < ServerLimits.framesWaitingBehindARequest else {
                sessions[connection] = session
                return strike(connection, "too many messages waiting for an earlier request; wait for its answer")
            }
            session.strikes = 0
            session.pending.append(inbound)
            sessions[connection] = session
            return
        }
        session.strikes = 0
        sessions[connection] = session
        take(inbound, from: connection, at: now)
    }

    private func take(_ inbound: Inbound, from connection: ConnectionID, at now: ClockReading) {
        switch inbound {
        case .frame(let text): handle(text, from: connection, at: now)
        case .answered(let frame): sendAnswered(frame, to: connection)
        case .close(let code, let reason): transport.close(connection, code: code, reason: reason)
        }
    }

    /// Refuses a frame with `rate_limited`, or closes the connection (1008) once it has gone on too long.
    private func strike(_ connection: ConnectionID, _ message: String) {
        guard let session = sessions[connection] else { return }
        sessions[connection]?.strikes += 1
        if session.strikes + 1 >= configuration.limits.rateLimitStrikes {
            logger.notice("closing a flooding connection", metadata: ["peer": "\(session.peer)"])
            // Closed by the router its own way, when its answers go that way too.
            if router.closesFlooding(connection, code: 1008, reason: "rate limit") { return }
            transport.close(connection, code: 1008, reason: "rate limit")
        } else {
            reply(.error(code: .rateLimited, message: message, field: nil, ref: nil), to: connection)
        }
    }

    /// Holds the connection's later frames until a matching `resume`: for a request that goes off the
    /// service thread and answers later.
    package func suspend(_ connection: ConnectionID) {
        sessions[connection]?.suspended += 1
    }

    /// A request at work is over: once none is, the frames that waited behind it are handled, in order, until
    /// one of them suspends the connection again.
    package func resume(_ connection: ConnectionID) {
        guard sessions[connection] != nil else { return }
        sessions[connection]!.suspended -= 1
        while let session = sessions[connection], session.suspended == 0, !session.pending.isEmpty {
            let next = sessions[connection]!.pending.removeFirst()
            take(next, from: connection, at: clock.now())
        }
    }

    /// One frame, in its turn.
    package func handle(_ text: [UInt8], from connection: ConnectionID, at now: ClockReading) {
        if router.carries(text, from: connection) { return }
        let frame: ClientFrame
        do {
            frame = try WireCodec.decodeClientFrame(text)
        } catch {
            reply(.error(code: error.code, message: error.message, field: error.field, ref: error.ref), to: connection)
            return
        }
        if case .join = frame.message {} else { sessions[connection]?.silentNewMember = false }
        if observerFrame(frame, from: connection, at: now) { return }
        if refusedDuringOutage(frame, from: connection, at: now) { return }
        if refusedWhileFrozen(frame, from: connection) { return }
        switch frame.message {
        case .ping:
            reply(.pong(serverTime: now.wallMs, ref: frame.ref), to: connection)
        case let .join(room, name, token, passcode, control, tz):
            router.joinSent(text, by: connection)
            if let tz {
                guard FocusReport.timeZone(named: tz) != nil else {
                    reply(.error(code: .badRequest, message: Self.badTimeZone, field: "tz", ref: frame.ref),
                          to: connection)
                    return
                }
                sessions[connection]?.timeZone = tz
            }
            join(JoinFlow.Request(room: room, name: name, token: token, passcode: passcode, control: control,
                                  ref: frame.ref),
                 connection: connection, at: now)
        case let .observe(room, token, passcode):
            router.joinSent(text, by: connection)
            observe(room: room, token: token, passcode: passcode, ref: frame.ref, connection: connection, at: now)
        case let .stats(room, days, tz, passcode):
            stats(room: room, days: days, tz: tz, passcode: passcode, ref: frame.ref, connection: connection, at: now)
        case let .schedule(request):
            guard let (entry, member) = membership(of: connection, ref: frame.ref) else { return }
            catchUp(entry, at: now)
            scheduleRequest(request, ref: frame.ref, entry: entry, member: member, connection: connection, at: now)
        case .leave:
            guard let (entry, member) = membership(of: connection, ref: frame.ref) else { return }
            entry.connections[member] = nil
            sessions[connection]?.room = nil
            sessions[connection]?.member = nil
            let outcome = entry.room.leave(member, now: now.monotonic)
            reply(.ok(command: "leave", appliesFrom: nil, ref: frame.ref), to: connection)
            publish(outcome, in: entry, at: now)
        case .passcode, .kick:
            handleHosting(frame.message, ref: frame.ref, from: connection, at: now)
        case .apiToken(let request):
            apiTokenRequest(request, ref: frame.ref, from: connection, at: now)
        case let .webhook(request):
            guard let (entry, member) = membership(of: connection, ref: frame.ref) else { return }
            webhookRequest(request, ref: frame.ref, entry: entry, member: member, connection: connection, at: now)
        default:
            guard let command = Self.roomCommand(frame.message) else { return }
            // A member's own, or an observer's as the member whose token it showed: one path, judged by the room.
            guard let (entry, member) = pressingMember(of: connection, for: .command(command), ref: frame.ref) else { return }
            do throws(RoomError) {
                catchUp(entry, at: now)
                entry.room.wallOffsetNanoseconds = now.wallOffsetNanoseconds
                let outcome = try entry.room.handle(command, from: member, now: now.monotonic)
                reply(.ok(command: frame.message.type, appliesFrom: outcome.appliesFrom, ref: frame.ref), to: connection)
                publish(outcome, in: entry, at: now)
            } catch .unknownMember where sessions[connection]?.observing != nil {
                reply(.error(memberGoneRefusal(member, ref: frame.ref)), to: connection)
            } catch {
                refuse(error, ref: frame.ref, to: connection)
            }
        }
    }

    /// While the database cannot be reached nothing that must be saved is taken on, so nobody is told of a
    /// change that could not be kept: such a frame is refused with `store_unavailable`. Leaving is let
    /// through: its save waits for the database.
    private func refusedDuringOutage(_ frame: ClientFrame, from connection: ConnectionID, at now: ClockReading) -> Bool {
        switch frame.message {
        case .ping, .stats, .leave, .observe, .schedule(.list): return false
        default: break
        }
        guard let store, store.outage != nil else { return false }
        // Nothing is written while changes are refused: ask the database again, at most once a second, so the
        // refusals end as soon as it is back.
        if lastProbe.map({ now.monotonic - $0 >= .seconds(1) }) ?? true {
            lastProbe = now.monotonic
            store.probe { _ in }
        }
        reply(.error(code: .storeUnavailable, message: "the server cannot save changes just now; try again in a moment",
                     field: nil, ref: frame.ref), to: connection)
        return true
    }

    static func roomCommand(_ message: ClientMessage) -> Room.Command? {
        switch message {
        case .start: .start
        case .pause: .pause
        case .resume: .resume
        case .skip: .skip
        case .reset: .reset
        case .extend(let seconds): .extend(seconds: seconds)
        case .configure(let settings): .configure(settings)
        case .task(let text): .setTask(text)
        case .presence(let away): .setAway(away)
        case .control(let mode): .setControlMode(mode)
        case .handOff(let member): .handOff(to: MemberID(member))
        case .join, .leave, .ping, .stats, .observe, .schedule, .passcode, .kick, .apiToken, .webhook: nil
        }
    }

    /// The room and member `connection` speaks for; nil (answered `not_joined`) for none. A room this server
    /// may no longer act for (`keepsRoom`) leaves memory instead (`lostRoom`: its members closed with 4005,
    /// to resume where it runs now): no command is carried out and answered `ok` where no store would take it.
    func membership(of connection: ConnectionID, ref: Ref?) -> (RoomEntry, MemberID)? {
        guard let session = sessions[connection], let roomID = session.room, let member = session.member,
              let entry = rooms[roomID] else {
            reply(.error(code: .notJoined, message: "join a room first", field: nil, ref: ref), to: connection)
            return nil
        }
        guard keepsRoom(roomID, at: clock.now()) else { return nil }
        return (entry, member)
    }

    /// Bytes another server already answered a frame of `connection` with, sent as they are, in the frame's turn.
    func sendAnswered(_ frame: [UInt8], to connection: ConnectionID) {
        fanOut.send(encoded: frame, to: connection)
    }

    /// Where `connection` comes from, as its limits count it, while it is open.
    package func peer(of connection: ConnectionID) -> String? { sessions[connection]?.peer }
    /// Whether `connection` is open here.
    package func isOpen(_ connection: ConnectionID) -> Bool { sessions[connection] != nil }
    /// Whether `connection` speaks for a member of a room here.
    package func holdsMember(_ connection: ConnectionID) -> Bool { sessions[connection]?.member != nil }

    static let badTimeZone = "tz must be an IANA time zone name such as Europe/Berlin"
}
