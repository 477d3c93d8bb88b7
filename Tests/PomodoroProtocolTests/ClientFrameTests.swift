import PomodoroCore
@testable import PomodoroProtocol
import Testing

@Suite("Client frames")
struct ClientFrameTests {
    @Test("every client message round-trips with every kind of ref", arguments: Fixtures.clientMessages)
    func roundTrip(_ message: ClientMessage) throws {
        for ref in Fixtures.refs {
            let frame = ClientFrame(message, ref: ref)
            let bytes = WireCodec.encode(frame)
            #expect(try WireCodec.decodeClientFrame(bytes) == frame)
            // The raw-buffer entry point agrees with the array one.
            let viaBuffer = try bytes.withUnsafeBytes { try WireCodec.decodeClientFrame($0) }
            #expect(viaBuffer == frame)
        }
    }

    @Test("awkward strings survive a round trip in every string field", arguments: Fixtures.awkwardStrings)
    func awkwardStrings(_ text: String) throws {
        for message in [ClientMessage.join(room: text, name: text, token: text), .task(text: text)] {
            let frame = ClientFrame(message, ref: .string(text))
            #expect(try WireCodec.decodeClientFrame(WireCodec.encode(frame)) == frame)
        }
    }

    @Test("encoded client frames use the documented keys and omit nil optionals")
    func encodedText() {
        #expect(WireCodec.encode(ClientFrame(.join(room: "team-alpha", name: "Ada", token: nil))).text
            == #"{"type":"join","room":"team-alpha","name":"Ada"}"#)
        #expect(WireCodec.encode(ClientFrame(.join(room: "a", name: "b", token: "t"), ref: .number(1))).text
            == #"{"type":"join","room":"a","name":"b","token":"t","ref":1}"#)
        #expect(WireCodec.encode(ClientFrame(.extend(seconds: -60), ref: .string("x"))).text
            == #"{"type":"extend","seconds":-60,"ref":"x"}"#)
        #expect(WireCodec.encode(ClientFrame(.configure(Fixtures.custom))).text
            == #"{"type":"configure","focus":3000,"shortBreak":600,"longBreak":1800,"longBreakEvery":3,"autoStart":true}"#)
        #expect(WireCodec.encode(ClientFrame(.presence(away: true))).text == #"{"type":"presence","away":true}"#)
        #expect(WireCodec.encode(ClientFrame(.task(text: "a/b"))).text == #"{"type":"task","text":"a/b"}"#)
        #expect(WireCodec.encode(ClientFrame(.ping)).text == #"{"type":"ping"}"#)
    }

