import PomodoroCluster
import Testing

@Suite struct RedisAddressTests {
    @Test func readsHostPortAndDatabase() throws {
        let address = try RedisAddress(parsing: "redis://cache.internal:6380/3")
        #expect(address == RedisAddress(host: "cache.internal", port: 6380, database: 3))
        #expect(try RedisAddress(parsing: "redis://10.0.0.5") == RedisAddress(host: "10.0.0.5"))
        #expect(try RedisAddress(parsing: "REDIS://[::1]:7000/") == RedisAddress(host: "::1", port: 7000))
    }

    @Test func readsCredentialsAndNeverShowsThePassword() throws {
        let address = try RedisAddress(parsing: "redis://ops:s3cr%40t@cache:6379/1")
        #expect(address.user == "ops")
        #expect(address.password == "s3cr@t")
        #expect(address.redacted == "redis://ops:***@cache:6379/1")
        #expect(!"\(address)".contains("s3cr"))
        let lone = try RedisAddress(parsing: "redis://:hunter2@cache")
        #expect(lone.user == nil && lone.password == "hunter2")
        #expect(lone.redacted == "redis://:***@cache:6379")
    }

    @Test(arguments: ["http://cache:6379", "redis://", "redis://cache:0", "redis://cache:99999",
                      "redis://cache:port", "redis://cache/-1", "redis://cache/db"])
    func refusesMalformedAddresses(_ text: String) {
        #expect(throws: RedisAddress.Invalid.self) { try RedisAddress(parsing: text) }
    }

    @Test func errorsNeverQuoteThePassword() {
        do {
            _ = try RedisAddress(parsing: "redis://:topsecret@cache:70000")
            Issue.record("accepted port 70000")
        } catch {
            #expect(!error.description.contains("topsecret"))
        }
    }
}
