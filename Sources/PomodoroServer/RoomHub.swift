import Foundation
import Logging
import PomodoroCore
import PomodoroNet
import PomodoroProtocol
import PomodoroStore

/// The application on the service thread: connections, rooms, and the broadcasts between them.
///
/// It turns decoded messages into calls on `Room`, and a room's `Outcome` into frames: each broadcast is
/// encoded once and the same bytes go to every member. It is confined to the service thread; nothing
/// here locks.
/// `@unchecked Sendable` only so the composition root can hand it to the service thread, which alone uses it.
final class RoomHub: WebSocketServerDelegate, @unchecked Sendable {
    private let configuration: ServerConfiguration
    private let clock: ServerClock
    /// Where rooms and the focus journal are written, off the service thread; nil keeps them in memory.
    private let store: StoreWriter?
    private let tokens = TokenSource()
    private var logger: Logger

    /// A connection and, once it has joined, where it sits.
    private struct Session {
        let peer: String
        /// What its per-address limits count it under (`AddressKey`).
        let address: String
        var room: RoomID?
        var member: MemberID?
        var bucket: TokenBucket
        /// The time zone named on `join`, for stats requests that name none.
        var timeZone: String?
        /// Messages refused in a row for going too fast.
        var strikes = 0
        /// Requests of this connection still at work off the service thread (a join's store look-up or
        /// passcode check, a `stats` read). While any is, its later frames wait in `pending`: frames of one
        /// connection take effect in the order they were sent.
        var suspended = 0
        var pending: [[UInt8]] = []
        /// A new member who has sent nothing since joining: lost, they get the room's short grace.
        var silentNewMember = false
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

    /// A live room and the connection that speaks for each of its connected members.
    private final class RoomEntry {
        var room: Room
        var connections: [MemberID: ConnectionID] = [:]
        let timer: LoopTimer
        /// Fires the `state` a crowd's member changes were waiting for (see `crowdStateInterval`).
        let stateTimer: LoopTimer
        /// When the last `state` was broadcast, and whether one is waiting for `stateTimer`.
        var lastStateAt: Instant?
        var statePending = false
        /// Set for a locked room (replaced once by a hash with the current work factor; see `adopt`).
        var passcode: PasscodeVerifier?
        /// While the room's changes are being committed, its broadcasts wait here, so members hear of
        /// nothing the store does not have yet, and hear everything in order.
        var held: [() -> Void]?
        /// Batches of changes handed to the store and not yet committed.
        var uncommitted = 0
        /// Where each member who joined over this server's life came from, and how many members of the
        /// room each address holds (connected or within their grace), for `membersPerAddressPerRoom`.
        var addressOf: [MemberID: String] = [:]
        var membersFrom: [String: Int] = [:]
        init(room: Room, timer: LoopTimer, stateTimer: LoopTimer, passcode: PasscodeVerifier?) {
            self.room = room
            self.timer = timer
            self.stateTimer = stateTimer
            self.passcode = passcode
        }

        func cancelTimers() {
            timer.cancel()
            stateTimer.cancel()
        }

        func counted(_ member: MemberID, from address: String) {
            guard addressOf[member] == nil else { return }
            addressOf[member] = address
            membersFrom[address, default: 0] += 1
        }

        func forget(_ member: MemberID) {
            guard let address = addressOf.removeValue(forKey: member) else { return }
            let held = membersFrom[address, default: 1] - 1
            membersFrom[address] = held > 0 ? held : nil
        }

        /// Sends at once, or after the commit in flight when there is one.
        func announce(_ send: @escaping () -> Void) {
            if held != nil { held!.append(send) } else { send() }
        }
    }

    /// In a room above `RoomPolicy.memberListLimit`, a `state` caused only by member changes goes out at
    /// most this often: a join storm of n members then costs each member about one list-capped `state` a
    /// second instead of n full ones.
    static let crowdStateInterval: Duration = .seconds(1)

    private var sessions: [ConnectionID: Session] = [:]
    private var rooms: [RoomID: RoomEntry] = [:]
    private var roomsCreatedBy = PerMinuteCounter()
    /// When each address may have a passcode checked (wrong ones per minute, checks at once).
    private var passcodeGate = PasscodeGate(wrongPerMinute: RoomHub.passcodeFailuresPerMinute)
    /// Checks the gate holds back, with what to do when each starts or is refused.
    private var passcodeWaiters: [PasscodeGate.Ticket: (start: () -> Void, refuse: () -> Void)] = [:]
    /// Passcodes are hashed and checked here, never on the service thread.
    private let passcodeQueue = DispatchQueue(label: "pomodoro.passcodes", attributes: .concurrent)
    static let passcodeFailuresPerMinute = 5
    /// `/api` requests per address: a bucket of `apiBurst`, refilled at `apiRequestsPerSecond`.
    private var apiBuckets: [String: (bucket: TokenBucket, used: Instant)] = [:]
    private(set) var framesSent = 0
    private let metrics = ServerMetrics()

    /// When a refused change last asked the database whether it is back.
    private var lastProbe: Instant?

    /// Rooms being looked up in the store for a join, with the joins waiting for the answer.
    private var lookups: [RoomID: [(Result<StoredRoom?, StoreError>) -> Void]] = [:]

    init(configuration: ServerConfiguration, clock: ServerClock, logger: Logger, store: StoreWriter?) {
        self.configuration = configuration
        self.clock = clock
        self.logger = logger
        self.store = store
    }

    // MARK: Restoring

    /// Brings back the rooms a store kept (on the service thread, before anyone connects): their timers go
    /// on from their stored end times, and a phase that ended meanwhile completes now and is journaled.
    /// At most `--max-rooms` come back: the rest stay stored and return when someone joins them.
    func restore(_ stored: [StoredRoom], server: WebSocketServer) {
        let now = clock.now()
        let occupied = stored.filter { !$0.members.isEmpty }
        if occupied.count > configuration.limits.maxRooms {
            logger.warning("more stored rooms have members than the server may hold; the rest come back when joined",
                           metadata: ["stored": "\(occupied.count)", "maxRooms": "\(configuration.limits.maxRooms)"])
        }
        for room in occupied.prefix(configuration.limits.maxRooms) {
            let entry = bringBack(room, server: server, at: now)
            logger.info("room restored", metadata: ["room": "\(entry.room.id)", "members": "\(entry.room.memberCount)",
                                                    "status": "\(entry.room.status.rawValue)"])
        }
    }