    @Test("hand-written frames decode; unknown fields, white space and null optionals are accepted",
          arguments: [
              (#"{"type":"ping"}"#, ClientFrame(.ping)),
              (" \n\t{ \"type\" : \"leave\" } \r\n", ClientFrame(.leave)),
              (#"{"ref":"a1","type":"extend","seconds":-300,"extra":{"x":[1,2.5,"y",null]}}"#,
               ClientFrame(.extend(seconds: -300), ref: .string("a1"))),
              (#"{"type":"join","room":"team-alpha","name":"Ada","token":null,"ref":null}"#,
               ClientFrame(.join(room: "team-alpha", name: "Ada", token: nil))),
              (#"{"type":"join","room":"r","name":"Zo\u00eb \ud83c\udf45 \"q\" \\ \/","token":"t"}"#,
               ClientFrame(.join(room: "r", name: "Zoë 🍅 \"q\" \\ /", token: "t"))),
              (#"{"type":"task","text":"a\u0000b","ref":-12}"#, ClientFrame(.task(text: "a\u{0}b"), ref: .number(-12))),
              (#"{"type":"presence","away":false,"ref":9223372036854775807}"#,
               ClientFrame(.presence(away: false), ref: .number(.max))),
              (#"{"type":"extend","seconds":-9223372036854775808}"#, ClientFrame(.extend(seconds: .min))),
              (#"{"type":"extend","seconds":9223372036854775807}"#, ClientFrame(.extend(seconds: .max))),
              // A saturating number elsewhere does not taint an in-range field, nor does one inside a string.
              (#"{"type":"extend","seconds":5,"x":-99999999999999999999,"y":1e999}"#, ClientFrame(.extend(seconds: 5))),
              (#"{"type":"extend","seconds":-9223372036854775808,"note":"-99999999999999999999"}"#,
               ClientFrame(.extend(seconds: .min))),
              (#"{"type":"configure","autoStart":false,"longBreakEvery":4,"longBreak":900,"shortBreak":300,"focus":1500}"#,
               ClientFrame(.configure(.standard))),
              // The last of a repeated key wins (json-c's rule).
              (#"{"type":"extend","seconds":1,"seconds":2}"#, ClientFrame(.extend(seconds: 2))),
              // The ref may be empty or exactly 64 bytes, counted in UTF-8.
              ("{\"type\":\"ping\",\"ref\":\"\(String(repeating: "é", count: 32))\"}",
               ClientFrame(.ping, ref: .string(String(repeating: "é", count: 32)))),
              // Eight levels of nesting are fine.
              (#"{"type":"ping","deep":[[[[[[[1]]]]]]]}"#, ClientFrame(.ping)),
          ])
    func decodes(_ input: String, _ expected: ClientFrame) throws {
        #expect(try WireCodec.decodeClientFrame([UInt8](input)) == expected)
    }

    struct Malformed: Sendable, CustomTestStringConvertible {
        var input: [UInt8]
        var code: ErrorCode
        var field: String?
        var ref: Ref?
        var testDescription: String {
            // Control bytes and invalid UTF-8 made visible, so the test log stays readable.
            let shown = input.prefix(60).map { (32..<127).contains($0) ? String(UnicodeScalar($0)) : "\\x\(String($0, radix: 16))" }
            return "\(shown.joined()) → \(code.rawValue) \(field ?? "-")"
        }

        init(_ input: String, _ code: ErrorCode, _ field: String? = nil, ref: Ref? = nil) {
            self.init(bytes: [UInt8](input), code, field, ref: ref)
        }
        init(bytes: [UInt8], _ code: ErrorCode, _ field: String? = nil, ref: Ref? = nil) {
            self.input = bytes
            self.code = code
            self.field = field
            self.ref = ref
        }
    }

    static let notJSONRows: [Malformed] = [
        Malformed("", .badJSON),
        Malformed("   ", .badJSON),
        Malformed("not json", .badJSON),
        Malformed(#"{"type":"ping""#, .badJSON),
        Malformed(#"{"type":"ping",}"#, .badJSON),
        Malformed(#"{"type":'ping'}"#, .badJSON),
        Malformed(#"{"type":"ping","n":nan}"#, .badJSON),
        Malformed(#"{"type":"ping","n":+1}"#, .badJSON),
        Malformed(#"{"type":"ping","n":.5}"#, .badJSON),
        Malformed(#"{"type":"task","text":"a\x"}"#, .badJSON),
        Malformed(#"{"type":"ping"} // comment"#, .badJSON),
        Malformed(#"{"type":"ping"} x"#, .badJSON),
        Malformed(#"{"type":"ping"}{"type":"ping"}"#, .badJSON),
        Malformed(#"{"type":"ping"}]"#, .badJSON),
        Malformed(bytes: [UInt8](#"{"type":"ping"}"#) + [0], .badJSON),
        Malformed(bytes: [UInt8](#"{"type":"ping"}"#) + [0] + [UInt8]("junk"), .badJSON),
        Malformed(bytes: [UInt8](#"{"type":"pi"#) + [0] + [UInt8](#"ng"}"#), .badJSON),
        Malformed(#"{"type":"extend","seconds":01}"#, .badJSON),
        Malformed(#"{"type":"ping","x":tru}"#, .badJSON),
        // Not an object at the top level.
        Malformed(#"[{"type":"ping"}]"#, .badJSON),
        Malformed(#""ping""#, .badJSON),
        Malformed("42", .badJSON),
        Malformed("true", .badJSON),
        Malformed("null", .badJSON),
        // Invalid UTF-8, inside and outside strings.
        Malformed(bytes: [UInt8](#"{"type":"task","text":""#) + [0xFF, 0xFE] + [UInt8](#""}"#), .badJSON),
        Malformed(bytes: [UInt8](#"{"type":"task","text":""#) + [0xC3] + [UInt8](#""}"#), .badJSON),
        Malformed(bytes: [UInt8](#"{"type":"task","text":""#) + [0xED, 0xA0, 0x80] + [UInt8](#""}"#), .badJSON),
        // Nine levels and more.
        Malformed(#"{"type":"ping","deep":[[[[[[[[1]]]]]]]]}"#, .badJSON),
        Malformed(#"{"type":"ping","deep":{"a":{"b":{"c":{"d":{"e":{"f":{"g":{"h":1}}}}}}}}}"#, .badJSON),
        Malformed(String(repeating: "[", count: 10_000), .badJSON),
        Malformed(#"{"type":"ping","x":"# + String(repeating: "[", count: 100) + String(repeating: "]", count: 100) + "}",
                  .badJSON),
    ]

    static let badTypeRows: [Malformed] = [
        Malformed("{}", .badRequest, "type"),
        Malformed(#"{"ref":"r"}"#, .badRequest, "type", ref: .string("r")),
        Malformed(#"{"type":5,"ref":7}"#, .badRequest, "type", ref: .number(7)),
        Malformed(#"{"type":null}"#, .badRequest, "type"),
        Malformed(#"{"type":["ping"]}"#, .badRequest, "type"),
        Malformed(#"{"type":true}"#, .badRequest, "type"),
        Malformed(#"{"Type":"ping"}"#, .badRequest, "type"),
        Malformed(#"{"type":"dance","ref":"r"}"#, .unknownType, "type", ref: .string("r")),
        Malformed(#"{"type":"PING"}"#, .unknownType, "type"),
        Malformed(#"{"type":""}"#, .unknownType, "type"),
        Malformed(#"{"type":"welcome"}"#, .unknownType, "type"),
    ]

    static let badRefRows: [Malformed] = [
        Malformed(#"{"type":"ping","ref":1.5}"#, .badRequest, "ref"),
        Malformed(#"{"type":"ping","ref":1.0}"#, .badRequest, "ref"),
        Malformed(#"{"type":"ping","ref":true}"#, .badRequest, "ref"),
        Malformed(#"{"type":"ping","ref":[]}"#, .badRequest, "ref"),
        Malformed(#"{"type":"ping","ref":{}}"#, .badRequest, "ref"),
        Malformed(#"{"type":"ping","ref":99999999999999999999}"#, .badRequest, "ref"),
        Malformed(#"{"type":"ping","ref":9223372036854775808}"#, .badRequest, "ref"),
        Malformed(#"{"type":"ping","ref":-9223372036854775809}"#, .badRequest, "ref"),
        Malformed("{\"type\":\"ping\",\"ref\":\"\(String(repeating: "x", count: 65))\"}", .badRequest, "ref"),
        Malformed("{\"type\":\"ping\",\"ref\":\"\(String(repeating: "é", count: 33))\"}", .badRequest, "ref"),
        // A bad ref is reported before anything else (there is no ref to echo).
        Malformed(#"{"ref":false}"#, .badRequest, "ref"),
        Malformed(#"{"type":"extend","ref":2.5}"#, .badRequest, "ref"),
    ]

    /// Wrong JSON types: every field of join, extend, configure, task and presence, with the ref echoed.
    static let badFieldsRows: [Malformed] = {
        var rows: [Malformed] = [
            Malformed(#"{"type":"join","name":"Ada","ref":"j"}"#, .badRequest, "room", ref: .string("j")),
            Malformed(#"{"type":"join","room":"r","ref":"j"}"#, .badRequest, "name", ref: .string("j")),
            Malformed(#"{"type":"extend","ref":1}"#, .badRequest, "seconds", ref: .number(1)),
            Malformed(#"{"type":"task","ref":1}"#, .badRequest, "text", ref: .number(1)),
            Malformed(#"{"type":"presence","ref":1}"#, .badRequest, "away", ref: .number(1)),
        ]
        let wrongForString = ["5", "1.5", "true", "null", "[]", "{}", #"["a"]"#]
        for value in wrongForString {
            rows.append(Malformed(#"{"type":"join","room":\#(value),"name":"Ada","ref":"j"}"#, .badRequest, "room",
                                  ref: .string("j")))
            rows.append(Malformed(#"{"type":"join","room":"r","name":\#(value),"ref":"j"}"#, .badRequest, "name",
                                  ref: .string("j")))
            rows.append(Malformed(#"{"type":"task","text":\#(value),"ref":"t"}"#, .badRequest, "text",
                                  ref: .string("t")))
        }
        for value in ["5", "true", "[]", "{}"] {
            rows.append(Malformed(#"{"type":"join","room":"r","name":"n","token":\#(value),"ref":"j"}"#, .badRequest,
                                  "token", ref: .string("j")))
        }
        let wrongForInteger = [#""5""#, "1.5", "5.0", "1e3", "-0.0", "true", "null", "[]", "{}", "1e30",
                               "99999999999999999999", "-99999999999999999999", "9223372036854775808",
                               "-9223372036854775809", "18446744073709551615", "18446744073709551616",
                               "1e400", "1.", "NaN"]
        for value in wrongForInteger {
            rows.append(Malformed(#"{"type":"extend","seconds":\#(value),"ref":"e"}"#, .badRequest, "seconds",
                                  ref: .string("e")))
        }
        let settingsFields = ["focus": "1500", "shortBreak": "300", "longBreak": "900", "longBreakEvery": "4",
                              "autoStart": "false"]
        func configure(_ fields: [String: String]) -> String {
            "{\"type\":\"configure\",\"ref\":\"c\","
                + fields.sorted(by: { $0.key < $1.key }).map { "\"\($0.key)\":\($0.value)" }.joined(separator: ",")
                + "}"
        }
        for field in settingsFields.keys.sorted() {
            var missing = settingsFields
            missing[field] = nil
            rows.append(Malformed(configure(missing), .badRequest, field, ref: .string("c")))
            let wrong = field == "autoStart" ? [#""true""#, "1", "0", "null", "[]"]
                                             : [#""1500""#, "1500.0", "1e30", "99999999999999999999", "true", "null"]
            for value in wrong {
                var fields = settingsFields
                fields[field] = value
                rows.append(Malformed(configure(fields), .badRequest, field, ref: .string("c")))
            }
        }
        for value in [#""true""#, "1", "0", "null", #""yes""#, "[]"] {
            rows.append(Malformed(#"{"type":"presence","away":\#(value),"ref":9}"#, .badRequest, "away",
                                  ref: .number(9)))
        }
        return rows
    }()

    @Test("invalid JSON, trailing data, non-objects and deep nesting are bad_json", arguments: notJSONRows)
    func notJSON(_ row: Malformed) { expectError(row) }

    @Test("a missing or non-string type is bad_request, an unknown one unknown_type", arguments: badTypeRows)
    func badType(_ row: Malformed) { expectError(row) }

    @Test("a bad ref is bad_request on field ref, without a ref", arguments: badRefRows)
    func badRef(_ row: Malformed) { expectError(row) }

    @Test("missing fields and wrong JSON types name the field and echo the ref", arguments: badFieldsRows)
    func badFields(_ row: Malformed) { expectError(row) }

    @Test("each table really has the rows it claims")
    func tableSizes() {
        // 7 string-typed cases × 3 fields + 4 token cases + 19 integer cases + 5 settings × (1 missing + 5 or 6 wrong)
        // + 6 presence cases + 5 missing fields.
        #expect(Self.badFieldsRows.count == 5 + 21 + 4 + 19 + (4 * 7 + 6) + 6)
        #expect(Self.notJSONRows.allSatisfy { $0.code == .badJSON && $0.field == nil && $0.ref == nil })
    }

    @Test("the error message is for people: non-empty and names the field")
    func messages() {
        for row in Self.badFieldsRows where row.code == .badRequest {
            guard case .failure(let error) = decode(row.input), let field = error.field else {
                Issue.record("expected an error with a field for \(row.testDescription)")
                continue
            }
            #expect(error.message.contains(field))
        }
    }

    private func decode(_ input: [UInt8]) -> Result<ClientFrame, ProtocolError> {
        Result { () throws(ProtocolError) -> ClientFrame in try WireCodec.decodeClientFrame(input) }
    }

    private func expectError(_ row: Malformed, sourceLocation: SourceLocation = #_sourceLocation) {
        switch decode(row.input) {
        case .success(let frame):
            Issue.record("decoded \(frame) from \(row.testDescription)", sourceLocation: sourceLocation)
        case .failure(let error):
            #expect(error.code == row.code, sourceLocation: sourceLocation)
            #expect(error.field == row.field, sourceLocation: sourceLocation)
            #expect(error.ref == row.ref, sourceLocation: sourceLocation)
            #expect(!error.message.isEmpty, sourceLocation: sourceLocation)
        }
    }

    @Test("the empty buffer and a buffer without a base address are bad_json")
    func emptyBuffer() {
        let error = #expect(throws: ProtocolError.self) {
            try WireCodec.decodeClientFrame(UnsafeRawBufferPointer(start: nil, count: 0))
        }
        #expect(error?.code == .badJSON)
    }

    @Test("a frame is decoded from exactly the bytes of its buffer, not up to a NUL")
    func sliceOfLargerBuffer() throws {
        let storage = [UInt8](#"{"type":"ping"}{"type":"leave"}"#)
        let frame = try storage.withUnsafeBytes { whole in
            try WireCodec.decodeClientFrame(UnsafeRawBufferPointer(rebasing: whole[15...]))
        }
        #expect(frame == ClientFrame(.leave))
    }
}
