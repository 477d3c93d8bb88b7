import Foundation
import PomodoroCluster
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

    /// A node whose term on a room ended neither shows nor acts on the room it still has in memory, whatever
    /// reaches it first: a control-API command that arrives before anything woke the room (an idle room has
    /// no timer) is not carried out and answered 200 here, for a change no store would take. The room leaves
    /// (its members closed with 4005, to resume where it runs now) and the command goes to the room's holder.
    @Test func aCommandReachingANodeWhoseTermEndedGoesToTheRoomsHolder() throws {
        let (t, cluster) = try Self.make()
        let a = t.connect()
        t.send(.join(room: "team", name: "Ada", token: nil), from: a)
        t.send(.apiToken(.create(name: "bot")), from: a)
        t.settle()
        let created = try #require(try HubControlAPITests.tokens(t, a)?.created)
        // No renewal lands: the term (1.35 s) runs out, and nothing wakes the idle room. Another node takes it.
        t.pass(.seconds(2))
        #expect(t.hub.roomCount == 1 && t.transport.closes[a] == nil, "nothing woke the room")
        cluster.held(Self.team, by: "node-b")
        let start = HubClusterControlAPITests.post(t, "/api/rooms/team/commands", #"{"type":"start"}"#, token: created.token)
        #expect(start.response == nil, "answered here: \(HubClusterControlAPITests.text(start.response))")
        #expect(t.transport.closes[a]?.code == 4005)
        #expect(t.hub.roomCount == 0)
        guard case .controlAPI(.command(_, _, let room, _, _))? = cluster.published.last?.message else {
            Issue.record("the command did not go to the room's holder: \(cluster.published)")
            return
        }
        #expect(room == "team" && cluster.published.last?.node == "node-b")
        // Nor is a look at the room answered from what this node no longer runs.
        let snapshot = RecordedResponse()
        t.hub.receivedHTTP(HTTPRequest(method: .get, path: "/api/rooms/team", peer: "127.0.0.1"), responder: snapshot)
        t.settle()
        #expect(snapshot.response?.status != 200, "\(HubClusterControlAPITests.text(snapshot.response))")
    }

    /// A member's command reaching the node after its term ended, before anything woke the room, is not
    /// answered `ok` there: the room leaves, and its members are closed with 4005 to resume where it runs.
    @Test func aMembersCommandAfterTheTermEndedIsNotAnsweredThere() throws {
        let (t, _) = try Self.make()
        let a = t.connect()
        t.send(.join(room: "team", name: "Ada", token: nil), from: a)
        t.settle()
        t.transport.clearSent()
        t.pass(.seconds(2))
        #expect(t.hub.roomCount == 1 && t.transport.closes[a] == nil, "nothing woke the room")
        t.send(.task(text: "write the report"), ref: "t", from: a)
        t.settle()
        let answered = try t.messages(to: a)
        #expect(answered.isEmpty, "answered: \(answered)")
        #expect(t.transport.closes[a]?.code == 4005)
        #expect(t.hub.roomCount == 0)
        #expect(t.store!.pendingCommits == 0, "nothing written for it")
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

    /// The cluster's paths are read, as the other read paths: another method is answered 405 with `Allow`;
    /// a path that is not one of them stays 404, and so does every path to a client that may not see them.
    @Test func theClusterEndpointsAnswerAnotherMethod405() throws {
        let (t, _) = try Self.make()
        func ask(_ method: HTTPMethod, _ path: String, from peer: String = "127.0.0.1") -> HTTPResponse? {
            let response = RecordedResponse()
            t.hub.receivedHTTP(HTTPRequest(method: method, path: path, peer: peer), responder: response)
            return response.response
        }
        for (method, path) in [(HTTPMethod.post, "/api/cluster"), (.delete, "/api/cluster"), (.put, "/api/cluster/rooms/team")] {
            let refused = ask(method, path)
            #expect(refused?.status == 405, "\(method) \(path)")
            #expect(refused?.headers.contains { $0.name == "Allow" && $0.value == "GET, HEAD" } == true)
            #expect(refused.map { String(decoding: $0.body, as: UTF8.self) }
                == #"{"error":{"code":"bad_request","message":"only GET and HEAD are answered here","field":"method"}}"#)
        }
        #expect(ask(.head, "/api/cluster")?.status == 200)
        #expect(ask(.post, "/api/cluster/nodes")?.status == 404)
        #expect(ask(.post, "/api/cluster/rooms/not a room")?.status == 404)
        #expect(ask(.post, "/api/cluster", from: "203.0.113.9")?.status == 404)
    }

    /// A node told by a draining one (`handoff`) takes the room and runs it from the store at once, with
    /// nobody connected: the same focus, the same end; its members come back to it with their tokens.
    @Test func aRoomHandedOffIsTakenAndRunsWithNobodyInIt() throws {
        let store = try HeldStore()
        let clock = ManualServerClock()
        let configuration = ServerConfiguration(port: 0, webRoot: nil)
        let aCluster = ManualCluster(node: "a", store: store.store, now: { clock.now().monotonic })
        let a = TestHub(configuration: configuration, clock: clock, store: store, cluster: aCluster)
        let ada = a.connect()
        a.send(.join(room: "team", name: "Ada", token: nil), from: ada)
        a.settle()
        guard case .welcome(let you, _, _, _, _)? = try a.messages(to: ada).first else {
            Issue.record("no welcome")
            return
        }
        a.send(.start, from: ada)
        a.settle()
        let endsAt = try #require(try a.messages(to: ada).compactMap { message -> Int64? in
            if case .state(let room) = message, room.status == .running { room.endsAt } else { nil }
        }.last)
        // a drains: it stops, its writes are durable, its lease is given back.
        a.hub.beginHandOff()
        a.hub.stopTracking()
        aCluster.release(Self.team)

        let bCluster = ManualCluster(node: "b", store: store.store, now: { clock.now().monotonic })
        let b = TestHub(configuration: configuration, clock: clock, store: store, cluster: bCluster)
        b.router!.heard(.heard(.handOff(rooms: ["team"], from: "a")))
        b.settle()
        #expect(b.hub.roomCount == 1 && bCluster.holding == [Self.team])
        // Running there, with nobody connected: what GET /api/rooms/team shows.
        let live = RecordedResponse()
        b.hub.receivedHTTP(HTTPRequest(method: .get, path: "/api/rooms/team", peer: "127.0.0.1"), responder: live)
        let body = live.response.map { String(decoding: $0.body, as: UTF8.self) } ?? ""
        #expect(body.contains(#""status":"running""#) && body.contains(#""endsAt":\#(endsAt)"#), "\(body)")
        // Heard twice (or taken meanwhile by a join): taken once.
        b.router!.heard(.heard(.handOff(rooms: ["team"], from: "a")))
        b.settle()
        #expect(b.hub.roomCount == 1)

        let back = b.connect()
        b.send(.join(room: "team", name: "Ada", token: you.token), from: back)
        b.settle()
        guard case .welcome(let again, let room, _, _, _)? = try b.messages(to: back).first else {
            Issue.record("no welcome on b")
            return
        }
        #expect(again.id == you.id && again.resumed && room.endsAt == endsAt)
    }

    /// A room a draining node gave back may be taken first by a member's join on another node, not by the
    /// node it was handed to; a phase that ended in the moments between goes on to the next as it would have
    /// on the node that ran it, since its members are on their way back.
    @Test func aRoomHandedOffAndTakenByAJoinFollowsThePhaseThatEndedMeanwhile() throws {
        let store = try HeldStore()
        let clock = ManualServerClock()
        var configuration = ServerConfiguration(port: 0, webRoot: nil)
        configuration.defaultSettings = RoomSettings(focus: 60, shortBreak: 30, autoStart: true)
        let aCluster = ManualCluster(node: "a", store: store.store, now: { clock.now().monotonic })
        let a = TestHub(configuration: configuration, clock: clock, store: store, cluster: aCluster)
        let ada = a.connect(), lin = a.connect()
        a.send(.join(room: "team", name: "Ada", token: nil), from: ada)
        a.send(.join(room: "team", name: "Lin", token: nil), from: lin)
        a.settle()
        guard case .welcome(let you, _, _, _, _)? = try a.messages(to: ada).first else {
            Issue.record("no welcome")
            return
        }
        a.send(.start, from: ada)
        a.settle()
        for _ in 0..<59 {
            aCluster.renewAll()
            a.pass(.seconds(1))
        }
        // a drains a second before the focus ends; its lease is given back.
        a.hub.beginHandOff()
        a.hub.stopTracking()
        aCluster.release(Self.team)

        // Ada's join on b takes the room two seconds later: the focus ended meanwhile.
        let bCluster = ManualCluster(node: "b", store: store.store, now: { clock.now().monotonic })
        let b = TestHub(configuration: configuration, clock: clock, store: store, cluster: bCluster)
        clock.advance(by: .seconds(2))
        let back = b.connect()
        b.send(.join(room: "team", name: "Ada", token: you.token), from: back)
        b.settle()
        guard case .welcome(let again, let room, _, _, _)? = try b.messages(to: back).first else {
            Issue.record("no welcome on b")
            return
        }
        #expect(again.resumed)
        #expect(room.phase == .shortBreak)
        #expect(room.status == .running, "the break started at the focus's end, as on a")
    }

    /// While a node hands its rooms off it takes none: a join that would take one is closed with 1012, and its
    /// client comes back through the proxy to another node.
    @Test func aNodeHandingOffTakesNoRoomAndSendsTheJoinerBack() throws {
        let (t, cluster) = try Self.make()
        t.hub.beginHandOff()
        let a = t.connect()
        t.send(.join(room: "team", name: "Ada", token: nil), from: a)
        t.settle()
        #expect(t.transport.closes[a] == FakeTransport.Close(code: 1012, reason: "service restart"))
        #expect(cluster.holding.isEmpty && t.hub.roomCount == 0)
    }

    /// A draining node stops its own rooms, but its members of rooms another node runs (relayed) still hear
    /// what that node sends them until the drain's end sends them back: before, every bus message was
    /// dropped from the SIGTERM on, and they heard nothing for the whole drain.
    @Test func aDrainingNodeStillWritesToItsRelayedMembersWhatTheirOwnerSends() throws {
        let (t, cluster) = try Self.make()
        cluster.held(Self.team, by: "node-b")
        let a = t.connect()
        t.send(.join(room: "team", name: "Ada", token: nil), ref: "j", from: a)
        t.settle()
        #expect(try t.messages(to: a).isEmpty)
        t.hub.beginHandOff()
        t.hub.stopTracking()
        let pong = #"{"type":"pong","serverTime":1795000000000}"#
        t.router!.heard(.heard(.reply(node: cluster.node, connections: [a.rawValue], frame: pong, from: "node-b")))
        t.settle()
        #expect(try t.messages(to: a).map(\.label) == ["pong"])
        // What is not for its relayed members is still dropped: a hand-off to a node that is draining itself.
        t.router!.heard(.heard(.handOff(rooms: ["other"], from: "node-b")))
        t.settle()
        #expect(cluster.holding.isEmpty && t.hub.roomCount == 0)
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
        let wrongMethod = ask(t, .get, from: "127.0.0.1")
        #expect(wrongMethod?.status == 405 && wrongMethod?.headers.contains { $0.name.lowercased() == "allow" && $0.value == "POST" } == true)
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
