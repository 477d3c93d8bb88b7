import Foundation
import PomodoroCore
import PomodoroNet
import PomodoroProtocol
import PomodoroStore

/// A request to the JSON API over a room's journal, checked before anything is read: the path, the method,
/// the room's name and every query parameter, in that order, each refused with the message the API answers.
///
/// `GET /api/rooms/{room}`, `GET /api/rooms/{room}/stats?days=&tz=` and `GET /api/rooms/{room}/history?limit=&before=&format=&tz=`.
struct APIRequest: Equatable {
    enum Query: Equatable {
        case stats(days: Int)
        /// A page of at most `limit` sessions ended before `before` (epoch ms), newest first.
        case history(limit: Int, before: Int64?, format: Format)
        /// The live room's snapshot (`GET /api/rooms/{room}`), from memory, not the journal.
        case room
        /// The live room as Server-Sent Events (`GET /api/rooms/{room}/events`).
        case events
        /// The room's schedules as JSON, or (`calendar`) as an iCalendar feed.
        case schedules(calendar: Bool)
    }

    enum Format: String, Equatable {
        case json, csv
    }

    var room: RoomID
    var zone: TimeZone
    var query: Query
    /// The `Authorization: Bearer` credential: a locked room's passcode or one of its members' resume tokens.
    var bearer: String?

    static let daysByDefault = 14
    static let limitByDefault = 100
    static let limits: ClosedRange<Int64> = 1...1000

    /// The request `http` makes, or the refusal the API answers instead.
    static func parse(_ http: HTTPRequest) -> Result<APIRequest, Refusal> {
        func refuse(_ code: ErrorCode, _ message: String, field: String? = nil) -> Result<APIRequest, Refusal> {
            .failure(Refusal(code: code, message: message, field: field))
        }
        func integer(_ name: String, default value: Int64, in range: ClosedRange<Int64>) -> Int64? {
            guard let text = http.query[name] else { return value }
            guard let number = Int64(text), range.contains(number) else { return nil }
            return number
        }
        let parts = http.path.split(separator: "/", omittingEmptySubsequences: false)
        let live = parts.count == 4 && parts[1] == "api" && parts[2] == "rooms"
        let journal = parts.count == 5 && parts[1] == "api" && parts[2] == "rooms"
            && ["stats", "history", "events", "schedules", "calendar.ics"].contains(parts[4])
        guard live || journal else {
            return refuse(.notFound, "no such path; try /api/rooms/{room}, /api/rooms/{room}/stats or /api/rooms/{room}/history")
        }
        guard http.method == .get || http.method == .head else {
            return refuse(.badRequest, "only GET is answered here", field: "method")
        }
        guard let room = try? RoomID(validating: String(parts[3])) else {
            return refuse(.notFound, "a room name is 1–64 characters of A–Z, a–z, 0–9, '_' or '-'", field: "room")
        }
        guard let zone = FocusReport.timeZone(named: http.query["tz"] ?? "UTC") else {
            return refuse(.badRequest, RoomHub.badTimeZone, field: "tz")
        }
        let bearer = http.authorization.flatMap { header -> String? in
            header.lowercased().hasPrefix("bearer ") ? String(header.dropFirst(7)).trimmingWhitespace() : nil
        }
        if live { return .success(APIRequest(room: room, zone: zone, query: .room, bearer: bearer)) }
        if parts[4] == "events" { return .success(APIRequest(room: room, zone: zone, query: .events, bearer: bearer)) }
        if parts[4] == "schedules" || parts[4] == "calendar.ics" {
            return .success(APIRequest(room: room, zone: zone, query: .schedules(calendar: parts[4] == "calendar.ics"),
                                       bearer: bearer))
        }
        if parts[4] == "stats" {
            let range = Int64(FocusReport.dayRange.lowerBound)...Int64(FocusReport.dayRange.upperBound)
            guard let days = integer("days", default: Int64(daysByDefault), in: range) else {
                return refuse(.badRequest, "days must be \(range.lowerBound)–\(range.upperBound)", field: "days")
            }
            return .success(APIRequest(room: room, zone: zone, query: .stats(days: Int(days)), bearer: bearer))
        }
        guard let limit = integer("limit", default: Int64(limitByDefault), in: limits) else {
            return refuse(.badRequest, "limit must be \(limits.lowerBound)–\(limits.upperBound)", field: "limit")
        }
        var before: Int64?
        if let text = http.query["before"] {
            guard let value = Int64(text) else { return refuse(.badRequest, "before must be epoch milliseconds", field: "before") }
            before = value
        }
        guard let format = Format(rawValue: http.query["format"] ?? "json") else {
            return refuse(.badRequest, "format must be json or csv", field: "format")
        }
        return .success(APIRequest(room: room, zone: zone,
                                   query: .history(limit: Int(limit), before: before, format: format), bearer: bearer))
    }
}