    /// Rebuilds one stored room, catches it up to `now`, and writes what that changed.
    @discardableResult
    private func bringBack(_ stored: StoredRoom, server: WebSocketServer, at now: ClockReading) -> RoomEntry {
        let id = stored.record.id
        var room = restored(stored, at: now)
        let outcome = room.resumeAfterRestart(at: now.monotonic)
        let entry = makeEntry(room, passcode: PasscodeVerifier.lock(stored: stored.passcode, room: id, logger: logger),
                              server: server)
        rooms[id] = entry
        publish(outcome, in: entry, server: server, at: now)
        return entry
    }

    /// A stored room as a `Room` on this boot's clock: nothing is registered, written or sent.
    private func restored(_ stored: StoredRoom, at now: ClockReading) -> Room {
        Room(restoring: stored.record, members: stored.members, policy: configuration.roomPolicy,
             now: now.monotonic, wallOffsetNanoseconds: now.wallOffsetNanoseconds)
    }

    /// Writes everything still queued for the store and waits until it is durable (at shutdown).
    func flushStore() { store?.flush() }

    var roomCount: Int { rooms.count }

    // MARK: Connections

    func server(_ server: WebSocketServer, didOpen connection: ConnectionID, peer: String) {
        let limits = configuration.limits
        sessions[connection] = Session(peer: peer, address: AddressKey.of(peer),
                                       bucket: TokenBucket(ratePerSecond: limits.messagesPerSecond,
                                                           burst: limits.messageBurst))
        logger.trace("connection opened", metadata: ["connection": "\(connection)", "peer": "\(peer)"])
    }

    /// Set at shutdown: closing connections then changes no room.
    private var stopped = false

    /// From now on, connections that close leave their members as they were (the server is stopping).
    func stopTracking() { stopped = true }

    func server(_ server: WebSocketServer, didClose connection: ConnectionID) {
        guard let session = sessions.removeValue(forKey: connection), !stopped else { return }
        guard let roomID = session.room, let member = session.member, let entry = rooms[roomID],
              entry.connections[member] == connection else { return }
        entry.connections[member] = nil
        let now = clock.now()
        let outcome = entry.room.disconnect(member, now: now.monotonic, silent: session.silentNewMember)
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
        if request.path.hasPrefix("/api/") { return api(request, responder: responder, server: server) }
        if request.path == "/healthz", let store { return health(of: store, responder: responder) }
        responder.respond(httpResponse(for: request.path, server: server))
    }

    private func httpResponse(for path: String, server: WebSocketServer) -> HTTPResponse {
        if path == "/healthz" { return HTTPResponse(status: 200, text: "ok\n") }
        if path == ServerMetrics.path, configuration.metricsEnabled {
            return metrics.response(.init(connections: server.connectionCount, rooms: rooms.count,
                                          members: rooms.values.reduce(0) { $0 + $1.room.memberCount },
                                          droppedSlowClients: server.droppedSlowClients))
        }
        // Invite links name the room in the path (/r/team-alpha): they get the page, which reads the name.
        if path.hasPrefix("/r/"), let root = configuration.webRoot,
           let page = FileManager.default.contents(atPath: root + "/index.html") {
            return HTTPResponse(status: 200, contentType: "text/html; charset=utf-8", body: Array(page))
        }
        return HTTPResponse(status: 404, text: "not found\n")
    }

    /// `/healthz` with a database: asks it (a read that finds nothing) and answers 503 with the reason while it
    /// cannot be reached; rooms go on meanwhile.
    private func health(of store: StoreWriter, responder: HTTPResponder) {
        store.probe { outage in
            guard let outage else {
                responder.respond(HTTPResponse(status: 200, text: "ok\n"))
                return
            }
            let seconds = Int(Date().timeIntervalSince(outage.since).rounded())
            responder.respond(HTTPResponse(status: 503, text: "database unavailable for \(seconds) s: \(outage.reason)\n"))
        }
    }

    // MARK: HTTP API

