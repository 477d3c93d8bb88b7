/// The key a per-address limit counts a client under.
///
/// An IPv4 address counts alone. An IPv6 address counts by its /64 network: one subscriber is usually
/// handed a whole /64, so keying by the full address would let a single host take 2^64 fresh addresses and
/// a fresh set of limits with each. An IPv4-mapped IPv6 address (`::ffff:192.0.2.7`) counts as the IPv4
/// address it carries. Anything that is not an address (a Unix socket's peer, "?") counts as itself.
public enum AddressKey {
    /// The key of `address` (`"192.0.2.7"`, `"2001:db8:1:2::/64"`).
    public static func of(_ address: String) -> String {
        var text = Substring(address)
        if text.hasPrefix("[") && text.hasSuffix("]") { text = text.dropFirst().dropLast() }
        // A zone (fe80::1%eth0) names the link, not the host: the address before it is what counts.
        if let percent = text.firstIndex(of: "%") { text = text[..<percent] }
        guard let parsed = IPAddress(text) else { return address }
        if parsed.isIPv4 { return parsed.description }
        return IPAddress(bytes: Array(parsed.bytes.prefix(8)) + Array(repeating: 0, count: 8)).description + "/64"
    }
}

extension IPAddress {
    /// The address of these 16 bytes.
    fileprivate init(bytes: [UInt8]) { self.bytes = bytes }
}
