import Foundation
import PomodoroCore
import PomodoroNet
import PomodoroProtocol
import PomodoroStore

// The control API (docs/PROTOCOL.md, "The control API"; web/openapi.json):
//
// - `POST /api/rooms/{room}/commands` with `Authorization: Bearer <API token>`: a room command as the wire
//   has it (`{"type": "start"}`, or a schedule command), carried through `Room.handle(_:apiToken:)` and `publish`
//   (a schedule's through `carryOut(_:ref:in:at:answer:)`, with its limits), the path a
//   member's command takes; answered with the wire's `ok` or `error` (200, or the error's status).
// - `POST /api/rooms`: makes a room with settings, a passcode and a control mode, and answers with its
//   first API token. It is counted as a join that makes a room is: in the address's `/api` bucket, its
//   rooms-per-minute limit and `--max-rooms`.
// - `GET /api/openapi.json`: the document of every HTTP endpoint, from the web root.
//
// Whether a token may command is `RoomAccess.commandVerdict`, asked on the service thread in the same turn
// as the command is carried out: a token revoked, or made by a member the host removed, carries nothing from
// that moment. A room not in memory is brought back from the store first (one server); where rooms may run
// on other servers, the room must run here (`RoomRouter.takesRoomsFromOtherNodes`).

extension HTTPAPI {
    static let openAPIPath = "/api/openapi.json"

    /// Answers the control API's paths; false for any other path.
    func controlAPI(_ http: HTTPRequest, address: String, responder: any HTTPAnswering) -> Bool {
        if http.path == Self.openAPIPath {
            responder.respond(Self.readMethods.contains(http.method) ? openAPIDocument()
                              : Self.methodNotAllowed(allow: Self.readMethods, as: .api))
            return true
        }
        let parts = http.path.split(separator: "/", omittingEmptySubsequences: false)
        let creates = http.path == "/api/rooms"
        let commands = parts.count == 5 && parts[1] == "api" && parts[2] == "rooms" && parts[4] == "commands"
        guard creates || commands else { return false }
        // The commands path answers as the wire does (`error`); making a room, as the rest of /api (`{"error": …}`).
        func fail(_ refusal: Refusal) {
            responder.respond(commands ? Self.wireError(refusal) : Self.apiError(refusal))
        }
        guard http.method == .post else {
            responder.respond(Self.methodNotAllowed(allow: [.post], as: commands ? .wire : .api))
            return true
        }
        if creates {
            createRoom(http, address: address, responder: responder)
            return true
        }
        guard let room = try? RoomID(validating: String(parts[3])) else {
            fail(Refusal(code: .notFound, message: "a room name is 1–64 characters of A–Z, a–z, 0–9, '_' or '-'", field: "room"))
            return true
        }
        command(http, room: room, responder: responder)
        return true
    }

    private func openAPIDocument() -> HTTPResponse {
        guard let root = configuration.webRoot,
              let document = FileManager.default.contents(atPath: root + "/openapi.json") else {
            return HTTPResponse(status: 404, text: "not found: the server has no web root with openapi.json\n")
        }
        return HTTPResponse(status: 200, contentType: "application/json", body: Array(document))
    }

    // MARK: Commands

    private func command(_ http: HTTPRequest, room id: RoomID, responder: any HTTPAnswering) {
        func answer(_ response: HTTPResponse) { responder.respond(response) }
        let bearer = http.authorization.flatMap { header -> String? in
            header.lowercased().hasPrefix("bearer ") ? String(header.dropFirst(7)).trimmingWhitespace() : nil
        }
        guard let bearer, !bearer.isEmpty else {
            return answer(Self.unauthorized("send Authorization: Bearer <an API token of the room>"))
        }
        // A body the API does not carry is answered here, on any node; the token is judged where the room runs.
        if case .refused(let refusal) = Self.apiCommand(http.body) { return answer(refusal) }
        let tokenHash = ResumeToken(bearer).hash
        if hub.openRoom(id, at: clock.now()) == nil, let forwarding = router as? ControlAPIForwarding {
            return forwarding.forwardCommand(http.body, room: id, tokenHash: tokenHash, answer: answer)
        }
        carryCommand(http.body, room: id, tokenHash: tokenHash, answer: answer)
    }

    /// What the API carries of a body: a room command it may carry, or a schedule command.
    private enum APICommand {
        case carried(frame: ClientFrame, command: Room.Command?, schedule: ScheduleRequest?)
        case refused(HTTPResponse)
    }

    private static func apiCommand(_ body: [UInt8]) -> APICommand {
        let frame: ClientFrame
        do {
            frame = try WireCodec.decodeClientFrame(body)
        } catch {
            return .refused(wireError(.error(code: error.code, message: error.message, field: error.field, ref: error.ref)))
        }
        let schedule: ScheduleRequest?
        if case .schedule(let request) = frame.message { schedule = request } else { schedule = nil }
        let command = RoomHub.roomCommand(frame.message).flatMap { $0.isControl ? $0 : nil }
        guard command != nil || schedule != nil else {
            return .refused(wireError(.error(
                code: .badRequest, message: "the API carries start, pause, resume, skip, reset, extend, configure "
                    + "and the schedule commands", field: "type", ref: frame.ref)))
        }
        return .carried(frame: frame, command: command, schedule: schedule)
    }

