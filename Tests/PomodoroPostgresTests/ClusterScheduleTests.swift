import Foundation
import Glibc
import PomodoroCluster
import PomodoroCore
import PomodoroNet
import PomodoroPostgres
import PomodoroProtocol
import PomodoroStore
import PomodoroTestSupport
import Testing

/// Schedules on a cluster of `pomodoro-server` processes, on a real Redis and PostgreSQL started here: a
/// scheduled set in a room nobody joined starts exactly once, on whichever node runs it; a set whose node is
/// killed goes on on a survivor; a schedule edited on one node is what another node starts. Schedules are
/// to the minute, so each test waits for the next minute far enough ahead.
@Suite(.onOwnThreads, .timeLimit(.minutes(TestTime.minutes(3))))
struct ClusterScheduleTests {
    let client: WebSocketClient

    init() throws {
        client = try WebSocketClient()
        client.start()
    }

    func finish() {
        client.stop()
        client.waitUntilFinished()
    }

    /// A node on a free loopback port, logging at info level (each scheduled start is a line) to a pipe
    /// read at the end.
    struct Node {
        let name: String
        let process: LaunchedProcess
        let port: Int

        init(_ name: String, redis: String, database: String) throws {
            self.name = name
            process = try ProcessLauncher.start(ProcessLauncher.server, [
                "--host", "127.0.0.1", "--port", "0", "--db", database, "--cluster", redis, "--node-id", name,
                "--min-focus", "1", "--log-level", "info",
            ])
            port = try process.waitUntilServing()
        }

        /// How late each scheduled start this node made was, in microseconds, from its log (once it ended).
        func startsLogged() -> [Int] {
            let log = process.stop()?.errors ?? ""
            return log.split(separator: "\n").filter { $0.contains("scheduled session started") }.map { line in
                guard let field = line.range(of: "late_us=") else { return -1 }
                return Int(line[field.upperBound...].prefix { $0 == "-" || $0.isNumber }) ?? -1
            }
        }
    }

    /// The next whole minute at least `ahead` seconds from now, in Unix seconds.
    /// Seconds until a node has taken a room whose start is `target`: a minute before it, and a margin.
    static func untilTaken(_ target: Int64) -> Double {
        max(0, Double(target) - 60 - Date().timeIntervalSince1970) + 10
    }

    static func nextMinute(atLeast ahead: Double) -> Int64 {
        let now = Date().timeIntervalSince1970
        var target = (Int64(now) / 60 + 1) * 60
        while Double(target) - now < ahead { target += 60 }
        return target
    }

    /// The UTC weekday and "HH:MM" of `target`.
    static func utc(_ target: Int64) throws -> (day: Weekday, time: String) {
        let zone = try ZoneName("UTC")
        let when = WallTime(seconds: target)
        let intoDay = zone.secondsIntoDay(of: when)
        return (zone.date(of: when).weekday, String(format: "%02d:%02d", intoDay / 3600, intoDay / 60 % 60))
    }

    /// Writes room `room` with one weekly schedule at `target` into the store, as if made long ago: `sessions`
    /// focus sessions of `focus` seconds with `pause`-second breaks.
    static func seed(_ room: String, at target: Int64, sessions: Int, focus: Int, pause: Int,
                     database: String) throws {
        let id = try RoomID(validating: room)
        let (day, time) = try utc(target)
        let schedule = Schedule(id: ScheduleID(1), name: "Sprint", time: try LocalTime(parsing: time),
                                zone: try ZoneName("UTC"), recurrence: .weekly([day]),
                                settings: RoomSettings(focus: focus, shortBreak: pause, longBreak: pause, longBreakEvery: 4),
                                length: .focusSessions(sessions), warningMinutes: 0,
                                since: WallTime(seconds: target - 3600))
        try PostgresRoomStore.open(url: database).apply([
            .saveRoom(Room(id: id, now: .zero).record(wallOffsetNanoseconds: 0), passcode: nil),
            .saveSchedules(id, [schedule]),
        ])
    }

    /// The node holding `room`'s lease, once one does.
    static func owner(of room: String, redis: String, except: String? = nil, timeout: Double = 10) throws -> String {
        let leases = RedisLeases(address: try RedisAddress(parsing: redis))
        let deadline = TestTime.deadline(timeout)
        while Date() < deadline {
            if let holder = try? leases.holder(room: room), holder.node != except { return holder.node }
            usleep(20_000)
        }
        throw LiveTestFailure(description: "no node\(except.map { " but \($0)" } ?? "") took \(room) within \(timeout) s")
    }

    /// Waits until a second before `target`, asleep.
    static func waitUntilJustBefore(_ target: Int64) async throws {
        let asleep = Double(target) - Date().timeIntervalSince1970 - 1
        if asleep > 0 { try await Task.sleep(for: .milliseconds(Int64(asleep * 1000))) }
    }

    /// The next start of the room's first schedule as the node on `port` answers it, if any.
    static func nextStart(of room: String, port: Int) throws -> Int64? {
        let (status, body) = try httpGet(port: port, path: "/api/rooms/\(room)/schedules")
        guard status == 200 else { return nil }
        return try WireCodec.decodeSchedulesBody(Array(body.utf8)).schedules.first?.next
    }

