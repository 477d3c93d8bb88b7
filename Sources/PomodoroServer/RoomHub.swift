import Foundation
import Logging
import PomodoroCore
import PomodoroNet
import PomodoroProtocol

/// The application on the service thread: connections, rooms, and the broadcasts between them.
///
/// It turns decoded messages into calls on `Room`, and a room's `Outcome` into frames: each broadcast is
/// encoded once and the same bytes go to every member. It is confined to the service thread; nothing
/// here locks.
/// `@unchecked Sendable` only so the composition root can hand it to the service thread, which alone uses it.
final class RoomHub: WebSocketServerDelegate, @unchecked Sendable {
    private let configuration: ServerConfiguration
    private let clock: ServerClock
    private let tokens = TokenSource()
    private var logger: Logger

    /// A connection and, once it has joined, where it sits.
    private struct Session {
        let peer: String
        var room: RoomID?
        var member: MemberID?
        var bucket: TokenBucket
        /// Messages refused in a row for going too fast.
        var strikes = 0
        /// A join waits for its passcode to be hashed or checked off the service thread.
        var joining = false
    }

    /// A `join` as the client sent it.
    private struct JoinRequest {
        var room: String
        var name: String
        var token: String?
        var passcode: String?
        var control: ControlMode?
        var ref: Ref?
    }

    /// Counts what each address did in its current one-minute window (rooms created, wrong passcodes).
    private struct PerMinuteCounter {
        private var windows: [String: (start: Instant, count: Int)] = [:]

        /// What `address` did in the minute that is still running at `now`.
        func count(for address: String, at now: Instant) -> Int {
            guard let window = windows[address], now - window.start < .seconds(60) else { return 0 }
            return window.count
        }

        /// Counts one more for `address`, starting a new window when the last one is over; forgets finished
        /// windows once many addresses are held.
        mutating func record(_ address: String, at now: Instant) {
            if let window = windows[address], now - window.start < .seconds(60) {
                windows[address] = (window.start, window.count + 1)
            } else {
                windows[address] = (now, 1)
            }
            if windows.count > 10_000 { windows = windows.filter { now - $0.value.start < .seconds(60) } }
        }
    }

    /// A live room and the connection that speaks for each of its connected members.
    private final class RoomEntry {
        var room: Room
        var connections: [MemberID: ConnectionID] = [:]
        let timer: LoopTimer
        /// Set for a locked room.
        let passcode: PasscodeVerifier?
        init(room: Room, timer: LoopTimer, passcode: PasscodeVerifier?) {
            self.room = room
            self.timer = timer
            self.passcode = passcode
        }
    }

    private var sessions: [ConnectionID: Session] = [:]
    private var rooms: [RoomID: RoomEntry] = [:]
    private var roomsCreatedBy = PerMinuteCounter()
    private var passcodeFailures = PerMinuteCounter()
    /// Passcodes are hashed and checked here, never on the service thread.
    private let passcodeQueue = DispatchQueue(label: "pomodoro.passcodes")
    private static let passcodeFailuresPerMinute = 5
    private(set) var framesSent = 0

    init(configuration: ServerConfiguration, clock: ServerClock, logger: Logger) {
        self.configuration = configuration
        self.clock = clock
        self.logger = logger
    }

    var roomCount: Int { rooms.count }

    // MARK: Connections

    func server(_ server: WebSocketServer, didOpen connection: ConnectionID, peer: String) {
        let limits = configuration.limits
        sessions[connection] = Session(peer: peer, bucket: TokenBucket(ratePerSecond: limits.messagesPerSecond,
                                                                       burst: limits.messageBurst))
        logger.trace("connection opened", metadata: ["connection": "\(connection)", "peer": "\(peer)"])
    }

