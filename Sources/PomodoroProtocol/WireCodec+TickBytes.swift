// A `tick` written straight into bytes: the message every member of every room gets each second, so the one
// the encoder makes most. The bytes are exactly what the json-c tree makes of it (`encodeThroughTree`: the
// same keys in the same order, integers in decimal, no spaces; TickBytesTests holds the two side by side),
// without building and freeing a tree of eight json-c objects per tick.

extension WireCodec {
    /// The tick's JSON, or nil when its room name holds a byte that JSON would escape (a room ID never does;
    /// the general path then writes it).
    static func tickBytes(_ tick: TickPayload) -> [UInt8]? {
        let room = tick.room.utf8
        guard room.allSatisfy(Self.needsNoEscape) else { return nil }
        var bytes = [UInt8]()
        bytes.reserveCapacity(150 + room.count)
        bytes.append(contentsOf: #"{"type":"tick","room":""#.utf8)
        bytes.append(contentsOf: room)
        bytes.append(contentsOf: #"","phase":""#.utf8)
        bytes.append(contentsOf: tick.phase.rawValue.utf8)
        bytes.append(contentsOf: #"","remainingMs":"#.utf8)
        appendDecimal(tick.remainingMs, to: &bytes)
        bytes.append(contentsOf: #","endsAt":"#.utf8)
        appendDecimal(tick.endsAt, to: &bytes)
        bytes.append(contentsOf: #","cycle":"#.utf8)
        appendDecimal(Int64(tick.cycle), to: &bytes)
        bytes.append(contentsOf: #","seq":"#.utf8)
        appendDecimal(tick.seq, to: &bytes)
        bytes.append(contentsOf: #","serverTime":"#.utf8)
        appendDecimal(tick.serverTime, to: &bytes)
        bytes.append(UInt8(ascii: "}"))
        return bytes
    }

    /// Printable ASCII other than `"` and `\`: what json-c writes as it is (with slashes unescaped).
    private static func needsNoEscape(_ byte: UInt8) -> Bool {
        byte >= 0x20 && byte < 0x7F && byte != UInt8(ascii: "\"") && byte != UInt8(ascii: "\\")
    }

    private static func appendDecimal(_ value: Int64, to bytes: inout [UInt8]) {
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        appendDecimal(value.magnitude, to: &bytes)
    }

    private static func appendDecimal(_ value: UInt64, to bytes: inout [UInt8]) {
        var scratch = (UInt64(0), UInt64(0), UInt64(0))  // 24 bytes: room for UInt64.max's 20 digits
        withUnsafeMutableBytes(of: &scratch) { buffer in
            var rest = value, start = buffer.count
            repeat {
                start -= 1
                buffer[start] = UInt8(ascii: "0") + UInt8(rest % 10)
                rest /= 10
            } while rest > 0
            bytes.append(contentsOf: buffer[start...])
        }
    }
}