    static func journal(_ room: String, database: String) throws -> [FocusSessionRecord] {
        try PostgresRoomStore.open(url: database).sessions(room: try RoomID(validating: room), endedFrom: nil,
                                                           before: nil, limit: nil)
    }

    @Test func aSetInARoomNobodyJoinedStartsExactlyOnceOnOneOfThreeNodes() async throws {
        defer { finish() }
        let redis = try RedisTestServer()
        defer { redis.stop() }
        let database = try await PostgresTestServer.makeDatabase()
        let room = "sched-once"
        let target = Self.nextMinute(atLeast: 15)
        // Focus sessions of 4 s: Bo's join below lands within the set even on a busy machine (the set runs 9 s).
        try Self.seed(room, at: target, sessions: 2, focus: 4, pause: 1, database: database)
        let nodes = try ["a", "b", "c"].map { try Node($0, redis: redis.url, database: database) }
        defer { for node in nodes { node.process.kill() } }

        // Some node takes the room, with nobody in it, a minute before its start (docs/CLUSTER.md, "Schedules on a cluster").
        let owner = try #require(nodes.first { $0.name == (try? Self.owner(of: room, redis: redis.url,
                                                                           timeout: Self.untilTaken(target))) })
        let ada = try Peer(client, port: owner.port)
        let (_, before) = try ada.join(room, name: "Ada")
        #expect(before.status == .idle && before.nextSession?.startsAt == target * 1000)

        try await Self.waitUntilJustBefore(target)
        let late = try await ada.awaitMessage("scheduleStarted", timeout: 8) { message -> Int64? in
            if case .event(_, .schedule(.started(_, "Sprint", let lateMs)), _) = message { lateMs } else { nil }
        }
        let endsAt = try ada.expect("the running focus") { message -> Int64? in
            if case .state(let s) = message, s.status == .running { s.endsAt } else { nil }
        }
        #expect(endsAt == target * 1000 + 4000, "the focus runs from the schedule's own second")
        // A member who joins now lands on the running set.
        let bo = try Peer(client, port: owner.port)
        let (_, during) = try bo.join(room, name: "Bo")
        #expect(during.status == .running && during.scheduledRun?.name == "Sprint")

        // Nothing else starts it: Ada hears one start, then the end of the set after two focus sessions.
        var startsAfter = 0
        let ended = try ada.expect("scheduleEnded", timeout: 15) { message -> Int? in
            if case .event(_, .schedule(.started), _) = message { startsAfter += 1 }
            if case .event(_, .schedule(.ended(_, "Sprint", let count)), _) = message { return count }
            return nil
        }
        #expect(ended == 2 && startsAfter == 0)
        #expect(try RedisLeases(address: RedisAddress(parsing: redis.url)).holder(room: room)?.node == owner.name,
                "the room never moved")

        // One start across the three nodes' logs, and two focus sessions in the journal.
        let starts = nodes.map { $0.startsLogged() }
        #expect(starts.map(\.count).reduce(0, +) == 1, "starts logged per node: \(starts)")
        #expect(try Self.journal(room, database: database).count == 2)
        print("cluster schedule: started on \(owner.name) \((starts.flatMap { $0 }.first ?? -1)) µs after its second; Ada heard it \(late) ms late")
    }

    @Test func aSetWhoseNodeIsKilledGoesOnOnASurvivor() async throws {
        defer { finish() }
        let redis = try RedisTestServer()
        defer { redis.stop() }
        let database = try await PostgresTestServer.makeDatabase()
        let room = "sched-kill"
        let target = Self.nextMinute(atLeast: 15)
        try Self.seed(room, at: target, sessions: 3, focus: 4, pause: 2, database: database)
        let nodes = try ["a", "b", "c"].map { try Node($0, redis: redis.url, database: database) }
        defer { for node in nodes { node.process.kill() } }
        // Some node takes the room a minute before its start (docs/CLUSTER.md, "Schedules on a cluster").
        let owner = try #require(nodes.first { $0.name == (try? Self.owner(of: room, redis: redis.url,
                                                                           timeout: Self.untilTaken(target))) })
        let ada = try Peer(client, port: owner.port)
        let (adaYou, _) = try ada.join(room, name: "Ada")

        try await Self.waitUntilJustBefore(target)
        _ = try await ada.awaitMessage("scheduleStarted", timeout: 8) { message -> Bool? in
            if case .event(_, .schedule(.started(_, "Sprint", _)), _) = message { true } else { nil }
        }
        _ = try await ada.awaitMessage("the second focus", timeout: 10) { message -> Bool? in
            if case .event(_, .phaseCompleted(.shortBreak, .focus, _, _), _) = message { true } else { nil }
        }
        owner.process.kill()
        let killed = Date()
        _ = try ada.expectClose()

        // A survivor takes the room by itself (nobody reconnects until it has), and the set goes on there.
        let survivorName = try Self.owner(of: room, redis: redis.url, except: owner.name, timeout: 8)
        let takenAfter = Date().timeIntervalSince(killed)
        let survivor = try #require(nodes.first { $0.name == survivorName })
        let back = try Peer(client, port: survivor.port)
        let (you, snapshot) = try back.join(room, name: "Ada", token: adaYou.token)
        #expect(you.resumed && you.id == adaYou.id)
        // The second focus, or (on a machine slow enough that the take came after its end) the break after it.
        #expect(snapshot.scheduledRun?.name == "Sprint" && (1...2).contains(snapshot.scheduledRun?.focusDone ?? 0))
        #expect(snapshot.status == .running)
        var startsAfter = 0
        let ended = try back.expect("scheduleEnded", timeout: 25) { message -> Int? in
            if case .event(_, .schedule(.started), _) = message { startsAfter += 1 }
            if case .event(_, .schedule(.ended(_, "Sprint", let count)), _) = message { return count }
            return nil
        }
        #expect(ended == 3, "the focus before the kill counts")
        #expect(startsAfter == 0)
        let starts = nodes.map { $0.startsLogged() }
        #expect(starts.map(\.count).reduce(0, +) == 1, "starts logged per node: \(starts)")
        #expect(try Self.journal(room, database: database).count == 3)
        print("cluster schedule: \(survivorName) took the set \(Int(takenAfter * 1000)) ms after kill -9 of \(owner.name)")
    }

    @Test func aScheduleEditedOnOneNodeIsWhatAnotherNodeStarts() async throws {
        defer { finish() }
        let redis = try RedisTestServer()
        defer { redis.stop() }
        let database = try await PostgresTestServer.makeDatabase()
        let room = "sched-edit"
        let a = try Node("a", redis: redis.url, database: database)
        defer { a.process.kill() }
        let b = try Node("b", redis: redis.url, database: database)
        defer { b.process.kill() }

        // On a, a room made after both nodes started: a schedule added for another day, then moved.
        let target = Self.nextMinute(atLeast: 15)
        let (day, time) = try Self.utc(target)
        let ada = try Peer(client, port: a.port)
        _ = try ada.join(room, name: "Ada")
        let otherDay = Weekday(rawValue: day.rawValue % 7 + 1)!
        ada.send(.schedule(.add(ScheduleFields(name: "Standup", time: "09:00", zone: "UTC", days: [otherDay.code],
                                               sessions: 1, warning: 0))), ref: .number(1))
        _ = try ada.expect("ok addSchedule") { if case .ok("addSchedule", _, .number(1)?) = $0 { true } else { nil } }
        ada.send(.schedule(.change(id: "s1", ScheduleFields(
            name: "Standup", time: time, zone: "UTC", days: [day.code],
            settings: RoomSettings(focus: 2, shortBreak: 1, longBreak: 1, longBreakEvery: 4), sessions: 1, warning: 0))),
            ref: .number(2))
        _ = try ada.expect("ok changeSchedule") { if case .ok("changeSchedule", _, .number(2)?) = $0 { true } else { nil } }
        // The list goes out once the change is committed; the notice to the other nodes goes with it.
        _ = try ada.expect("the committed list") { message -> Bool? in
            if case .schedules(let list, _) = message, list.schedules.first?.next == target * 1000 { true } else { nil }
        }
        ada.send(.leave, ref: .number(3))
        _ = try ada.expect("ok leave") { if case .ok("leave", _, .number(3)?) = $0 { true } else { nil } }

        // b has heard of the edit once it answers the room's schedules with it (a node answers them for a room
        // another node runs from what it heard). a's notice goes out on a queue of its own after the commit, so
        // killing a right after the list could beat the notice, leaving b to its next full reread (30 s).
        let heard = TestTime.deadline(10)
        while try Self.nextStart(of: room, port: b.port) != target * 1000 {
            guard Date() < heard else { throw LiveTestFailure(description: "b never heard of the edited schedule") }
            usleep(20_000)
        }

        // a dies with nobody in the room: b, which heard of the room's schedule only from a, takes it a minute
        // before its start (a room with schedules is run by some node only near its start, docs/CLUSTER.md).
        a.process.kill()
        let untilLead = max(0, Double(target) - 60 - Date().timeIntervalSince1970)
        #expect(try Self.owner(of: room, redis: redis.url, except: "a", timeout: untilLead + 8) == "b")
        let lin = try Peer(client, port: b.port)
        let (_, before) = try lin.join(room, name: "Lin")
        #expect(before.nextSession?.startsAt == target * 1000, "the edited time, not the first one")

        try await Self.waitUntilJustBefore(target)
        let late = try await lin.awaitMessage("scheduleStarted", timeout: 8) { message -> Int64? in
            if case .event(_, .schedule(.started(_, "Standup", let lateMs)), _) = message { lateMs } else { nil }
        }
        let ended = try await lin.awaitMessage("scheduleEnded", timeout: 10) { message -> Int? in
            if case .event(_, .schedule(.ended(_, "Standup", let count)), _) = message { count } else { nil }
        }
        #expect(ended == 1)
        #expect(a.startsLogged().isEmpty)
        #expect(b.startsLogged().count == 1)
        print("cluster schedule: edited on a, started by b, heard \(late) ms late")
    }
}
