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
        responder.respond(httpResponse(for: request.path))
    }

    func httpResponse(for path: String) -> HTTPResponse {
        if path == "/healthz" { return HTTPResponse(status: 200, text: "ok\n") }
        if path == ServerMetrics.path, configuration.metricsEnabled {
            return metrics.response(.init(connections: transport.connectionCount, rooms: rooms.count,
                                          members: rooms.values.reduce(0) { $0 + $1.room.memberCount },
                                          droppedSlowClients: transport.droppedSlowClients))
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
    func health(of store: any HubStore, responder: any HTTPAnswering) {
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

    /// `GET /api/rooms/{room}/stats` and `GET /api/rooms/{room}/history`: the journal is read off the service
    /// thread and the answer goes out when it is ready. A locked room needs `Authorization: Bearer` with its
    /// passcode or a member's resume token.
    func api(_ request: HTTPRequest, responder: any HTTPAnswering) {
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
                        query: query) { result in
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
    func apiRequestAllowed(from address: String, at now: ClockReading) -> Bool {
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
