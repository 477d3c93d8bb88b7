import Foundation
import PomodoroCore
import PomodoroNet
import PomodoroProtocol
import PomodoroServer
import PomodoroTestSupport
import Testing

/// What the hub of a cluster node does with its leases' answers (the leases themselves run on a real Redis
/// in PomodoroClusterTests and ClusterNodeTests): it runs a room only once it took the room's lease, runs
/// no room another node holds, and the moment its term on a room ends it neither ticks,
/// broadcasts nor writes for it again. Joiners of a room another node holds are relayed to it (HubRelayTests).
struct HubClusterTests {
    static let team = try! RoomID(validating: "team")

    static func make() throws -> (TestHub, ManualCluster) {
        let store = try HeldStore()
        let clock = ManualServerClock()
        let cluster = ManualCluster(store: store.store, now: { clock.now().monotonic })
        var configuration = ServerConfiguration(port: 0, webRoot: nil)
        configuration.roomPolicy.emptyRoomLifetime = .seconds(3)
        return (TestHub(configuration: configuration, clock: clock, store: store, cluster: cluster), cluster)
    }

    static func ticks(_ messages: [ServerMessage]) -> Int {
        messages.filter { if case .tick = $0 { true } else { false } }.count
    }

    @Test func aJoinerToARoomAnotherNodeHoldsIsRelayedThereNotRunHere() throws {
        let (t, cluster) = try Self.make()
        cluster.held(Self.team, by: "node-b")
        let a = t.connect()
        t.send(.join(room: "team", name: "Ada", token: nil), ref: "j", from: a)
        t.settle()
        // Nothing is answered here: the join went to node-b, which answers it (HubRelayTests).
        #expect(try t.messages(to: a).isEmpty)
        #expect(cluster.published.map(\.node) == ["node-b", "node-b"])
        #expect(t.hub.roomCount == 0)
        #expect(cluster.holding.isEmpty)
    }

    @Test func aRoomTakenIsRunAndItsLeaseGivenBackWhenDropped() throws {
        let (t, cluster) = try Self.make()
        let a = t.connect()
        t.send(.join(room: "team", name: "Ada", token: nil), ref: "j", from: a)
        t.settle()
        #expect(try t.messages(to: a).first?.label == "welcome")
        #expect(cluster.holding == [Self.team])
        t.send(.leave, ref: "l", from: a)
        t.settle()
        // An empty room lives on for its lifetime while its term is renewed, then is dropped and let go.
        for _ in 0..<20 {
            cluster.renewAll()
            t.pass(.seconds(1))
            if t.hub.roomCount == 0 { break }
        }
        #expect(t.hub.roomCount == 0)
        #expect(cluster.released == [Self.team])
    }

    @Test func renewedTermsKeepTheRoomTicking() throws {
        let (t, cluster) = try Self.make()
        let a = t.connect()
        t.send(.join(room: "team", name: "Ada", token: nil), from: a)
        t.send(.start, from: a)
        t.settle()
        t.transport.clearSent()
        for _ in 0..<5 {
            cluster.renewAll()
            t.pass(.seconds(1))
        }
        #expect(Self.ticks(try t.messages(to: a)) == 5)
        #expect(t.transport.closes[a] == nil)
    }

    @Test func aTermThatEndsStopsTheRoomAtOnce() throws {
        let (t, cluster) = try Self.make()
        let a = t.connect()
        t.send(.join(room: "team", name: "Ada", token: nil), from: a)
        t.send(.start, from: a)
        t.settle()
        t.transport.clearSent()
        // The term (1.35 s from the take) covers the first tick, not the second: no renewal lands.
        t.pass(.seconds(1))
        #expect(Self.ticks(try t.messages(to: a)) == 1)
        t.transport.clearSent()
        t.pass(.seconds(1))
        #expect(Self.ticks(try t.messages(to: a)) == 0)
        #expect(t.transport.closes[a]?.code == 4005)
        #expect(t.hub.roomCount == 0)
        #expect(cluster.released == [Self.team])
        // Nothing more is written for the room, and no timer is left to wake it.
        #expect(t.store!.pendingCommits == 0)
        t.pass(.seconds(5))
        #expect(try t.messages(to: a).isEmpty)
        #expect(t.store!.pendingCommits == 0)
    }

    @Test func theClusterEndpointsAnswerOnANodeAndAreNotFoundOnASingleServer() throws {
        let single = TestHub()
        let missing = RecordedResponse()
        single.hub.receivedHTTP(HTTPRequest(method: .get, path: "/api/cluster", peer: "127.0.0.1"), responder: missing)
        #expect(missing.response?.status == 404)

        let (t, _) = try Self.make()
        let a = t.connect()
        t.send(.join(room: "team", name: "Ada", token: nil), from: a)
        t.settle()
        let node = RecordedResponse()
        t.hub.receivedHTTP(HTTPRequest(method: .get, path: "/api/cluster", peer: "127.0.0.1"), responder: node)
        #expect(node.response.map { String(decoding: $0.body, as: UTF8.self) } == #"{"node":"here","rooms":["team"],"nodes":[]}"#)
        let room = RecordedResponse()
        t.hub.receivedHTTP(HTTPRequest(method: .get, path: "/api/cluster/rooms/team", peer: "127.0.0.1"), responder: room)
        #expect(room.response.map { String(decoding: $0.body, as: UTF8.self) } == #"{"room":"team","owner":"here","epoch":null}"#)
        let bad = RecordedResponse()
        t.hub.receivedHTTP(HTTPRequest(method: .get, path: "/api/cluster/nodes", peer: "127.0.0.1"), responder: bad)
        #expect(bad.response?.status == 404)
    }

    /// `POST /api/admin/drain` starts the server's shutdown (`PomodoroServer.shutdown`, the hand-off on a node);
    /// exposed as `/api/cluster` is: this host's loopback only, while `/metrics` is served, and POST only.
    @Test func theDrainEndpointStopsTheServerForThisHostOnly() throws {
        let calls = Counter()
        func ask(_ hub: TestHub, _ method: HTTPMethod, from peer: String) -> HTTPResponse? {
            let response = RecordedResponse()
            hub.hub.receivedHTTP(HTTPRequest(method: method, path: "/api/admin/drain", peer: peer), responder: response)
            return response.response
        }
        let (t, _) = try Self.make()
        t.hub.onDrainRequested = { calls.increment() }
        #expect(ask(t, .post, from: "203.0.113.9")?.status == 404)
        #expect(ask(t, .get, from: "127.0.0.1")?.status == 400)
        #expect(calls.value == 0)
        let drained = ask(t, .post, from: "127.0.0.1")
        #expect(drained?.status == 202 && drained.map { String(decoding: $0.body, as: UTF8.self) } == "draining\n")
        #expect(calls.value == 1)

        let quiet = TestHub(configuration: ServerConfiguration(port: 0, webRoot: nil, metricsEnabled: false))
        quiet.hub.onDrainRequested = { calls.increment() }
        #expect(ask(quiet, .post, from: "127.0.0.1")?.status == 404)
        #expect(calls.value == 1)
    }
}

private final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    var value: Int { lock.withLock { count } }
    func increment() { lock.withLock { count += 1 } }
}
