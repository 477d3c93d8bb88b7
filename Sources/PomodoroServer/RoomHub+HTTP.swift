import Foundation
import PomodoroCore
import PomodoroNet
import PomodoroProtocol
import PomodoroStore

// The hub's HTTP side: /healthz, /metrics, invite links, and the JSON API over the journal
// (`/api/rooms/{room}/stats` and `/history`), rate-limited per address.

extension RoomHub {
    /// A request to one of the dynamic paths; answered through `responder`, now or once a read is done.
    package func receivedHTTP(_ request: HTTPRequest, responder: any HTTPAnswering) {
        if request.path.hasPrefix("/api/") { return api(request, responder: responder) }
        if request.path == "/healthz", let store { return health(of: store, responder: responder) }
        if request.path == Self.readinessPath { return readiness(responder: responder) }
        responder.respond(httpResponse(for: request.path))
    }

    private func httpResponse(for path: String) -> HTTPResponse {
        if path == "/healthz" { return HTTPResponse(status: 200, text: "ok\n") }
        if path == ServerMetrics.path, configuration.metricsEnabled {
            return metrics.response(.init(connections: transport.connectionCount, rooms: rooms.count,
                                          members: rooms.values.reduce(0) { $0 + $1.room.memberCount },
                                          observers: observerCount,
                                          eventStreams: rooms.values.reduce(0) { $0 + $1.streams.count },
                                          droppedSlowClients: transport.droppedSlowClients,
                                          router: router.levels))
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
        guard apiRequestAllowed(from: address, at: clock.now()) else {
            return fail(Refusal(code: .rateLimited, message: "too many requests from this address; at most \(configuration.limits.apiRequestsPerSecond) a second"))
        }
        if router.answers(http, responder: responder) { return }
        if http.path == Self.drainPath { return drainRequested(http, responder: responder) }
        if controlAPI(http, address: address, responder: responder) { return }
        let request: APIRequest
        switch APIRequest.parse(http) {
        case .success(let parsed): request = parsed
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
            readJournal(room, visitor, address: address,
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
            read(Self.report(of: room, days: days, zone: zone, nowMs: clock.now().wallMs)) { report in
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
    /// Nobody in the room hears of it.
    private func liveRoom(_ id: RoomID, bearer: String?, address: String, responder: any HTTPAnswering) {
        letSee(id, RoomAccess.Visitor(token: bearer, passcode: bearer), address: address,
               hint: "send Authorization: Bearer <its passcode or a member's resume token>") { [self] result in
            switch result {
            case .failure(let refusal):
                responder.respond(Self.errorResponse(refusal))
            case .success(let (entry, _)):
                responder.respond(HTTPResponse(status: 200, contentType: "application/json",
                                               body: WireCodec.encodeSnapshotBody(snapshot(of: entry, at: clock.now()))))
            }
        }
    }

    static let drainPath = "/api/admin/drain"

    /// `POST /api/admin/drain`: stops the server as SIGTERM does (`PomodoroServer.shutdown`), and answers
    /// `202` at once. An operator's endpoint: to a client on this
    /// host's loopback only (after `--trusted-proxy`), and only while `/metrics` is served; `404` otherwise.
    private func drainRequested(_ http: HTTPRequest, responder: any HTTPAnswering) {
        guard configuration.metricsEnabled, Self.isLoopback(http.peer), let drain = onDrainRequested else {
            _ = responder.respond(Self.errorResponse(Refusal(code: .notFound, message: "no such path; try /api/rooms/{room}")))
            return
        }
        guard http.method == .post else {
            _ = responder.respond(Self.errorResponse(Refusal(code: .badRequest, message: "only POST drains", field: "method")))
            return
        }
        logger.notice("drain requested over HTTP", metadata: ["peer": "\(http.peer)"])
        _ = responder.respond(HTTPResponse(status: 202, text: draining ? "already draining\n" : "draining\n"))
        drain()
    }

    /// Whether a client address is this host's loopback (127.0.0.0/8, ::1, or IPv4-mapped 127.x).
    package static func isLoopback(_ address: String) -> Bool {
        var host = address.lowercased()
        if host.hasPrefix("::ffff:") { host.removeFirst("::ffff:".count) }
        return host == "::1" || (host.hasPrefix("127.") && host.split(separator: ".").count == 4)
    }


    /// An API error as JSON, with the headers that tell a client what to do about it.
    package static func errorResponse(_ refusal: Refusal) -> HTTPResponse {
        var response = HTTPResponse(status: refusal.code.httpStatus, contentType: "application/json",
                                    body: WireCodec.encodeHTTPError(code: refusal.code, message: refusal.message,
                                                                    field: refusal.field))
        if refusal.code == .badPasscode { response.headers.append((name: "WWW-Authenticate", value: "Bearer realm=\"pomodoro\"")) }
        if refusal.code == .rateLimited {
            response.headers.append((name: "Retry-After", value: refusal.field == "passcode" ? "60" : "1"))
        }
        return response
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
}
