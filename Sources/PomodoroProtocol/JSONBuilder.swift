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
    // The bytes live in a struct written through one access per member: a class's own array property has
    // each append checked for exclusive access (1.2 µs to write a tick instead of 0.5). The struct keeps
    // them in a buffer of its own, as Array's appends of a few bytes each cost more than the bytes.
    private var text: JSONText

    private init(opening: UInt8, closing: UInt8, capacity: Int) {
        text = JSONText(opening: opening, closing: closing, capacity: capacity)
    }

    /// An empty object; `capacity` is a guess of its length in bytes (it grows as needed).
    static func object(capacity: Int = 64) -> JSONBuilder {
        JSONBuilder(opening: UInt8(ascii: "{"), closing: UInt8(ascii: "}"), capacity: capacity)
    }

    /// An array of `list`'s strings.
    static func strings(_ list: [String]) -> JSONBuilder {
        let array = JSONBuilder.array(capacity: list.count)
        for item in list { array.append(.string(item)) }
        return array
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

    // Keys are not checked for repeats: each encoder sets each key once.

    func set(_ key: StaticString, _ value: Value?) {
        switch value ?? .null {
        case .null: text.member(key, literal: "null")
        case .integer(let n): text.member(key, n)
        case .string(let s): text.member(key, s)
        case .json(let builder): set(key, builder)
        }
    }
    func set(_ key: StaticString, _ value: String) { text.member(key, value) }
    func set(_ key: StaticString, _ value: Int64) { text.member(key, value) }
    func set(_ key: StaticString, _ value: Int) { text.member(key, Int64(value)) }
    func set(_ key: StaticString, _ value: UInt64) { text.member(key, value) }
    func set(_ key: StaticString, _ value: Bool) { text.member(key, literal: value ? "true" : "false") }
    func set(_ key: StaticString, _ value: JSONBuilder) {
        assert(value !== self, "a JSON builder cannot hold itself")
        value.text.close()
        text.member(key, json: value.text)
    }

    // MARK: Arrays

    func append(_ value: JSONBuilder) {
        assert(value !== self, "a JSON builder cannot hold itself")
        value.text.close()
        text.element(json: value.text)
    }
    func append(_ value: Value) {
        switch value {
        case .null: text.element(literal: "null")
        case .integer(let n): text.element(n)
        case .string(let s): text.element(s)
        case .json(let builder): append(builder)
        }
    }

    // MARK: The result

    /// Closes this object or array and hands over its text.
    func serialize() -> [UInt8] {
        text.close()
        return text.bytes
    }
}

/// The bytes of one object or array, and the writing of its members.
private struct JSONText: ~Copyable {
    private var base: UnsafeMutablePointer<UInt8>
    private var count = 0
    private var capacity: Int
    private let closing: UInt8
    private var isEmpty = true
    private var isClosed = false

    init(opening: UInt8, closing: UInt8, capacity: Int) {
        self.capacity = max(capacity, 16)
        base = .allocate(capacity: self.capacity)
        self.closing = closing
        put(opening)
    }

    deinit { base.deallocate() }

    mutating func member(_ key: StaticString, _ value: String) {
        name(key)
        string(value)
    }
    mutating func member(_ key: StaticString, _ value: Int64) {
        name(key)
        decimal(value)
    }
    mutating func member(_ key: StaticString, _ value: UInt64) {
        name(key)
        decimal(value)
    }
    mutating func member(_ key: StaticString, literal: StaticString) {
        name(key)
        literal.withUTF8Buffer { put($0) }
    }
    mutating func member(_ key: StaticString, json: borrowing JSONText) {
        name(key)
        put(json.buffer)
    }

    mutating func element(_ value: String) {
        separator()
        string(value)
    }
    mutating func element(_ value: Int64) {
        separator()
        decimal(value)
    }
    mutating func element(literal: StaticString) {
        separator()
        literal.withUTF8Buffer { put($0) }
    }
    mutating func element(json: borrowing JSONText) {
        separator()
        put(json.buffer)
    }

    /// Writes the closing bracket: the text is complete.
    mutating func close() {
        assert(!isClosed, "a JSON builder is closed once: when it is serialized or put into another")
        isClosed = true
        put(closing)
    }

    /// The text so far, copied out.
    var bytes: [UInt8] { [UInt8](buffer) }

    private var buffer: UnsafeBufferPointer<UInt8> { UnsafeBufferPointer(start: base, count: count) }

    // MARK: Bytes

