import Foundation
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

    @Test func readsSentinelsAndTheMastersName() throws {
        let address = try RedisAddress(parsing: "redis-sentinel://:s3cret@10.0.0.7,10.0.0.8:26380,[::1]:26381/pomo-main/2")
        #expect(address.sentinels == [.init(host: "10.0.0.7", port: 26_379), .init(host: "10.0.0.8", port: 26_380),
                                      .init(host: "::1", port: 26_381)])
        #expect(address.masterName == "pomo-main" && address.database == 2 && address.password == "s3cret")
        #expect(address.redacted == "redis-sentinel://:***@10.0.0.7:26379,10.0.0.8:26380,[::1]:26381/pomo-main/2")
        #expect(try RedisAddress(parsing: address.redacted.replacingOccurrences(of: "***", with: "s3cret")) == address)
    }

    @Test(arguments: ["redis-sentinel://s1,s2", "redis-sentinel://s1/", "redis-sentinel:///pomo",
                      "redis-sentinel://s1,,s2/pomo", "redis-sentinel://s1:0/pomo", "redis-sentinel://s1/po mo",
                      "redis-sentinel://s1/pomo/x", "redis-sentinel://s1/pomo/1/2"])
    func refusesMalformedSentinelAddresses(_ text: String) {
        #expect(throws: RedisAddress.Invalid.self) { try RedisAddress(parsing: text) }
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
