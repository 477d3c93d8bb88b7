import Foundation
import Glibc
import PomodoroCluster
import PomodoroCore
import PomodoroNet
import PomodoroPostgres
import PomodoroProtocol
import PomodoroTestSupport
import Testing

/// Draining a node (docs/CLUSTER.md, "Draining a node"): three `pomodoro-server` processes on a real Redis and
/// PostgreSQL started here; one of them gets SIGTERM while it runs a room whose members are all its own.
@Suite(.onOwnThreads, .timeLimit(.minutes(TestTime.minutes(2))))
struct ClusterDrainTests {
    let client: WebSocketClient

    init() throws {
        client = try WebSocketClient()
        client.start()
    }

    func finish() {
        client.stop()
        client.waitUntilFinished()
    }

    /// The port of `node`, among the three.
    static func port(of node: String, in ports: [String: Int]) throws -> Int {
        try #require(ports[node], "no node \(node)")
    }

    @Test func aDrainedNodeHandsItsRoomToAnotherWhichRunsItBeforeAnyoneRejoins() async throws {
        defer { finish() }
        let redis = try RedisTestServer()
        defer { redis.stop() }
        let leases = try RedisLeases(address: RedisAddress(parsing: redis.url))
        let database = try await PostgresTestServer.makeDatabase()
        let (a, aPort) = try ClusterProcessTests.node("a", redis: redis.url, database: database)
        defer { a.kill() }
        let (b, bPort) = try ClusterProcessTests.node("b", redis: redis.url, database: database)
        defer { _ = b.stop() }
        let (c, cPort) = try ClusterProcessTests.node("c", redis: redis.url, database: database)
        defer { _ = c.stop() }
        let ports = ["b": bPort, "c": cPort]

        // Ada and Bo are both on a: a runs "solo", nobody relays to it from elsewhere. Cy, on a too, is in a
        // room b runs ("elsewhere"), relayed through a.
        let ada = try Peer(client, port: aPort)
        let adaIn = try ada.join("solo", name: "Ada")
        let bo = try Peer(client, port: aPort)
        let boIn = try bo.join("solo", name: "Bo")
        let dee = try Peer(client, port: bPort)
        _ = try dee.join("elsewhere", name: "Dee")
        let cy = try Peer(client, port: aPort)
        let cyIn = try cy.join("elsewhere", name: "Cy")
        ada.send(.start, ref: .string("go"))
        #expect(ClusterProcessTests.isOK(try ada.expect("go", ClusterProcessTests.answer(to: "go"))))
        let endsAt = try #require(try ada.expect("the running state", ClusterProcessTests.running))
        let before = try #require(try leases.holder(room: "solo"))
        #expect(before.node == "a")
        #expect(try leases.holder(room: "elsewhere")?.node == "b")

        // SIGTERM: every member of a is told to come back (1012), and a exits within a bound.
        let signalled = Date()
        a.terminate()
        for (name, peer) in [("Ada", ada), ("Bo", bo), ("Cy", cy)] {
            #expect(try peer.expectClose(timeout: 10) == 1012, "\(name)'s close")
        }
        let closedAfter = Date().timeIntervalSince(signalled)
        let ended = try a.wait(timeout: 15)
        let exitedAfter = Date().timeIntervalSince(signalled)
        #expect(ended.exited && ended.status == 0)
        #expect(exitedAfter < 10 * TestTime.scale, "a exited \(exitedAfter) s after SIGTERM")

        // Before anyone came back, another node runs "solo" under a new epoch: the fence moved on.
        let after = try #require(try leases.holder(room: "solo"), "nobody runs the room after the drain")
        #expect(["b", "c"].contains(after.node) && after.epoch > before.epoch, "\(after)")
        print("drain: members closed \(String(format: "%.0f", closedAfter * 1000)) ms after SIGTERM, node exited after "
              + "\(String(format: "%.0f", exitedAfter * 1000)) ms; solo now on \(after)")

        // Ada comes back through the node that does not run it (relayed), Bo through the one that does: both are
        // the same members, the focus the same, and it ticks.
        let other = after.node == "b" ? "c" : "b"
        let adaBack = try Peer(client, port: try Self.port(of: other, in: ports))
        let adaAgain = try adaBack.join("solo", name: "Ada", token: adaIn.you.token)
        #expect(adaAgain.you.id == adaIn.you.id && adaAgain.you.resumed)
        #expect(adaAgain.room.status == .running && adaAgain.room.endsAt == endsAt)
        let boBack = try Peer(client, port: try Self.port(of: after.node, in: ports))
        let boAgain = try boBack.join("solo", name: "Bo", token: boIn.you.token)
        #expect(boAgain.you.id == boIn.you.id && boAgain.you.resumed && boAgain.room.endsAt == endsAt)
        // Ada sees Bo here again in a `state`; nobody is told he went or came back: the node went, not him.
        var heardOfBo: [EventPayload] = []
        _ = try adaBack.expect("a state with Bo connected") { message -> Bool? in
            switch message {
            case .event(_, let event, _) where event.kind.hasPrefix("member"): heardOfBo.append(event); return nil
            case .state(let room): return room.members.contains { $0.id == boIn.you.id && $0.connected } ? true : nil
            default: return nil
            }
        }
        #expect(heardOfBo.isEmpty, "\(heardOfBo)")
        let (tick, _) = try adaBack.nextTick(timeout: 5)
        #expect(tick.endsAt == endsAt)
        // Cy, whose room b runs, is back there too.
        let cyBack = try Peer(client, port: bPort)
        let cyAgain = try cyBack.join("elsewhere", name: "Cy", token: cyIn.you.token)
        #expect(cyAgain.you.id == cyIn.you.id && cyAgain.you.resumed)
    }

