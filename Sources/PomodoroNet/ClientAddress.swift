import Glibc

/// An IPv4 or IPv6 address, kept as 16 bytes: IPv4 as its IPv4-mapped IPv6 form (`::ffff:a.b.c.d`), so that a
/// peer an IPv6 socket reports as `::ffff:127.0.0.1` is the same address as `127.0.0.1`.
public struct IPAddress: Hashable, Sendable, CustomStringConvertible {
    public let bytes: [UInt8]

    /// Parses `192.0.2.1`, `2001:db8::1` or `::ffff:192.0.2.1`; nil for anything else (no ports, brackets,
    /// zones or spaces).
    public init?(_ text: some StringProtocol) {
        var v4 = in_addr()
        var v6 = in6_addr()
        let text = String(text)
        // inet_pton would stop at a NUL and read what comes before it as the whole address.
        guard text.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else { return nil }
        if !text.contains(":"), inet_pton(AF_INET, text, &v4) == 1 {
            bytes = Array(repeating: 0, count: 10) + [0xFF, 0xFF] + withUnsafeBytes(of: v4) { Array($0) }
        } else if inet_pton(AF_INET6, text, &v6) == 1 {
            bytes = withUnsafeBytes(of: v6) { Array($0) }
        } else {
            return nil
        }
    }

    /// Whether this is an IPv4 address (or an IPv4-mapped IPv6 one).
    public var isIPv4: Bool { bytes.prefix(10).allSatisfy { $0 == 0 } && bytes[10] == 0xFF && bytes[11] == 0xFF }

