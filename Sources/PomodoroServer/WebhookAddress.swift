/// Which addresses a webhook may reach: public unicast only, unless the operator allows the rest
/// (`--webhook-allow-private`). Asked with the address a connection is about to be made to, after
/// resolution, at every attempt, so a name that resolves elsewhere later (DNS rebinding) is still refused.
enum WebhookAddress {
    /// Why `bytes` (4 bytes of IPv4 or 16 of IPv6, network order) is not a public address, or nil when it is.
    static func refusal(_ bytes: [UInt8]) -> String? {
        if bytes.count == 4 { return refusalV4(bytes) }
        guard bytes.count == 16 else { return "not an IP address" }
        if bytes[0..<15].allSatisfy({ $0 == 0 }) { return bytes[15] == 1 ? "loopback" : "unspecified" }
        // IPv4-mapped (::ffff:a.b.c.d) and NAT64 (64:ff9b::a.b.c.d) reach the IPv4 address inside.
        if bytes[0..<10].allSatisfy({ $0 == 0 }) && bytes[10] == 0xff && bytes[11] == 0xff {
            return refusalV4(Array(bytes[12..<16]))
        }
        if bytes[0..<12] == [0x00, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0] { return refusalV4(Array(bytes[12..<16])) }
        if bytes[0] == 0xfe && bytes[1] & 0xc0 == 0x80 { return "link-local" }
        if bytes[0] & 0xfe == 0xfc { return "private (unique local)" }
        if bytes[0] == 0xff { return "multicast" }
        if bytes[0] == 0x20 && bytes[1] == 0x01 && bytes[2] == 0x0d && bytes[3] == 0xb8 { return "documentation" }
        return nil
    }

    private static func refusalV4(_ b: [UInt8]) -> String? {
        switch (b[0], b[1]) {
        case (0, _): return "unspecified"
        case (10, _), (172, 16...31), (192, 168): return "private"
        case (100, 64...127): return "shared (carrier-grade NAT)"
        case (127, _): return "loopback"
        case (169, 254): return b[2] == 169 && b[3] == 254 ? "metadata" : "link-local"
        case (192, 0) where b[2] == 0: return "reserved"
        case (198, 18...19): return "benchmarking"
        case (224...239, _): return "multicast"
        case (240...255, _): return "reserved"
        default: return nil
        }
    }

    /// Whether `url` is one a webhook may have: http or https, a host, at most 2,000 bytes of printable
    /// ASCII (it goes to libcurl as a C string, so it may hold no NUL), no user or password in it.
    static func urlProblem(_ url: String) -> String? {
        let bytes = Array(url.utf8)
        guard !bytes.isEmpty, bytes.count <= 2000, bytes.allSatisfy({ (0x21...0x7e).contains($0) }) else {
            return "must be at most 2,000 characters of printable ASCII with no spaces"
        }
        let lower = url.lowercased()
        guard let schemeEnd = lower.range(of: "://"), ["http", "https"].contains(String(lower[..<schemeEnd.lowerBound])) else {
            return "must start with http:// or https://"
        }
        let authority = lower[schemeEnd.upperBound...].prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        if authority.isEmpty { return "must name a host" }
        if authority.contains("@") { return "must not carry a user or password" }
        return nil
    }
}