    /// A node running many rooms hands them off together (one release script, one message per node, each
    /// node taking its share in one lease script and one claim): every room runs on another node under the
    /// next epoch, its fence moved once to it, and every task answered `ok` before the SIGTERM is stored.
    @Test func aDrainedNodeHandsManyRoomsOffTogetherAndLosesNoCommandAnsweredOK() async throws {
        defer { finish() }
        let redis = try RedisTestServer()
        defer { redis.stop() }
        let leases = try RedisLeases(address: RedisAddress(parsing: redis.url))
        let database = try await PostgresTestServer.makeDatabase()
        let (a, aPort) = try ClusterProcessTests.node("a", redis: redis.url, database: database)
        defer { a.kill() }
        let (b, _) = try ClusterProcessTests.node("b", redis: redis.url, database: database)
        defer { _ = b.stop() }
        let (c, _) = try ClusterProcessTests.node("c", redis: redis.url, database: database)
        defer { _ = c.stop() }

        let names = (0..<16).map { "many-\($0)" }
        var peers: [Peer] = []
        var epochs: [Int64] = []
        for (index, name) in names.enumerated() {
            let peer = try Peer(client, port: aPort)
            _ = try peer.join(name, name: "M\(index)")
            peer.send(.task(text: "task \(index)"), ref: .string("t\(index)"))
            #expect(ClusterProcessTests.isOK(try peer.expect("task", ClusterProcessTests.answer(to: "t\(index)"))))
            peers.append(peer)
            let holder = try #require(try leases.holder(room: name))
            #expect(holder.node == "a")
            epochs.append(holder.epoch)
        }

        a.terminate()
        for (index, peer) in peers.enumerated() {
            #expect(try peer.expectClose(timeout: 10) == 1012, "member \(index)'s close")
        }
        let ended = try a.wait(timeout: 15)
        #expect(ended.exited && ended.status == 0)

        let store = try PostgresRoomStore.open(url: database)
        var takers: Set<String> = []
        for (index, name) in names.enumerated() {
            let after = try #require(try leases.holder(room: name), "nobody runs \(name) after the drain")
            takers.insert(after.node)
            #expect(["b", "c"].contains(after.node) && after.epoch == epochs[index] + 1, "\(name): \(after)")
            let room = try RoomID(validating: name)
            #expect(try store.fence(room: room) == after.epoch, "\(name)'s fence")
            #expect(try store.loadRoom(room)?.members.map(\.task) == ["task \(index)"], "\(name)'s task")
        }
        #expect(takers == ["b", "c"], "the rooms are shared between the two nodes left")
    }

