import Foundation
import Glibc
import PomodoroCluster
import PomodoroTestSupport
import Testing

/// Sentinels and a master that ask for a password (`requirepass` on each, `sentinel auth-pass` so the
/// sentinels reach the master and replica, `masterauth` so the replica follows the master): Debian's
/// `redis-server` and `redis-sentinel` on loopback. The credentials of a `redis-sentinel://` address are
/// given to the sentinels when they ask and to the master always; a missing or wrong password is a refusal
/// (`isAuthenticationRefused`: one error line and `/healthz` 503 on a node), and a failover is followed.
@Suite(.onOwnThreads, .timeLimit(.minutes(TestTime.minutes(2))))
struct RedisSentinelAuthTests {
    static let password = "s3cret:p@ss"

    /// `password` as it goes in a URL's credentials.
    static var escaped: String { password.replacingOccurrences(of: "%", with: "%25").replacingOccurrences(of: ":", with: "%3A")
        .replacingOccurrences(of: "@", with: "%40") }

    @Test func sentinelsAndMasterWithPasswordsAreFollowedThroughAFailover() throws {
        let master = try RedisTestServer(password: Self.password)
        defer { master.stop() }
        let replica = try RedisTestServer(password: Self.password, replicaOf: master.port)
        defer { replica.stop() }
        var sentinels: [RedisSentinelTestServer] = []
        defer { for sentinel in sentinels { sentinel.stop() } }
        for _ in 0..<3 { sentinels.append(try RedisSentinelTestServer(watching: master.port, password: Self.password)) }
        // The sentinels reach the master (auth-pass), its replica, and each other (their own requirepass).
        let ready = TestTime.waitUntil(20) {
            sentinels.allSatisfy { sentinel in
                (try? sentinel.masterField("num-slaves")).flatMap { $0.flatMap { Int($0) } } ?? 0 >= 1
                    && (try? sentinel.masterField("num-other-sentinels")).flatMap { $0.flatMap { Int($0) } } ?? 0 == 2
            }
        }
        try #require(ready, "the sentinels found each other and the replica with their passwords")
        // A sentinel asked without the password refuses: the address's credentials are what let a node in.
        #expect(throws: RedisError.self) {
            try RedisConnection(RedisAddress(host: "127.0.0.1", port: sentinels[0].port), timeout: 1).command(["PING"])
        }

        let url = RedisSentinelTestServer.url(sentinels, password: Self.escaped)
        let address = try RedisAddress(parsing: url)
        #expect(!address.redacted.contains("s3cret"))
        let leases = RedisLeases(address: address)
        guard case .granted(let epoch) = try leases.acquire(room: "auth-room", node: "a") else {
            Issue.record("the lease was not granted through the sentinels")
            return
        }
        let onMaster = RedisLeases(address: try RedisAddress(parsing: master.url))
        #expect(try onMaster.holder(room: "auth-room") == LeaseHolder(node: "a", epoch: epoch))

        // Without the password, or with a wrong one: refused, and said to be a refusal of the credentials.
        for wrong in [RedisSentinelTestServer.url(sentinels), RedisSentinelTestServer.url(sentinels, password: "wrong")] {
            do {
                _ = try RedisConnection(try RedisAddress(parsing: wrong), timeout: 1)
                Issue.record("\(wrong) was let in")
            } catch let error as RedisError {
                #expect(error.isAuthenticationRefused, "\(error.message)")
                #expect(!error.message.contains("s3cret"))
            }
        }

        // The master dies: the sentinels, with its password, promote the replica; the address follows.
        try master.crash()
        let promoted = TestTime.waitUntil(30) { sentinels.allSatisfy { (try? $0.masterPort()) == replica.port } }
        try #require(promoted, "the sentinels promoted the replica")
        let followed = TestTime.waitUntil(10) {
            guard let connection = try? RedisConnection(address, timeout: 1),
                  case .array(let info)? = try? connection.command(["ROLE"]) else { return false }
            return info.first?.text == "master"
                && (try? connection.command(["CONFIG", "GET", "port"])) == .array([.string("port"), .string("\(replica.port)")])
        }
        #expect(followed, "a new connection reached the promoted replica through the sentinels")
        guard case .granted? = try? RedisLeases(address: address).acquire(room: "auth-after", node: "b") else {
            Issue.record("no lease granted on the new master through the sentinels")
            return
        }
    }
}