    /// `GET /api/rooms/{room}/stats` and `GET /api/rooms/{room}/history`: the journal is read off the service
    /// thread and the answer goes out when it is ready. A locked room needs `Authorization: Bearer` with its
    /// passcode or a member's resume token.
    private func api(_ request: HTTPRequest, responder: HTTPResponder, server: WebSocketServer) {
        func fail(_ code: ErrorCode, _ message: String, field: String? = nil) {
            var response = HTTPResponse(status: code.httpStatus, contentType: "application/json",
                                        body: WireCodec.encodeHTTPError(code: code, message: message, field: field))
            if code == .badPasscode { response.headers.append((name: "WWW-Authenticate", value: "Bearer realm=\"pomodoro\"")) }
            if code == .rateLimited { response.headers.append((name: "Retry-After", value: field == "passcode" ? "60" : "1")) }
            responder.respond(response)
        }
        let address = AddressKey.of(request.peer)
        guard apiRequestAllowed(from: address, at: clock.now()) else {
            return fail(.rateLimited, "too many requests from this address; at most \(configuration.limits.apiRequestsPerSecond) a second")
        }
        let parts = request.path.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 5, parts[1] == "api", parts[2] == "rooms", parts[4] == "stats" || parts[4] == "history" else {
            return fail(.notFound, "no such path; try /api/rooms/{room}/stats or /api/rooms/{room}/history")
        }
        guard request.method == .get || request.method == .head else {
            return fail(.badRequest, "only GET is answered here", field: "method")
        }
        guard let roomID = try? RoomID(validating: String(parts[3])) else {
            return fail(.notFound, "a room name is 1–64 characters of A–Z, a–z, 0–9, '_' or '-'", field: "room")
        }
        guard let zone = FocusReport.timeZone(named: request.query["tz"] ?? "UTC") else {
            return fail(.badRequest, Self.badTimeZone, field: "tz")
        }
        let bearer = request.authorization.flatMap { header -> String? in
            header.lowercased().hasPrefix("bearer ") ? String(header.dropFirst(7)).trimmingWhitespace() : nil
        }
        let now = clock.now()
        let access = journalAccess(to: roomID, connection: nil, token: bearer, credential: bearer)
        func read<T: Sendable>(_ query: @escaping @Sendable (any RoomStore) throws(StoreError) -> T,
                               answer: @escaping (T) -> HTTPResponse) {
            readJournal(roomID, access: access, address: address,
                        lockedHint: "send Authorization: Bearer <its passcode or a member's resume token>",
                        server: server, query: query) { result in
                switch result {
                case .success(let value): responder.respond(answer(value))
                case .failure(let refusal): fail(refusal.code, refusal.message, field: refusal.field)
                }
            }
        }
        func integer(_ name: String, default value: Int64, in range: ClosedRange<Int64>) -> Int64? {
            guard let text = request.query[name] else { return value }
            guard let number = Int64(text), range.contains(number) else { return nil }
            return number
        }

        if parts[4] == "stats" {
            let range = Int64(FocusReport.dayRange.lowerBound)...Int64(FocusReport.dayRange.upperBound)
            guard let days = integer("days", default: 14, in: range).map(Int.init) else {
                return fail(.badRequest, "days must be \(range.lowerBound)–\(range.upperBound)", field: "days")
            }
            read(Self.report(of: roomID, days: days, zone: zone, nowMs: now.wallMs)) { report in
                HTTPResponse(status: 200, contentType: "application/json",
                             body: WireCodec.encodeStatsBody(StatsReportPayload(report)))
            }
            return
        }

        guard let limit = integer("limit", default: 100, in: 1...1000).map(Int.init) else {
            return fail(.badRequest, "limit must be 1–1000", field: "limit")
        }
        let before: Int64?
        if let text = request.query["before"] {
            guard let value = Int64(text) else { return fail(.badRequest, "before must be epoch milliseconds", field: "before") }
            before = value
        } else {
            before = nil
        }
        let format = request.query["format"] ?? "json"
        guard format == "json" || format == "csv" else {
            return fail(.badRequest, "format must be json or csv", field: "format")
        }
        // A page ends at `limit` sessions or at about HistoryPage.maxBytes, whichever comes first; the store
        // reads no further, so neither a large `limit` nor large sessions make a large answer.
        read({ (store: any RoomStore) throws(StoreError) in
            try store.historyPage(room: roomID, before: before, limit: limit, maxBytes: HistoryPage.maxBytes)
        }) { page in
            if format == "csv" {
                var response = HTTPResponse(status: 200, contentType: "text/csv; charset=utf-8",
                                            body: Array(FocusReport.csv(page.sessions, timeZone: zone).utf8))
                response.headers.append((name: "Content-Disposition",
                                         value: "attachment; filename=\"\(roomID)-history.csv\""))
                if let next = page.nextBefore { response.headers.append((name: "Next-Before", value: String(next))) }
                return response
            }
            let history = HistoryPayload(room: roomID.rawValue, sessions: page.sessions.map(FocusSessionPayload.init),
                                         nextBefore: page.nextBefore)
            return HTTPResponse(status: 200, contentType: "application/json", body: WireCodec.encodeHistory(history))
        }
    }

    /// Takes one of `address`'s `/api` tokens if it has one. Buckets unused for a minute are full again and
    /// are forgotten once many addresses are held.
    private func apiRequestAllowed(from address: String, at now: ClockReading) -> Bool {
        let limits = configuration.limits
        guard limits.apiRequestsPerSecond > 0 else { return true }
        var held = apiBuckets[address]
            ?? (TokenBucket(ratePerSecond: limits.apiRequestsPerSecond, burst: limits.apiBurst), now.monotonic)
        let allowed = held.bucket.take(at: now.monotonic)
        held.used = now.monotonic
        apiBuckets[address] = held
        if apiBuckets.count > 10_000 { apiBuckets = apiBuckets.filter { now.monotonic - $0.value.used < .seconds(60) } }
        return allowed
    }

    // MARK: Messages

    func server(_ server: WebSocketServer, didReceive text: [UInt8], from connection: ConnectionID) {
        guard var session = sessions[connection] else { return }
        let now = clock.now()
        guard session.bucket.take(at: now.monotonic) else {
            sessions[connection] = session
            return strike(connection, server: server,
                          "too many messages; at most \(configuration.limits.messagesPerSecond) a second")
        }
        if session.suspended > 0 {
            // An earlier request is still at work: this frame takes effect after it, in order.
            guard session.pending.count < ServerLimits.framesWaitingBehindARequest else {
                sessions[connection] = session
                return strike(connection, server: server,
                              "too many messages waiting for an earlier request; wait for its answer")
            }
            session.strikes = 0
            session.pending.append(text)
            sessions[connection] = session
            return
        }
        session.strikes = 0
        sessions[connection] = session
        handle(text, from: connection, server: server, at: now)
    }

    /// Refuses a frame with `rate_limited`, or closes the connection (1008) once it has gone on too long.
    private func strike(_ connection: ConnectionID, server: WebSocketServer, _ message: String) {
        guard let session = sessions[connection] else { return }
        sessions[connection]?.strikes += 1
        if session.strikes + 1 >= configuration.limits.rateLimitStrikes {
            logger.notice("closing a flooding connection", metadata: ["peer": "\(session.peer)"])
            server.close(connection, code: 1008, reason: "rate limit")
        } else {
            reply(.error(code: .rateLimited, message: message, field: nil, ref: nil), to: connection, server: server)
        }
    }