    /// A control-API command (`body`, with the hash of its bearer token) carried out in `id` on this server:
    /// the room in memory (brought back from the store on one server), the token judged at this moment. Where
    /// rooms run on several servers, the room's owner runs it for a request another received (`ControlAPIForwarding`).
    package func carryCommand(_ body: [UInt8], room id: RoomID, tokenHash: String,
                              answer: @escaping (HTTPResponse) -> Void) {
        let frame: ClientFrame, command: Room.Command?, schedule: ScheduleRequest?
        switch Self.apiCommand(body) {
        case .refused(let refusal): return answer(refusal)
        case .carried(let carried, let isCommand, let isSchedule): (frame, command, schedule) = (carried, isCommand, isSchedule)
        }
        withRoom(id) { [self] result in
            let entry: RoomEntry
            switch result {
            case .failure(let refusal): return answer(Self.wireError(refusal))
            case .success(let found): entry = found
            }
            let now = clock.now()
            // The rule, at the moment the command is carried out.
            let token = entry.room.apiToken(hash: tokenHash)
            guard RoomAccess.commandVerdict(tokenHeld: token != nil) == .allowed, let token else {
                return answer(Self.notAnAPIToken)
            }
            if let store, store.outage != nil, schedule != .list {
                return answer(Self.wireError(.error(
                    code: .storeUnavailable, message: "the server cannot save changes just now; try again in a moment",
                    field: nil, ref: frame.ref)))
            }
            if let schedule {
                // The same handler and limits as a member's request; a token may change them as a host may.
                hub.catchUp(entry, at: now)
                entry.room.noteAPITokenUse(token.id, atMs: now.wallMs)
                hub.carryOut(schedule, ref: frame.ref, in: entry, at: now) { message in
                    if case .error = message { return answer(Self.wireError(message)) }
                    answer(HTTPResponse(status: 200, contentType: "application/json", body: WireCodec.encode(message)))
                }
                hub.logger.debug("API schedule request", metadata: ["room": "\(id)", "token": "\(token.id)",
                                                                "command": "\(schedule.type)"])
                return
            }
            guard let command else { return }
            do throws(RoomError) {
                hub.catchUp(entry, at: now)
                entry.room.wallOffsetNanoseconds = now.wallOffsetNanoseconds
                let outcome = try entry.room.handle(command, apiToken: token.id, now: now.monotonic, nowMs: now.wallMs)
                hub.logger.debug("API command", metadata: ["room": "\(id)", "token": "\(token.id)", "command": "\(frame.message.type)"])
                hub.publish(outcome, in: entry, at: now)
                answer(HTTPResponse(status: 200, contentType: "application/json", body: WireCodec.encode(
                    .ok(command: frame.message.type, appliesFrom: outcome.appliesFrom, ref: frame.ref))))
            } catch {
                answer(Self.wireError(.error(ProtocolError(error, ref: frame.ref))))
            }
        }
    }

    /// A bearer token the room does not hold (revoked, or never made).
    package static var notAnAPIToken: HTTPResponse {
        unauthorized("this is not an API token of the room (revoked, or never made)")
    }

    /// The room in memory, or brought back from the store (one server) when it is stored and there is room.
    private func withRoom(_ id: RoomID, _ done: @escaping (Result<RoomEntry, Refusal>) -> Void) {
        if let entry = hub.openRoom(id, at: clock.now()) { return done(.success(entry)) }
        if router.takesRoomsFromOtherNodes { return done(.failure(router.roomRunsElsewhere)) }
        guard let store else {
            return done(.failure(Refusal(code: .notFound, message: "no room of that name is open", field: "room")))
        }
        let transport = transport
        let read = LoopBound({ [self] (result: Result<StoredRoom?, StoreError>) in
            if let entry = hub.openRoom(id, at: clock.now()) { return done(.success(entry)) }
            switch result {
            case .failure:
                done(.failure(Refusal(code: .storeUnavailable, message: "the room could not be read; try again")))
            case .success(nil):
                done(.failure(Refusal(code: .notFound, message: "no room of that name", field: "room")))
            case .success(let stored?):
                guard !rooms.isFull else {
                    return done(.failure(Refusal(code: .roomLimit, message: "the server holds as many rooms as it may")))
                }
                done(.success(hub.bringBack(stored, at: clock.now())))
            }
        }, loop: transport.loop)
        store.read({ (store: any RoomStore) throws(StoreError) in try store.loadRoom(id) }) { result in
            transport.post { read.value(result) }
        }
    }

    // MARK: Making a room

