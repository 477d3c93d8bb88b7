import Glibc

/// The key a per-address limit counts a client under.
///
/// An IPv4 address counts alone. An IPv6 address counts by its /64 network: one subscriber is usually
/// handed a whole /64, so keying by the full address would let a single host take 2^64 fresh addresses and
/// a fresh set of limits with each. An IPv4-mapped IPv6 address (`::ffff:192.0.2.7`) counts as the IPv4
/// address it carries. Anything that is not an address (a Unix socket's peer, "?") counts as itself.
public enum AddressKey {
    /// The key of `address` (`"192.0.2.7"`, `"2001:db8:1:2::/64"`).
    public static func of(_ address: String) -> String {
        guard address.contains(":") else { return address }
        var bytes = in6_addr()
        let text = address.hasPrefix("[") && address.hasSuffix("]") ? String(address.dropFirst().dropLast()) : address
        // A zone (fe80::1%eth0) names the link, not the host: the address before it is what counts.
        let bare = text.split(separator: "%", maxSplits: 1).first.map(String.init) ?? text
        guard inet_pton(AF_INET6, bare, &bytes) == 1 else { return address }
        var octets = withUnsafeBytes(of: bytes) { Array($0) }
        if octets[0..<10].allSatisfy({ $0 == 0 }) && octets[10] == 0xff && octets[11] == 0xff {
            return octets[12...].map(String.init).joined(separator: ".")
        }
        for index in 8..<16 { octets[index] = 0 }
        let groups = stride(from: 0, to: 8, by: 2).map { String(UInt16(octets[$0]) << 8 | UInt16(octets[$0 + 1]), radix: 16) }
        return groups.joined(separator: ":") + "::/64"
    }
}
