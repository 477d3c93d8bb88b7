import PomodoroNet
import PomodoroTestSupport
import Testing

@Suite struct AddressRangeTests {
    @Test func parsesAddressesAndBlocks() throws {
        #expect(AddressRange("127.0.0.1")?.description == "127.0.0.1/32")
        #expect(AddressRange("10.0.0.0/8")?.description == "10.0.0.0/8")
        #expect(AddressRange("::1")?.description == "::1/128")
        #expect(AddressRange("2001:DB8:0:0::/32")?.description == "2001:db8::/32")
        #expect(AddressRange("0.0.0.0/0")?.description == "0.0.0.0/0")
        for bad in ["", "localhost", "127.0.0.1/33", "::1/129", "10.0.0.0/-1", "10.0.0.0/+8", "10.0.0/8", "10.0.0.0/",
                    "10.0.0.0/8/8", "[::1]", "127.0.0.1:80", " 127.0.0.1", "fe80::1%eth0", "1.2.3.4/٨"] {
            #expect(AddressRange(bad) == nil, "\(bad)")
        }
    }

    @Test func matchesIPv4BlocksWithMappedPeersToo() throws {
        let loopback = try #require(AddressRange("127.0.0.0/8"))
        for inside in ["127.0.0.1", "127.255.255.254", "::ffff:127.0.0.1", "::FFFF:127.1.2.3"] {
            #expect(loopback.contains(try #require(IPAddress(inside))), "\(inside)")
        }
        for outside in ["128.0.0.1", "126.255.255.255", "::1", "::127.0.0.1", "::ffff:10.0.0.1"] {
            #expect(!loopback.contains(try #require(IPAddress(outside))), "\(outside)")
        }
        let one = try #require(AddressRange("192.168.1.10"))
        #expect(one.contains(try #require(IPAddress("192.168.1.10"))))
        #expect(!one.contains(try #require(IPAddress("192.168.1.11"))))
        let odd = try #require(AddressRange("172.16.0.0/12"))
        #expect(odd.contains(try #require(IPAddress("172.31.255.255"))))
        #expect(!odd.contains(try #require(IPAddress("172.32.0.0"))))
        #expect(try #require(AddressRange("0.0.0.0/0")).contains(try #require(IPAddress("203.0.113.9"))))
        #expect(!(try #require(AddressRange("0.0.0.0/0"))).contains(try #require(IPAddress("2001:db8::1"))))
    }

    @Test func matchesIPv6Blocks() throws {
        let block = try #require(AddressRange("2001:db8:cafe::/48"))
        #expect(block.contains(try #require(IPAddress("2001:db8:cafe:1::17"))))
        #expect(!block.contains(try #require(IPAddress("2001:db8:caff::17"))))
        let local = try #require(AddressRange("::1/128"))
        #expect(local.contains(try #require(IPAddress("0:0:0:0:0:0:0:1"))))
        #expect(!local.contains(try #require(IPAddress("127.0.0.1"))))
    }

    @Test func addressesPrintCanonically() {
        #expect(IPAddress("::ffff:127.0.0.1")?.description == "127.0.0.1")
        #expect(IPAddress("2001:0DB8:0000::0001")?.description == "2001:db8::1")
        #expect(IPAddress("010.1.2.3") == nil, "no octal guesses")
        #expect(IPAddress("1.2.3.4\u{0}5") == nil && IPAddress("1.2.3.4 ") == nil && IPAddress("１.2.3.4") == nil)
    }
}

@Suite struct TrustedProxiesTests {
    let proxies = TrustedProxies([AddressRange("127.0.0.1")!, AddressRange("10.0.0.0/8")!, AddressRange("::1")!])

    private func client(_ peer: String, xff: String? = nil, forwarded: String? = nil) -> String {
        proxies.clientAddress(peer: peer, forwardedFor: xff, forwarded: forwarded)
    }

