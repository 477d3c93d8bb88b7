import PomodoroServerCLI
import PomodoroTestSupport
import Testing

/// `--cluster` and `--node-id`: read from the three places, the password never shown, and a cluster node
/// refused a database the nodes cannot share.
@Suite(.computing)
struct ClusterOptionTests {
    static let postgres = "postgres://focus@db/pomodoro"

    @Test func theClusterAndNodeComeFromTheOptionTheEnvironmentOrTheFile() throws {
        let byOption = try resolve(["--cluster", "redis://:s3cret@redis:6380/2", "--node-id", "n1", "--db", Self.postgres])
        let cluster = try #require(byOption.settings.clusterConfiguration)
        #expect(cluster.node == "n1")
        #expect(cluster.redis.host == "redis" && cluster.redis.port == 6380 && cluster.redis.database == 2)
        #expect(cluster.redis.password == "s3cret")

        let byEnvironment = try resolve([], environment: ["POMODORO_CLUSTER": "redis://redis", "POMODORO_DB": Self.postgres])
        #expect(byEnvironment.settings.clusterConfiguration?.redis.host == "redis")
        let byFile = try resolve(["--config", "p.conf"],
                                 files: ["p.conf": "cluster = redis://redis\nnode-id = n3\ndb = \(Self.postgres)\n"])
        #expect(byFile.settings.clusterConfiguration?.node == "n3")
    }

    @Test func theNodeIsNamedAfterTheHostAndPortByDefault() throws {
        let resolved = try resolve(["--cluster", "redis://redis", "--db", Self.postgres, "--port", "8123"])
        #expect(resolved.settings.clusterConfiguration?.node.hasSuffix(":8123") == true)
    }

    @Test func aSingleServerHasNoCluster() throws {
        #expect(try resolve([]).settings.serverConfiguration.routing == nil)
    }

    @Test func thePasswordIsMaskedInPrintConfig() throws {
        let resolved = try resolve(["--cluster", "redis://user:s3cret@redis", "--db", Self.postgres])
        #expect(Setting.named("cluster")?.value(in: resolved.settings) == "redis://user:***@redis:6379")
        #expect(!resolved.printed.contains("s3cret"))
    }

    @Test(arguments: [
        (["--cluster", "redis://redis"],
         "cluster (from --cluster) needs a database the nodes share: db (./data/pomodoro.sqlite, from the default) must be postgres://USER@HOST/DBNAME"),
        (["--cluster", "redis://redis", "--db", "none"],
         "cluster (from --cluster) needs a database the nodes share: db (none, from --db) must be postgres://USER@HOST/DBNAME"),
        (["--cluster", "http://redis"],
         "--cluster: the cluster address must start with redis:// (redis://HOST[:PORT][/DB]) or redis-sentinel:// (redis-sentinel://HOST[:PORT][,HOST[:PORT]…]/MASTER_NAME[/DB])"),
    ] as [([String], String)])
    func aClusterWithoutASharedDatabaseOrABadAddressIsRefused(arguments: [String], message: String) {
        #expect(configurationError(arguments) == message)
    }
}
