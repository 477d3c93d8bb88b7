import Foundation
import PomodoroCore
@testable import PomodoroProtocol
import Testing

/// The golden wire fixtures in Tests/fixtures/wire: one file per message shape, exactly the bytes the encoder
/// writes. The page's node tests read the same files, so the two sides of the wire are checked against one
/// definition.
///
/// To write the files again after a deliberate change of the wire, run this suite with
/// `POMODORO_WRITE_WIRE_FIXTURES=1` and commit the folder on its own.
@Suite("Golden wire fixtures")
struct GoldenFixtureTests {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("fixtures/wire")

    enum Shape: Sendable {
        case server(ServerMessage)
        case client(ClientFrame)
        case statsBody(StatsReportPayload)
        case history(HistoryPayload)
        case httpError(code: ErrorCode, message: String, field: String?)
        case roomBody(SnapshotPayload)
        case schedulesBody(SchedulesPayload)

        var bytes: [UInt8] {
            switch self {
            case .server(let message): WireCodec.encode(message)
            case .client(let frame): WireCodec.encode(frame)
            case .statsBody(let report): WireCodec.encodeStatsBody(report)
            case .history(let history): WireCodec.encodeHistory(history)
            case let .httpError(code, message, field): WireCodec.encodeHTTPError(code: code, message: message, field: field)
            case .roomBody(let room): WireCodec.encodeSnapshotBody(room)
            case .schedulesBody(let payload): WireCodec.encodeSchedulesBody(payload)
            }
        }
    }

    static let epoch: Int64 = 1_767_225_600_000
    static let token = "3q9Zr2bW0x7s4T1kV8yN5mA6"
    static let limits = LimitsPayload(RoomPolicy(), passcodeLength: 4...64)
    static let zero = StatsPayload(focusCompleted: 0, focusSeconds: 0, interruptions: 0)

    static let running = SnapshotPayload(
        room: "team-alpha", phase: .focus, status: .running, running: true, remainingMs: 1_499_000,
        phaseLengthMs: 1_500_000, endsAt: epoch + 1_499_000, cycle: 2, settings: .standard,
        pendingSettings: RoomSettings(focus: 3000, shortBreak: 600, longBreak: 1800, longBreakEvery: 4, autoStart: true),
        members: [
            MemberPayload(id: "m1", name: "Ada", present: true, connected: true, task: "Write the codec",
                          stats: StatsPayload(focusCompleted: 1, focusSeconds: 1500, interruptions: 0)),
            MemberPayload(id: "m2", name: "Zoë \"Z\" 🍅", present: false, connected: true, task: "",
                          stats: StatsPayload(focusCompleted: 0, focusSeconds: 61, interruptions: 1)),
        ],
        stats: StatsPayload(focusCompleted: 1, focusSeconds: 1561, interruptions: 1), seq: 42, serverTime: epoch + 1000,
        control: .host, host: "m1", locked: true)

    static let idle = SnapshotPayload(
        room: "team-alpha", phase: .idle, status: .idle, running: false, remainingMs: 0, phaseLengthMs: 0,
        endsAt: nil, cycle: 1, settings: .standard, pendingSettings: nil,
        members: [MemberPayload(id: "m1", name: "Ada", present: true, connected: true, task: "", stats: zero)],
        stats: zero, seq: 2, serverTime: epoch, control: .anyone, host: "m1", locked: false)

    static let paused = SnapshotPayload(
        room: "team-alpha", phase: .shortBreak, status: .paused, running: false, remainingMs: 61_234,
        phaseLengthMs: 300_000, endsAt: nil, cycle: 3, settings: .standard, pendingSettings: nil,
        members: (1...3).map {
            MemberPayload(id: "m\($0)", name: "Member \($0)", present: $0 != 2, connected: $0 != 3, task: "",
                          stats: StatsPayload(focusCompleted: 2, focusSeconds: 3000, interruptions: 0))
        },
        memberCount: 250, presentCount: 200, membersTruncated: true,
        stats: StatsPayload(focusCompleted: 500, focusSeconds: 750_000, interruptions: 12), seq: 9000,
        serverTime: epoch, control: .anyone, host: nil, locked: false)

    static let day1 = DayTotalsPayload(date: "2026-01-13", focusSessions: 1, focusSeconds: 1800, interruptions: 0)
    static let day2 = DayTotalsPayload(date: "2026-01-14", focusSessions: 1, focusSeconds: 1500, interruptions: 1)
    static let report = StatsReportPayload(
        room: "team-alpha", tz: "Europe/Berlin", today: "2026-01-14", days: 2,
        totals: StatsTotalsPayload(focusSessions: 12, focusSeconds: 18_000, interruptions: 3, currentStreak: 2,
                                   longestStreak: 9),
        perDay: [day1, day2],
        members: [MemberStatsPayload(name: "Ada",
                                     totals: StatsTotalsPayload(focusSessions: 12, focusSeconds: 18_000,
                                                                interruptions: 3, currentStreak: 2, longestStreak: 9),
                                     perDay: [day1, day2])])

