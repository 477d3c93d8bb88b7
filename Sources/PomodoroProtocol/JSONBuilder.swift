// Writing JSON: compact text appended straight into bytes as the encoders go, with no tree in between.
//
// The output is byte for byte what json-c 0.16 wrote for the same values when the encoders built a json-c
// tree and serialized it with JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE (so the wire did not
// change when the tree went):
// - objects `{"k":v,"k2":v2}` in the order the keys were set, `{}` when empty; arrays `[a,b]`, `[]`; no spaces;
// - `null`, `true`, `false`; integers in decimal (`-` for negatives), UInt64 beyond Int64 too;
// - strings and keys as json-c's json_escape_str escapes them: `\b \n \r \t \f \" \\`, every other byte
//   below 0x20 (NUL too: strings are written by length) as `\u00xx` in lowercase hex, every other byte as it
//   is (`/`, DEL and UTF-8 included).
// JSONBuilderTests pins these rules.

/// A JSON object or array being written. Each `set` or `append` writes its member at once, so a builder
/// put into another (`set(key, builder)`, `append(builder)`) is copied there and must be complete by then:
/// it is closed, and writing into it afterwards is a programming error (checked in debug builds).
final class JSONBuilder {
    private var bytes: [UInt8]
    private let closing: UInt8
    private var isEmpty = true
    private var isClosed = false

    private init(opening: UInt8, closing: UInt8, capacity: Int) {
        bytes = []
        bytes.reserveCapacity(capacity)
        bytes.append(opening)
        self.closing = closing
    }

    /// An empty object; `capacity` is a guess of its length in bytes (it grows as needed).
    static func object(capacity: Int = 64) -> JSONBuilder {
        JSONBuilder(opening: UInt8(ascii: "{"), closing: UInt8(ascii: "}"), capacity: capacity)
    }

    /// An empty array of about `capacity` elements.
    static func array(capacity: Int) -> JSONBuilder {
        JSONBuilder(opening: UInt8(ascii: "["), closing: UInt8(ascii: "]"), capacity: 2 + 16 * min(max(capacity, 0), 1024))
    }

    /// A value chosen at the call site, for members that are null when there is nothing to say
    /// (`object.set("endsAt", endsAt.map(JSONBuilder.integer))`: nil writes `null`).
    enum Value {
        case null
        case integer(Int64)
        case string(String)
        /// A complete object or array.
        case json(JSONBuilder)
    }

    static func integer(_ value: Int64) -> Value { .integer(value) }
    static func string(_ value: String) -> Value { .string(value) }
    /// This object or array as a value (complete by the time it is set).
    var value: Value { .json(self) }

    // MARK: Objects

    /// Adds `value` under `key`. Keys are not checked for repeats: each encoder sets each key once.
    func set(_ key: StaticString, _ value: Value?) {
        member(key)
        write(value ?? .null)
    }
    func set(_ key: StaticString, _ value: String) {
        member(key)
        writeString(value)
    }
    func set(_ key: StaticString, _ value: Int64) {
        member(key)
        writeDecimal(value)
    }
    func set(_ key: StaticString, _ value: Int) {
        member(key)
        writeDecimal(Int64(value))
    }
    func set(_ key: StaticString, _ value: UInt64) {
        member(key)
        writeDecimal(value)
    }
    func set(_ key: StaticString, _ value: Bool) {
        member(key)
        writeLiteral(value ? "true" : "false")
    }
    func set(_ key: StaticString, _ value: JSONBuilder) {
        member(key)
        writeBuilder(value)
    }

    // MARK: Arrays

    func append(_ value: JSONBuilder) {
        element()
        writeBuilder(value)
    }
    func append(_ value: Value) {
        element()
        write(value)
    }

    // MARK: The result

    /// Closes this object or array and hands over its text.
    func serialize() -> [UInt8] {
        close()
        var result: [UInt8] = []
        swap(&result, &bytes)
        return result
    }

    // MARK: Writing

    private func close() {
        assert(!isClosed, "a JSON builder is closed once: when it is serialized or put into another")
        isClosed = true
        bytes.append(closing)
    }

    /// The separator and the key of the next member of an object.
    private func member(_ key: StaticString) {
        element()
        key.withUTF8Buffer(writeQuoted)
        bytes.append(UInt8(ascii: ":"))
    }

    /// The separator before the next element of an array (or member of an object).
    private func element() {
        assert(!isClosed, "a JSON builder was written into after it was put into another or serialized")
        if isEmpty { isEmpty = false } else { bytes.append(UInt8(ascii: ",")) }
    }

    private func write(_ value: Value) {
        switch value {
        case .null: writeLiteral("null")
        case .integer(let n): writeDecimal(n)
        case .string(let s): writeString(s)
        case .json(let builder): writeBuilder(builder)
        }
    }

    private func writeBuilder(_ child: JSONBuilder) {
        assert(child !== self, "a JSON builder cannot hold itself")
        child.close()
        bytes.append(contentsOf: child.bytes)
    }

    private func writeLiteral(_ text: StaticString) {
        text.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    private func writeString(_ value: String) {
        var value = value
        value.withUTF8(writeQuoted)
    }

    /// `utf8` in quotes, escaped as json_escape_str escapes it with JSON_C_TO_STRING_NOSLASHESCAPE. Runs of
    /// bytes that need no escape are copied whole.
    private func writeQuoted(_ utf8: UnsafeBufferPointer<UInt8>) {
        bytes.append(UInt8(ascii: "\""))
        var start = 0
        for i in utf8.indices {
            let c = utf8[i]
            guard c < 0x20 || c == UInt8(ascii: "\"") || c == UInt8(ascii: "\\") else { continue }
            if start < i { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start..<i])) }
            start = i + 1
            let short: UInt8
            switch c {
            case 0x08: short = UInt8(ascii: "b")
            case 0x0A: short = UInt8(ascii: "n")
            case 0x0D: short = UInt8(ascii: "r")
            case 0x09: short = UInt8(ascii: "t")
            case 0x0C: short = UInt8(ascii: "f")
            case UInt8(ascii: "\""), UInt8(ascii: "\\"): short = c
            default:
                // \u00xx, lowercase as json-c's json_hex_chars.
                let hex: StaticString = "0123456789abcdef"
                let digits = hex.utf8Start
                writeLiteral("\\u00")
                bytes.append(digits[Int(c >> 4)])
                bytes.append(digits[Int(c & 0xF)])
                continue
            }
            bytes.append(UInt8(ascii: "\\"))
            bytes.append(short)
        }
        if start < utf8.count { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start...])) }
        bytes.append(UInt8(ascii: "\""))
    }

    private func writeDecimal(_ value: Int64) {
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        writeDecimal(value.magnitude)
    }

    private func writeDecimal(_ value: UInt64) {
        var scratch = (UInt64(0), UInt64(0), UInt64(0))  // 24 bytes: room for UInt64.max's 20 digits
        withUnsafeMutableBytes(of: &scratch) { buffer in
            var rest = value, start = buffer.count
            repeat {
                start -= 1
                buffer[start] = UInt8(ascii: "0") + UInt8(rest % 10)
                rest /= 10
            } while rest > 0
            bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[start...]))
        }
    }
}
