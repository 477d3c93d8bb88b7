import Foundation
import Glibc
import Testing
import PomodoroCluster
import PomodoroCore
import PomodoroStore
@testable import PomodoroPostgres
import PomodoroTestSupport

/// One node's view of Redis (and of PostgreSQL) cut through TCP proxies the test controls, on a real Redis
/// and a real PostgreSQL, with two nodes' cluster parts (leases, keeper with its fence confirmation, fenced
/// store): the cut node keeps its room on the fence while nobody else can take it, stops within one term of
/// another node's claim, and never acts as the owner at the same time as another for longer than one term.
@Suite(.onOwnThreads, .timeLimit(.minutes(TestTime.minutes(1))))
struct ClusterPartitionTests {
    let server: PostgresTestServer
    init() async throws { server = try await PostgresTestServer.shared }

    /// One node's cluster parts, reaching Redis and PostgreSQL at the addresses given.
    final class Node: @unchecked Sendable {
        let name: String
        let leases: RedisLeases
        let store: FencedRoomStore
        let keeper: LeaseKeeper
        let losses = Locked<[LeaseKeeper.Loss]>([])

        init(_ name: String, redis: RedisAddress, database: String) throws {
            self.name = name
            leases = RedisLeases(address: redis, timeout: 0.3)
            store = FencedRoomStore(base: try PostgresRoomStore.open(url: database))
            let losses = losses, store = store
            keeper = LeaseKeeper(leases: RedisLeases(address: redis, timeout: 0.3), fences: try PostgresRoomStore.open(url: database),
                                 node: name, clock: monotonic) { room, _, loss in
                store.disown(room)
                losses.update { $0.append(loss) }
            }
            keeper.start()
        }

        func take(_ room: RoomID) throws -> RoomTakeover.Outcome {
            let outcome = try RoomTakeover(node: name).take(room, leases: leases, store: store, now: monotonic)
            if case .owned(let term, _, _) = outcome { keeper.hold(room, term: term) }
            return outcome
        }
    }

    /// Node a, cut off by `cut` at the start, owns `room`; node b tries to take it every 20 ms from `bFrom`
    /// seconds after the cut, as a node with members relayed to a would. Returns how long after the cut a
    /// stopped acting as the owner, and how long after the cut b began to.
    func race(_ a: Node, _ b: Node, _ room: RoomID, bFrom: Double, cut: () -> Void)
        throws -> (aStopped: Double, bStarted: Double) {
        guard case .owned = try a.take(room) else { throw LaunchFailure("a could not take a free room") }
        usleep(600_000)   // a renewal or two through Redis
        let start = monotonic()
        cut()
        var aStopped: Duration?, bStarted: Duration?
        while monotonic() - start < .seconds(8) && (aStopped == nil || bStarted == nil) {
            let now = monotonic()
            if aStopped == nil && !a.keeper.isValid(room, at: now) { aStopped = now - start }
            if bStarted == nil && now - start >= .milliseconds(Int64(bFrom * 1000)),
               case .owned(let term, _, _)? = try? b.take(room) {
                bStarted = term.validFrom - start
            }
            usleep(20_000)
        }
        func seconds(_ duration: Duration?) -> Double { duration.map { Double($0.nanoseconds) / 1e9 } ?? .infinity }
        return (seconds(aStopped), seconds(bStarted))
    }

    @Test func aNodeCutFromRedisKeepsItsRoomOnTheFenceAndStopsWithinOneTermOfAnotherNodesClaim() throws {
        let redis = try RedisTestServer()
        defer { redis.stop() }
        let redisProxy = try TCPProxy(to: redis.port)
        defer { redisProxy.stop() }
        let direct = try RedisAddress(parsing: redis.url)
        var proxied = direct
        proxied.port = redisProxy.port
        let database = try server.makeDatabase()
        let a = try Node("a", redis: proxied, database: database)
        let b = try Node("b", redis: direct, database: database)
        defer { a.keeper.stop(); b.keeper.stop() }

        // Nobody else tries for 3 s: a keeps the room all that time, long past its last renewal in Redis.
        let (aStopped, bStarted) = try race(a, b, Sample.room, bFrom: 3, cut: redisProxy.cut)
        #expect(aStopped > 3, "a kept the room while the fence confirmed it (stopped after \(aStopped) s)")
        #expect(bStarted < 4, "b took the room once it tried (after \(bStarted) s)")
        let overlap = aStopped - bStarted
        let term = Double((LeaseTerm.timeToLive - LeaseTerm.margin).nanoseconds) / 1e9
        #expect(overlap < term, "two owners for \(overlap) s, more than one term (\(term) s)")
        #expect(a.losses.current == [.taken])
        // What a still sends is refused by the fence.
        do {
            try a.store.apply([.saveRoom(Sample.roomRecord(timer: .running(endsAtMs: 1_795_000_000_000), phase: .focus, seq: 5), passcode: nil)])
            Issue.record("the old owner's write landed")
        } catch {
            #expect(error.isFenced)
        }
        print("cluster partition, Redis cut from the owner: it kept the room \(Int(aStopped * 1000)) ms; another node took it at \(Int(bStarted * 1000)) ms; both owners for \(Int(max(overlap, 0) * 1000)) ms")
    }

    @Test func aNodeCutFromRedisAndPostgresStopsBeforeAnotherNodeStarts() throws {
        let redis = try RedisTestServer()
        defer { redis.stop() }
        let redisProxy = try TCPProxy(to: redis.port)
        defer { redisProxy.stop() }
        let postgresProxy = try TCPProxy(to: server.port)
        defer { postgresProxy.stop() }
        let direct = try RedisAddress(parsing: redis.url)
        var proxied = direct
        proxied.port = redisProxy.port
        let database = try server.makeDatabase()
        let cutDatabase = database.replacingOccurrences(of: ":\(server.port)/", with: ":\(postgresProxy.port)/")
        #expect(cutDatabase != database)
        let a = try Node("a", redis: proxied, database: cutDatabase)
        let b = try Node("b", redis: direct, database: database)
        defer { a.keeper.stop(); b.keeper.stop() }

        let (aStopped, bStarted) = try race(a, b, Sample.room, bFrom: 0) {
            redisProxy.cut()
            postgresProxy.cut()
        }
        #expect(aStopped < bStarted, "a stopped at \(aStopped) s, b started at \(bStarted) s")
        #expect(bStarted < 3)
        let reported = TestTime.deadline(3)
        while a.losses.current.isEmpty && Date() < reported { usleep(20_000) }
        #expect(a.losses.current == [.expired])
        print("cluster partition, Redis and PostgreSQL cut from the owner: it stopped at \(Int(aStopped * 1000)) ms; another node took the room at \(Int(bStarted * 1000)) ms")
    }
}
