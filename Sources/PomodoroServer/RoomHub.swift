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
        var room: RoomID?
        var member: MemberID?
        var bucket: TokenBucket
        /// The time zone named on `join`, for stats requests that name none.
        var timeZone: String?
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
        /// Fires the `state` a crowd's member changes were waiting for (see `crowdStateInterval`).
        let stateTimer: LoopTimer
        /// When the last `state` was broadcast, and whether one is waiting for `stateTimer`.
        var lastStateAt: Instant?
        var statePending = false
        /// Set for a locked room.
        let passcode: PasscodeVerifier?
        /// While the room's changes are being committed, its broadcasts wait here, so members hear of
        /// nothing the store does not have yet, and hear everything in order.
        var held: [() -> Void]?
        /// Batches of changes handed to the store and not yet committed.
        var uncommitted = 0
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
    private var passcodeFailures = PerMinuteCounter()
    /// Passcodes are hashed and checked here, never on the service thread.
    private let passcodeQueue = DispatchQueue(label: "pomodoro.passcodes")
    private static let passcodeFailuresPerMinute = 5
    private(set) var framesSent = 0
    private let metrics = ServerMetrics()

    /// Rooms being looked up in the store for a join, with the joins waiting for the answer.
    private var lookups: [RoomID: [() -> Void]] = [:]

    init(configuration: ServerConfiguration, clock: ServerClock, logger: Logger, store: StoreWriter?) {
        self.configuration = configuration
        self.clock = clock
        self.logger = logger
        self.store = store
    }

    // MARK: Restoring

    /// Brings back the rooms a store kept (on the service thread, before anyone connects): their timers go
    /// on from their stored end times, and a phase that ended meanwhile completes now and is journaled.
    func restore(_ stored: [StoredRoom], server: WebSocketServer) {
        let now = clock.now()
        for room in stored where !room.members.isEmpty {
            let entry = bringBack(room, server: server, at: now)
            logger.info("room restored", metadata: ["room": "\(entry.room.id)", "members": "\(entry.room.memberCount)",
                                                    "status": "\(entry.room.status.rawValue)"])
        }
    }

    /// Rebuilds one stored room, catches it up to `now`, and writes what that changed.
    @discardableResult
    private func bringBack(_ stored: StoredRoom, server: WebSocketServer, at now: ClockReading) -> RoomEntry {
        let id = stored.record.id
        var room = Room(restoring: stored.record, members: stored.members, policy: configuration.roomPolicy,
                        now: now.monotonic, wallOffsetNanoseconds: now.wallOffsetNanoseconds)
        let outcome = room.resumeAfterRestart(at: now.monotonic)
        let entry = makeEntry(room, passcode: stored.passcode.flatMap(PasscodeVerifier.init(encoded:)), server: server)
        rooms[id] = entry
        publish(outcome, in: entry, server: server, at: now)
        return entry
    }

    /// Writes everything still queued for the store and waits until it is durable (at shutdown).
    func flushStore() { store?.flush() }

    var roomCount: Int { rooms.count }

    // MARK: Connections

    func server(_ server: WebSocketServer, didOpen connection: ConnectionID, peer: String) {
        let limits = configuration.limits
        sessions[connection] = Session(peer: peer, bucket: TokenBucket(ratePerSecond: limits.messagesPerSecond,
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
        if request.path.hasPrefix("/api/") { return api(request, responder: responder, server: server) }
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

    // MARK: HTTP API

    /// `GET /api/rooms/{room}/stats` and `GET /api/rooms/{room}/history`: the journal is read off the service
    /// thread and the answer goes out when it is ready. A locked room needs `Authorization: Bearer` with its
    /// passcode or a member's resume token.
    private func api(_ request: HTTPRequest, responder: HTTPResponder, server: WebSocketServer) {
        func fail(_ code: ErrorCode, _ message: String, field: String? = nil) {
            var response = HTTPResponse(status: code.httpStatus, contentType: "application/json",
                                        body: WireCodec.encodeHTTPError(code: code, message: message, field: field))
            if code == .badPasscode { response.headers.append((name: "WWW-Authenticate", value: "Bearer realm=\"pomodoro\"")) }
            responder.respond(response)
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
            readJournal(roomID, access: access, peer: request.peer,
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
        case answer(T)
        case locked
        case wrongPasscode
    }

    /// Why a journal read was refused, as the WebSocket's `error` and the HTTP API's error body both say it.
    struct JournalRefusal: Error {
        let code: ErrorCode
        let message: String
        let field: String?
    }

    /// Reads a room's journal off the service thread for a reader at `peer`: wrong passcodes count against
    /// the address's limit as for joins, a locked room's passcode is checked off the service thread too
    /// (the room's stored lock when it is not in memory), then `query` runs. `done` runs on the service
    /// thread; `lockedHint` says how this reader proves access to a locked room.
    private func readJournal<T: Sendable>(_ id: RoomID, access: JournalAccess, peer: String, lockedHint: String,
                                          server: WebSocketServer,
                                          query: @escaping @Sendable (any RoomStore) throws(StoreError) -> T,
                                          done: @escaping (Result<T, JournalRefusal>) -> Void) {
        if case .passcode(_, .some) = access, !passcodeAttemptAllowed(from: peer, at: clock.now()) {
            return done(.failure(JournalRefusal(code: .rateLimited, message: "too many wrong passcodes; try again in a minute",
                                                field: "passcode")))
        }
        let settle = { [self] (result: Result<JournalAnswer<T>, StoreError>) in
            switch result {
            case .success(.answer(let value)):
                done(.success(value))
            case .success(.locked):
                done(.failure(JournalRefusal(code: .badPasscode, message: "this room is locked: \(lockedHint)",
                                             field: "passcode")))
            case .success(.wrongPasscode):
                recordPasscodeFailure(from: peer, at: clock.now())
                done(.failure(JournalRefusal(code: .badPasscode, message: "wrong passcode", field: "passcode")))
            case .failure(let error):
                logger.error("could not read the journal", metadata: ["room": "\(id)", "error": "\(error)"])
                done(.failure(JournalRefusal(code: .unavailable, message: "the server could not read its journal just now; try again",
                                             field: nil)))
            }
        }
        guard let store else {
            return settle(.failure(StoreError("this server runs without a database and keeps no stats")))
        }
        let inMemory = rooms[id] != nil
        let finish = UncheckedBox(settle)
        store.read({ (store: any RoomStore) throws(StoreError) -> JournalAnswer<T> in
            if case .passcode(let known, let credential) = access {
                let verifier = inMemory ? known : try store.loadRoom(id)?.passcode.flatMap(PasscodeVerifier.init(encoded:))
                if let verifier {
                    guard let credential else { return .locked }
                    guard verifier.matches(credential) else { return .wrongPasscode }
                }
            }
            return .answer(try query(store))
        }) { result in
            server.post { finish.value(result) }
        }
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
        readJournal(roomID, access: access, peer: session.peer, lockedHint: "ask with its passcode", server: server,
                    query: Self.report(of: roomID, days: days, zone: zone, nowMs: now.wallMs)) { [self] result in
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
        case .join, .leave, .ping, .stats: nil
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
                      at now: ClockReading, lookedUp: Bool = false) {
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

        // A room not in memory may be stored (its members all gone for a while): it comes back first, with
        // its settings, stats and lock. The store is read off the service thread; the join waits.
        if rooms[roomID] == nil, let store {
            sessions[connection]?.joining = true
            let resume = { [self] in
                guard sessions[connection]?.joining == true else { return }
                sessions[connection]?.joining = false
                join(request, connection: connection, server: server, at: clock.now(), lookedUp: true)
            }
            if lookups[roomID] != nil, !lookedUp {
                lookups[roomID]!.append(resume)
                return
            }
            if !lookedUp {
                lookups[roomID] = [resume]
                store.read({ (store: RoomStore) throws(StoreError) in try store.loadRoom(roomID) }) { [self] result in
                    server.post { [self] in
                        let waiting = lookups.removeValue(forKey: roomID) ?? []
                        switch result {
                        case .success(let stored?) where rooms[roomID] == nil:
                            bringBack(stored, server: server, at: clock.now())
                        case .success:
                            break
                        case .failure(let error):
                            logger.error("could not read a room from the store",
                                         metadata: ["room": "\(roomID)", "error": "\(error)"])
                        }
                        for resume in waiting { resume() }
                    }
                }
                return
            }
        }

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
                entry.cancelTimers()
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
        let room = Room(id: id, settings: configuration.defaultSettings, policy: configuration.roomPolicy,
                        controlMode: request.control ?? .anyone, now: now.monotonic)
        let entry = makeEntry(room, passcode: passcode, server: server)
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