    /// A drained node's members hear a second of their room right before their 1012, so that their way back
    /// starts from a second they heard: the member of a room the node ran (a tick worked out from the phase
    /// at the release, once another node took the room) and the member of a room another node runs (its
    /// relayed tick) alike.
    @Test func aDrainedNodesMembersHearTheirRoomsNextSecondRightBeforeTheir1012() async throws {
        defer { finish() }
        let redis = try RedisTestServer()
        defer { redis.stop() }
        let database = try await PostgresTestServer.makeDatabase()
        let (a, aPort) = try ClusterProcessTests.node("a", redis: redis.url, database: database)
        defer { a.kill() }
        let (b, bPort) = try ClusterProcessTests.node("b", redis: redis.url, database: database)
        defer { _ = b.stop() }
        let (c, _) = try ClusterProcessTests.node("c", redis: redis.url, database: database)
        defer { _ = c.stop() }

        let ada = try Peer(client, port: aPort)
        _ = try ada.join("own", name: "Ada")
        ada.send(.start, ref: .string("go"))
        let ownEndsAt = try #require(try ada.expect("the running state", ClusterProcessTests.running))
        let dee = try Peer(client, port: bPort)
        _ = try dee.join("relayed", name: "Dee")
        dee.send(.start, ref: .string("go"))
        let relayedEndsAt = try #require(try dee.expect("the running state", ClusterProcessTests.running))
        let cy = try Peer(client, port: aPort)
        _ = try cy.join("relayed", name: "Cy")
        // Both hear their rooms' ticks before the drain.
        _ = try ada.nextTick(timeout: 5)
        _ = try cy.nextTick(timeout: 5)

        a.terminate()
        for (name, peer, endsAt) in [("Ada", ada, ownEndsAt), ("Cy", cy, relayedEndsAt)] {
            var lastTick: (tick: TickPayload, arrived: Date)?
            var closed: (code: UInt16?, arrived: Date)?
            while closed == nil, let (event, arrived) = peer.inbox.nextWithArrival(timeout: 10) {
                switch event {
                case .text(let bytes):
                    if case .tick(let tick) = try WireCodec.decodeServerMessage(bytes) { lastTick = (tick, arrived) }
                    else { lastTick = nil }   // something else came after it
                case .closed(let code, _): closed = (code, arrived)
                default: break
                }
            }
            let close = try #require(closed, "\(name) was not closed")
            #expect(close.code == 1012, "\(name)'s close")
            let tick = try #require(lastTick, "\(name) heard no tick right before the close")
            #expect(tick.tick.endsAt == endsAt, "\(name)'s tick is its room's phase")
            let after = close.arrived.timeIntervalSince(tick.arrived)
            #expect(after < 0.25 * TestTime.scale, "\(name) closed \(after) s after the tick")
        }
        let ended = try a.wait(timeout: 15)
        #expect(ended.exited && ended.status == 0)
    }

