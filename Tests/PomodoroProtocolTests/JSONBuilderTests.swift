import PomodoroCore
@testable import PomodoroProtocol
import Testing

/// The JSON writer against json-c 0.16's plain serialization (with slashes left alone), which wrote every
/// message before it and whose bytes it keeps: the escapes byte by byte, the layout, the integers; and what
/// it writes read back by the json-c parser the codec decodes with.
@Suite("JSON writer")
struct JSONBuilderTests {
    /// `{"s":<value>}` as the writer writes it.
    static func written(_ value: String) -> String {
        let object = JSONBuilder.object()
        object.set("s", value)
        return String(decoding: object.serialize(), as: UTF8.self)
    }

    /// What json_escape_str writes for each byte below 0x80 (JSON_C_TO_STRING_NOSLASHESCAPE): the short
    /// escapes, `\u00xx` in lowercase hex for the other controls, and every other byte as it is.
    static func expectedEscape(_ byte: UInt8) -> String {
        switch byte {
        case 0x08: return #"\b"#
        case 0x09: return #"\t"#
        case 0x0A: return #"\n"#
        case 0x0C: return #"\f"#
        case 0x0D: return #"\r"#
        case 0x22: return #"\""#
        case 0x5C: return #"\\"#
        default: break
        }
        let controls = [#"\u0000"#, #"\u0001"#, #"\u0002"#, #"\u0003"#, #"\u0004"#, #"\u0005"#, #"\u0006"#,
                        #"\u0007"#, "", "", "", #"\u000b"#, "", "", #"\u000e"#, #"\u000f"#, #"\u0010"#,
                        #"\u0011"#, #"\u0012"#, #"\u0013"#, #"\u0014"#, #"\u0015"#, #"\u0016"#, #"\u0017"#,
                        #"\u0018"#, #"\u0019"#, #"\u001a"#, #"\u001b"#, #"\u001c"#, #"\u001d"#, #"\u001e"#,
                        #"\u001f"#]
        return byte < 0x20 ? controls[Int(byte)] : String(UnicodeScalar(byte))
    }

    static func parsedBack(_ json: String) throws -> JSONValue? {
        try JSONValue.parse(Array(json.utf8))["s"]
    }

    @Test("every byte below 0x80 is escaped as json-c escapes it, and parses back to itself",
          arguments: UInt8(0)...UInt8(0x7F))
    func eachByte(_ byte: UInt8) throws {
        let character = String(UnicodeScalar(byte))
        let escape = Self.expectedEscape(byte)
        #expect(Self.written(character) == #"{"s":""# + escape + #""}"#)
        #expect(try Self.parsedBack(Self.written(character)) == .string(character))
        // At every offset of a string long enough to be scanned eight bytes at a time, and twice in a row.
        for offset in 0...17 {
            let value = String(repeating: "a", count: offset) + character + character + String(repeating: "z", count: 20 - offset)
            let expected = String(repeating: "a", count: offset) + escape + escape + String(repeating: "z", count: 20 - offset)
            #expect(Self.written(value) == #"{"s":""# + expected + #""}"#, "offset \(offset)")
            #expect(try Self.parsedBack(Self.written(value)) == .string(value))
        }
    }

    @Test("slashes, DEL and multi-byte UTF-8 are written as they are",
          arguments: ["/", "a/b//c", "\u{7F}", "é", "Zoë \"Z\" 🍅", "\u{2028}\u{2029}", "\u{FEFF}", "\u{FFFF}",
                      "\u{10FFFF}", "日本語のテキスト", String(repeating: "🍅", count: 9)])
    func multiByte(_ value: String) throws {
        let expected = value.replacingOccurrences(of: "\"", with: #"\""#)
        #expect(Self.written(value) == #"{"s":""# + expected + #""}"#)
        #expect(try Self.parsedBack(Self.written(value)) == .string(value))
    }

    @Test("any string, NULs and all, is written by its length and parses back to itself")
    func anyString() throws {
        var generator = SystemRandomNumberGenerator()
        for length in [0, 1, 7, 8, 9, 15, 16, 17, 63, 64, 65, 1000, 100_000] {
            let scalars = (0..<length).map { _ -> Unicode.Scalar in
                switch Int.random(in: 0..<4, using: &generator) {
                case 0: Unicode.Scalar(UInt8.random(in: 0...0x1F, using: &generator))
                case 1: Unicode.Scalar(UInt8.random(in: 0...0x7F, using: &generator))
                case 2: Unicode.Scalar(UInt32.random(in: 0x80...0xD7FF, using: &generator))!
                default: Unicode.Scalar(UInt32.random(in: 0x10000...0x10FFFF, using: &generator))!
                }
            }
            var value = ""
            value.unicodeScalars.append(contentsOf: scalars)
            #expect(try Self.parsedBack(Self.written(value)) == .string(value), "length \(length)")
            let error = ServerMessage.error(code: .badRequest, message: value, field: value, ref: .number(Int64(length)))
            #expect(try WireCodec.decodeServerMessage(WireCodec.encode(error)) == error)
        }
        // Bytes that are not UTF-8 cannot reach a String: decoding them makes replacement characters.
        let mended = String(decoding: [0x61, 0xFF, 0xC0, 0xED, 0xA0, 0x80, 0x00, 0x62] as [UInt8], as: UTF8.self)
        #expect(try Self.parsedBack(Self.written(mended)) == .string(mended))
    }

    @Test("objects and arrays as json-c lays them out: in order, no spaces, empty ones, null, true, false")
    func layout() {
        let inner = JSONBuilder.object()
        inner.set("b", true)
        inner.set("f", false)
        inner.set("n", nil as JSONBuilder.Value?)
        let empty = JSONBuilder.object()
        let list = JSONBuilder.array(capacity: 3)
        list.append(JSONBuilder.object())
        list.append(JSONBuilder.array(capacity: 0))
        list.append(.string("x"))
        list.append(.integer(-1))
        list.append(.null)
        let object = JSONBuilder.object()
        object.set("z", 1)
        object.set("a", inner)
        object.set("empty", empty)
        object.set("list", list)
        object.set("none", JSONBuilder.array(capacity: 0))
        object.set("set", Optional(JSONBuilder.string("s")))
        object.set("object", Optional(inner2().value))
        #expect(String(decoding: object.serialize(), as: UTF8.self)
                == #"{"z":1,"a":{"b":true,"f":false,"n":null},"empty":{},"list":[{},[],"x",-1,null],"none":[],"set":"s","object":{"k":"v"}}"#)
        #expect(JSONBuilder.object().serialize() == Array("{}".utf8))
        #expect(JSONBuilder.array(capacity: 5).serialize() == Array("[]".utf8))
    }

    private func inner2() -> JSONBuilder {
        let object = JSONBuilder.object()
        object.set("k", "v")
        return object
    }

    @Test("integers in decimal, to the ends of Int64 and UInt64")
    func integers() {
        let object = JSONBuilder.object()
        object.set("min", Int64.min)
        object.set("max", Int64.max)
        object.set("zero", 0)
        object.set("minusOne", -1)
        object.set("int", Int.min + 1)
        object.set("u", UInt64.max)
        object.set("u0", UInt64(0))
        object.set("tens", 1_000_000_000_000_000_000 as Int64)
        object.set("value", JSONBuilder.integer(-10))
        #expect(String(decoding: object.serialize(), as: UTF8.self)
                == #"{"min":-9223372036854775808,"max":9223372036854775807,"zero":0,"minusOne":-1,"int":-9223372036854775807,"u":18446744073709551615,"u0":0,"tens":1000000000000000000,"value":-10}"#)
    }

    static let ticks: [(TickPayload, String)] = [
        (TickPayload(room: "r", phase: .idle, remainingMs: 0, endsAt: 0, cycle: 0, seq: 0, serverTime: 0),
         #"{"type":"tick","room":"r","phase":"idle","remainingMs":0,"endsAt":0,"cycle":0,"seq":0,"serverTime":0}"#),
        (TickPayload(room: "storm-0999", phase: .shortBreak, remainingMs: 299_000, endsAt: 1_796_480_000_123,
                     cycle: 7, seq: 123_456, serverTime: 1_796_479_701_123),
         #"{"type":"tick","room":"storm-0999","phase":"shortBreak","remainingMs":299000,"endsAt":1796480000123,"cycle":7,"seq":123456,"serverTime":1796479701123}"#),
        (TickPayload(room: String(repeating: "A-z_9", count: 12) + "Zz-_", phase: .longBreak, remainingMs: -1,
                     endsAt: Int64.min, cycle: Int(Int32.max), seq: UInt64.max, serverTime: Int64.max),
         #"{"type":"tick","room":""# + String(repeating: "A-z_9", count: 12) + #"Zz-_","phase":"longBreak","remainingMs":-1,"endsAt":-9223372036854775808,"cycle":2147483647,"seq":18446744073709551615,"serverTime":9223372036854775807}"#),
        (TickPayload(room: "a/b", phase: .focus, remainingMs: 10, endsAt: -999, cycle: 1, seq: 10, serverTime: 9),
         #"{"type":"tick","room":"a/b","phase":"focus","remainingMs":10,"endsAt":-999,"cycle":1,"seq":10,"serverTime":9}"#),
        (TickPayload(room: "tab\there \"q\" \\ é", phase: .focus, remainingMs: 1000, endsAt: 2000, cycle: 1, seq: 3,
                     serverTime: 1000),
         #"{"type":"tick","room":"tab\there \"q\" \\ é","phase":"focus","remainingMs":1000,"endsAt":2000,"cycle":1,"seq":3,"serverTime":1000}"#),
    ]

    @Test("a tick is exactly the JSON json-c wrote for it, extremes and escapes included", arguments: 0..<ticks.count)
    func tick(_ index: Int) throws {
        let (tick, expected) = Self.ticks[index]
        let bytes = WireCodec.encode(.tick(tick))
        #expect(String(decoding: bytes, as: UTF8.self) == expected)
        #expect(try WireCodec.decodeServerMessage(bytes) == .tick(tick))
    }

    @Test("every server message of the golden fixtures decodes back to itself")
    func fixturesRoundTrip() throws {
        var count = 0
        for (path, shape) in GoldenFixtureTests.table {
            guard case .server(let message) = shape else { continue }
            #expect(try WireCodec.decodeServerMessage(WireCodec.encode(message)) == message, "\(path)")
            count += 1
        }
        #expect(count >= 40)
    }
}
