import Foundation
import PomodoroCore
import PomodoroNet
import PomodoroProtocol
import PomodoroServer
import PomodoroSQLite
import PomodoroStore
import PomodoroTestSupport
import Testing

/// A room's lifetime on the real server with an SQLite store (issue 27, findings 4 and 5): a refused join
/// leaves an empty room with schedules as it was; schedules do not keep rooms in memory or against
/// `--max-rooms`, at run time or after a restart with a lower limit; a room out of memory still starts on
/// its schedule's second.
@Suite(.timeLimit(.minutes(TestTime.minutes(3))), .onOwnThreads)
struct LiveRoomLifetimeTests {
    /// A folder of its own for the database, removed with it.
    final class Folder {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("lifetime-\(UUID().uuidString)")
        init() throws { try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true) }
        deinit { try? FileManager.default.removeItem(at: url) }
        func store() throws -> SQLiteRoomStore { try SQLiteRoomStore.open(path: url.appendingPathComponent("db.sqlite").path) }
    }

    static func schedule(_ time: String, days: [String] = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"],
                         enabled: Bool = true) -> ClientMessage {
        .schedule(.add(ScheduleFields(name: "Daily", time: time, zone: "UTC", days: days, sessions: 1, warning: 0,
                                      enabled: enabled)))
    }

    /// `HH:MM` UTC, `hours` from now.
    static func hoursAhead(_ hours: Int) -> String {
        let seconds = (Int(Date().timeIntervalSince1970) / 60 * 60 + hours * 3600) % 86_400
        return String(format: "%02d:%02d", seconds / 3600, seconds / 60 % 60)
    }

    /// Joins `room` as Ana, adds `schedule`, leaves and closes.
    static func scheduledAndLeft(_ client: WebSocketClient, port: Int, _ room: String, _ schedule: ClientMessage) throws {
        let ana = try Peer(client, port: port)
        _ = try ana.join(room, name: "Ana")
        ana.send(schedule, ref: .string("add"))
        _ = try ana.expect("ok addSchedule") { if case .ok("addSchedule", _, _) = $0 { true } else { nil } }
        ana.send(.leave, ref: .string("leave"))
        _ = try ana.expect("ok leave") { if case .ok("leave", _, _) = $0 { true } else { nil } }
        ana.close()
    }

    static func rooms(in server: LiveServer) -> Int {
        let box = Box()
        server.server.counts { counts in box.set(counts.rooms) }
        return box.wait()
    }

    final class Box: @unchecked Sendable {
        private let semaphore = DispatchSemaphore(value: 0)
        private var value = 0
        func set(_ v: Int) { value = v; semaphore.signal() }
        func wait() -> Int { semaphore.wait(); return value }
    }

    /// Polls `condition` every 50 ms until it holds or `seconds` have passed.
    static func eventually(within seconds: Double, _ condition: () throws -> Bool) rethrows -> Bool {
        let end = TestTime.deadline(seconds)
        while Date() < end {
            if try condition() { return true }
            usleep(50_000)
        }
        return try condition()
    }

    static func scheduleIDs(port: Int, _ room: String) throws -> [String] {
        let (status, body) = try httpGet(port: port, path: "/api/rooms/\(room)/schedules")
        #expect(status == 200)
        return try WireCodec.decodeSchedulesBody(Array(body.utf8)).schedules.map(\.id)
    }

    // MARK: Finding 4

    @Test func aRefusedJoinLeavesAnEmptyRoomWithSchedulesAndItsSchedulesAsTheyWere() throws {
        let folder = try Folder()
        let client = try WebSocketClient()
        client.start()
        defer { client.stop(); client.waitUntilFinished() }
        let server = try LiveServer(store: try folder.store())
        defer { server.stop() }
        let time = Self.hoursAhead(3)
        try Self.scheduledAndLeft(client, port: server.port, "victim", Self.schedule(time))
        try Self.scheduledAndLeft(client, port: server.port, "other", Self.schedule(time))

        let eve = try Peer(client, port: server.port)
        eve.send(.join(room: "victim", name: "", token: nil), ref: .string("bad"))
        let refused = try eve.expect("error") { if case .error(let code, _, let field, _, _) = $0 { (code, field) } else { nil } }
        #expect(refused.0 == .badRequest && refused.1 == "name")

        #expect(try httpGet(port: server.port, path: "/api/rooms/victim").status == 200, "the room is still open")
        #expect(try Self.scheduleIDs(port: server.port, "victim") == ["s1"])
        let calendar = try httpGet(port: server.port, path: "/api/rooms/victim/calendar.ics")
        #expect(calendar.status == 200 && calendar.body.contains("BEGIN:VEVENT"))
        // The next addSchedule adds to the stored one.
        let bo = try Peer(client, port: server.port)
        _ = try bo.join("victim", name: "Bo")
        bo.send(Self.schedule(Self.hoursAhead(5)), ref: .string("add"))
        _ = try bo.expect("ok addSchedule") { if case .ok("addSchedule", _, _) = $0 { true } else { nil } }
        #expect(try Self.scheduleIDs(port: server.port, "victim") == ["s1", "s2"])
    }

    // MARK: Finding 5

    @Test func disabledSchedulesDoNotHoldTheRoomLimitForEver() throws {
        let folder = try Folder()
        let client = try WebSocketClient()
        client.start()
        defer { client.stop(); client.waitUntilFinished() }
        let server = try LiveServer(store: try folder.store()) {
            $0.limits.maxRooms = 3
            $0.roomPolicy.emptyRoomLifetime = .seconds(1)
        }
        defer { server.stop() }
        for room in ["a", "b", "c"] {
            try Self.scheduledAndLeft(client, port: server.port, room, Self.schedule("09:00", enabled: false))
        }
        // Each empty room leaves memory once its lifetime has passed; a new room is then let in.
        let joined = try Self.eventually(within: 15) {
            let bo = try Peer(client, port: server.port)
            defer { bo.close() }
            bo.send(.join(room: "new", name: "Bo", token: nil))
            return try bo.expect("welcome or error") { message -> Bool? in
                switch message {
                case .welcome: true
                case .error(.roomLimit, _, _, _, _): false
                default: nil
                }
            }
        }
        #expect(joined, "a new room once the three empty ones have left memory")
        #expect(try Self.scheduleIDs(port: server.port, "a") == ["s1"], "their schedules stay stored")
    }

    @Test func aRestartWithALowerRoomLimitHoldsNoMoreRoomsThanIt() throws {
        let folder = try Folder()
        let client = try WebSocketClient()
        client.start()
        defer { client.stop(); client.waitUntilFinished() }
        let first = try LiveServer(store: try folder.store()) { $0.limits.maxRooms = 12 }
        for n in 0..<10 {
            try Self.scheduledAndLeft(client, port: first.port, "room\(n)", Self.schedule(Self.hoursAhead(3), enabled: n % 2 == 0))
        }
        first.stop()

        let again = try LiveServer(store: try folder.store()) { $0.limits.maxRooms = 4 }
        defer { again.stop() }
        // Its first turn brings back what it brings back; a ping answered is after it.
        let probe = try Peer(client, port: again.port)
        probe.send(.ping, ref: .string("p"))
        _ = try probe.expect("pong") { if case .pong = $0 { true } else { nil } }
        #expect(Self.rooms(in: again) <= 4, "the limit holds at start-up")
        #expect(Self.rooms(in: again) == 0, "nobody in them and nothing due: they stay stored")
        // Room for a new room.
        probe.send(.join(room: "fresh", name: "Bo", token: nil))
        let welcomed = try probe.expect("welcome or error") { message -> Bool? in
            switch message {
            case .welcome: true
            case .error: false
            default: nil
            }
        }
        #expect(welcomed)
        #expect(try Self.scheduleIDs(port: again.port, "room3") == ["s1"], "read from the store")
    }

    @Test func aScheduledRoomOutOfMemoryStillStartsOnItsSecond() async throws {
        let folder = try Folder()
        let client = try WebSocketClient()
        client.start()
        defer { client.stop(); client.waitUntilFinished() }
        let server = try LiveServer(store: try folder.store()) {
            $0.roomPolicy.emptyRoomLifetime = .seconds(1)
            $0.scheduledReturnLeadSeconds = 3
        }
        defer { server.stop() }
        // The next minute at least ten seconds ahead, in UTC: time to leave memory first.
        let now = Date().timeIntervalSince1970
        var target = (Int64(now) / 60 + 1) * 60
        if Double(target) - now < 10 { target += 60 }
        let secondsIntoDay = target % 86_400
        let time = String(format: "%02d:%02d", secondsIntoDay / 3600, secondsIntoDay / 60 % 60)
        try Self.scheduledAndLeft(client, port: server.port, "standup", Self.schedule(time))
        #expect(Self.eventually(within: 5) { Self.rooms(in: server) == 0 }, "out of memory, nobody in it")
        #expect(try httpGet(port: server.port, path: "/api/rooms/standup").status == 404)

        // Most of the wait asleep, not blocking a thread the other tests run on.
        let asleep = Double(target) - Date().timeIntervalSince1970 - 1
        if asleep > 0 { try await Task.sleep(for: .milliseconds(Int64(asleep * 1000))) }
        var snapshot: SnapshotPayload?
        _ = try Self.eventually(within: 10) {
            let (status, body) = try httpGet(port: server.port, path: "/api/rooms/standup")
            guard status == 200, let s = try? WireCodec.decodeSnapshotBody(Array(body.utf8)), s.status == .running
            else { return false }
            snapshot = s
            return true
        }
        let running = try #require(snapshot, "back in memory and started")
        #expect(running.phase == .focus && running.scheduledRun?.name == "Daily")
        #expect(running.endsAt == target * 1000 + 1_500_000, "the focus runs from the schedule's own second")
    }
}