    /// Dotted for IPv4, RFC 5952 for IPv6: the form logs and per-address counts use.
    public var description: String {
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        if isIPv4 {
            var v4 = in_addr()
            withUnsafeMutableBytes(of: &v4) { $0.copyBytes(from: bytes[12...]) }
            inet_ntop(AF_INET, &v4, &buffer, socklen_t(buffer.count))
        } else {
            var v6 = in6_addr()
            withUnsafeMutableBytes(of: &v6) { $0.copyBytes(from: bytes) }
            inet_ntop(AF_INET6, &v6, &buffer, socklen_t(buffer.count))
        }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// A block of addresses in CIDR notation: `10.0.0.0/8`, `2001:db8::/32`, or one address (`127.0.0.1`, a /32;
/// `::1`, a /128). An IPv4 block also holds the IPv4-mapped IPv6 forms of its addresses.
public struct AddressRange: Hashable, Sendable, CustomStringConvertible {
    public let network: IPAddress
    /// Leading bits that must match, counted on the 128-bit form (an IPv4 /8 is 104 here).
    let bits: Int

    public init?(_ text: some StringProtocol) {
        let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard let address = IPAddress(parts[0]) else { return nil }
        let width = address.isIPv4 ? 32 : 128
        var prefix = width
        if parts.count == 2 {
            guard let given = Int(parts[1]), (0...width).contains(given), parts[1].allSatisfy(\.isASCII),
                  !parts[1].hasPrefix("+") else { return nil }
            prefix = given
        }
        bits = prefix + (128 - width)
        network = address
    }

    public func contains(_ address: IPAddress) -> Bool {
        for index in 0..<16 {
            let taken = min(8, max(0, bits - index * 8))
            if taken == 0 { break }
            let mask = UInt8(truncatingIfNeeded: 0xFF << (8 - taken))
            if network.bytes[index] & mask != address.bytes[index] & mask { return false }
        }
        return true
    }

    public var description: String { "\(network)/\(network.isIPv4 ? bits - 96 : bits)" }
}

/// The peers whose word on the client's address is taken: reverse proxies in front of the server.
///
/// From a trusted peer the client's address is read from `X-Forwarded-For` or, when that is absent, from the
/// standard `Forwarded` header (its `for=` parameters): the list is walked from the right, each hop a proxy
/// appended, skipping the addresses that are themselves trusted; the first other one is the client. A hop that
/// is not an address (`unknown`, an obfuscated name, garbage) before that point makes the header worthless, and
/// so does a list of trusted hops only with anything unreadable in it: the peer's own address is used then.
/// From any other peer both headers are ignored, whatever they say.
public struct TrustedProxies: Hashable, Sendable {
    public var ranges: [AddressRange]

    public init(_ ranges: [AddressRange] = []) { self.ranges = ranges }

    public static let none = TrustedProxies()

    public func trusts(_ address: IPAddress) -> Bool { ranges.contains { $0.contains(address) } }

    /// The client's address for a connection from `peer` (as the socket names it) that carried these headers.
    /// An untrusted peer's address is returned as given; any other in canonical form (`IPAddress.description`).
    public func clientAddress(peer: String, forwardedFor: String?, forwarded: String?) -> String {
        guard !ranges.isEmpty, let peerAddress = IPAddress(peer), trusts(peerAddress) else { return peer }
        // The proxy's own address, in the same form as the addresses it forwards.
        let peer = peerAddress.description
        let hops: [Substring]?
        if let forwardedFor {
            hops = forwardedFor.split(separator: ",", omittingEmptySubsequences: false)
        } else if let forwarded {
            hops = Self.forHops(forwarded)
        } else {
            return peer
        }
        guard let hops, !hops.isEmpty else { return peer }
        var leftmost: IPAddress?
        for hop in hops.reversed() {
            guard let address = Self.address(ofHop: hop) else { return peer }
            if !trusts(address) { return address.description }
            leftmost = address
        }
        // Every hop is a trusted address: the client is one of ours, the furthest one named.
        return leftmost?.description ?? peer
    }

    /// One hop of either header: an address, possibly with a port, an IPv6 one in brackets (and, in
    /// `Forwarded`, in quotes).
    static func address(ofHop hop: Substring) -> IPAddress? {
        var text = hop.trimmingSpaces()
        if text.hasPrefix("\""), text.hasSuffix("\""), text.count >= 2 { text = text.dropFirst().dropLast() }
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { return nil }
            let rest = text[text.index(after: close)...]
            guard rest.isEmpty || Self.isPort(rest) else { return nil }
            return IPAddress(text[text.index(after: text.startIndex)..<close])
        }
        let colons = text.count { $0 == ":" }
        if colons == 1, let colon = text.firstIndex(of: ":") {
            guard Self.isPort(text[colon...]) else { return nil }
            return IPAddress(text[..<colon])
        }
        return IPAddress(text)
    }

    /// `:` and 1 to 5 digits.
    private static func isPort(_ text: Substring) -> Bool {
        let digits = text.dropFirst()
        return text.first == ":" && (1...5).contains(digits.count) && digits.allSatisfy { $0.isASCII && $0.isNumber }
    }

    /// The `for=` value of each element of a `Forwarded` header (RFC 7239), left to right; nil when the header
    /// does not parse, or an element names no `for`.
    static func forHops(_ header: String) -> [Substring]? {
        var hops: [Substring] = []
        for element in splitOutsideQuotes(Substring(header), at: ",") {
            var found: Substring?
            for pair in splitOutsideQuotes(element, at: ";") {
                let pair = pair.trimmingSpaces()
                if pair.isEmpty { continue }
                guard let equals = pair.firstIndex(of: "=") else { return nil }
                let name = pair[..<equals].trimmingSpaces().lowercased()
                let value = pair[pair.index(after: equals)...].trimmingSpaces()
                if name == "for" {
                    guard found == nil else { return nil }
                    found = value
                }
            }
            guard let found else { return nil }
            hops.append(found)
        }
        return hops
    }

    private static func splitOutsideQuotes(_ text: Substring, at separator: Character) -> [Substring] {
        var pieces: [Substring] = []
        var start = text.startIndex
        var quoted = false
        var index = text.startIndex
        while index < text.endIndex {
            let character = text[index]
            if character == "\"" { quoted.toggle() }
            if character == separator && !quoted {
                pieces.append(text[start..<index])
                start = text.index(after: index)
            }
            index = text.index(after: index)
        }
        pieces.append(text[start...])
        return pieces
    }
}

extension Substring {
    fileprivate func trimmingSpaces() -> Substring {
        var text = self
        while let first = text.first, first == " " || first == "\t" { text = text.dropFirst() }
        while let last = text.last, last == " " || last == "\t" { text = text.dropLast() }
        return text
    }
}
