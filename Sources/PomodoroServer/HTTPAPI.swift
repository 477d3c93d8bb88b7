import Foundation
import PomodoroCore
import PomodoroNet
import PomodoroProtocol
import PomodoroStore

/// The HTTP API: every request that is not one of the page's files, routed to its answer. The hub hands it
/// each request (`RoomHub.receivedHTTP`); it answers `/healthz`, `/readyz` (`HTTPAPI+Readiness.swift`),
/// `/metrics`, invite links and `/api/…`: the live room and its event stream (`HTTPAPI+Events.swift`), the
/// journal's stats, history and schedules, the control API (`HTTPAPI+Control.swift`) and the operator's
/// drain. Its errors have one shape (`HTTPAPI+Errors.swift`).
///
/// It decides no rule of its own: who may see a room is `RoomAccess`'s, asked when the answer goes out
/// (`RoomHub.letSee`, `RoomHub.readJournal`), and whether an API token may command is
/// `RoomAccess.commandVerdict`, asked in the turn that carries the command out; each address's `/api`
/// requests are counted by `AddressLimits`. The rooms, the store and the router are the hub's.
///
/// Service thread only, as the hub that holds it.
package final class HTTPAPI {
    unowned let hub: RoomHub
    /// Keeps event streams alive with a comment (`HTTPAPI+Events.swift`); armed while any stream is open.
    var heartbeat: (any HubTimer)?
    var heartbeatArmed = false

    init(hub: RoomHub) {
        self.hub = hub
    }

    var configuration: ServerConfiguration { hub.configuration }
    var clock: any ServerClock { hub.clock }
    var store: (any HubStore)? { hub.store }
    var router: any RoomRouter { hub.router }
    var rooms: RoomRegistry { hub.rooms }
    var transport: any HubTransport { hub.transport }

    /// Stops the event streams' keep-alive (the server is stopping).
    func stop() {
        heartbeat?.cancel()
    }

    /// A request to one of the dynamic paths; answered through `responder`, now or once a read is done.
    func received(_ request: HTTPRequest, responder: any HTTPAnswering) {
        if request.path.hasPrefix("/api/") { return api(request, responder: responder) }
        guard let path = ReadPath(request.path, configuration) else {
            responder.respond(HTTPResponse(status: 404, text: "not found\n"))
            return
        }
        guard Self.readMethods.contains(request.method) else {
            responder.respond(Self.methodNotAllowed(allow: Self.readMethods, as: .text))
            return
        }
        switch path {
        case .health:
            if let store { return health(of: store, responder: responder) }
            responder.respond(HTTPResponse(status: 200, text: "ok\n"))
        case .readiness:
            readiness(responder: responder)
        case .metrics:
            responder.respond(hub.metrics.response(.init(connections: transport.connectionCount, rooms: rooms.count,
                                                         members: rooms.values.reduce(0) { $0 + $1.room.memberCount },
                                                         observers: hub.observerCount,
                                                         eventStreams: rooms.values.reduce(0) { $0 + $1.streams.count },
                                                         droppedSlowClients: transport.droppedSlowClients,
                                                         router: router.levels)))
        case .invite(let root):
            // Invite links name the room in the path (/r/team-alpha): they get the page, which reads the name.
            guard let page = FileManager.default.contents(atPath: root + "/index.html") else {
                responder.respond(HTTPResponse(status: 404, text: "not found\n"))
                return
            }
            responder.respond(HTTPResponse(status: 200, contentType: "text/html; charset=utf-8", body: Array(page)))
        }
    }

    /// The paths outside /api that this server serves, all of them to be read (GET or HEAD); every other path
    /// answers 404 to every method.
    private enum ReadPath {
        case health, readiness, metrics
        case invite(webRoot: String)

        init?(_ path: String, _ configuration: ServerConfiguration) {
            switch path {
            case "/healthz": self = .health
            case HTTPAPI.readinessPath: self = .readiness
            case ServerMetrics.path where configuration.metricsEnabled: self = .metrics
            default:
                guard path.hasPrefix("/r/"), let root = configuration.webRoot else { return nil }
                self = .invite(webRoot: root)
            }
        }
    }

    /// `/healthz` with a database: asks it (a read that finds nothing) and answers 503 with the reason while it
    /// cannot be reached; rooms go on meanwhile.
    private func health(of store: any HubStore, responder: any HTTPAnswering) {
        if let unhealthy = router.unhealthy {
            _ = responder.respond(HTTPResponse(status: 503, text: unhealthy + "\n"))
            return
        }
        store.probe { outage in
            guard let outage else {
                responder.respond(HTTPResponse(status: 200, text: "ok\n"))
                return
            }
            let seconds = Int(Date().timeIntervalSince(outage.since).rounded())
            responder.respond(HTTPResponse(status: 503, text: "database unavailable for \(seconds) s: \(outage.reason)\n"))
        }
    }

    // MARK: The API

    /// `GET /api/rooms/{room}/stats` and `GET /api/rooms/{room}/history` (see `APIRequest`): the journal is
    /// read off the service thread and the answer goes out when it is ready. A locked room needs
    /// `Authorization: Bearer` with its passcode or a member's resume token.
    private func api(_ http: HTTPRequest, responder: any HTTPAnswering) {
        func fail(_ refusal: Refusal) { responder.respond(Self.errorResponse(refusal)) }
        let address = AddressKey.of(http.peer)
        guard hub.addressLimits.takeAPIRequest(from: address) else {
            return fail(Refusal(code: .rateLimited, message: "too many requests from this address; at most \(configuration.limits.apiRequestsPerSecond) a second"))
        }
        if router.answers(http, responder: responder) { return }
        if http.path == Self.drainPath { return drainRequested(http, responder: responder) }
        if controlAPI(http, address: address, responder: responder) { return }
        let request: APIRequest
        switch APIRequest.parse(http) {
        case .success(let parsed): request = parsed
        case .failure(let refusal) where refusal.field == "method":
            responder.respond(Self.methodNotAllowed(allow: Self.readMethods, as: .api))
            return
        case .failure(let refusal): return fail(refusal)
        }
        let room = request.room, zone = request.zone
        if request.query == .room { return liveRoom(room, bearer: request.bearer, address: address, responder: responder) }
        if request.query == .events {
            return liveEvents(room, bearer: request.bearer, address: address, responder: responder)
        }
        let visitor = RoomAccess.Visitor(token: request.bearer, passcode: request.bearer)
        func read<T: Sendable>(_ query: @escaping @Sendable (any RoomStore) throws(StoreError) -> T,
                               answer: @escaping (T) -> HTTPResponse) {
            hub.readJournal(room, visitor, address: address,
                        lockedHint: "send Authorization: Bearer <its passcode or a member's resume token>",
                        query: query) { result in
                switch result {
                case .success(let value): responder.respond(answer(value))
                case .failure(let refusal): fail(refusal)
                }
            }
        }
        switch request.query {
        case .stats(let days):
            read(RoomHub.report(of: room, days: days, zone: zone, nowMs: clock.now().wallMs)) { report in
                HTTPResponse(status: 200, contentType: "application/json",
                             body: WireCodec.encodeStatsBody(StatsReportPayload(report)))
            }
        case .room, .events:
            break
        case .history(let limit, let before, let format):
            // A page ends at `limit` sessions or at about HistoryPage.maxBytes, whichever comes first; the store
            // reads no further, so neither a large `limit` nor large sessions make a large answer.
            read({ (store: any RoomStore) throws(StoreError) in
                try store.historyPage(room: room, before: before, limit: limit, maxBytes: HistoryPage.maxBytes)
            }) { page in Self.historyResponse(page, of: room, format: format, zone: zone) }
        case .schedules(let calendar):
            // The same lock as the stats; a room not in memory answers from the store.
            read({ (store: any RoomStore) throws(StoreError) in try store.loadRoom(room) }) { [self] stored in
                schedulesResponse(room, calendar: calendar, stored: stored)
            }
        }
    }

    /// `GET /api/rooms/{room}`: the open room's snapshot as `state.room` has it, behind the same lock as
    /// `observe` (the Bearer credential is its passcode or a member's token), judged when it is answered.
    /// Nobody in the room hears of it. A room another node of a cluster runs is read there, as an observer's
    /// `observe` is (`ControlAPIForwarding.forwardSnapshotRead`).
    private func liveRoom(_ id: RoomID, bearer: String?, address: String, responder: any HTTPAnswering) {
        if hub.openRoom(id, at: clock.now()) == nil, let forwarding = router as? ControlAPIForwarding {
            return forwarding.forwardSnapshotRead(of: id, bearer: bearer, address: address) { responder.respond($0) }
        }
        answerSnapshot(of: id, bearer: bearer, address: address) { responder.respond($0) }
    }

    /// The snapshot of `id`, open on this server, for a reader at `address` showing `bearer`.
    package func answerSnapshot(of id: RoomID, bearer: String?, address: String, answer: @escaping (HTTPResponse) -> Void) {
        hub.letSee(id, RoomAccess.Visitor(token: bearer, passcode: bearer), address: address,
                   hint: "send Authorization: Bearer <its passcode or a member's resume token>") { [self] result in
            switch result {
            case .failure(let refusal):
                answer(Self.errorResponse(refusal))
            case .success(let (entry, _)):
                answer(HTTPResponse(status: 200, contentType: "application/json",
                                    body: WireCodec.encodeSnapshotBody(hub.snapshot(of: entry, at: clock.now()))))
            }
        }
    }

    static let drainPath = "/api/admin/drain"

    /// `POST /api/admin/drain`: stops the server as SIGTERM does (`PomodoroServer.shutdown`), and answers
    /// `202` at once. An operator's endpoint: to a client on this
    /// host's loopback only (after `--trusted-proxy`), and only while `/metrics` is served; `404` otherwise,
    /// `405` to another method.
    private func drainRequested(_ http: HTTPRequest, responder: any HTTPAnswering) {
        guard configuration.metricsEnabled, Self.isLoopback(http.peer), let drain = hub.onDrainRequested else {
            _ = responder.respond(Self.errorResponse(Refusal(code: .notFound, message: "no such path; try /api/rooms/{room}")))
            return
        }
        guard http.method == .post else {
            _ = responder.respond(Self.methodNotAllowed(allow: [.post], as: .api))
            return
        }
        hub.logger.notice("drain requested over HTTP", metadata: ["peer": "\(http.peer)"])
        _ = responder.respond(HTTPResponse(status: 202, text: hub.draining ? "already draining\n" : "draining\n"))
        drain()
    }

    /// `GET /api/rooms/{room}/schedules` and `/calendar.ics`: from the room in memory; for a room that is not,
    /// from `stored` (read from the store for the request), or from what the router knows of the
    /// schedules of a room another server runs (`RoomRouter.knownSchedules`). An unknown room has none.
    private func schedulesResponse(_ room: RoomID, calendar: Bool, stored: StoredRoom? = nil) -> HTTPResponse {
        let now = clock.now()
        let wall = WallTime(milliseconds: now.wallMs)
        let entry = rooms[room]
        let schedules = entry?.schedules.schedules ?? stored?.schedules ?? router.knownSchedules(of: room) ?? []
        if calendar {
            let feed = CalendarFeed.write(room: room, schedules: schedules,
                                          roomSettings: entry?.room.settings ?? stored?.record.settings ?? .standard,
                                          now: wall)
            return HTTPResponse(status: 200, contentType: "text/calendar; charset=utf-8", body: Array(feed.utf8))
        }
        let payload = entry.map { hub.listing($0, at: wall) }
            ?? hub.listing(room, ScheduleBook(schedules: schedules, policy: configuration.schedulePolicy), at: wall)
        return HTTPResponse(status: 200, contentType: "application/json", body: WireCodec.encodeSchedulesBody(payload))
    }

    /// A page of the journal as JSON, or as CSV with the cursor for the next page in `Next-Before`.
    private static func historyResponse(_ page: HistoryPage, of room: RoomID, format: APIRequest.Format,
                                        zone: TimeZone) -> HTTPResponse {
        switch format {
        case .csv:
            var response = HTTPResponse(status: 200, contentType: "text/csv; charset=utf-8",
                                        body: Array(FocusReport.csv(page.sessions, timeZone: zone).utf8))
            response.headers.append((name: "Content-Disposition", value: "attachment; filename=\"\(room)-history.csv\""))
            if let next = page.nextBefore { response.headers.append((name: "Next-Before", value: String(next))) }
            return response
        case .json:
            let history = HistoryPayload(room: room.rawValue, sessions: page.sessions.map(FocusSessionPayload.init),
                                         nextBefore: page.nextBefore)
            return HTTPResponse(status: 200, contentType: "application/json", body: WireCodec.encodeHistory(history))
        }
    }
}