    static let schedules = SchedulesPayload(room: "team-alpha", schedules: [
        SchedulePayload(id: "s1", fields: ScheduleFields(name: "Writing block", time: "14:00", zone: "Europe/Berlin",
                                                         days: ["mon", "thu"], sessions: 4, warning: 5, enabled: true),
                        missed: 1, next: epoch + 86_400_000),
        SchedulePayload(id: "s2", fields: ScheduleFields(name: "Launch day", time: "02:30", zone: "America/New_York",
                                                         date: "2027-03-14",
                                                         settings: RoomSettings(focus: 3000, shortBreak: 600),
                                                         warning: 0, enabled: false),
                        missed: 0, next: nil),
    ])

    static func event(_ payload: EventPayload) -> Shape { .server(.event(room: "team-alpha", payload, serverTime: epoch)) }

    /// Every fixture by its path under Tests/fixtures/wire.
    static let table: [(String, Shape)] = coreTable + hostingTable + apiTokenTable + webhookTable

    static let coreTable: [(String, Shape)] = [
        ("server/welcome.json", .server(.welcome(you: YouPayload(id: "m1", token: token, resumed: false), room: running,
                                                 serverTime: epoch + 1000, limits: limits, ref: .string("j1")))),
        ("server/welcome-resumed.json", .server(.welcome(you: YouPayload(id: "m1", token: token, resumed: true),
                                                         room: idle, serverTime: epoch, limits: limits, ref: nil))),
        ("server/state.json", .server(.state(running))),
        ("server/state-idle.json", .server(.state(idle))),
        ("server/state-big-room.json", .server(.state(paused))),
        ("server/you.json", .server(.you(room: "team-alpha", member: MemberPayload(
            id: "m150", name: "Cy", present: false, connected: true, task: "Write the report",
            stats: StatsPayload(focusCompleted: 2, focusSeconds: 3000, interruptions: 1))))),
        ("server/tick.json", .server(.tick(TickPayload(room: "team-alpha", phase: .focus, remainingMs: 1_498_000,
                                                       endsAt: epoch + 1_499_000, cycle: 2, seq: 42,
                                                       serverTime: epoch + 1001)))),
        ("server/event-phaseCompleted.json",
         event(.phaseCompleted(completed: .focus, next: .shortBreak, autoStarted: true, cycle: 3))),
        ("server/event-memberJoined.json", event(.memberJoined(member: "m2", name: "Lin"))),
        ("server/event-memberReturned.json", event(.memberReturned(member: "m2"))),
        ("server/event-memberAway.json", event(.memberAway(member: "m2", reason: .away))),
        ("server/event-memberAway-disconnected.json",
         event(.memberAway(member: "m2", reason: .disconnected, connection: .lost))),
        ("server/event-memberAway-closed.json", event(.memberAway(member: "m2", reason: .disconnected, connection: .closed))),
        ("server/event-memberBack.json", event(.memberBack(member: "m2"))),
        ("server/event-memberLeft.json", event(.memberLeft(member: "m2", reason: .left))),
        ("server/event-memberLeft-expired.json", event(.memberLeft(member: "m2", reason: .expired))),
        ("server/event-control.json", event(.control(action: .pause, by: "m1", seconds: nil))),
        ("server/event-control-extend.json", event(.control(action: .extend, by: "m1", seconds: 300))),
        ("server/event-hostChanged.json", event(.hostChanged(member: "m2"))),
        ("server/event-hostChanged-nobody.json", event(.hostChanged(member: nil))),
        ("server/event-controlModeChanged.json", event(.controlModeChanged(mode: .host, by: "m1"))),
        ("server/ok.json", .server(.ok(command: "start", appliesFrom: nil, ref: .number(1)))),
        ("server/ok-configure.json", .server(.ok(command: "configure", appliesFrom: .nextPhase, ref: .string("cfg")))),
        ("server/error.json", .server(.error(ProtocolError(RoomError.invalidArgument(field: "seconds",
                                                                                     reason: "must be non-zero"),
                                                           ref: .number(7))))),
        ("server/error-invalid-state.json", .server(.error(ProtocolError(RoomError.invalidState("the timer is not running"))))),
        ("server/error-replaced.json", .server(.error(code: .replaced, message: "this member joined from another connection",
                                                      field: nil, ref: nil))),
        ("server/error-observer.json", .server(.error(code: .observer, message: "observers cannot start; join the room to take part",
                                                      field: nil, ref: .number(3)))),
        ("server/observing.json", .server(.observing(room: running, serverTime: epoch + 1000, ref: .string("o1")))),
        ("server/pong.json", .server(.pong(serverTime: epoch, ref: .number(99)))),
        ("server/stats.json", .server(.stats(report, ref: .number(9)))),
        ("server/schedules.json", .server(.schedules(schedules, ref: .number(11)))),
        ("server/state-next-session.json", .server(.state({
            var room = idle
            room.nextSession = NextSessionPayload(schedule: "s1", name: "Writing block", startsAt: epoch + 86_400_000)
            return room
        }()))),
        ("server/state-scheduled-run.json", .server(.state({
            var room = running
            room.scheduledRun = ScheduledRunPayload(schedule: "s1", name: "Writing block", focusSessions: 3, focusDone: 1)
            return room
        }()))),
        ("server/state-scheduled-run-open.json", .server(.state({
            var room = running
            room.scheduledRun = ScheduledRunPayload(schedule: "s2", name: "Open studio", focusSessions: nil, focusDone: 0)
            return room
        }()))),
        ("server/state-aligned.json", .server(.state({
            var room = running
            room.settings.aligned = try! ZoneName("Europe/Berlin")
            return room
        }()))),
        ("server/event-scheduleWarning.json",
         event(.schedule(.warning(schedule: "s1", name: "Writing block", startsAt: epoch + 300_000, minutes: 5)))),
        ("server/event-scheduleStarted.json", event(.schedule(.started(schedule: "s1", name: "Writing block", lateMs: 3)))),
        ("server/event-scheduleMissed.json",
         event(.schedule(.missed(schedule: "s1", name: "Writing block", occurrence: epoch - 60_000, busy: true)))),
        ("server/event-scheduleEnded.json",
         event(.schedule(.ended(schedule: "s1", name: "Writing block", focusSessions: 4)))),
        ("client/join.json", .client(ClientFrame(.join(room: "team-alpha", name: "Ada", token: nil), ref: .string("j1")))),
        ("client/join-full.json", .client(ClientFrame(.join(room: "design-crit", name: "Ada", token: token,
                                                            passcode: "tomato soup", control: .host, tz: "Europe/Berlin"),
                                                      ref: .string("j2")))),
        ("client/start.json", .client(ClientFrame(.start, ref: .number(1)))),
        ("client/pause.json", .client(ClientFrame(.pause))),
        ("client/resume.json", .client(ClientFrame(.resume))),
        ("client/skip.json", .client(ClientFrame(.skip))),
        ("client/reset.json", .client(ClientFrame(.reset))),
        ("client/extend.json", .client(ClientFrame(.extend(seconds: 300), ref: .number(7)))),
        ("client/extend-shorten.json", .client(ClientFrame(.extend(seconds: -60)))),
        ("client/configure.json", .client(ClientFrame(.configure(RoomSettings(focus: 3000, shortBreak: 600, longBreak: 1800,
                                                                               longBreakEvery: 4, autoStart: true)),
                                                      ref: .string("cfg")))),
        ("client/configure-aligned.json", .client(ClientFrame(.configure(RoomSettings(
            focus: 1500, shortBreak: 300, longBreak: 900, longBreakEvery: 4, autoStart: false,
            aligned: try! ZoneName("Europe/Berlin"))), ref: .string("cfg")))),
        ("client/task.json", .client(ClientFrame(.task(text: "Write the codec")))),
        ("client/presence.json", .client(ClientFrame(.presence(away: true)))),
        ("client/leave.json", .client(ClientFrame(.leave))),
        ("client/ping.json", .client(ClientFrame(.ping, ref: .number(99)))),
        ("client/control.json", .client(ClientFrame(.control(mode: .anyone)))),
        ("client/handOff.json", .client(ClientFrame(.handOff(member: "m2")))),
        ("client/stats.json", .client(ClientFrame(.stats(room: nil, days: nil, tz: nil, passcode: nil), ref: .number(8)))),
        ("client/stats-full.json", .client(ClientFrame(.stats(room: "design-crit", days: 7, tz: "Europe/Berlin",
                                                              passcode: "tomato soup"), ref: .number(10)))),
        ("client/observe.json", .client(ClientFrame(.observe(room: "team-alpha"), ref: .string("o1")))),
        ("client/observe-full.json", .client(ClientFrame(.observe(room: "team-alpha", token: token,
                                                                  passcode: "tomato soup")))),
        ("client/schedules.json", .client(ClientFrame(.schedule(.list), ref: .number(12)))),
        ("client/addSchedule.json", .client(ClientFrame(.schedule(.add(ScheduleFields(
            name: "Writing block", time: "14:00", zone: "Europe/Berlin", days: ["mon", "thu"], sessions: 4))),
                                                        ref: .number(13)))),
        ("client/addSchedule-once.json", .client(ClientFrame(.schedule(.add(ScheduleFields(
            name: "Launch day", time: "02:30", zone: "America/New_York", date: "2027-03-14",
            settings: RoomSettings(focus: 3000, shortBreak: 600), warning: 0, enabled: false)))))),
        ("client/changeSchedule.json", .client(ClientFrame(.schedule(.change(id: "s1", ScheduleFields(
            name: "Writing block", time: "15:00", zone: "Europe/Berlin", days: ["thu"], warning: 10)))))),
        ("client/switchSchedule.json", .client(ClientFrame(.schedule(.setEnabled(id: "s1", enabled: false))))),
        ("client/deleteSchedule.json", .client(ClientFrame(.schedule(.delete(id: "s1")), ref: .string("del")))),
        ("http/schedules.json", .schedulesBody(schedules)),
        ("http/stats.json", .statsBody(report)),
        ("http/room.json", .roomBody(running)),
        ("http/history.json", .history(HistoryPayload(
            room: "team-alpha",
            sessions: [FocusSessionPayload(startedAt: epoch, endedAt: epoch + 1_500_000, lengthSeconds: 1500, members: [
                FocusSessionMemberPayload(id: "m1", name: "Ada", task: "Write the codec", focusSeconds: 1500),
            ])],
            nextBefore: epoch))),
        ("http/error.json", .httpError(code: .badRequest, message: "days must be 1–366", field: "days")),
    ]