    @Test func takesTheRightmostUntrustedHopOfXForwardedFor() {
        #expect(client("127.0.0.1", xff: "203.0.113.9") == "203.0.113.9")
        // The client may send any X-Forwarded-For; the proxy appends what it saw: only that counts.
        #expect(client("127.0.0.1", xff: "1.1.1.1, 203.0.113.9") == "203.0.113.9")
        #expect(client("127.0.0.1", xff: "1.1.1.1, 203.0.113.9, 10.1.2.3") == "203.0.113.9", "a trusted hop is skipped")
        #expect(client("::ffff:127.0.0.1", xff: "203.0.113.9") == "203.0.113.9", "a mapped peer is trusted")
        #expect(client("::1", xff: "2001:db8::7") == "2001:db8::7")
        #expect(client("127.0.0.1", xff: "203.0.113.9:51234") == "203.0.113.9", "a port is dropped")
        #expect(client("127.0.0.1", xff: "[2001:db8::7]:51234") == "2001:db8::7")
        #expect(client("127.0.0.1", xff: "::ffff:203.0.113.9") == "203.0.113.9")
        #expect(client("127.0.0.1", xff: "10.0.0.5, 127.0.0.1") == "10.0.0.5", "all trusted: the furthest one")
    }

    @Test func malformedHeadersFallBackToThePeer() {
        for xff in ["", " ", "unknown", "203.0.113.9, nonsense", "203.0.113.9,,", "203.0.113.9; 1.2.3.4",
                    "203.0.113.999", "[2001:db8::7", "203.0.113.9:port", "nonsense, 10.0.0.1"] {
            #expect(client("127.0.0.1", xff: xff) == "127.0.0.1", "\(xff)")
        }
        // Garbage left of the client's hop is the client's own doing and changes nothing.
        #expect(client("127.0.0.1", xff: "nonsense, 203.0.113.9") == "203.0.113.9")
    }

    @Test func readsTheForwardedHeader() {
        #expect(client("127.0.0.1", forwarded: "for=203.0.113.9") == "203.0.113.9")
        #expect(client("127.0.0.1", forwarded: "for=192.0.2.60;proto=http;by=203.0.113.43") == "192.0.2.60")
        #expect(client("127.0.0.1", forwarded: "For=\"[2001:db8:cafe::17]:4711\"") == "2001:db8:cafe::17")
        #expect(client("127.0.0.1", forwarded: "for=1.1.1.1, for=203.0.113.9;proto=https, for=10.0.0.2") == "203.0.113.9")
        #expect(client("127.0.0.1", forwarded: "for=\"203.0.113.9:80\"") == "203.0.113.9")
        #expect(client("127.0.0.1", forwarded: "for=[2001:db8::1]") == "2001:db8::1", "unquoted, as some proxies send it")
        #expect(client("127.0.0.1", forwarded: "proto=https;for=\"a;b,c\", for=203.0.113.9") == "203.0.113.9",
                "separators inside quotes do not split")
        for bad in ["for=unknown", "for=_hidden", "proto=https", "for=203.0.113.9;for=1.1.1.1", "for",
                    "for=1.1.1.1, by=10.0.0.1", "for=\"[2001:db8::1]:x\""] {
            #expect(client("127.0.0.1", forwarded: bad) == "127.0.0.1", "\(bad)")
        }
        #expect(client("127.0.0.1", xff: "198.51.100.1", forwarded: "for=203.0.113.9") == "198.51.100.1",
                "X-Forwarded-For comes first")
    }

    @Test func anUntrustedPeerIsTakenAsItIs() {
        #expect(client("192.0.2.1", xff: "203.0.113.9") == "192.0.2.1")
        #expect(client("192.0.2.1", forwarded: "for=203.0.113.9") == "192.0.2.1")
        #expect(client("11.0.0.1", xff: "203.0.113.9") == "11.0.0.1")
        #expect(client("?", xff: "203.0.113.9") == "?")
        #expect(TrustedProxies.none.clientAddress(peer: "127.0.0.1", forwardedFor: "203.0.113.9", forwarded: nil)
                == "127.0.0.1")
        #expect(client("127.0.0.1") == "127.0.0.1", "a trusted peer without the headers is the client")
        #expect(client("::ffff:127.0.0.1", xff: "unknown") == "127.0.0.1", "in the form forwarded addresses take")
    }
}