    func server(_ server: WebSocketServer, didClose connection: ConnectionID) {
        guard let session = sessions.removeValue(forKey: connection) else { return }
        guard let roomID = session.room, let member = session.member, let entry = rooms[roomID],
              entry.connections[member] == connection else { return }
        entry.connections[member] = nil
        let now = clock.now()
        let outcome = entry.room.disconnect(member, now: now.monotonic)
        logger.debug("member disconnected", metadata: ["room": "\(roomID)", "member": "\(member)"])
        publish(outcome, in: entry, server: server, at: now)
    }

    func server(_ server: WebSocketServer, didReject problem: ReceiveProblem, from connection: ConnectionID) {
        switch problem {
        case .tooLarge(let limit):
            reply(.error(code: .tooLarge, message: "messages are limited to \(limit) bytes", field: nil, ref: nil),
                  to: connection, server: server)
        case .binary:
            reply(.error(code: .binaryUnsupported, message: "send JSON text frames, not binary frames",
                         field: nil, ref: nil), to: connection, server: server)
        }
    }

    func server(_ server: WebSocketServer, didReceiveHTTP request: HTTPRequest, responder: HTTPResponder) {
        responder.respond(httpResponse(for: request.path))
    }

    private func httpResponse(for path: String) -> HTTPResponse {
        if path == "/healthz" { return HTTPResponse(status: 200, text: "ok\n") }
        // Invite links name the room in the path (/r/team-alpha): they get the page, which reads the name.
        if path.hasPrefix("/r/"), let root = configuration.webRoot,
           let page = FileManager.default.contents(atPath: root + "/index.html") {
            return HTTPResponse(status: 200, contentType: "text/html; charset=utf-8", body: Array(page))
        }
        return HTTPResponse(status: 404, text: "not found\n")
    }

    // MARK: Messages

    func server(_ server: WebSocketServer, didReceive text: [UInt8], from connection: ConnectionID) {
        guard var session = sessions[connection] else { return }
        let now = clock.now()
        guard session.bucket.take(at: now.monotonic) else {
            session.strikes += 1
            sessions[connection] = session
            if session.strikes >= configuration.limits.rateLimitStrikes {
                logger.notice("closing a flooding connection", metadata: ["peer": "\(session.peer)"])
                server.close(connection, code: 1008, reason: "rate limit")
            } else {
                reply(.error(code: .rateLimited, message: "too many messages; at most \(configuration.limits.messagesPerSecond) a second",
                             field: nil, ref: nil), to: connection, server: server)
            }
            return
        }
        session.strikes = 0
        sessions[connection] = session
        let frame: ClientFrame
        do {
            frame = try WireCodec.decodeClientFrame(text)
        } catch {
            reply(.error(code: error.code, message: error.message, field: error.field, ref: error.ref),
                  to: connection, server: server)
            return
        }
        switch frame.message {
        case .ping:
            reply(.pong(serverTime: now.wallMs, ref: frame.ref), to: connection, server: server)
        case let .join(room, name, token, passcode, control):
            join(JoinRequest(room: room, name: name, token: token, passcode: passcode, control: control, ref: frame.ref),
                 connection: connection, server: server, at: now)
        case .leave:
            guard let (entry, member) = membership(of: connection, ref: frame.ref, server: server) else { return }
            entry.connections[member] = nil
            sessions[connection]?.room = nil
            sessions[connection]?.member = nil
            let outcome = entry.room.leave(member, now: now.monotonic)
            reply(.ok(command: "leave", appliesFrom: nil, ref: frame.ref), to: connection, server: server)
            publish(outcome, in: entry, server: server, at: now)
        default:
            guard let command = Self.roomCommand(frame.message) else { return }
            guard let (entry, member) = membership(of: connection, ref: frame.ref, server: server) else { return }
            do {
                catchUp(entry, server: server, at: now)
                let outcome = try entry.room.handle(command, from: member, now: now.monotonic)
                reply(.ok(command: frame.message.type, appliesFrom: outcome.appliesFrom, ref: frame.ref),
                      to: connection, server: server)
                publish(outcome, in: entry, server: server, at: now)
            } catch {
                refuse(error, ref: frame.ref, to: connection, server: server)
            }
        }
    }