    static func read(_ path: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: folder.appendingPathComponent(path)))
    }

    /// Every .json file under the folder, as paths relative to it.
    static func files() throws -> [String] {
        var paths: [String] = []
        for sub in ["server", "client", "http"] {
            let names = try FileManager.default.contentsOfDirectory(atPath: folder.appendingPathComponent(sub).path)
            paths += names.filter { $0.hasSuffix(".json") }.map { "\(sub)/\($0)" }
        }
        return paths.sorted()
    }

    @Test("each fixture holds exactly the bytes the encoder writes for its message")
    func tableMatchesFiles() throws {
        let write = ProcessInfo.processInfo.environment["POMODORO_WRITE_WIRE_FIXTURES"] == "1"
        for (path, shape) in Self.table {
            if write {
                let url = Self.folder.appendingPathComponent(path)
                try FileManager.default.createDirectory(at: url.deletingLastPathComponent(),
                                                        withIntermediateDirectories: true)
                try Data(shape.bytes).write(to: url)
            }
            #expect(try Self.read(path).text == shape.bytes.text, "\(path)")
        }
        #expect(try Self.files() == Self.table.map(\.0).sorted(), "a fixture file with no message, or the reverse")
    }

    @Test("every fixture decodes and encodes back to the same bytes")
    func roundTrip() throws {
        let paths = try Self.files()
        #expect(paths.count >= 40)
        for path in paths {
            let bytes = try Self.read(path)
            let again: [UInt8]
            switch path {
            case let p where p.hasPrefix("server/"): again = WireCodec.encode(try WireCodec.decodeServerMessage(bytes))
            case let p where p.hasPrefix("client/"): again = WireCodec.encode(try WireCodec.decodeClientFrame(bytes))
            case "http/stats.json": again = WireCodec.encodeStatsBody(try WireCodec.decodeStatsBody(bytes))
            case "http/history.json": again = WireCodec.encodeHistory(try WireCodec.decodeHistory(bytes))
            case "http/room.json": again = WireCodec.encodeSnapshotBody(try WireCodec.decodeSnapshotBody(bytes))
            case "http/error.json": again = WireCodec.encodeHTTPError(try WireCodec.decodeHTTPError(bytes))
            case "http/schedules.json": again = WireCodec.encodeSchedulesBody(try WireCodec.decodeSchedulesBody(bytes))
            default:
                Issue.record("no decoder for \(path)")
                continue
            }
            #expect(again.text == bytes.text, "\(path)")
        }
    }

    @Test("welcome carries the limits in the documented shape, after serverTime and before ref")
    func welcomeLimits() throws {
        let text = try Self.read("server/welcome.json").text
        #expect(text.hasSuffix(#","serverTime":1767225601000,"limits":{"maxNameLength":40,"maxTaskLength":200,"minPasscodeLength":4,"maxPasscodeLength":64,"maxExtendSeconds":3600,"maxPhaseSeconds":28800,"minFocusSeconds":60,"maxSettingSeconds":14400,"maxLongBreakEvery":12},"ref":"j1"}"#))
    }
}
