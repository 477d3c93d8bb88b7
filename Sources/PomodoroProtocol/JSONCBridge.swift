import CJSONC

// The thin layer over json-c: parsing into a borrowed read-only view (writing is JSONBuilder's, in Swift).
// This file is the only Swift code that touches json-c (the WireCodec files speak to it through these types);
// nothing here is public and no C type leaves the module.

// MARK: Reading

/// A JSON integer as json-c parsed it.
enum JSONInteger: Equatable {
    case signed(Int64)
    /// Above `Int64.max` (and at most `UInt64.max`).
    case unsigned(UInt64)
    /// Outside `Int64.min...UInt64.max`: json-c saturated it, so its value is unknown.
    case outOfRange
}

/// A borrowed view of one value of a parsed json-c tree.
///
/// Valid only inside the body of `JSONNode.parse`: the tree and the source bytes are released when it returns,
/// so everything read out of a node (strings above all) is copied into Swift values.
struct JSONNode {
    /// nil is JSON null (json-c represents null as a NULL object pointer).
    let raw: OpaquePointer?
    /// The text this tree was parsed from, to tell a saturated integer from a real extreme one.
    private let source: UnsafeRawBufferPointer

    private init(_ raw: OpaquePointer?, source: UnsafeRawBufferPointer) {
        self.raw = raw
        self.source = source
    }

    /// Parses `bytes` as exactly one JSON value (surrounding white space allowed) nested at most `maxDepth`
    /// levels deep, and hands its root to `body`. Malformed input is `bad_json` (more than 2 GiB is `too_large`).
    static func parse<T>(_ bytes: UnsafeRawBufferPointer, maxDepth: Int,
                         _ body: (JSONNode) throws(ProtocolError) -> T) throws(ProtocolError) -> T {
        guard let base = bytes.baseAddress, !bytes.isEmpty else {
            throw ProtocolError(.badJSON, "the frame is empty")
        }
        guard bytes.count < Int(Int32.max) else { throw ProtocolError(.tooLarge, "the frame is too large") }
        // json-c's own check lets UTF-8-encoded surrogates (ED A0 80) through; Swift's does not.
        guard isValidUTF8(bytes) else { throw ProtocolError(.badJSON, "the frame is not valid UTF-8") }
        // json-c counts the top level as one level and refuses to reach its limit.
        guard let tokener = json_tokener_new_ex(Int32(maxDepth + 1)) else {
            throw ProtocolError(.internalError, "out of memory")
        }
        defer { json_tokener_free(tokener) }
        json_tokener_set_flags(tokener, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8)
        let root = json_tokener_parse_ex(tokener, base.assumingMemoryBound(to: CChar.self), Int32(bytes.count))
        defer { if let root { json_object_put(root) } }
        let error = json_tokener_get_error(tokener)
        guard error == json_tokener_success else {
            switch error {
            case json_tokener_continue: throw ProtocolError(.badJSON, "the frame is not complete JSON")
            case json_tokener_error_depth: throw ProtocolError(.badJSON, "the JSON nests more than \(maxDepth) levels deep")
            case json_tokener_error_parse_utf8_string: throw ProtocolError(.badJSON, "the frame is not valid UTF-8")
            default: throw ProtocolError(.badJSON, "the frame is not valid JSON (\(String(cString: json_tokener_error_desc(error))))")
            }
        }
        // Strict mode refuses most trailing data itself, but stops quietly at a NUL byte.
        guard json_tokener_get_parse_end(tokener) == bytes.count else {
            throw ProtocolError(.badJSON, "the frame has data after the JSON value")
        }
        return try body(JSONNode(root, source: bytes))
    }

    enum Kind: Equatable { case null, bool, int, double, string, object, array }

    var kind: Kind {
        guard let raw else { return .null }
        switch json_object_get_type(raw) {
        case json_type_boolean: return .bool
        case json_type_int: return .int
        case json_type_double: return .double
        case json_type_string: return .string
        case json_type_object: return .object
        case json_type_array: return .array
        default: return .null
        }
    }

    var isNull: Bool { raw == nil }

    /// The member `key` of an object: nil when absent or when this is not an object; a null node when JSON null.
    subscript(key: String) -> JSONNode? {
        guard let raw, json_object_get_type(raw) == json_type_object else { return nil }
        var value: OpaquePointer?
        guard json_object_object_get_ex(raw, key, &value) != 0 else { return nil }
        return JSONNode(value, source: source)
    }

    var string: String? {
        guard let raw, json_object_get_type(raw) == json_type_string,
              let chars = json_object_get_string(raw) else { return nil }
        // By length, not up to the first NUL: "\u0000" is a valid escape.
        let count = Int(json_object_get_string_len(raw))
        return String(decoding: UnsafeRawBufferPointer(start: chars, count: count), as: UTF8.self)
    }

    var bool: Bool? {
        guard let raw, json_object_get_type(raw) == json_type_boolean else { return nil }
        return json_object_get_boolean(raw) != 0
    }

    var double: Double? {
        guard let raw, json_object_get_type(raw) == json_type_double else { return nil }
        return json_object_get_double(raw)
    }