    /// The members a draining node relays to rooms other nodes run are sent back each right after its room's
    /// next tick (1.1 s at most); the drain goes on once the last of them is closed, and a node relaying
    /// nobody waits for no tick at all.
    @Test(arguments: [false, true])
    func aDrainWaitsForItsRelayedMembersOnlyWhenItHasSome(relaying: Bool) async throws {
        defer { finish() }
        let redis = try RedisTestServer()
        defer { redis.stop() }
        let database = try await PostgresTestServer.makeDatabase()
        let a = try ProcessLauncher.start(ProcessLauncher.server, [
            "--host", "127.0.0.1", "--port", "0", "--db", database, "--cluster", redis.url, "--node-id", "a",
            "--min-focus", "1", "--log-level", "info",
        ])
        defer { a.kill() }
        let aPort = try a.waitUntilServing()
        let (b, bPort) = try ClusterProcessTests.node("b", redis: redis.url, database: database)
        defer { _ = b.stop() }

        // Ada's room runs on a; Dee's runs on b, and Cy (on a) is relayed to it when a relays anyone.
        let ada = try Peer(client, port: aPort)
        _ = try ada.join("own", name: "Ada")
        let dee = try Peer(client, port: bPort)
        _ = try dee.join("relayed", name: "Dee")
        dee.send(.start, ref: .string("go"))
        _ = try #require(try dee.expect("the running state", ClusterProcessTests.running))
        var cy: Peer?
        var cyIn: (you: YouPayload, room: SnapshotPayload)?
        if relaying {
            cy = try Peer(client, port: aPort)
            cyIn = try cy?.join("relayed", name: "Cy")
            _ = try cy?.nextTick(timeout: 5)
            _ = try dee.expect("Cy's arrival") { message -> Bool? in
                if case .event(_, .memberJoined, _) = message { return true } else { return nil }
            }
        }

        a.terminate()
        #expect(try ada.expectClose(timeout: 10) == 1012)
        if let cy { #expect(try cy.expectClose(timeout: 10) == 1012) }
        let ended = try a.wait(timeout: 15)
        #expect(ended.exited && ended.status == 0)
        let line = try #require(ended.errors.split(separator: "\n")
            .first { $0.contains("members of rooms other nodes run sent back") }, "\(ended.errors)")
        #expect(line.contains("members=\(relaying ? 1 : 0)"), "\(line)")
        let ms = line.range(of: "ms=").map { Int(line[$0.upperBound...].prefix { $0.isNumber }) ?? -1 } ?? -1
        if relaying, let cyIn {
            #expect(ms >= 0, "\(line)")
            // Dee sees Cy gone, then (Cy back through b) here again, and is told nothing of his going or
            // coming back: his node restarted, not his connection. No interruption is counted either.
            var heard: [EventPayload] = []
            func stateWithCy(connected: Bool) -> (ServerMessage) -> SnapshotPayload? {
                { message in
                    switch message {
                    case .event(_, let event, _) where event.kind.hasPrefix("member"): heard.append(event); return nil
                    case .state(let room): return room.members.contains { $0.id == cyIn.you.id && $0.connected == connected } ? room : nil
                    default: return nil
                    }
                }
            }
            _ = try dee.expect("a state with Cy gone", stateWithCy(connected: false))
            let cyBack = try Peer(client, port: bPort)
            let again = try cyBack.join("relayed", name: "Cy", token: cyIn.you.token)
            #expect(again.you.id == cyIn.you.id && again.you.resumed)
            let back = try dee.expect("a state with Cy connected", stateWithCy(connected: true))
            #expect(heard.isEmpty, "\(heard)")
            #expect(back.members.first { $0.id == cyIn.you.id }?.stats.interruptions == 0)
        } else {
            // Nothing to wait for: not the second a relayed member's tick may take.
            #expect(ms >= 0 && ms < 1_100, "\(line)")
        }
    }

    @Test func aNodeDrainedOverHTTPAloneExitsWithinItsBoundAndTheRoomComesBackOnAJoin() async throws {
        defer { finish() }
        let redis = try RedisTestServer()
        defer { redis.stop() }
        let leases = try RedisLeases(address: RedisAddress(parsing: redis.url))
        let database = try await PostgresTestServer.makeDatabase()
        let (a, aPort) = try ClusterProcessTests.node("a", redis: redis.url, database: database,
                                                      ["--trusted-proxy", "127.0.0.1/32"])
        defer { a.kill() }
        let ada = try Peer(client, port: aPort)
        let adaIn = try ada.join("lone", name: "Ada")
        // From elsewhere, through the trusted proxy: not found, and nothing stops.
        #expect(try httpRequest("POST", port: aPort, path: "/api/admin/drain",
                                headers: ["X-Forwarded-For: 203.0.113.9"]).status == 404)
        #expect(try httpGet(port: aPort, path: "/readyz").status == 200)
        ada.send(.start, ref: .string("go"))
        let endsAt = try #require(try ada.expect("the running state", ClusterProcessTests.running))

        // An operator drains it over HTTP (from this host): only POST, and then the same as SIGTERM. No other
        // node to hand the room to: a gives its lease back, closes with 1012 and exits at once.
        #expect(try httpRequest("GET", port: aPort, path: "/api/admin/drain").status == 405)
        let signalled = Date()
        let drain = try httpRequest("POST", port: aPort, path: "/api/admin/drain")
        #expect(drain.status == 202 && drain.body == "draining\n")
        let adaClose = try ada.expectClose(timeout: 10)
        #expect(adaClose == 1012)
        let ended = try a.wait(timeout: 15)
        let exitedAfter = Date().timeIntervalSince(signalled)
        #expect(ended.exited && ended.status == 0)
        #expect(exitedAfter < 5 * TestTime.scale, "a exited \(exitedAfter) s after the drain")
        #expect(try leases.holder(room: "lone") == nil)

        // A node started later takes it on the first join: the same member, the same end.
        let (b, bPort) = try ClusterProcessTests.node("b", redis: redis.url, database: database)
        defer { _ = b.stop() }
        let back = try Peer(client, port: bPort)
        let again = try back.join("lone", name: "Ada", token: adaIn.you.token)
        #expect(again.you.id == adaIn.you.id && again.room.endsAt == endsAt)
    }
}
