import Foundation
import Glibc
import PomodoroCluster
import PomodoroCore
import PomodoroNet
import PomodoroPostgres
import PomodoroProtocol
import PomodoroTestSupport
import Testing

/// Members relayed through another node hear their room's ticks from their own node, computed from the
/// deadline the owner replicated (docs/CLUSTER.md, "Ticks"): the same seconds as the owner's members, while
/// nothing is published over Redis; and the node reads the leases of the rooms it follows in one `MGET` a
/// turn, not one `GET` per room. Measured on the real Redis (`INFO commandstats`) and the nodes' `/metrics`.
@Suite(.onOwnThreads, .timeLimit(.minutes(TestTime.minutes(2))))
struct ClusterRelayedTickTests {
    let client: WebSocketClient

    init() throws {
        client = try WebSocketClient()
        client.start()
    }

    func finish() {
        client.stop()
        client.waitUntilFinished()
    }

    /// Calls of each command Redis ran so far (`INFO commandstats`; commands run by scripts included).
    static func commandCalls(_ redis: RedisLeases) throws -> [String: Int] {
        guard let text = try redis.command(["INFO", "commandstats"]).text else { return [:] }
        var calls: [String: Int] = [:]
        for line in text.split(whereSeparator: \.isNewline) where line.hasPrefix("cmdstat_") {
            let name = line.dropFirst("cmdstat_".count).prefix { $0 != ":" }
            guard let field = line.range(of: "calls=") else { continue }
            calls[String(name)] = Int(line[field.upperBound...].prefix { $0.isNumber })
        }
        return calls
    }

    static func metric(_ name: String, port: Int) throws -> Double {
        try httpGet(port: port, path: "/metrics").body.split(separator: "\n")
            .first { $0.hasPrefix(name + " ") }.flatMap { Double($0.split(separator: " ").last!) } ?? 0
    }

    @Test func relayedMembersHearTheOwnersSecondsWhileNoTickCrossesRedis() async throws {
        defer { finish() }
        let redis = try RedisTestServer()
        defer { redis.stop() }
        let database = try await PostgresTestServer.makeDatabase()
        let (a, aPort) = try ClusterProcessTests.node("a", redis: redis.url, database: database)
        defer { _ = a.stop() }
        let (b, bPort) = try ClusterProcessTests.node("b", redis: redis.url, database: database)
        defer { _ = b.stop() }

        // Six rooms run by a, each with a member there, a member relayed through b, and in the first an
        // observer relayed through b too; every room in a running focus.
        let rooms = (0..<6).map { "relay-tick-\($0)" }
        var owners: [Peer] = [], relayed: [Peer] = []
        var endsAt: [Int64] = []
        for room in rooms {
            let owner = try Peer(client, port: aPort)
            _ = try owner.join(room, name: "Ada")
            owner.send(.start)
            endsAt.append(try owner.expect("a running state", ClusterProcessTests.running))
            let member = try Peer(client, port: bPort)
            let (_, seen) = try member.join(room, name: "Bo")
            #expect(seen.status == .running && seen.endsAt == endsAt.last)
            owners.append(owner)
            relayed.append(member)
        }
        let observer = try Peer(client, port: bPort)
        observer.send(.observe(room: rooms[0]))
        _ = try observer.expect("observing") { if case .observing = $0 { true } else { nil } }
        let leases = RedisLeases(address: try RedisAddress(parsing: redis.url))
        #expect(try leases.holders(rooms: rooms).allSatisfy { $0?.node == "a" })
        for peer in owners + relayed + [observer] { _ = try peer.nextTick() }

        // Four seconds of ticks, counted against Redis's own figures and the nodes' metrics.
        let callsBefore = try Self.commandCalls(leases)
        let sentBefore = try Self.metric("pomodoro_cluster_bus_messages_sent_total", port: aPort)
        let relayedTicksBefore = try Self.metric("pomodoro_cluster_relayed_ticks_total", port: bPort)
        let started = Date()
        let seconds = 4
        let heard = try ClusterProcessTests.ticks(owners + relayed + [observer], count: seconds)
        let elapsed = Date().timeIntervalSince(started)
        let callsAfter = try Self.commandCalls(leases)
        let sentAfter = try Self.metric("pomodoro_cluster_bus_messages_sent_total", port: aPort)
        let relayedTicksAfter = try Self.metric("pomodoro_cluster_relayed_ticks_total", port: bPort)

        // The relayed members and the observer hear each second the owner's members hear, with the same
        // fields, within a few milliseconds of them.
        var lags: [Double] = []
        for (index, room) in rooms.enumerated() {
            let own = heard[index], member = heard[rooms.count + index]
            for (second, ownTick) in own {
                guard let theirs = member[second] else { continue }
                #expect(theirs.tick.endsAt == endsAt[index] && theirs.tick.seq == ownTick.tick.seq
                        && theirs.tick.phase == .focus && theirs.tick.cycle == ownTick.tick.cycle && theirs.tick.room == room)
                lags.append(theirs.arrived.timeIntervalSince(ownTick.arrived) * 1000)
            }
            #expect(Set(own.keys).intersection(member.keys).count >= seconds - 1, "\(room): the same seconds")
            let marks = member.keys.sorted()
            #expect(zip(marks, marks.dropFirst()).allSatisfy { $1 - $0 == 1000 }, "\(room): a second missing: \(marks)")
        }
        let watched = heard[2 * rooms.count]
        #expect(watched.values.allSatisfy { $0.tick.endsAt == endsAt[0] })
        #expect(Set(watched.keys).intersection(heard[0].keys).count >= seconds - 1)

