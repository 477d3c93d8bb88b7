import Foundation
import PomodoroCluster
import PomodoroCore
import PomodoroTestSupport
import Testing

/// Leases held by a liveness key per node (`LeaseLayout`), and their path beside the per-room layout of
/// earlier builds, against a real `redis-server` started by the test on loopback.
@Suite(.onOwnThreads, .timeLimit(.minutes(TestTime.minutes(1))))
final class LivenessLeaseTests {
    let redis: RedisTestServer
    let address: RedisAddress
    let losses = Locked<[(RoomID, Int64, LeaseKeeper.Loss)]>([])

    init() throws {
        redis = try RedisTestServer()
        address = try RedisAddress(parsing: redis.url)
    }

    deinit { redis.stop() }

    func leases(perRoom: Bool) -> RedisLeases {
        RedisLeases(address: address, layout: LeaseLayout(perRoom: perRoom))
    }

    /// The calls Redis counted since the last `CONFIG RESETSTAT`, by command (the `INFO` and `CONFIG` asking
    /// left out).
    func calls(on redis: RedisLeases) throws -> [String: Int] {
        guard case .string(let stats) = try redis.command(["INFO", "commandstats"]) else { return [:] }
        var calls: [String: Int] = [:]
        for line in stats.split(whereSeparator: \.isNewline) where line.hasPrefix("cmdstat_") {
            let name = line.dropFirst("cmdstat_".count).prefix { $0 != ":" }
            guard !name.hasPrefix("info"), !name.hasPrefix("config"),
                  let range = line.range(of: "calls="),
                  let count = Int(line[range.upperBound...].prefix { $0.isNumber }) else { continue }
            calls[String(name)] = count
        }
        return calls
    }

    /// Takes `count` rooms for node a and renews them all once, with Redis's counters reset in between:
    /// the commands that one renewal round cost.
    func renewalRound(rooms count: Int, perRoom: Bool) throws -> [String: Int] {
        let a = leases(perRoom: perRoom)
        let rooms = (0..<count).map { "r\(count)\(perRoom ? "p" : "l")-\($0)" }
        let attempts = try a.acquire(rooms: rooms, node: "a")
        let held = zip(rooms, attempts).map { room, attempt in
            guard case .granted(let epoch) = attempt else { return (room: room, holder: LeaseHolder(node: "?", epoch: 0)) }
            return (room: room, holder: LeaseHolder(node: "a", epoch: epoch))
        }
        _ = try a.command(["CONFIG", "RESETSTAT"])
        #expect(try a.renew(held).allSatisfy { $0 }, "\(count) rooms")
        return try calls(on: a)
    }

    @Test func byLivenessARenewalRoundCostsTheSameCommandsWhateverTheRoomsHeld() throws {
        let few = try renewalRound(rooms: 3, perRoom: false)
        let many = try renewalRound(rooms: 900, perRoom: false)
        #expect(few == many)
        // The script, the liveness key's GET and PEXPIRE, and one MGET of the rooms' keys.
        #expect(many.values.reduce(0, +) == 4, "\(many)")
        #expect(many["pexpire"] == 1 && many["mget"] == 1, "\(many)")
        // The per-room layout pays a PEXPIRE per room (what earlier builds read).
        let perRoom = try renewalRound(rooms: 900, perRoom: true)
        #expect(perRoom["pexpire"] ?? 0 >= 900, "\(perRoom)")
    }