    private func createRoom(_ http: HTTPRequest, address: String, responder: any HTTPAnswering) {
        func fail(_ refusal: Refusal) { responder.respond(Self.apiError(refusal)) }
        let request: RoomCreationRequest
        do {
            request = try WireCodec.decodeRoomCreation(http.body)
        } catch {
            return fail(Refusal(code: error.code, message: error.message, field: error.field))
        }
        guard let id = try? RoomID(validating: request.room) else {
            return fail(Refusal(code: .badRequest, message: "a room name is 1–64 characters of A–Z, a–z, 0–9, '_' or '-'",
                                field: "room"))
        }
        let settings = request.settings ?? configuration.defaultSettings
        do { try settings.validate() } catch { return fail(Self.refusal(error)) }
        guard settings.focus >= configuration.roomPolicy.minFocusSeconds else {
            return fail(Refusal(code: .badRequest, message: "focus must be at least \(configuration.roomPolicy.minFocusSeconds) seconds on this server",
                                field: "focus"))
        }
        if let passcode = request.passcode, !PasscodeVerifier.allowedLength.contains(passcode.count) {
            return fail(Refusal(code: .badRequest, message: "a passcode is \(PasscodeVerifier.allowedLength.lowerBound)–\(PasscodeVerifier.allowedLength.upperBound) characters",
                                field: "passcode"))
        }
        guard rooms[id] == nil else { return fail(Self.roomExists) }
        // Counted as a join that makes a room: the address's rooms-per-minute and the server's maximum.
        hub.addressLimits.reserveRoom(for: address) { [self] reservation in
            guard let reservation else {
                return fail(Refusal(code: .roomLimit, message: "this address made too many rooms lately; try again in a minute"))
            }
            let finish = { [self] (lock: PasscodeVerifier?) in
                let made = makeRoom(id, request: request, settings: settings, lock: lock)
                hub.addressLimits.settleRoom(reservation, kept: (try? made.get()) != nil)
                switch made {
                case .failure(let refusal):
                    hub.letGoIfUnused(id)   // what the router took for it
                    fail(refusal)
                case .success(let (entry, token, record)):
                    entry.announce { [self] in
                        responder.respond(HTTPResponse(status: 201, contentType: "application/json",
                                                       body: WireCodec.encodeRoomCreated(hub.snapshot(of: entry, at: clock.now()),
                                                                                         token: .init(id: record.id, token: token),
                                                                                         name: record.name)))
                    }
                }
            }
            let isStored = { [self] (then: @escaping () -> Void) in
                // A router that runs rooms on several servers takes the room here first, as a first join does.
                if let forwarding = router as? ControlAPIForwarding {
                    return forwarding.takeForCreation(id) { [self] taken in
                        switch taken {
                        case .free: return then()
                        case .exists: fail(Self.roomExists)
                        case .failed(let refusal): fail(refusal)
                        }
                        hub.addressLimits.settleRoom(reservation, kept: false)
                        hub.letGoIfUnused(id)
                    }
                }
                guard let store else { return then() }
                let transport = transport
                let found = LoopBound({ [self] (result: Result<Bool, StoreError>) in
                    switch result {
                    case .success(false): then()
                    case .success(true):
                        hub.addressLimits.settleRoom(reservation, kept: false)
                        fail(Self.roomExists)
                    case .failure:
                        hub.addressLimits.settleRoom(reservation, kept: false)
                        fail(Refusal(code: .storeUnavailable, message: "the server cannot save changes just now; try again"))
                    }
                }, loop: transport.loop)
                store.read({ (store: any RoomStore) throws(StoreError) in try store.loadRoom(id) != nil }) { result in
                    transport.post { found.value(result) }
                }
            }
            isStored { [self] in
                guard let passcode = request.passcode else { return finish(nil) }
                let transport = transport
                let done = LoopBound(finish, loop: transport.loop)
                hub.hashing.run { [workFactor = configuration.passcodeIterations] in
                    let lock = PasscodeVerifier(passcode: passcode, iterations: workFactor)
                    transport.post { done.value(lock) }
                }
            }
        }
    }

    /// Makes the room on the service thread, once nothing else has made one of that name meanwhile.
    private func makeRoom(_ id: RoomID, request: RoomCreationRequest, settings: RoomSettings, lock: PasscodeVerifier?)
        -> Result<(RoomEntry, String, APITokenRecord), Refusal> {
        guard rooms[id] == nil else { return .failure(Self.roomExists) }
        guard !rooms.isFull else { return .failure(Refusal(code: .roomLimit, message: "the server holds as many rooms as it may")) }
        let now = clock.now()
        var room = Room(id: id, settings: settings, policy: configuration.roomPolicy, controlMode: request.control ?? .anyone,
                        now: now.monotonic)
        room.wallOffsetNanoseconds = now.wallOffsetNanoseconds
        let token = "pomo_" + hub.tokens.make().rawValue + hub.tokens.make().rawValue
        let record: APITokenRecord
        do {
            record = try room.createFirstAPIToken(name: request.tokenName ?? "api", tokenHash: ResumeToken(token).hash,
                                                  atMs: now.wallMs)
        } catch {
            return .failure(Self.refusal(error))
        }
        let entry = hub.makeEntry(room, passcode: lock)
        rooms.enter(entry)
        hub.logger.info("room made over HTTP", metadata: ["room": "\(id)", "locked": "\(lock != nil)"])
        hub.publish(Outcome(), in: entry, at: now)
        return .success((entry, token, record))
    }
}
