/// Whether a host names this machine only. A load generator pointed elsewhere by mistake would be an
/// attack on someone's server, so `pomo-bench` refuses any other address unless told otherwise.
public enum Loopback {
    /// True for `localhost`, 127.0.0.0/8 written as a dotted quad, and `::1` (in any of its spellings,
    /// including the IPv4-mapped `::ffff:127.x.y.z`).
    public static func isLoopback(_ host: String) -> Bool {
        var name = host.lowercased()
        if name.hasPrefix("["), name.hasSuffix("]") { name = String(name.dropFirst().dropLast()) }
        if name == "localhost" || name == "localhost." { return true }
        if let quad = ipv4(name) { return quad.0 == 127 }
        guard name.contains(":") else { return false }
        if name.hasPrefix("::ffff:"), let quad = ipv4(String(name.dropFirst(7))) { return quad.0 == 127 }
        return ipv6IsLoopback(name)
    }

    /// The four parts of a dotted-quad IPv4 address, each 0–255.
    private static func ipv4(_ text: String) -> (UInt8, UInt8, UInt8, UInt8)? {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4 else { return nil }
        var bytes: [UInt8] = []
        for part in parts {
            guard !part.isEmpty, part.count <= 3, part.allSatisfy(\.isASCII), let value = UInt8(part) else {
                return nil
            }
            bytes.append(value)
        }
        return (bytes[0], bytes[1], bytes[2], bytes[3])
    }

    /// `::1` however it is written: seven zero groups and a final 1, with `::` standing for zeros.
    private static func ipv6IsLoopback(_ text: String) -> Bool {
        let halves = text.split(separator: "::", omittingEmptySubsequences: false).map(String.init)
        guard halves.count <= 2 else { return false }
        func groups(_ part: String) -> [UInt16]? {
            if part.isEmpty { return [] }
            var values: [UInt16] = []
            for group in part.split(separator: ":", omittingEmptySubsequences: false) {
                guard (1...4).contains(group.count), let value = UInt16(group, radix: 16) else { return nil }
                values.append(value)
            }
            return values
        }
        guard let head = groups(halves[0]) else { return false }
        var all = head
        if halves.count == 2 {
            guard let tail = groups(halves[1]), head.count + tail.count < 8 else { return false }
            all += [UInt16](repeating: 0, count: 8 - head.count - tail.count) + tail
        }
        return all == [0, 0, 0, 0, 0, 0, 0, 1]
    }
}