        // Nothing crossed Redis meanwhile: no publish at all, and the owner sent nothing on the bus; b
        // computed its rooms' ticks itself.
        let publishes = (callsAfter["publish"] ?? 0) - (callsBefore["publish"] ?? 0)
        #expect(publishes == 0, "\(publishes) publishes while the rooms ticked")
        #expect(sentAfter == sentBefore)
        #expect(relayedTicksAfter - relayedTicksBefore >= Double(rooms.count * (seconds - 1)))
        // b reads the six leases it follows in one MGET a turn (every 200 ms), and their holder's liveness key
        // in one more; a GET per room and turn would be 30 a second. The owner's renewal script, twice a second,
        // reads its own liveness key (one GET) and its rooms' keys (one MGET) whatever the number of rooms: the
        // GETs left are those few, well under one per room and turn.
        let mgets = (callsAfter["mget"] ?? 0) - (callsBefore["mget"] ?? 0)
        let gets = (callsAfter["get"] ?? 0) - (callsBefore["get"] ?? 0)
        #expect(Double(mgets) >= 3 * elapsed, "\(mgets) MGETs in \(elapsed) s")
        #expect(Double(gets) < Double(rooms.count) * 5 * elapsed, "\(gets) GETs in \(elapsed) s")
        let sorted = lags.sorted()
        print("cluster relayed ticks: \(rooms.count) rooms, \(seconds) s; relayed members' lag behind the owner's p50 \(String(format: "%.2f", sorted[sorted.count / 2])) ms, max \(String(format: "%.2f", sorted.last ?? 0)) ms; Redis in \(String(format: "%.1f", elapsed)) s: \(publishes) PUBLISH, \(mgets) MGET, \(gets) GET")
    }

    /// A member relayed through another node hears no second of a phase before the owner's `state` that
    /// announces it, as the owner's own members do not (PROTOCOL.md, "Durability"): here the owner's commit
    /// of a focus's end waits (the room table locked in PostgreSQL), and meanwhile another member joins through
    /// the same node, whose `welcome` (a reply, sent at once) shows the break that followed. That member hears
    /// the break's seconds from it; the member already there hears the focus's end, then the break's `state`,
    /// and only then its ticks. (Before, the node counted the break down from the joiner's `welcome` for
    /// every member of the room: they heard a break whose start was not saved yet, ahead of its `state` and
    /// of the focus's end.)
    @Test func aRelayedMemberHearsNoSecondOfAPhaseBeforeTheStateThatAnnouncesIt() async throws {
        defer { finish() }
        let redis = try RedisTestServer()
        defer { redis.stop() }
        let database = try await PostgresTestServer.makeDatabase()
        let (a, aPort) = try ClusterProcessTests.node("a", redis: redis.url, database: database)
        defer { _ = a.stop() }
        let (b, bPort) = try ClusterProcessTests.node("b", redis: redis.url, database: database)
        defer { _ = b.stop() }

        let room = "held-phase-end"
        let ada = try Peer(client, port: aPort)
        _ = try ada.join(room, name: "Ada")
        ada.send(.configure(RoomSettings(focus: 5, shortBreak: 60, autoStart: true)), ref: .string("cfg"))
        #expect(ClusterProcessTests.isOK(try ada.expect("cfg", ClusterProcessTests.answer(to: "cfg"))))
        let bo = try Peer(client, port: bPort)
        _ = try bo.join(room, name: "Bo")
        ada.send(.start)
        let focusEnds = try ada.expect("the running state", ClusterProcessTests.running)
        _ = try bo.expect("the running state") { ClusterProcessTests.running($0) == focusEnds ? true : nil }

        // From here the owner's commits wait, and with them its broadcasts (the focus's end, the break's state).
        let blocker = try PostgresConnection(database)
        try blocker.execute("BEGIN; LOCK TABLE room IN ACCESS EXCLUSIVE MODE")
        var locked = true
        defer { if locked { try? blocker.execute("ROLLBACK") } }
        try #require(Date().timeIntervalSince1970 * 1000 < Double(focusEnds), "the focus ended before the lock")
        // Bo hears the focus's seconds until it is over.
        _ = try bo.expect("a second of the focus") { if case .tick(let tick) = $0, tick.endsAt == focusEnds { true } else { nil } }
        #expect(TestTime.waitUntil(10) { Date().timeIntervalSince1970 * 1000 > Double(focusEnds) + 100 })

        // Cy joins through b: the owner's welcome, at once, shows the break running; Cy hears its seconds.
        let cy = try Peer(client, port: bPort)
        let (_, seen) = try cy.join(room, name: "Cy")
        try #require(seen.phase == .shortBreak && seen.status == .running, "the welcome shows \(seen.phase) \(seen.status)")
        let breakEnds = try #require(seen.endsAt)
        let (cyTick, _) = try cy.nextTick(timeout: 5)
        #expect(cyTick.phase == .shortBreak && cyTick.endsAt == breakEnds)

        // The commit goes through: Bo hears the focus's end and the break's state, and only then the break's ticks.
        try blocker.execute("COMMIT")
        locked = false
        var heard: [String] = []
        while true {
            let message = try bo.next(timeout: 10)
            switch message {
            case .tick(let tick) where tick.endsAt == breakEnds: heard.append("tick")
            case .state(let state) where state.endsAt == breakEnds: heard.append("state")
            case .event(_, .phaseCompleted(.focus, .shortBreak, _, _), _): heard.append("phaseCompleted")
            default: continue
            }
            if heard.last == "tick" { break }
        }
        #expect(heard.first == "phaseCompleted", "Bo heard \(heard)")
        #expect(heard.firstIndex(of: "state").map { $0 < heard.firstIndex(of: "tick")! } == true, "Bo heard \(heard)")
    }
}