    /// Holds the connection's later frames until a matching `resume`: for a request that goes off the
    /// service thread and answers later.
    private func suspend(_ connection: ConnectionID) {
        sessions[connection]?.suspended += 1
    }

    /// A request at work is over: once none is, the frames that waited behind it are handled, in order, until
    /// one of them suspends the connection again.
    private func resume(_ connection: ConnectionID, server: WebSocketServer) {
        guard sessions[connection] != nil else { return }
        sessions[connection]!.suspended -= 1
        while let session = sessions[connection], session.suspended == 0, !session.pending.isEmpty {
            let text = sessions[connection]!.pending.removeFirst()
            handle(text, from: connection, server: server, at: clock.now())
        }
    }

    /// One frame, in its turn.
    private func handle(_ text: [UInt8], from connection: ConnectionID, server: WebSocketServer, at now: ClockReading) {
        let frame: ClientFrame
        do {
            frame = try WireCodec.decodeClientFrame(text)
        } catch {
            reply(.error(code: error.code, message: error.message, field: error.field, ref: error.ref),
                  to: connection, server: server)
            return
        }
        if case .join = frame.message {} else { sessions[connection]?.silentNewMember = false }
        // While the database cannot be reached nothing that must be saved is taken on, so nobody is told of a
        // change that could not be kept. Leaving is let through: its save waits for the database.
        switch frame.message {
        case .ping, .stats, .leave: break
        default:
            if let store, store.outage != nil {
                // Nothing is written while changes are refused: ask the database again, at most once a
                // second, so the refusals end as soon as it is back.
                if lastProbe.map({ now.monotonic - $0 >= .seconds(1) }) ?? true {
                    lastProbe = now.monotonic
                    store.probe { _ in }
                }
                reply(.error(code: .storeUnavailable, message: "the server cannot save changes just now; try again in a moment",
                             field: nil, ref: frame.ref), to: connection, server: server)
                return
            }
        }
        switch frame.message {
        case .ping:
            reply(.pong(serverTime: now.wallMs, ref: frame.ref), to: connection, server: server)
        case let .join(room, name, token, passcode, control, tz):
            if let tz {
                guard FocusReport.timeZone(named: tz) != nil else {
                    reply(.error(code: .badRequest, message: Self.badTimeZone,
                                 field: "tz", ref: frame.ref), to: connection, server: server)
                    return
                }
                sessions[connection]?.timeZone = tz
            }
            join(JoinRequest(room: room, name: name, token: token, passcode: passcode, control: control, ref: frame.ref),
                 connection: connection, server: server, at: now)
        case let .stats(room, days, tz, passcode):
            stats(room: room, days: days, tz: tz, passcode: passcode, ref: frame.ref, connection: connection,
                  server: server, at: now)
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

    // MARK: Stats and the journal

    /// What a reader of a room's journal may show, decided off the service thread for a locked room.
    enum JournalAccess: Sendable {
        /// Open room, or the reader is one of its members.
        case granted
        /// A locked room: `credential` must be its passcode (nil: none was given).
        case passcode(PasscodeVerifier?, credential: String?)
    }

    enum JournalAnswer<T: Sendable>: Sendable {
        /// The query's answer; `upgraded` when the room's passcode was checked and hashed anew (see `adopt`).
        case answer(T, upgraded: (old: PasscodeVerifier, new: PasscodeVerifier)? = nil)
        case locked
        case wrongPasscode
    }

    /// Why a journal read was refused, as the WebSocket's `error` and the HTTP API's error body both say it.
    struct JournalRefusal: Error {
        let code: ErrorCode
        let message: String
        let field: String?
    }

    /// Reads a room's journal off the service thread for a reader at `address`: a locked room's passcode is
    /// checked there too (the room's stored lock when it is not in memory), once the address's passcode gate
    /// lets it, and a wrong one counts against the address as for joins; then `query` runs. `done` runs on
    /// the service thread; `lockedHint` says how this reader proves access to a locked room.
    private func readJournal<T: Sendable>(_ id: RoomID, access: JournalAccess, address: String, lockedHint: String,
                                          server: WebSocketServer,
                                          query: @escaping @Sendable (any RoomStore) throws(StoreError) -> T,
                                          done: @escaping (Result<T, JournalRefusal>) -> Void) {
        let checksPasscode = if case .passcode(_, .some) = access { true } else { false }
        let settle = { [self] (result: Result<JournalAnswer<T>, StoreError>) in
            if checksPasscode {
                let wrong = if case .success(.wrongPasscode) = result { true } else { false }
                passcodeChecked(from: address, wrong: wrong)
            }
            switch result {
            case .success(.answer(let value, let upgraded)):
                if let upgraded { adopt(upgraded.new, replacing: upgraded.old, in: id) }
                done(.success(value))
            case .success(.locked):
                done(.failure(JournalRefusal(code: .badPasscode, message: "this room is locked: \(lockedHint)",
                                             field: "passcode")))
            case .success(.wrongPasscode):
                done(.failure(JournalRefusal(code: .badPasscode, message: "wrong passcode", field: "passcode")))
            case .failure(let error):
                logger.error("could not read the journal", metadata: ["room": "\(id)", "error": "\(error)"])
                done(.failure(JournalRefusal(code: .unavailable, message: "the server could not read its journal just now; try again",
                                             field: nil)))
            }
        }
        guard let store else {
            return done(.failure(JournalRefusal(code: .unavailable,
                                                message: "this server runs without a database and keeps no stats",
                                                field: nil)))
        }
        let finish = UncheckedBox(settle)
        let read = { [self] in
            let inMemory = rooms[id] != nil
            let lockLogger = logger
            store.read({ (store: any RoomStore) throws(StoreError) -> JournalAnswer<T> in
                if case .passcode(let known, let credential) = access {
                    let verifier = inMemory ? known
                        : PasscodeVerifier.lock(stored: try store.loadRoom(id)?.passcode, room: id, logger: lockLogger)
                    if let verifier {
                        guard let credential else { return .locked }
                        guard case .right(let upgraded) = verifier.check(credential) else { return .wrongPasscode }
                        return .answer(try query(store), upgraded: upgraded.map { (verifier, $0) })
                    }
                }
                return .answer(try query(store))
            }) { result in
                server.post { finish.value(result) }
            }
        }
        guard checksPasscode else { return read() }
        whenPasscodeMayBeChecked(from: address, start: read) {
            done(.failure(JournalRefusal(code: .rateLimited, message: "too many wrong passcodes; try again in a minute",
                                         field: "passcode")))
        }
    }

    /// Runs `start` (a passcode check) once `address`'s gate lets it, or `refuse` if it will not; either may
    /// run now or later, on the service thread. A started check must end with `passcodeChecked`.
    private func whenPasscodeMayBeChecked(from address: String, start: @escaping () -> Void,
                                          refuse: @escaping () -> Void) {
        switch passcodeGate.request(from: address, at: clock.now().monotonic) {
        case .start: start()
        case .wait(let ticket): passcodeWaiters[ticket] = (start, refuse)
        case .refuse: refuse()
        }
    }

    /// A passcode check of `address` is over: it counts if it was wrong, and the checks waiting behind it
    /// start or are refused.
    private func passcodeChecked(from address: String, wrong: Bool) {
        if wrong { logger.notice("wrong passcode", metadata: ["peer": "\(address)"]) }
        let next = passcodeGate.finish(from: address, wrong: wrong, at: clock.now().monotonic)
        for ticket in next.refuse { passcodeWaiters.removeValue(forKey: ticket)?.refuse() }
        for ticket in next.start { passcodeWaiters.removeValue(forKey: ticket)?.start() }
    }

    /// The stats report of a room, from the store's running totals: one row per UTC day for the totals and
    /// streaks (which reach back to the first day), and the window's quarters for its days.
    private static func report(of room: RoomID, days: Int, zone: TimeZone,
                               nowMs: Int64) -> @Sendable (any RoomStore) throws(StoreError) -> FocusReport {
        { (store: any RoomStore) throws(StoreError) in
            let quarters = FocusReport.quarterRange(days: days, timeZone: zone, nowMs: nowMs)
            return FocusReport.make(room: room, totals: try store.journalTotals(room: room, quarters: quarters),
                                    days: days, timeZone: zone, nowMs: nowMs)
        }
    }

    private static let badTimeZone = "tz must be an IANA time zone name such as Europe/Berlin"

    /// Who may read `id`'s journal: everyone for an open room, a member (by connection or resume token),
    /// or whoever knows the passcode. A room not in memory may still be locked in the store.
    private func journalAccess(to id: RoomID, connection: ConnectionID?, token: String?,
                               credential: String?) -> JournalAccess {
        if let connection, sessions[connection]?.room == id { return .granted }
        guard let entry = rooms[id] else { return .passcode(nil, credential: credential) }
        guard let verifier = entry.passcode else { return .granted }
        if let token, entry.room.hasMember(withToken: ResumeToken(token)) { return .granted }
        return .passcode(verifier, credential: credential)
    }

    private func stats(room: String?, days: Int?, tz: String?, passcode: String?, ref: Ref?,
                       connection: ConnectionID, server: WebSocketServer, at now: ClockReading) {
        func refuse(_ code: ErrorCode, _ message: String, field: String?) {
            reply(.error(code: code, message: message, field: field, ref: ref), to: connection, server: server)
        }
        guard let session = sessions[connection] else { return }
        guard let name = room ?? session.room?.rawValue else {
            return refuse(.badRequest, "name the room, or join it first", field: "room")
        }
        let roomID: RoomID
        do { roomID = try RoomID(validating: name) } catch { return self.refuse(error, ref: ref, to: connection, server: server) }
        let days = days ?? 14
        guard FocusReport.dayRange.contains(days) else {
            return refuse(.badRequest, "days must be \(FocusReport.dayRange.lowerBound)–\(FocusReport.dayRange.upperBound)", field: "days")
        }
        guard let zone = FocusReport.timeZone(named: tz ?? session.timeZone ?? "UTC") else {
            return refuse(.badRequest, Self.badTimeZone, field: "tz")
        }
        let access = journalAccess(to: roomID, connection: connection, token: nil, credential: passcode)
        // The connection's later frames wait for this answer, so replies keep the order of requests.
        suspend(connection)
        readJournal(roomID, access: access, address: session.address, lockedHint: "ask with its passcode", server: server,
                    query: Self.report(of: roomID, days: days, zone: zone, nowMs: now.wallMs)) { [self] result in
            defer { resume(connection, server: server) }
            guard sessions[connection] != nil else { return }
            switch result {
            case .success(let report): reply(.stats(StatsReportPayload(report), ref: ref), to: connection, server: server)
            case .failure(let refusal): refuse(refusal.code, refusal.message, field: refusal.field)
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
        case .join, .leave, .ping, .stats, .schedule: nil
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

    // MARK: Joining

    /// A `join`, in its connection's turn. A room in memory is joined at once (a locked one once the passcode
    /// is checked); a room that is not is looked up in the store first, and brought back into memory only
    /// once the joiner has passed its lock. Whatever goes off the service thread holds the connection's later
    /// frames until the join is answered.
    private func join(_ request: JoinRequest, connection: ConnectionID, server: WebSocketServer, at now: ClockReading) {
        guard let session = sessions[connection], session.room == nil else {
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
        if let entry = rooms[roomID] { return join(request, live: entry, connection: connection, server: server, at: now) }
        // Bringing a stored room back costs what creating one does: both limits hold before anything is read.
        guard mayCreateRoom(for: connection, ref: request.ref, server: server, at: now) else { return }
        guard store != nil else { return create(roomID, request, connection: connection, server: server, at: now) }
        suspend(connection)
        lookUp(roomID, server: server) { [self] result in
            defer { resume(connection, server: server) }
            guard sessions[connection] != nil else { return }
            let now = clock.now()
            // Brought back or created by another join meanwhile.
            if let entry = rooms[roomID] { return join(request, live: entry, connection: connection, server: server, at: now) }
            switch result {
            case .success(let stored?):
                join(request, stored: stored, connection: connection, server: server, at: now)
            case .success(nil):
                guard mayCreateRoom(for: connection, ref: request.ref, server: server, at: now) else { return }
                create(roomID, request, connection: connection, server: server, at: now)
            case .failure:
                reply(.error(code: .unavailable, message: "the server could not read its store just now; try again",
                             field: nil, ref: request.ref), to: connection, server: server)
            }
        }
    }

    /// Reads a room from the store off the service thread; joins of one room share one read. `done` runs on
    /// the service thread.
    private func lookUp(_ id: RoomID, server: WebSocketServer,
                        done: @escaping (Result<StoredRoom?, StoreError>) -> Void) {
        guard let store else { return done(.success(nil)) }
        if lookups[id] != nil {
            lookups[id]!.append(done)
            return
        }
        lookups[id] = [done]
        store.read({ (store: RoomStore) throws(StoreError) in try store.loadRoom(id) }) { [self] result in
            server.post { [self] in
                if case .failure(let error) = result {
                    logger.error("could not read a room from the store", metadata: ["room": "\(id)", "error": "\(error)"])
                }
                for waiting in lookups.removeValue(forKey: id) ?? [] { waiting(result) }
            }
        }
    }

    /// Joins a room in memory: a member coming back with their token, or anyone to an open room, at once;
    /// anyone else to a locked room once its passcode has been checked.
    private func join(_ request: JoinRequest, live entry: RoomEntry, connection: ConnectionID,
                      server: WebSocketServer, at now: ClockReading) {
        let resuming = request.token.map { entry.room.hasMember(withToken: ResumeToken($0)) } ?? false
        guard let verifier = entry.passcode, !resuming else {
            return admit(request, to: entry, connection: connection, server: server, at: now)
        }
        checkPasscode(of: request, against: verifier, connection: connection, server: server) { [self] in
            // The room may have been dropped while the passcode was checked (and even made anew).
            guard rooms[entry.room.id] === entry else {
                reply(.error(code: .invalidState, message: "the room closed meanwhile; join again",
                             field: nil, ref: request.ref), to: connection, server: server)
                return
            }
            admit(request, to: entry, connection: connection, server: server, at: clock.now())
        }
    }

    /// Joins a room only the store has. It comes back into memory (and is written) only once the joiner has
    /// shown one of its members' tokens or its passcode: a wrong guess loads nothing.
    private func join(_ request: JoinRequest, stored: StoredRoom, connection: ConnectionID,
                      server: WebSocketServer, at now: ClockReading) {
        let bringIn = { [self] in
            let now = clock.now()
            // Another join brought it back meanwhile: this joiner has passed the same lock.
            if let entry = rooms[stored.record.id] {
                return admit(request, to: entry, connection: connection, server: server, at: now)
            }
            guard mayCreateRoom(for: connection, ref: request.ref, server: server, at: now) else { return }
            countRoomCreated(by: connection, at: now)
            let entry = bringBack(stored, server: server, at: now)
            logger.debug("room brought back", metadata: ["room": "\(entry.room.id)"])
            admit(request, to: entry, connection: connection, server: server, at: now)
        }
        let resuming = request.token.map { restored(stored, at: now).hasMember(withToken: ResumeToken($0)) } ?? false
        guard let verifier = PasscodeVerifier.lock(stored: stored.passcode, room: stored.record.id, logger: logger),
              !resuming else { return bringIn() }
        checkPasscode(of: request, against: verifier, connection: connection, server: server, then: bringIn)
    }

    /// Creates a room for its first `join`; a passcode, if any, is hashed off the service thread first.
    private func create(_ id: RoomID, _ request: JoinRequest, connection: ConnectionID, server: WebSocketServer,
                        at now: ClockReading) {
        guard let passcode = request.passcode else {
            let entry = makeRoom(id, request: request, passcode: nil, connection: connection, server: server, at: now)
            return admit(request, to: entry, connection: connection, server: server, at: now)
        }
        guard PasscodeVerifier.allowedLength.contains(passcode.count) else {
            reply(.error(code: .badRequest, message: "passcode must be 4–64 characters", field: "passcode",
                         ref: request.ref), to: connection, server: server)
            return
        }
        hash(for: connection, ref: request.ref, server: server, { PasscodeVerifier(passcode: passcode) },
             isWrong: { _ in false }) { [self] verifier in
            let now = clock.now()
            // Someone created it meanwhile: this is now a join to their room, behind their lock.
            if let entry = rooms[id] { return join(request, live: entry, connection: connection, server: server, at: now) }
            guard mayCreateRoom(for: connection, ref: request.ref, server: server, at: now) else { return }
            let entry = makeRoom(id, request: request, passcode: verifier, connection: connection, server: server, at: now)
            admit(request, to: entry, connection: connection, server: server, at: now)
        }
    }

    /// Checks a `join`'s passcode against a room's lock; `then` runs (on the service thread) if it matched.
    private func checkPasscode(of request: JoinRequest, against verifier: PasscodeVerifier, connection: ConnectionID,
                               server: WebSocketServer, then: @escaping () -> Void) {
        guard let passcode = request.passcode else {
            reply(.error(code: .badPasscode, message: "this room is locked: join with its passcode",
                         field: "passcode", ref: request.ref), to: connection, server: server)
            return
        }
        hash(for: connection, ref: request.ref, server: server, { verifier.check(passcode) },
             isWrong: { if case .wrong = $0 { true } else { false } }) { [self] check in
            guard case .right(let upgraded) = check else {
                reply(.error(code: .badPasscode, message: "wrong passcode", field: "passcode", ref: request.ref),
                      to: connection, server: server)
                return
            }
            then()
            if let upgraded, let id = try? RoomID(validating: request.room) { adopt(upgraded, replacing: verifier, in: id) }
        }
    }

    /// Runs a passcode hash off the service thread in the turn the connection's address gets at the passcode
    /// gate, holding the connection's later frames until `done` has had the result on the service thread.
    /// Refused by the gate, the request gets `rate_limited` (field `passcode`) and `done` never runs.
    private func hash<T: Sendable>(for connection: ConnectionID, ref: Ref?, server: WebSocketServer,
                                   _ work: @escaping @Sendable () -> T, isWrong: @escaping (T) -> Bool,
                                   done: @escaping (T) -> Void) {
        guard let address = sessions[connection]?.address else { return }
        suspend(connection)
        let finish = UncheckedBox({ [self] (result: T) in
            passcodeChecked(from: address, wrong: isWrong(result))
            defer { resume(connection, server: server) }
            guard sessions[connection] != nil else { return }
            done(result)
        })
        whenPasscodeMayBeChecked(from: address, start: { [self] in
            passcodeQueue.async {
                let result = work()
                server.post { finish.value(result) }
            }
        }, refuse: { [self] in
            reply(.error(code: .rateLimited, message: "too many wrong passcodes; try again in a minute",
                         field: "passcode", ref: ref), to: connection, server: server)
            resume(connection, server: server)
        })
    }

    /// Adds the member to the room (or gives them their place back) and welcomes them.
    private func admit(_ request: JoinRequest, to entry: RoomEntry, connection: ConnectionID,
                       server: WebSocketServer, at now: ClockReading) {
        let roomID = entry.room.id
        let address = sessions[connection]?.address ?? "?"
        // A refused first join leaves no empty room behind.
        func turnAway() {
            if entry.room.memberCount == 0 {
                entry.cancelTimers()
                rooms[roomID] = nil
            }
        }
        catchUp(entry, server: server, at: now)
        let token = request.token.map(ResumeToken.init)
        let perAddress = configuration.limits.membersPerAddressPerRoom
        if perAddress > 0, entry.membersFrom[address, default: 0] >= perAddress,
           !(token.map(entry.room.hasMember(withToken:)) ?? false) {
            reply(.error(code: .roomFull, message: "this address holds as many members of this room as it may",
                         field: nil, ref: request.ref), to: connection, server: server)
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
                             field: nil, ref: nil), to: previous, server: server)
                server.close(previous, code: 4001, reason: "replaced")
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
                  to: connection, server: server)
            publish(result.outcome, in: entry, server: server, at: now, stateAlreadySentTo: connection)
        } catch {
            refuse(error, ref: request.ref, to: connection, server: server)
            turnAway()
        }
    }

    private func snapshot(of entry: RoomEntry, at now: ClockReading) -> SnapshotPayload {
        SnapshotPayload(entry.room.snapshot(at: now.monotonic), clock: now, locked: entry.passcode != nil)
    }

    /// Puts a passcode hashed anew with the current work factor in place of the one it was checked against,
    /// unless the room has gone or changed lock meanwhile. The store gets it with the room's next saved row.
    private func adopt(_ upgraded: PasscodeVerifier, replacing old: PasscodeVerifier, in id: RoomID) {
        guard let entry = rooms[id], entry.passcode?.encoded == old.encoded else { return }
        entry.passcode = upgraded
        logger.info("room's passcode hash upgraded to the current work factor", metadata: ["room": "\(id)"])
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
        if limits.roomsCreatedPerAddressPerMinute > 0, let address = sessions[connection]?.address,
           roomsCreatedBy.count(for: address, at: now.monotonic) >= limits.roomsCreatedPerAddressPerMinute {
            reply(.error(code: .roomLimit, message: "too many new rooms from this address; try again in a minute",
                         field: "room", ref: ref), to: connection, server: server)
            return false
        }
        return true
    }

    /// Creates a room (after `mayCreateRoom`), counting it against the creator's address.
    private func makeRoom(_ id: RoomID, request: JoinRequest, passcode: PasscodeVerifier?, connection: ConnectionID,
                          server: WebSocketServer, at now: ClockReading) -> RoomEntry {
        countRoomCreated(by: connection, at: now)
        let room = Room(id: id, settings: configuration.defaultSettings, policy: configuration.roomPolicy,
                        controlMode: request.control ?? .anyone, now: now.monotonic)
        let entry = makeEntry(room, passcode: passcode, server: server)
        rooms[id] = entry
        logger.debug("room created", metadata: ["room": "\(id)", "locked": "\(passcode != nil)"])
        return entry
    }

    /// Counts a room made or brought back against the joiner's address.
    private func countRoomCreated(by connection: ConnectionID, at now: ClockReading) {
        if configuration.limits.roomsCreatedPerAddressPerMinute > 0, let address = sessions[connection]?.address {
            roomsCreatedBy.record(address, at: now.monotonic)
        }
    }

    /// Brings a room up to `now` and broadcasts what that produced (a phase that ended a moment before its
    /// timer fired), so a command that is then refused cannot swallow it.
    private func catchUp(_ entry: RoomEntry, server: WebSocketServer, at now: ClockReading) {
        let outcome = entry.room.advance(to: now.monotonic)
        if outcome.stateChanged || outcome.tick != nil || !outcome.events.isEmpty {
            publish(outcome, in: entry, server: server, at: now)
        }
    }

    private func makeEntry(_ room: Room, passcode: PasscodeVerifier?, server: WebSocketServer) -> RoomEntry {
        let id = room.id
        let timer = server.makeTimer { [unowned self, unowned server] in self.timerFired(id, server: server) }
        let stateTimer = server.makeTimer { [unowned self, unowned server] in self.stateDue(id, server: server) }
        return RoomEntry(room: room, timer: timer, stateTimer: stateTimer, passcode: passcode)
    }

    private func timerFired(_ id: RoomID, server: WebSocketServer) {
        guard let entry = rooms[id] else { return }
        let now = clock.now()
        let outcome = entry.room.advance(to: now.monotonic)
        publish(outcome, in: entry, server: server, at: now)
    }

    // MARK: Sending

    private func refuse(_ error: RoomError, ref: Ref?, to connection: ConnectionID, server: WebSocketServer) {
        reply(.error(ProtocolError(error, ref: ref)), to: connection, server: server)
    }

    private func reply(_ message: ServerMessage, to connection: ConnectionID, server: WebSocketServer) {
        if case .error(let code, _, _, _) = message { metrics.errorSent(code) }
        let frame = OutboundFrame(WireCodec.encode(message))
        if server.send(frame, to: connection) {
            framesSent += 1
            metrics.sent(frames: 1, bytes: frame.count)
        }
    }

    /// Broadcasts what a room call produced (events, then a tick, then the new state), each encoded once,
    /// and re-arms the room's timer for its next wake-up (or drops the room when it has expired).
    ///
    /// A crowd (a room above its member-list limit) hears no events about single members, and a state
    /// that only members changed waits until `crowdStateInterval` has passed since the last one. A small
    /// room never reaches the limit and hears everything at once.
    private func publish(_ outcome: Outcome, in entry: RoomEntry, server: WebSocketServer, at now: ClockReading,
                         stateAlreadySentTo skip: ConnectionID? = nil) {
        let roomID = entry.room.id
        for case .memberLeft(let member, _) in outcome.events { entry.forget(member) }
        let crowd = entry.room.policy.isCrowd(memberCount: entry.room.memberCount)
        var messages: [ServerMessage] = outcome.events.filter { !(crowd && $0.isAboutOneMember) }.map {
            .event(room: roomID.rawValue, EventPayload($0), serverTime: now.wallMs)
        }
        if let tick = outcome.tick { messages.append(.tick(TickPayload(tick, room: roomID, clock: now))) }
        var sendsState = outcome.stateChanged
        if sendsState && crowd && outcome.changedOnlyMembers {
            sendsState = stateMayGoNow(entry, at: now)
        }
        let state: ServerMessage? = sendsState ? .state(stateSent(in: entry, at: now)) : nil
        let announce = { [self] in
            // Measured as it goes out: a tick held behind a commit goes out late.
            if let tick = outcome.tick { metrics.tickSent(tick, at: clock.now().monotonic) }
            for message in messages { broadcast(message, in: entry, server: server) }
            if let state { broadcast(state, in: entry, server: server, except: skip) }
        }
        save(entry, server: server, at: now)
        entry.announce(announce)
        if dropIfExpired(roomID, entry, at: now) { return }
        if let wakeup = entry.room.nextWakeup() {
            entry.timer.schedule(afterNanoseconds: (wakeup - now.monotonic).nanoseconds)
        } else {
            entry.timer.cancel()
        }
    }

    /// Whether a crowd's member-only state may go out now; if not, one is scheduled for when it may.
    private func stateMayGoNow(_ entry: RoomEntry, at now: ClockReading) -> Bool {
        guard let last = entry.lastStateAt, now.monotonic - last < Self.crowdStateInterval else { return true }
        if !entry.statePending {
            entry.statePending = true
            entry.stateTimer.schedule(afterNanoseconds: (last + Self.crowdStateInterval - now.monotonic).nanoseconds)
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
    private func stateDue(_ id: RoomID, server: WebSocketServer) {
        guard let entry = rooms[id], entry.statePending else { return }
        let now = clock.now()
        catchUp(entry, server: server, at: now)
        guard entry.statePending else { return }   // the catch-up's own state stood for it
        let state = ServerMessage.state(stateSent(in: entry, at: now))
        entry.announce { [self] in broadcast(state, in: entry, server: server) }
    }

    /// Hands the room's changes to the store's writer and holds the room's broadcasts until they are
    /// committed: what members hear of (a start, a completed focus, a new task) is already durable, so a
    /// crash right after cannot take it back. The service thread never waits; ticks of an unchanged room
    /// are not held unless a commit is in flight.
    private func save(_ entry: RoomEntry, server: WebSocketServer, at now: ClockReading) {
        guard let store else { return }
        let changes = entry.room.takeStoreChanges(wallOffsetNanoseconds: now.wallOffsetNanoseconds,
                                                  passcode: entry.passcode?.encoded)
        guard !changes.isEmpty else { return }
        if entry.held == nil { entry.held = [] }
        entry.uncommitted += 1
        let roomID = entry.room.id
        let committing = ObjectIdentifier(entry)
        store.enqueue(changes) { [self] error in
            server.post { [self] in
                if let error {
                    logger.error("could not commit a room's changes", metadata: ["room": "\(roomID)", "error": "\(error)"])
                }
                // The room may have been dropped meanwhile (and even made anew, with commits of its own):
                // then nobody is left to hear what it held.
                guard let entry = rooms[roomID], ObjectIdentifier(entry) == committing else { return }
                entry.uncommitted -= 1
                guard entry.uncommitted == 0 else { return }
                let waiting = entry.held ?? []
                entry.held = nil
                for announce in waiting { announce() }
            }
        }
    }

    @discardableResult
    private func dropIfExpired(_ id: RoomID, _ entry: RoomEntry, at now: ClockReading) -> Bool {
        guard entry.room.isExpired(at: now.monotonic) else { return false }
        entry.cancelTimers()
        rooms[id] = nil
        logger.debug("room dropped", metadata: ["room": "\(id)"])
        return true
    }

    private func broadcast(_ message: ServerMessage, in entry: RoomEntry, server: WebSocketServer,
                           except skip: ConnectionID? = nil) {
        guard !entry.connections.isEmpty else { return }
        let frame = OutboundFrame(WireCodec.encode(message))
        var sent = 0
        for connection in entry.connections.values where connection != skip {
            if server.send(frame, to: connection) { sent += 1 }
        }
        framesSent += sent
        metrics.sent(frames: sent, bytes: sent * frame.count)
    }
}