    @Test func aRoomIsHeldWhileItsHoldersLivenessLivesAndFreeOnceItLapses() throws {
        let a = leases(perRoom: false), b = leases(perRoom: false)
        #expect(try a.acquire(room: "r", node: "a") == .granted(epoch: 1))
        // The room's key has no expiry of its own: the holder's liveness key has one.
        #expect(try a.command(["PTTL", "pomodoro:lease:r"]).integerValue == -1)
        let alive = try a.command(["PTTL", "pomodoro:alive:a"]).integerValue ?? 0
        #expect(alive > 0 && alive <= LeaseTerm.timeToLive.milliseconds)
        #expect(try b.acquire(room: "r", node: "b") == .held(by: LeaseHolder(node: "a", epoch: 1)))
        #expect(try b.holder(room: "r") == LeaseHolder(node: "a", epoch: 1))
        #expect(try b.holders(rooms: ["r", "none"]) == [LeaseHolder(node: "a", epoch: 1), nil])

        // a stops renewing (killed): the room is free once its liveness key lapses, and not before.
        let stopped = Date()
        var attempt = try b.acquire(room: "r", node: "b")
        while attempt != .granted(epoch: 2) && Date() < TestTime.deadline(5) {
            usleep(20_000)
            attempt = try b.acquire(room: "r", node: "b")
        }
        let free = Date().timeIntervalSince(stopped)
        #expect(attempt == .granted(epoch: 2))
        #expect(free * 1000 > Double((LeaseTerm.timeToLive - LeaseTerm.margin).milliseconds),
                "taken before a's term could have ended")
        // And within the time to live of a's last extension of its liveness (the take), with a bounded slack.
        #expect(free * 1000 < Double(LeaseTerm.timeToLive.milliseconds + 500) * TestTime.scale, "free after \(free) s")
        #expect(try a.holder(room: "r") == LeaseHolder(node: "b", epoch: 2))
        // a, running again, finds its room gone: its round renews nothing of it.
        #expect(try a.renew([(room: "r", holder: LeaseHolder(node: "a", epoch: 1))]) == [false])
    }

    /// A node whose liveness key lapsed (it stalled) does not get back, under a new liveness, the rooms it
    /// held: their keys still name it, but the generation they name is gone.
    @Test func aLapsedLivenessNeverComesBackForTheRoomsItKept() throws {
        let a = leases(perRoom: false), b = leases(perRoom: false)
        #expect(try a.acquire(room: "kept", node: "a") == .granted(epoch: 1))
        try a.command(["DEL", "pomodoro:alive:a"])   // lapsed (as after a stall longer than a time to live)
        #expect(try b.holder(room: "kept") == nil)
        // a's next round finds its liveness lapsed and renews nothing; a new take starts a new liveness.
        #expect(try a.renew([(room: "kept", holder: LeaseHolder(node: "a", epoch: 1))]) == [false])
        #expect(try a.acquire(room: "other", node: "a") == .granted(epoch: 1))
        #expect(try b.holder(room: "other") == LeaseHolder(node: "a", epoch: 1))
        #expect(try b.holder(room: "kept") == nil, "a room of the lapsed liveness came back")
        #expect(try b.acquire(room: "kept", node: "b") == .granted(epoch: 2))
    }

    /// A node restarted at once under the id of one killed (its liveness key still alive) takes rooms at
    /// once, under its own generation; its predecessor's rooms are free from then on.
    @Test func aNodeRestartedUnderTheSameIdTakesOverItsPredecessorsLiveness() throws {
        let before = leases(perRoom: false), after = leases(perRoom: false), other = leases(perRoom: false)
        #expect(try before.acquire(room: "old", node: "a") == .granted(epoch: 1))
        #expect(try after.acquire(room: "new", node: "a") == .granted(epoch: 1))
        #expect(try other.holder(room: "new") == LeaseHolder(node: "a", epoch: 1))
        #expect(try other.holder(room: "old") == nil)
        #expect(try other.acquire(room: "old", node: "b") == .granted(epoch: 2))
    }

    @Test func releasingAndRestoringWorkByLiveness() throws {
        let a = leases(perRoom: false), b = leases(perRoom: false)
        #expect(try a.acquire(room: "gone", node: "a") == .granted(epoch: 1))
        #expect(try a.acquire(room: "kept", node: "a") == .granted(epoch: 1))
        #expect(try b.release(room: "gone", holder: LeaseHolder(node: "a", epoch: 2)) == false)
        #expect(try a.release(room: "gone", holder: LeaseHolder(node: "a", epoch: 1)))
        #expect(try b.acquire(room: "gone", node: "b") == .granted(epoch: 2))
        // Redis forgot everything: the owner puts its lease back under its epoch and a new liveness.
        try a.command(["FLUSHALL"])
        #expect(try a.restore([(room: "kept", holder: LeaseHolder(node: "a", epoch: 1))]) == [true])
        #expect(try b.holder(room: "kept") == LeaseHolder(node: "a", epoch: 1))
        #expect(try a.epoch(room: "kept") == 1)
        #expect(try a.renew([(room: "kept", holder: LeaseHolder(node: "a", epoch: 1))]) == [true])
    }

    /// Node a's keeper on a layout that writes per room (as until the registry is first read), and `name`
    /// taken per room by a; the keeper is not yet holding it or started. `reader` reads as earlier builds do.
    func tookPerRoom(_ name: String) throws -> (layout: LeaseLayout, keeper: LeaseKeeper, reader: RedisLeases,
                                                 room: RoomID, epoch: Int64, sent: Instant) {
        let layout = LeaseLayout()
        let keeper = LeaseKeeper(leases: RedisLeases(address: address, timeout: 0.3, layout: layout), node: "a",
                                 clock: LeaseKeeperTests.monotonic) { [losses] room, epoch, loss in
            losses.update { $0.append((room, epoch, loss)) }
        }
        let room = roomID(name)
        let sent = LeaseKeeperTests.monotonic()
        guard case .granted(let epoch) = try RedisLeases(address: address, layout: layout)
            .acquire(room: room.rawValue, node: "a") else { throw LaunchFailure("the room was not free") }
        return (layout, keeper, leases(perRoom: true), room, epoch, sent)
    }

    /// While a node of an earlier build is listed, leases are written as it reads them (`EPOCH|NODE`, with
    /// their own expiry, renewed room by room); the keeper moves its keys to the other layout on its next round
    /// when the layout changes, either way, and the terms go on.
    @Test func theKeeperMovesItsKeysBetweenTheLayoutsAndKeepsItsTerms() throws {
        let (layout, keeper, reader, room, epoch, sent) = try tookPerRoom("moving")
        keeper.hold(room, term: LeaseTerm(epoch: epoch, requestedAt: sent))
        keeper.start()
        defer { keeper.stop() }

        func stored() throws -> (value: String?, ttl: Int64?) {
            (try reader.command(["GET", "pomodoro:lease:moving"]).text,
             try reader.command(["PTTL", "pomodoro:lease:moving"]).integerValue)
        }
        func awaitStored(_ matches: (String, Int64) -> Bool) throws -> Bool {
            let deadline = TestTime.deadline(3)
            while Date() < deadline {
                if case (let value?, let ttl?) = try stored(), matches(value, ttl) { return true }
                usleep(20_000)
            }
            return false
        }
        // As earlier builds read it.
        #expect(try stored().value == "1|a")
        let ttl = try stored().ttl ?? 0
        #expect(ttl > 0 && ttl <= LeaseTerm.timeToLive.milliseconds)

        layout.perRoom = false
        #expect(try awaitStored { value, ttl in value.hasPrefix("@") && value.hasSuffix("|1|a") && ttl == -1 })
        #expect(keeper.isValid(room, at: LeaseKeeperTests.monotonic()))
        #expect(try reader.holder(room: room.rawValue) == LeaseHolder(node: "a", epoch: 1))

        layout.perRoom = true
        #expect(try awaitStored { value, ttl in value == "1|a" && ttl > 0 })
        // Renewed per room from then on: it outlives its own expiry.
        let watched = Date()
        while Date().timeIntervalSince(watched) < 2 {
            #expect(try stored().value == "1|a")
            #expect(keeper.isValid(room, at: LeaseKeeperTests.monotonic()))
            usleep(100_000)
        }
        #expect(losses.current.isEmpty)
    }

    /// A node that took its rooms per room before it first read the registry never set its liveness key: its
    /// first round by liveness renews them per room (their keys are its own by their expiry) and sets the
    /// liveness key, and the next moves them. None is lost meanwhile (counted lost, its key would go on naming
    /// the node, which no longer runs the room, until it expired).
    @Test func aKeeperWhoseFirstRoundIsByLivenessKeepsTheRoomsItTookPerRoom() throws {
        let (layout, keeper, reader, room, epoch, sent) = try tookPerRoom("switched")
        #expect(try reader.command(["GET", "pomodoro:lease:switched"]).text == "1|a")
        #expect(try reader.command(["EXISTS", "pomodoro:alive:a"]).integerValue == 0)
        layout.perRoom = false   // the registry is read before the keeper's first round
        keeper.hold(room, term: LeaseTerm(epoch: epoch, requestedAt: sent))
        keeper.start()
        defer { keeper.stop() }

        let deadline = TestTime.deadline(3)
        var moved = false
        while Date() < deadline && !moved {
            let value = try reader.command(["GET", "pomodoro:lease:switched"]).text ?? ""
            moved = value.hasPrefix("@") && value.hasSuffix("|1|a")
            if !moved { usleep(20_000) }
        }
        #expect(moved)
        #expect(losses.current.isEmpty, "\(losses.current)")
        #expect(keeper.isValid(room, at: LeaseKeeperTests.monotonic()))
        #expect(try reader.holder(room: room.rawValue) == LeaseHolder(node: "a", epoch: 1))
    }

    /// A node stopped past its term (its clock jumps as a `SIGSTOP`ped process sees it when continued) stops
    /// owning at the term's end whatever Redis says, and gives the room's key back: by liveness the key has no
    /// expiry of its own and would otherwise name the node for as long as its liveness key lives.
    @Test func aStalledOwnerStopsAtItsTermsEndAndGivesItsKeyBack() throws {
        let clock = Locked(LeaseKeeperTests.monotonic())
        let layout = LeaseLayout(perRoom: false)
        let keeper = LeaseKeeper(leases: RedisLeases(address: address, timeout: 0.3, layout: layout), node: "a",
                                 clock: { clock.current }) { [losses] room, epoch, loss in
            losses.update { $0.append((room, epoch, loss)) }
        }
        let room = roomID("stalled")
        let writer = RedisLeases(address: address, layout: layout), reader = leases(perRoom: false)
        let sent = clock.current
        guard case .granted(let epoch) = try writer.acquire(room: room.rawValue, node: "a") else {
            throw LaunchFailure("the room was not free")
        }
        keeper.hold(room, term: LeaseTerm(epoch: epoch, requestedAt: sent))
        keeper.start()
        defer { keeper.stop() }
        #expect(keeper.isValid(room, at: clock.current))
        clock.update { $0 = $0 + .seconds(5) }
        #expect(!keeper.isValid(room, at: clock.current))
        #expect(TestTime.waitUntil(3) { !losses.current.isEmpty })
        #expect(losses.current.first?.2 == .expired)
        #expect(try TestTime.waitUntil(3) { try reader.command(["EXISTS", "pomodoro:lease:stalled"]).integerValue == 0 })
        #expect(try reader.acquire(room: room.rawValue, node: "b") == .granted(epoch: epoch + 1))
    }

    /// A heartbeat of an earlier build (its script writes the node's beat and room count only) lists the node
    /// as one that reads per-room leases only; one of this build, as one that reads liveness.
    @Test func theRegistryTellsEarlierBuildsApart() throws {
        let redis = leases(perRoom: true), registry = NodeRegistry()
        try registry.heartbeat(node: "new", roomsOwned: 1, on: redis)
        // What an earlier build's heartbeat does, by hand, for a node that was of this build a moment ago.
        try registry.heartbeat(node: "rolledback", roomsOwned: 0, on: redis)
        usleep(5_000)
        guard case .array(let time) = try redis.command(["TIME"]), let seconds = time.first?.text.flatMap(Int64.init),
              let micros = time.last?.text.flatMap(Int64.init) else { throw LaunchFailure("no TIME") }
        let now = seconds * 1000 + micros / 1000
        try redis.command(["ZADD", "pomodoro:nodes", String(now), "old"])
        try redis.command(["ZADD", "pomodoro:nodes", String(now), "rolledback"])
        let seen = try registry.nodes(on: redis)
        #expect(seen.map(\.node) == ["new", "old", "rolledback"])
        #expect(seen.map(\.readsLiveness) == [true, false, false])
    }
}
