import Foundation
import PomodoroNet
@testable import PomodoroServer
import Testing

/// The HTTP API's requests, parsed and checked with no hub and no socket.
@Suite struct APIRequestTests {
    static func parse(_ path: String, method: HTTPMethod = .get, query: [String: String] = [:],
                      authorization: String? = nil) -> Result<APIRequest, Refusal> {
        APIRequest.parse(HTTPRequest(method: method, path: path, query: query, authorization: authorization))
    }

    static func refusal(_ result: Result<APIRequest, Refusal>) -> Refusal? {
        if case .failure(let refusal) = result { refusal } else { nil }
    }

    @Test func statsTakeFourteenDaysInUTCByDefault() throws {
        let request = try Self.parse("/api/rooms/team/stats").get()
        #expect(request.room.rawValue == "team")
        #expect(request.query == .stats(days: 14))
        #expect(request.zone.secondsFromGMT() == 0)
        #expect(request.bearer == nil)
    }

    @Test func historyReadsItsPageAndFormat() throws {
        let request = try Self.parse("/api/rooms/team/history",
                                     query: ["limit": "5", "before": "1767225600000", "format": "csv",
                                             "tz": "Europe/Berlin"]).get()
        #expect(request.query == .history(limit: 5, before: 1_767_225_600_000, format: .csv))
        #expect(request.zone.identifier == "Europe/Berlin")
    }

    @Test func aBearerCredentialIsTakenWhateverItsCase() throws {
        let request = try Self.parse("/api/rooms/team/stats", authorization: "bearer  open sesame ").get()
        #expect(request.bearer == "open sesame")
        #expect(try Self.parse("/api/rooms/team/stats", authorization: "Basic abc").get().bearer == nil)
    }

    @Test func eachMistakeIsNamed() {
        #expect(Self.refusal(Self.parse("/api/rooms/team/members"))?.code == .notFound)
        #expect(Self.refusal(Self.parse("/api/rooms/team/stats", method: .post))?.field == "method")
        #expect(Self.refusal(Self.parse("/api/rooms/team a/stats"))?.field == "room")
        #expect(Self.refusal(Self.parse("/api/rooms/team/stats", query: ["tz": "Mars/Olympus"]))?.field == "tz")
        #expect(Self.refusal(Self.parse("/api/rooms/team/stats", query: ["days": "0"]))?.field == "days")
        #expect(Self.refusal(Self.parse("/api/rooms/team/history", query: ["limit": "1001"]))?.message
                == "limit must be 1–1000")
        #expect(Self.refusal(Self.parse("/api/rooms/team/history", query: ["before": "yesterday"]))?.field == "before")
        #expect(Self.refusal(Self.parse("/api/rooms/team/history", query: ["format": "xml"]))?.field == "format")
    }

    @Test func thePathIsCheckedBeforeTheMethodAndTheMethodBeforeTheRoom() {
        #expect(Self.refusal(Self.parse("/api/rooms/team a/nothing", method: .post))?.code == .notFound)
        #expect(Self.refusal(Self.parse("/api/rooms/team a/stats", method: .post))?.field == "method")
    }
}
