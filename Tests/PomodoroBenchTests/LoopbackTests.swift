import PomodoroBench
import Testing

/// The generator talks to this machine only, unless told otherwise.
@Suite struct LoopbackTests {
    @Test(arguments: ["127.0.0.1", "127.1.2.3", "127.255.255.255", "localhost", "LOCALHOST", "::1", "[::1]",
                      "0:0:0:0:0:0:0:1", "0000::0001", "::ffff:127.0.0.1"])
    func loopbackAddressesAreAccepted(_ host: String) {
        #expect(Loopback.isLoopback(host))
    }

    @Test(arguments: ["10.0.0.1", "128.0.0.1", "0.0.0.0", "192.168.1.127", "example.com", "localhost.example.com",
                      "::", "::2", "1::1", "fe80::1", "::ffff:10.0.0.1", "127.0.0", "127.0.0.1.5", "127.0.0.256",
                      "1:2:3:4:5:6:7:8:9", "", "127.0.0.1:8080"])
    func otherAddressesAreRefused(_ host: String) {
        #expect(!Loopback.isLoopback(host))
    }
}
