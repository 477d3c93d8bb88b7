import Foundation
import PomodoroCore
@testable import PomodoroProtocol
import Testing

/// The stats and history shapes, pinned: the `stats` request and reply, `join`'s `tz`, and the HTTP bodies.
@Suite("Stats and history on the wire")
struct StatsWireTests {
    /// `encoded` and `expected` are the same JSON value (key order aside).
    func expectJSON(_ encoded: [UInt8], _ expected: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let got = try JSONValue.parse(encoded)
        let want = try JSONValue.parse([UInt8](expected))
        #expect(got == want, "\(encoded.text)", sourceLocation: sourceLocation)
    }

    func decode(_ text: String) -> Result<ClientFrame, ProtocolError> {
        Result { () throws(ProtocolError) -> ClientFrame in try WireCodec.decodeClientFrame([UInt8](text)) }
    }

    // MARK: Client → server

    @Test("stats and join with tz encode to exactly these objects")
    func clientEncoding() throws {
        try expectJSON(WireCodec.encode(ClientFrame(.stats(room: "team-alpha", days: 14, tz: "Europe/Berlin",
                                                           passcode: "tomato soup"), ref: .number(7))),
                       #"{"type":"stats","room":"team-alpha","days":14,"tz":"Europe/Berlin","passcode":"tomato soup","ref":7}"#)
        // Absent optionals are left out, not sent as null.
        #expect(WireCodec.encode(ClientFrame(.stats(room: nil, days: nil, tz: nil, passcode: nil))).text
            == #"{"type":"stats"}"#)
        try expectJSON(WireCodec.encode(ClientFrame(.stats(room: nil, days: 30, tz: nil, passcode: nil), ref: .string("s"))),
                       #"{"type":"stats","days":30,"ref":"s"}"#)
        try expectJSON(WireCodec.encode(ClientFrame(.join(room: "team-alpha", name: "Ada", token: nil,
                                                          tz: "Europe/Berlin"), ref: .string("j1"))),
                       #"{"type":"join","room":"team-alpha","name":"Ada","tz":"Europe/Berlin","ref":"j1"}"#)
        #expect(WireCodec.encode(ClientFrame(.join(room: "a", name: "b", token: nil))).text
            == #"{"type":"join","room":"a","name":"b"}"#)
    }

    /// Every combination of stats' four optional fields, absent, null or given, decodes to what was given.
    @Test("stats decodes with and without each field, null meaning absent")
    func statsFieldsOptional() throws {
        let given: [(key: String, json: String)] = [("room", #""team-alpha""#), ("days", "14"),
                                                    ("tz", #""Europe/Berlin""#), ("passcode", #""p4ss""#)]
        var combinations = 0
        for mask in 0..<81 {  // each field: 0 absent, 1 null, 2 given
            var digits = mask
            var parts = [#""type":"stats""#, #""ref":3"#]
            var present: Set<String> = []
            for field in given {
                switch digits % 3 {
                case 1: parts.append("\"\(field.key)\":null")
                case 2:
                    parts.append("\"\(field.key)\":\(field.json)")
                    present.insert(field.key)
                default: break
                }
                digits /= 3
            }
            let expected = ClientFrame(.stats(room: present.contains("room") ? "team-alpha" : nil,
                                              days: present.contains("days") ? 14 : nil,
                                              tz: present.contains("tz") ? "Europe/Berlin" : nil,
                                              passcode: present.contains("passcode") ? "p4ss" : nil),
                                       ref: .number(3))
            let text = "{" + parts.joined(separator: ",") + "}"
            #expect(try WireCodec.decodeClientFrame([UInt8](text)) == expected, "\(text)")
            combinations += 1
        }
        #expect(combinations == 81)
    }

    @Test("join decodes tz when given, none when absent or null", arguments: [
        (#"{"type":"join","room":"r","name":"Ada","tz":"Europe/Berlin"}"#, "Europe/Berlin"),
        (#"{"type":"join","room":"r","name":"Ada","tz":""}"#, ""),
        (#"{"type":"join","room":"r","name":"Ada","tz":null}"#, nil),
        (#"{"type":"join","room":"r","name":"Ada"}"#, nil),
    ] as [(String, String?)])
    func joinTZ(_ text: String, _ tz: String?) throws {
        #expect(try WireCodec.decodeClientFrame([UInt8](text))
            == ClientFrame(.join(room: "r", name: "Ada", token: nil, tz: tz)))
    }

    static let wrongTypeRows: [(String, String)] = {
        var rows: [(String, String)] = []
        for value in ["5", "1.5", "true", "[]", "{}", #"["a"]"#] {
            rows.append((#"{"type":"stats","room":\#(value),"ref":"s"}"#, "room"))
            rows.append((#"{"type":"stats","tz":\#(value),"ref":"s"}"#, "tz"))
            rows.append((#"{"type":"stats","passcode":\#(value),"ref":"s"}"#, "passcode"))
            rows.append((#"{"type":"join","room":"r","name":"n","tz":\#(value),"ref":"s"}"#, "tz"))
        }
        for value in [#""14""#, "14.0", "1.5", "1e1", "true", "[]", "{}", "99999999999999999999",
                      "9223372036854775808", "-9223372036854775809"] {
            rows.append((#"{"type":"stats","days":\#(value),"ref":"s"}"#, "days"))
        }
        return rows
    }()

    @Test("a wrong JSON type in stats or join's tz is bad_request naming the field, ref echoed",
          arguments: wrongTypeRows)
    func wrongTypes(_ text: String, _ field: String) {
        guard case .failure(let error) = decode(text) else {
            Issue.record("decoded \(text)")
            return
        }
        #expect(error.code == .badRequest)
        #expect(error.field == field)
        #expect(error.ref == .string("s"))
        #expect(error.message.contains(field))
    }

    @Test("the wrong-type table has the rows it claims")
    func wrongTypeTableSize() {
        #expect(Self.wrongTypeRows.count == 6 * 4 + 10)
    }

    // MARK: Server → client

    static let reportJSON = #"""
        {"room":"team-alpha","tz":"Europe/Berlin","today":"2026-11-21","days":3,
         "totals":{"focusSessions":12,"focusSeconds":18000,"interruptions":3,"currentStreak":4,"longestStreak":9},
         "perDay":[{"date":"2026-11-19","focusSessions":0,"focusSeconds":0,"interruptions":0},
                   {"date":"2026-11-20","focusSessions":2,"focusSeconds":3000,"interruptions":1},
                   {"date":"2026-11-21","focusSessions":1,"focusSeconds":1500,"interruptions":0}],
         "members":[
           {"name":"Ada",
            "totals":{"focusSessions":9,"focusSeconds":13500,"interruptions":1,"currentStreak":4,"longestStreak":9},
            "perDay":[{"date":"2026-11-19","focusSessions":0,"focusSeconds":0,"interruptions":0},
                      {"date":"2026-11-20","focusSessions":2,"focusSeconds":3000,"interruptions":1},
                      {"date":"2026-11-21","focusSessions":1,"focusSeconds":1500,"interruptions":0}]},
           {"name":"Zoë \"Z\" \\ 🍅",
            "totals":{"focusSessions":3,"focusSeconds":4500,"interruptions":2,"currentStreak":0,"longestStreak":2},
            "perDay":[{"date":"2026-11-19","focusSessions":0,"focusSeconds":0,"interruptions":0},
                      {"date":"2026-11-20","focusSessions":1,"focusSeconds":1200,"interruptions":0},
                      {"date":"2026-11-21","focusSessions":0,"focusSeconds":0,"interruptions":0}]}]}
        """#

    /// The report object with `type` and `ref` added.
    static func message(_ body: String, ref: String?) -> String {
        "{\"type\":\"stats\"," + (ref.map { "\"ref\":\($0)," } ?? "") + body.dropFirst()
    }

    @Test("the stats reply is exactly this object; the HTTP body is the same without type and ref")
    func reportShape() throws {
        try expectJSON(WireCodec.encode(.stats(Fixtures.statsReport, ref: .number(7))),
                       Self.message(Self.reportJSON, ref: "7"))
        try expectJSON(WireCodec.encode(.stats(Fixtures.statsReport, ref: nil)), Self.message(Self.reportJSON, ref: nil))
        try expectJSON(WireCodec.encodeStatsBody(Fixtures.statsReport), Self.reportJSON)
        try expectJSON(WireCodec.encodeStatsBody(Fixtures.emptyStatsReport), #"""
            {"room":"r","tz":"UTC","today":"2026-01-01","days":1,
             "totals":{"focusSessions":0,"focusSeconds":0,"interruptions":0,"currentStreak":0,"longestStreak":0},
             "perDay":[{"date":"2026-01-01","focusSessions":0,"focusSeconds":0,"interruptions":0}],"members":[]}
            """#)
    }

    @Test("stats replies and bodies decode back to the same report")
    func reportRoundTrip() throws {
        for report in [Fixtures.statsReport, Fixtures.emptyStatsReport] {
            #expect(try WireCodec.decodeServerMessage(WireCodec.encode(.stats(report, ref: .string("r"))))
                == .stats(report, ref: .string("r")))
            #expect(try WireCodec.decodeStatsBody(WireCodec.encodeStatsBody(report)) == report)
        }
        // Hand-written, with a field from the future: read, the extra ignored.
        let text = Self.message(Self.reportJSON, ref: #""x""#).replacingOccurrences(
            of: #""days":3,"#, with: #""days":3,"weekStartsOn":"monday","#)
        #expect(try WireCodec.decodeServerMessage([UInt8](text)) == .stats(Fixtures.statsReport, ref: .string("x")))
    }

    @Test("a bad field deep in a report is named by its path", arguments: [
        (#""focusSeconds":1200"#, #""focusSeconds":"1200""#, "members[1].perDay[1].focusSeconds"),
        (#""focusSessions":12,"focusSeconds":18000"#, #""focusSessions":12"#, "totals.focusSeconds"),
        (#""today":"2026-11-21""#, #""today":20261121"#, "today"),
        (#""perDay":[{"date":"2026-11-19""#, #""perDay":[{"date":null"#, "perDay[0].date"),
    ])
    func reportErrorPath(_ find: String, _ replace: String, _ field: String) {
        let text = Self.reportJSON.replacingOccurrences(of: "\n", with: "").replacingOccurrences(of: " ", with: "")
        let broken = text.replacingOccurrences(of: find, with: replace)
        #expect(broken != text)
        let error = #expect(throws: ProtocolError.self) { try WireCodec.decodeStatsBody([UInt8](broken)) }
        #expect(error?.code == .badRequest)
        #expect(error?.field == field)
        let asMessage = #expect(throws: ProtocolError.self) {
            try WireCodec.decodeServerMessage([UInt8](Self.message(broken, ref: nil)))
        }
        #expect(asMessage?.field == field)
    }

    // MARK: HTTP bodies

    @Test("the history body is exactly this object, nextBefore always present")
    func historyShape() throws {
        try expectJSON(WireCodec.encodeHistory(Fixtures.history), #"""
            {"room":"team-alpha","sessions":[
              {"startedAt":1763715000000,"endedAt":1763716500000,"lengthSeconds":1500,"members":[
                {"id":"m1","name":"Ada","task":"write the report","focusSeconds":1500},
                {"id":"m2","name":"Zoë \"Z\" 🍅","task":"","focusSeconds":61}]},
              {"startedAt":1763700000000,"endedAt":1763701800000,"lengthSeconds":1800,"members":[]}],
             "nextBefore":1763701800000}
            """#)
        try expectJSON(WireCodec.encodeHistory(HistoryPayload(room: "quiet", sessions: [], nextBefore: nil)),
                       #"{"room":"quiet","sessions":[],"nextBefore":null}"#)
    }

    @Test("history bodies decode back, nextBefore null or absent as none")
    func historyRoundTrip() throws {
        #expect(try WireCodec.decodeHistory(WireCodec.encodeHistory(Fixtures.history)) == Fixtures.history)
        let empty = HistoryPayload(room: "quiet", sessions: [], nextBefore: nil)
        #expect(try WireCodec.decodeHistory(WireCodec.encodeHistory(empty)) == empty)
        #expect(try WireCodec.decodeHistory([UInt8](#"{"room":"quiet","sessions":[]}"#)) == empty)
        let error = #expect(throws: ProtocolError.self) {
            try WireCodec.decodeHistory([UInt8](#"{"room":"r","sessions":[{"startedAt":1,"endedAt":2,"lengthSeconds":1,"members":[{"id":"m1","name":"A","task":"","focusSeconds":1.5}]}],"nextBefore":null}"#))
        }
        #expect(error?.field == "sessions[0].members[0].focusSeconds")
        #expect(throws: ProtocolError.self) { try WireCodec.decodeHistory([UInt8]("[]")) }
    }

    @Test("HTTP errors are {error:{code,message,field?}}")
    func httpErrorShape() throws {
        try expectJSON(WireCodec.encodeHTTPError(code: .badRequest, message: "days must be 1–366", field: "days"),
                       #"{"error":{"code":"bad_request","message":"days must be 1–366","field":"days"}}"#)
        #expect(WireCodec.encodeHTTPError(code: .notFound, message: "no such path").text
            == #"{"error":{"code":"not_found","message":"no such path"}}"#)
        #expect(WireCodec.encodeHTTPError(ProtocolError(code: .unavailable, message: "try again", ref: .number(1))).text
            == #"{"error":{"code":"unavailable","message":"try again"}}"#)
        #expect(try WireCodec.decodeHTTPError(WireCodec.encodeHTTPError(code: .badPasscode, message: "m", field: "passcode"))
            == ProtocolError(code: .badPasscode, message: "m", field: "passcode"))
        #expect(try WireCodec.decodeHTTPError([UInt8](#"{"error":{"code":"teapot","message":"short and stout"}}"#))
            == ProtocolError(code: .internalError, message: "short and stout"))
    }

    @Test("each error code has its HTTP status")
    func httpStatuses() {
        #expect(ErrorCode.badRequest.httpStatus == 400)
        #expect(ErrorCode.badPasscode.httpStatus == 401)
        #expect(ErrorCode.notFound.httpStatus == 404)
        #expect(ErrorCode.unavailable.httpStatus == 503)
        #expect(ErrorCode.rateLimited.httpStatus == 429)
        #expect(ErrorCode.internalError.httpStatus == 500)
        #expect(ErrorCode.allCases.allSatisfy { (400...599).contains($0.httpStatus) })
    }

    @Test("a journal entry becomes a history session, focus time in whole seconds")
    func sessionFromRecord() throws {
        let record = FocusSessionRecord(
            room: try RoomID(validating: "team-alpha"), startedAtMs: 1_763_715_000_000, endedAtMs: 1_763_716_500_000,
            lengthSeconds: 1500,
            participants: [.init(member: MemberID("m1"), name: "Ada", task: "write the report", focusMs: 1_500_000),
                           .init(member: MemberID("m2"), name: "Lin", task: "", focusMs: 61_999)])
        #expect(FocusSessionPayload(record) == FocusSessionPayload(
            startedAt: 1_763_715_000_000, endedAt: 1_763_716_500_000, lengthSeconds: 1500,
            members: [FocusSessionMemberPayload(id: "m1", name: "Ada", task: "write the report", focusSeconds: 1500),
                      FocusSessionMemberPayload(id: "m2", name: "Lin", task: "", focusSeconds: 61)]))
    }
}

/// The examples in docs/PROTOCOL.md are what the codec reads.
@Suite("The protocol document's examples")
struct ProtocolDocumentTests {
    static let document = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("docs/PROTOCOL.md")

    /// Every line of the document's ```json blocks, but those shortened with "…".
    static func examples() throws -> [String] {
        let text = try String(contentsOf: document, encoding: .utf8)
        var lines: [String] = []
        var inJSON = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("```") {
                inJSON = line == "```json"
            } else if inJSON, !line.contains("…") {
                lines.append(String(line))
            }
        }
        return lines
    }

    @Test("every JSON example decodes: client frames, server messages, HTTP bodies")
    func examplesDecode() throws {
        let lines = try Self.examples()
        var kinds: [String: Int] = [:]
        for line in lines {
            let bytes = [UInt8](line.utf8)
            let value = try JSONValue.parse(bytes)
            let serverTypes: Set = ["welcome", "observing", "state", "tick", "event", "ok", "error", "pong", "apiTokens", "you"]
            do {
                switch value["type"] {
                case .string("stats")?:
                    // The request has no totals; the reply does.
                    if value["totals"] == nil { _ = try WireCodec.decodeClientFrame(bytes); kinds["client", default: 0] += 1 }
                    else { _ = try WireCodec.decodeServerMessage(bytes); kinds["server", default: 0] += 1 }
                case .string(let type)? where serverTypes.contains(type):
                    _ = try WireCodec.decodeServerMessage(bytes)
                    kinds["server", default: 0] += 1
                case .string?:
                    _ = try WireCodec.decodeClientFrame(bytes)
                    kinds["client", default: 0] += 1
                default:
                    if value["error"] != nil { _ = try WireCodec.decodeHTTPError(bytes); kinds["http error", default: 0] += 1 }
                    else if value["sessions"] != nil { _ = try WireCodec.decodeHistory(bytes); kinds["history", default: 0] += 1 }
                    else if value["phase"] != nil { _ = try WireCodec.decodeSnapshotBody(bytes); kinds["room body", default: 0] += 1 }
                    else { _ = try WireCodec.decodeStatsBody(bytes); kinds["stats body", default: 0] += 1 }
                }
            } catch {
                Issue.record("\(error): \(line)")
            }
        }
        // The document shows each kind: guards against the block markers changing under this test.
        #expect(kinds["client", default: 0] >= 20, "\(kinds)")
        #expect(kinds["server", default: 0] >= 15, "\(kinds)")
        #expect(kinds["http error"] == 2 && kinds["history"] == 1, "\(kinds)")
    }

    @Test("the stats reply example is whole: every day present, today last, and the encoder's shape")
    func statsExampleShape() throws {
        let reply = try #require(try Self.examples().first { $0.hasPrefix(#"{"type":"stats""#) && $0.contains(#""totals""#) })
        guard case let .stats(report, ref) = try WireCodec.decodeServerMessage([UInt8](reply.utf8)) else {
            Issue.record("not a stats reply: \(reply)")
            return
        }
        #expect(ref == .number(9))
        #expect(report.perDay.count == report.days && report.perDay.last?.date == report.today)
        #expect(report.members.allSatisfy { $0.perDay.map(\.date) == report.perDay.map(\.date) })
        // Re-encoded, it is the same JSON value as the example.
        #expect(try JSONValue.parse(WireCodec.encode(.stats(report, ref: ref))) == JSONValue.parse([UInt8](reply.utf8)))
    }
}