    /// Only JSON integers (no fraction, no exponent); `5.0` and `1e3` are doubles and give nil.
    var integer: JSONInteger? {
        guard let raw, json_object_get_type(raw) == json_type_int else { return nil }
        // json-c saturates out-of-range literals to Int64.min (negative) or UInt64.max (positive), which are
        // also real values; only then look at the source text to tell which it was.
        let signed = json_object_get_int64(raw)
        if signed == .min {
            return JSONNode.sourceHasOverflowingInteger(source) ? .outOfRange : .signed(signed)
        }
        if signed == .max {
            let unsigned = json_object_get_uint64(raw)
            if unsigned == UInt64(Int64.max) { return .signed(signed) }
            if unsigned == .max && JSONNode.sourceHasOverflowingInteger(source) { return .outOfRange }
            return .unsigned(unsigned)
        }
        return .signed(signed)
    }

    var count: Int {
        guard let raw, json_object_get_type(raw) == json_type_array else { return 0 }
        return json_object_array_length(raw)
    }

    /// The elements of an array (empty when this is not an array).
    var elements: [JSONNode] {
        guard let raw, json_object_get_type(raw) == json_type_array else { return [] }
        return (0..<json_object_array_length(raw)).map { JSONNode(json_object_array_get_idx(raw, $0), source: source) }
    }

    /// The members of an object in their order in the text (a repeated key keeps its last value).
    var members: [(key: String, value: JSONNode)] {
        guard let raw, json_object_get_type(raw) == json_type_object else { return [] }
        var result: [(key: String, value: JSONNode)] = []
        var iterator = json_object_iter_begin(raw)
        var end = json_object_iter_end(raw)
        while json_object_iter_equal(&iterator, &end) == 0 {
            result.append((String(cString: json_object_iter_peek_name(&iterator)),
                           JSONNode(json_object_iter_peek_value(&iterator), source: source)))
            json_object_iter_next(&iterator)
        }
        return result
    }

    /// Whether the text holds an integer literal outside `Int64.min...UInt64.max` (outside strings).
    /// Runs only when a parsed integer sits exactly on a saturation value, so its cost does not matter.
    /// It cannot tell which literal overflowed: a real `Int64.min` next to an overflowing literal elsewhere in
    /// the same frame is refused too, the price of never accepting a saturated value.
    static func sourceHasOverflowingInteger(_ text: UnsafeRawBufferPointer) -> Bool {
        var i = 0
        let n = text.count
        while i < n {
            let c = text[i]
            if c == UInt8(ascii: "\"") {
                i += 1
                while i < n && text[i] != UInt8(ascii: "\"") { i += text[i] == UInt8(ascii: "\\") ? 2 : 1 }
                i += 1
                continue
            }
            guard c == UInt8(ascii: "-") || isDigit(c) else { i += 1; continue }
            let negative = c == UInt8(ascii: "-")
            var j = negative ? i + 1 : i
            while j < n && text[j] == UInt8(ascii: "0") { j += 1 }   // leading zeros do not count
            let digitsStart = j
            while j < n && isDigit(text[j]) { j += 1 }
            let digits = text[digitsStart..<j]
            var isInteger = true
            while j < n, [UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E"), UInt8(ascii: "+"),
                          UInt8(ascii: "-")].contains(text[j]) || isDigit(text[j]) {
                isInteger = false
                j += 1
            }
            if isInteger {
                let limit = Array((negative ? "9223372036854775808" : "18446744073709551615").utf8)
                if digits.count > limit.count || (digits.count == limit.count && limit.lexicographicallyPrecedes(digits)) {
                    return true
                }
            }
            i = max(j, i + 1)
        }
        return false
    }

    private static func isValidUTF8(_ bytes: UnsafeRawBufferPointer) -> Bool {
        if bytes.allSatisfy({ $0 < 0x80 }) { return true }
        var input = bytes.makeIterator()
        var parser = Unicode.UTF8.ForwardParser()
        while true {
            switch parser.parseScalar(from: &input) {
            case .valid: continue
            case .emptyInput: return true
            case .error: return false
            }
        }
    }

    private static func isDigit(_ c: UInt8) -> Bool { c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9") }
}

// MARK: Generic values

/// Any JSON value as plain Swift data: for tests and diagnostics, not the hot path.
enum JSONValue: Equatable {
    case null
    case bool(Bool)
    case integer(JSONInteger)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    init(_ node: JSONNode) {
        switch node.kind {
        case .null: self = .null
        case .bool: self = .bool(node.bool!)
        case .int: self = .integer(node.integer!)
        case .double: self = .double(node.double!)
        case .string: self = .string(node.string!)
        case .array: self = .array(node.elements.map(JSONValue.init))
        case .object:
            var dictionary: [String: JSONValue] = [:]
            for (key, value) in node.members { dictionary[key] = JSONValue(value) }
            self = .object(dictionary)
        }
    }

    /// Parses any JSON text with json-c, as the codec does.
    static func parse(_ bytes: [UInt8], maxDepth: Int = 32) throws(ProtocolError) -> JSONValue {
        try withBytes(of: bytes) { (buffer) throws(ProtocolError) -> JSONValue in
            try JSONNode.parse(buffer, maxDepth: maxDepth) { JSONValue($0) }
        }
    }

    subscript(key: String) -> JSONValue? {
        if case .object(let members) = self { return members[key] }
        return nil
    }

    var keys: Set<String> {
        if case .object(let members) = self { return Set(members.keys) }
        return []
    }
}

/// `Array.withUnsafeBytes` with a typed error (the standard library's only rethrows `any Error`).
func withBytes<T>(of bytes: [UInt8], _ body: (UnsafeRawBufferPointer) throws(ProtocolError) -> T) throws(ProtocolError) -> T {
    let result = bytes.withUnsafeBytes { buffer in
        Result { () throws(ProtocolError) -> T in try body(buffer) }
    }
    return try result.get()
}