    private static func roomCommand(_ message: ClientMessage) -> Room.Command? {
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
        case .join, .leave, .ping: nil
        }
    }

    private func membership(of connection: ConnectionID, ref: Ref?,
                            server: WebSocketServer) -> (RoomEntry, MemberID)? {
        guard let session = sessions[connection], let roomID = session.room, let member = session.member,
              let entry = rooms[roomID] else {
            reply(.error(code: .notJoined, message: "join a room first", field: nil, ref: ref),
                  to: connection, server: server)
            return nil
        }
        return (entry, member)
    }

    private func join(_ request: JoinRequest, connection: ConnectionID, server: WebSocketServer,
                      at now: ClockReading) {
        guard let session = sessions[connection], session.room == nil, !session.joining else {
            reply(.error(code: .alreadyJoined, message: "already in a room; send leave first", field: nil,
                         ref: request.ref), to: connection, server: server)
            return
        }
        let roomID: RoomID
        do {
            roomID = try RoomID(validating: request.room)
        } catch {
            refuse(error, ref: request.ref, to: connection, server: server)
            return
        }
        // Catching up may also find the room expired and drop it: then the join creates it anew.
        if let existing = rooms[roomID] { catchUp(existing, server: server, at: now) }

        if let entry = rooms[roomID] {
            let resuming = request.token.map { entry.room.hasMember(withToken: ResumeToken($0)) } ?? false
            guard let verifier = entry.passcode, !resuming else {
                admit(request, to: entry, connection: connection, server: server, at: now)
                return
            }
            guard let passcode = request.passcode else {
                reply(.error(code: .badPasscode, message: "this room is locked: join with its passcode",
                             field: "passcode", ref: request.ref), to: connection, server: server)
                return
            }
            guard passcodeAttemptAllowed(from: session.peer, at: now) else {
                reply(.error(code: .rateLimited, message: "too many wrong passcodes; try again in a minute",
                             field: "passcode", ref: request.ref), to: connection, server: server)
                return
            }
            sessions[connection]?.joining = true
            passcodeQueue.async { [self] in
                let matches = verifier.matches(passcode)
                server.post { [self] in
                    guard sessions[connection]?.joining == true else { return }
                    sessions[connection]?.joining = false
                    let now = clock.now()
                    guard matches else {
                        recordPasscodeFailure(from: session.peer, at: now)
                        reply(.error(code: .badPasscode, message: "wrong passcode", field: "passcode",
                                     ref: request.ref), to: connection, server: server)
                        return
                    }
                    guard let entry = rooms[roomID] else {
                        reply(.error(code: .invalidState, message: "the room closed meanwhile; join again",
                                     field: nil, ref: request.ref), to: connection, server: server)
                        return
                    }
                    admit(request, to: entry, connection: connection, server: server, at: now)
                }
            }
            return
        }

        // A new room: checked for its limits first, and a passcode, if any, hashed off the service thread.
        guard mayCreateRoom(for: connection, ref: request.ref, server: server, at: now) else { return }
        guard let passcode = request.passcode else {
            let entry = makeRoom(roomID, request: request, passcode: nil, connection: connection, server: server, at: now)
            admit(request, to: entry, connection: connection, server: server, at: now)
            return
        }
        guard PasscodeVerifier.allowedLength.contains(passcode.count) else {
            reply(.error(code: .badRequest, message: "passcode must be 4–64 characters", field: "passcode",
                         ref: request.ref), to: connection, server: server)
            return
        }
        sessions[connection]?.joining = true
        passcodeQueue.async { [self] in
            let verifier = PasscodeVerifier(passcode: passcode)
            server.post { [self] in
                guard sessions[connection]?.joining == true else { return }
                sessions[connection]?.joining = false
                let now = clock.now()
                if rooms[roomID] != nil {
                    // Someone created it meanwhile: this is now a join to their room.
                    join(request, connection: connection, server: server, at: now)
                    return
                }
                guard mayCreateRoom(for: connection, ref: request.ref, server: server, at: now) else { return }
                let entry = makeRoom(roomID, request: request, passcode: verifier, connection: connection,
                                     server: server, at: now)
                admit(request, to: entry, connection: connection, server: server, at: now)
            }
        }
    }

    /// Adds the member to the room (or gives them their place back) and welcomes them.
    private func admit(_ request: JoinRequest, to entry: RoomEntry, connection: ConnectionID,
                       server: WebSocketServer, at now: ClockReading) {
        let roomID = entry.room.id
        do {
            catchUp(entry, server: server, at: now)
            let result = try entry.room.join(name: request.name, token: request.token.map(ResumeToken.init),
                                             freshToken: tokens.make(), now: now.monotonic)
            if let previous = entry.connections[result.memberID], previous != connection {
                // The same member joined again (a second tab, or a reconnection before the old socket died):
                // the newer connection wins, so the member is never shown twice.
                sessions[previous]?.room = nil
                sessions[previous]?.member = nil
                reply(.error(code: .replaced, message: "this member joined from another connection",
                             field: nil, ref: nil), to: previous, server: server)
                server.close(previous, code: 4001, reason: "replaced")
            }
            entry.connections[result.memberID] = connection
            sessions[connection]?.room = roomID
            sessions[connection]?.member = result.memberID
            logger.debug("member joined", metadata: ["room": "\(roomID)", "member": "\(result.memberID)",
                                                     "resumed": "\(result.resumed)"])
            reply(.welcome(you: YouPayload(id: result.memberID.rawValue, token: result.token.rawValue,
                                           resumed: result.resumed),
                           room: snapshot(of: entry, at: now), serverTime: now.wallMs, ref: request.ref),
                  to: connection, server: server)
            publish(result.outcome, in: entry, server: server, at: now, stateAlreadySentTo: connection)
        } catch {
            refuse(error, ref: request.ref, to: connection, server: server)
            // A refused first join leaves no empty room behind.
            if entry.room.memberCount == 0 {
                entry.timer.cancel()
                rooms[roomID] = nil
            }
        }
    }

    private func snapshot(of entry: RoomEntry, at now: ClockReading) -> SnapshotPayload {
        SnapshotPayload(entry.room.snapshot(at: now.monotonic), clock: now, locked: entry.passcode != nil)
    }

    private func passcodeAttemptAllowed(from peer: String, at now: ClockReading) -> Bool {
        passcodeFailures.count(for: peer, at: now.monotonic) < Self.passcodeFailuresPerMinute
    }

    private func recordPasscodeFailure(from peer: String, at now: ClockReading) {
        passcodeFailures.record(peer, at: now.monotonic)
        logger.notice("wrong passcode", metadata: ["peer": "\(peer)"])
    }

    /// Whether this connection may create a room now; replies `room_limit` when not.
    private func mayCreateRoom(for connection: ConnectionID, ref: Ref?, server: WebSocketServer,
                               at now: ClockReading) -> Bool {
        let limits = configuration.limits
        guard rooms.count < limits.maxRooms else {
            reply(.error(code: .roomLimit, message: "the server holds as many rooms as it may", field: "room",
                         ref: ref), to: connection, server: server)
            return false
        }
        if limits.roomsCreatedPerAddressPerMinute > 0, let peer = sessions[connection]?.peer,
           roomsCreatedBy.count(for: peer, at: now.monotonic) >= limits.roomsCreatedPerAddressPerMinute {
            reply(.error(code: .roomLimit, message: "too many new rooms from this address; try again in a minute",
                         field: "room", ref: ref), to: connection, server: server)
            return false
        }
        return true
    }

    /// Creates a room (after `mayCreateRoom`), counting it against the creator's address.
    private func makeRoom(_ id: RoomID, request: JoinRequest, passcode: PasscodeVerifier?, connection: ConnectionID,
                          server: WebSocketServer, at now: ClockReading) -> RoomEntry {
        if configuration.limits.roomsCreatedPerAddressPerMinute > 0, let peer = sessions[connection]?.peer {
            roomsCreatedBy.record(peer, at: now.monotonic)
        }
        let timer = server.makeTimer { [unowned self, unowned server] in self.timerFired(id, server: server) }
        let room = Room(id: id, settings: configuration.defaultSettings, policy: configuration.roomPolicy,
                        controlMode: request.control ?? .anyone, now: now.monotonic)
        let entry = RoomEntry(room: room, timer: timer, passcode: passcode)
        rooms[id] = entry
        logger.debug("room created", metadata: ["room": "\(id)", "locked": "\(passcode != nil)"])
        return entry
    }

    /// Brings a room up to `now` and broadcasts what that produced (a phase that ended a moment before its
    /// timer fired), so a command that is then refused cannot swallow it.
    private func catchUp(_ entry: RoomEntry, server: WebSocketServer, at now: ClockReading) {
        let outcome = entry.room.advance(to: now.monotonic)
        if outcome.stateChanged || outcome.tick != nil || !outcome.events.isEmpty {
            publish(outcome, in: entry, server: server, at: now)
        }
    }

    private func timerFired(_ id: RoomID, server: WebSocketServer) {
        guard let entry = rooms[id] else { return }
        let now = clock.now()
        let outcome = entry.room.advance(to: now.monotonic)
        publish(outcome, in: entry, server: server, at: now)
    }

    // MARK: Sending

    private func refuse(_ error: RoomError, ref: Ref?, to connection: ConnectionID, server: WebSocketServer) {
        let (message, field): (String, String?) = switch error {
        case let .invalidArgument(field, reason): ("\(field) \(reason)", field)
        case let .invalidState(why): (why, nil)
        case .roomFull: ("the room is full", nil)
        case .unknownMember: ("join a room first", nil)
        case .forbidden: ("only the host may do that in this room", nil)
        }
        reply(.error(code: ErrorCode(error), message: message, field: field, ref: ref), to: connection, server: server)
    }

    private func reply(_ message: ServerMessage, to connection: ConnectionID, server: WebSocketServer) {
        if server.send(OutboundFrame(WireCodec.encode(message)), to: connection) { framesSent += 1 }
    }

    /// Broadcasts what a room call produced (events, then a tick, then the new state), each encoded once,
    /// and re-arms the room's timer for its next wake-up (or drops the room when it has expired).
    private func publish(_ outcome: Outcome, in entry: RoomEntry, server: WebSocketServer, at now: ClockReading,
                         stateAlreadySentTo skip: ConnectionID? = nil) {
        let roomID = entry.room.id
        for event in outcome.events {
            broadcast(.event(room: roomID.rawValue, EventPayload(event), serverTime: now.wallMs), in: entry,
                      server: server)
        }
        if let tick = outcome.tick {
            broadcast(.tick(TickPayload(tick, room: roomID, clock: now)), in: entry, server: server)
        }
        if outcome.stateChanged {
            broadcast(.state(snapshot(of: entry, at: now)), in: entry, server: server, except: skip)
        }
        if dropIfExpired(roomID, entry, at: now) { return }
        if let wakeup = entry.room.nextWakeup() {
            entry.timer.schedule(afterNanoseconds: (wakeup - now.monotonic).nanoseconds)
        } else {
            entry.timer.cancel()
        }
    }

    @discardableResult
    private func dropIfExpired(_ id: RoomID, _ entry: RoomEntry, at now: ClockReading) -> Bool {
        guard entry.room.isExpired(at: now.monotonic) else { return false }
        entry.timer.cancel()
        rooms[id] = nil
        logger.debug("room dropped", metadata: ["room": "\(id)"])
        return true
    }

    private func broadcast(_ message: ServerMessage, in entry: RoomEntry, server: WebSocketServer,
                           except skip: ConnectionID? = nil) {
        guard !entry.connections.isEmpty else { return }
        let frame = OutboundFrame(WireCodec.encode(message))
        for connection in entry.connections.values where connection != skip {
            if server.send(frame, to: connection) { framesSent += 1 }
        }
    }
}