    /// Room for `more` bytes after the text.
    @inline(__always)
    private mutating func reserve(_ more: Int) {
        guard count + more > capacity else { return }
        capacity = max(count + more, 2 * capacity)
        let grown = UnsafeMutablePointer<UInt8>.allocate(capacity: capacity)
        grown.initialize(from: base, count: count)
        base.deallocate()
        base = grown
    }

    @inline(__always)
    private mutating func put(_ byte: UInt8) {
        reserve(1)
        base[count] = byte
        count += 1
    }

    @inline(__always)
    private mutating func put(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let source = bytes.baseAddress, !bytes.isEmpty else { return }
        reserve(bytes.count)
        (base + count).initialize(from: source, count: bytes.count)
        count += bytes.count
    }

    // MARK: JSON

    /// The separator before the next element of an array or member of an object.
    private mutating func separator() {
        assert(!isClosed, "a JSON builder was written into after it was put into another or serialized")
        if isEmpty { isEmpty = false } else { put(UInt8(ascii: ",")) }
    }

    /// The separator and the key of the next member of an object.
    private mutating func name(_ key: StaticString) {
        separator()
        key.withUTF8Buffer { quoted($0) }
        put(UInt8(ascii: ":"))
    }

    private mutating func string(_ value: String) {
        var value = value
        value.withUTF8 { quoted($0) }
    }

    /// `utf8` in quotes, escaped as json_escape_str escapes it with JSON_C_TO_STRING_NOSLASHESCAPE. Runs of
    /// bytes that need no escape are copied whole, found eight bytes at a time.
    private mutating func quoted(_ utf8: UnsafeBufferPointer<UInt8>) {
        reserve(utf8.count + 2)
        put(UInt8(ascii: "\""))
        var start = 0, i = 0
        let raw = UnsafeRawBufferPointer(utf8)
        while i < utf8.count {
            if i + 8 <= utf8.count && !Self.mayNeedEscape(raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)) {
                i += 8
                continue
            }
            let c = utf8[i]
            i += 1
            guard c < 0x20 || c == UInt8(ascii: "\"") || c == UInt8(ascii: "\\") else { continue }
            put(UnsafeBufferPointer(rebasing: utf8[start..<(i - 1)]))
            start = i
            put(UInt8(ascii: "\\"))
            switch c {
            case 0x08: put(UInt8(ascii: "b"))
            case 0x0A: put(UInt8(ascii: "n"))
            case 0x0D: put(UInt8(ascii: "r"))
            case 0x09: put(UInt8(ascii: "t"))
            case 0x0C: put(UInt8(ascii: "f"))
            case UInt8(ascii: "\""), UInt8(ascii: "\\"): put(c)
            default:
                // u00xx, in lowercase hex as json-c's json_hex_chars.
                let hex: StaticString = "0123456789abcdef"
                put(UInt8(ascii: "u"))
                put(UInt8(ascii: "0"))
                put(UInt8(ascii: "0"))
                put(hex.utf8Start[Int(c >> 4)])
                put(hex.utf8Start[Int(c & 0xF)])
            }
        }
        put(UnsafeBufferPointer(rebasing: utf8[start...]))
        put(UInt8(ascii: "\""))
    }

    /// Whether any of the eight bytes in `word` is below 0x20, a quote or a backslash (never false when one
    /// is; the byte loop then looks at them one by one).
    @inline(__always)
    private static func mayNeedEscape(_ word: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
        func hasZeroByte(_ v: UInt64) -> Bool { (v &- ones) & ~v & highs != 0 }
        let below0x20 = (word &- 0x20 &* ones) & ~word & highs != 0
        return below0x20 || hasZeroByte(word ^ (0x22 &* ones)) || hasZeroByte(word ^ (0x5C &* ones))
    }

    private mutating func decimal(_ value: Int64) {
        if value < 0 { put(UInt8(ascii: "-")) }
        decimal(value.magnitude)
    }

    private mutating func decimal(_ value: UInt64) {
        var scratch = (UInt64(0), UInt64(0), UInt64(0))  // 24 bytes: room for UInt64.max's 20 digits
        withUnsafeMutableBytes(of: &scratch) { digits in
            var rest = value, start = digits.count
            repeat {
                start -= 1
                digits[start] = UInt8(ascii: "0") + UInt8(rest % 10)
                rest /= 10
            } while rest > 0
            put(UnsafeRawBufferPointer(rebasing: digits[start...]).assumingMemoryBound(to: UInt8.self))
        }
    }
}
