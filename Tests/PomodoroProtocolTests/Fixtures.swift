import PomodoroCore
@testable import PomodoroProtocol

/// Sample values shared by the codec tests: awkward strings, every message shape, nil and non-nil optionals.
enum Fixtures {
    /// Strings that stress escaping: quotes, backslashes, slashes, controls, NUL, non-ASCII, emoji, RTL text.
    static let awkwardStrings: [String] = [
        "",
        "Ada",
        "say \"hi\"",
        #"back\slash \\ \n (not a newline)"#,
        "line\nbreak\ttab\r",
        "nul\u{0}inside",
        "</script><b>",
        "Zoë Ångström",
        "日本語の名前",
        "🍅 focus 🧑🏽‍💻",
        "שלום",
        "\u{7F}\u{1F}\u{2028}",
    ]

    static let refs: [Ref?] = [
        nil, .string("r1"), .string(""), .string(String(repeating: "x", count: 64)), .string("ünï \"q\""),
        .number(0), .number(42), .number(-7), .number(.max), .number(.min),
    ]

    /// The limits of a server with the default configuration (docs/PROTOCOL.md, `welcome`).
    static let limits = LimitsPayload(RoomPolicy(), passcodeLength: 4...64)

    static let custom = RoomSettings(focus: 50 * 60, shortBreak: 10 * 60, longBreak: 30 * 60, longBreakEvery: 3,
                                     autoStart: true)

    static let clientMessages: [ClientMessage] = [
        .join(room: "team-alpha", name: "Ada", token: nil),
        .join(room: "team-alpha", name: "Zoë \"the\" \\ Ångström 🍅", token: "tok-3f9a"),
        .join(room: "", name: "", token: ""),
        .start, .pause, .resume, .skip, .reset,
        .extend(seconds: 300), .extend(seconds: -60), .extend(seconds: 0), .extend(seconds: .max), .extend(seconds: .min),
        .configure(.standard), .configure(custom),
        .task(text: "write the \"codec\" \\ tests"), .task(text: ""), .task(text: "nul\u{0}byte"),
        .presence(away: true), .presence(away: false),
        .leave, .ping,
        .join(room: "vault", name: "Ada", token: nil, passcode: "open sesame", control: .host),
        .join(room: "vault", name: "Ada", token: "tok", passcode: nil, control: .anyone),
        .control(mode: .host), .control(mode: .anyone), .handOff(member: "m2"),
        .passcode("new soup"), .passcode(nil), .kick(member: "m3"),
        .join(room: "team-alpha", name: "Ada", token: nil, tz: "Europe/Berlin"),
        .join(room: "vault", name: "Ada", token: "tok", passcode: "open sesame", control: .host, tz: ""),
        .stats(room: nil, days: nil, tz: nil, passcode: nil),
        .stats(room: "team-alpha", days: 14, tz: "Europe/Berlin", passcode: "open sesame"),
        .stats(room: "team-alpha", days: nil, tz: nil, passcode: nil),
        .stats(room: nil, days: 366, tz: nil, passcode: nil),
        .stats(room: nil, days: nil, tz: "America/Argentina/Buenos_Aires", passcode: nil),
        .stats(room: nil, days: nil, tz: nil, passcode: ""),
        // The decoder checks types only: out-of-bounds values travel, for the server to refuse.
        .stats(room: "", days: 0, tz: "Mars/Olympus", passcode: nil),
        .stats(room: nil, days: -1, tz: nil, passcode: nil),
        .stats(room: nil, days: .max, tz: nil, passcode: nil),
        .schedule(.list),
        .schedule(.add(ScheduleFields(name: "Writing block", time: "14:00", zone: "Europe/Berlin", days: ["thu"],
                                      sessions: 4))),
        .schedule(.add(ScheduleFields(name: "Launch \"day\" 🚀", time: "02:30", zone: "America/New_York",
                                      date: "2027-03-14", settings: custom, warning: 0, enabled: false))),
        .schedule(.change(id: "s2", ScheduleFields(name: "", time: "", zone: "", days: []))),
        .schedule(.setEnabled(id: "s1", enabled: true)), .schedule(.setEnabled(id: "s1", enabled: false)),
        .schedule(.delete(id: "s3")),
    ]

    static func member(_ n: Int, name: String = "Member", task: String = "") -> MemberPayload {
        MemberPayload(id: "m\(n)", name: name, present: n % 2 == 0, connected: n % 3 != 0, task: task,
                      stats: StatsPayload(focusCompleted: n, focusSeconds: Int64(n) * 1500, interruptions: n / 2))
    }

    static let runningSnapshot = SnapshotPayload(
        room: "team-alpha", phase: .focus, status: .running, running: true, remainingMs: 1_499_000,
        phaseLengthMs: 1_500_000, endsAt: 1_700_000_001_499, cycle: 2, settings: .standard,
        pendingSettings: custom,
        members: [member(1, name: "Ada", task: "codec"), member(2, name: "Zoë \"Z\" \\ 🍅", task: "nul\u{0}x"),
                  member(3, name: "日本", task: "")],
        stats: StatsPayload(focusCompleted: 7, focusSeconds: 10_500, interruptions: 1),
        seq: 42, serverTime: 1_700_000_000_000)

    static let idleSnapshot = SnapshotPayload(
        room: "r", phase: .idle, status: .idle, running: false, remainingMs: 0, phaseLengthMs: 0, endsAt: nil,
        cycle: 1, settings: .standard, pendingSettings: nil, members: [],
        stats: StatsPayload(focusCompleted: 0, focusSeconds: 0, interruptions: 0), seq: 1, serverTime: 0)

    static let pausedSnapshot = SnapshotPayload(
        room: "Room_9-x", phase: .longBreak, status: .paused, running: false, remainingMs: 61_234,
        phaseLengthMs: 900_000, endsAt: nil, cycle: 4, settings: custom, pendingSettings: .standard,
        members: (1...50).map { member($0, name: "Member \($0)") },
        stats: StatsPayload(focusCompleted: 100, focusSeconds: .max, interruptions: 3),
        seq: .max, serverTime: -1, control: .host, host: "m7", locked: true)

    static let tick = TickPayload(room: "team-alpha", phase: .focus, remainingMs: 1_499_000,
                                  endsAt: 1_700_000_001_499, cycle: 2, seq: 42, serverTime: 1_700_000_000_000)

    static let events: [EventPayload] = [
        .phaseCompleted(completed: .focus, next: .shortBreak, autoStarted: false, cycle: 1),
        .phaseCompleted(completed: .focus, next: .longBreak, autoStarted: true, cycle: 4),
        .phaseCompleted(completed: .longBreak, next: .focus, autoStarted: true, cycle: 1),
        .memberJoined(member: "m1", name: "Ada"),
        .memberJoined(member: "m2", name: "Zoë \"Z\" \\ 🍅"),
        .memberReturned(member: "m1"),
        .memberAway(member: "m1", reason: .away),
        .memberAway(member: "m2", reason: .disconnected),
        .memberAway(member: "m2", reason: .disconnected, connection: .closed),
        .memberAway(member: "m2", reason: .disconnected, connection: .lost),
        .memberBack(member: "m1"),
        .memberLeft(member: "m1", reason: .left),
        .memberLeft(member: "m2", reason: .expired),
        .control(action: .start, by: "m1", seconds: nil),
        .control(action: .pause, by: "m1", seconds: nil),
        .control(action: .resume, by: "m1", seconds: nil),
        .control(action: .skip, by: "m1", seconds: nil),
        .control(action: .reset, by: "m1", seconds: nil),
        .control(action: .extend, by: "m2", seconds: 300),
        .control(action: .extend, by: "m2", seconds: -60),
        .control(action: .configure, by: "m1", seconds: nil),
        .hostChanged(member: "m2"),
        .hostChanged(member: nil),
        .controlModeChanged(mode: .host, by: "m1"),
        .schedule(.warning(schedule: "s1", name: "Writing block", startsAt: 1_767_225_600_000, minutes: 5)),
        .schedule(.started(schedule: "s1", name: "Writing block", lateMs: 0)),
        .schedule(.missed(schedule: "s2", name: "Standup", occurrence: 1_767_225_600_000, busy: true)),
        .schedule(.ended(schedule: "s1", name: "Writing block", focusSessions: 4)),
        .memberLeft(member: "m2", reason: .removed),
        .lockChanged(locked: true, by: "m1"),
        .lockChanged(locked: false, by: "m1"),
        .webhookDisabled(webhook: 2, reason: "failed for a day; last: answered 500"),
    ]

    static func day(_ date: String, _ sessions: Int, minutes: Int64 = -1, interruptions: Int = 0) -> DayTotalsPayload {
        DayTotalsPayload(date: date, focusSessions: sessions, focusSeconds: minutes < 0 ? Int64(sessions) * 1500 : minutes * 60,
                         interruptions: interruptions)
    }

    /// Three days of a room with two people, the second with awkward characters in the name.
    static let statsReport = StatsReportPayload(
        room: "team-alpha", tz: "Europe/Berlin", today: "2026-11-21", days: 3,
        totals: StatsTotalsPayload(focusSessions: 12, focusSeconds: 18_000, interruptions: 3, currentStreak: 4,
                                   longestStreak: 9),
        perDay: [day("2026-11-19", 0), day("2026-11-20", 2, interruptions: 1), day("2026-11-21", 1)],
        members: [
            MemberStatsPayload(
                name: "Ada",
                totals: StatsTotalsPayload(focusSessions: 9, focusSeconds: 13_500, interruptions: 1, currentStreak: 4,
                                           longestStreak: 9),
                perDay: [day("2026-11-19", 0), day("2026-11-20", 2, interruptions: 1), day("2026-11-21", 1)]),
            MemberStatsPayload(
                name: "Zoë \"Z\" \\ 🍅",
                totals: StatsTotalsPayload(focusSessions: 3, focusSeconds: 4_500, interruptions: 2, currentStreak: 0,
                                           longestStreak: 2),
                perDay: [day("2026-11-19", 0), day("2026-11-20", 1, minutes: 20), day("2026-11-21", 0)]),
        ])

    /// A room never seen: zeros, one day, nobody.
    static let emptyStatsReport = StatsReportPayload(
        room: "r", tz: "UTC", today: "2026-01-01", days: 1, totals: .zero, perDay: [day("2026-01-01", 0)],
        members: [])

    static let history = HistoryPayload(
        room: "team-alpha",
        sessions: [
            FocusSessionPayload(startedAt: 1_763_715_000_000, endedAt: 1_763_716_500_000, lengthSeconds: 1500, members: [
                FocusSessionMemberPayload(id: "m1", name: "Ada", task: "write the report", focusSeconds: 1500),
                FocusSessionMemberPayload(id: "m2", name: "Zoë \"Z\" 🍅", task: "", focusSeconds: 61),
            ]),
            FocusSessionPayload(startedAt: 1_763_700_000_000, endedAt: 1_763_701_800_000, lengthSeconds: 1800,
                                members: []),
        ],
        nextBefore: 1_763_701_800_000)

    static var serverMessages: [ServerMessage] {
        var messages: [ServerMessage] = [
            .welcome(you: YouPayload(id: "m1", token: "secret-token", resumed: false), room: runningSnapshot,
                     serverTime: 1_700_000_000_000, limits: limits, ref: .string("j1")),
            .welcome(you: YouPayload(id: "m7", token: "", resumed: true), room: idleSnapshot, serverTime: 5,
                     limits: LimitsPayload(maxNameLength: 1, maxTaskLength: 0, minPasscodeLength: 0,
                                           maxPasscodeLength: .max, maxExtendSeconds: -1, maxPhaseSeconds: 0,
                                           minFocusSeconds: 1, maxSettingSeconds: 2, maxLongBreakEvery: 3),
                     ref: nil),
            .state(runningSnapshot), .state(idleSnapshot), .state(pausedSnapshot),
            .tick(tick),
            .tick(TickPayload(room: "r", phase: .shortBreak, remainingMs: 0, endsAt: 0, cycle: 1, seq: 0,
                              serverTime: 0)),
            .ok(command: "start", appliesFrom: nil, ref: nil),
            .ok(command: "configure", appliesFrom: .now, ref: .number(3)),
            .ok(command: "configure", appliesFrom: .nextPhase, ref: .string("c")),
            .pong(serverTime: 1_700_000_000_000, ref: nil),
            .pong(serverTime: 1_700_000_000_000, ref: .number(-1)),
            .stats(statsReport, ref: .number(7)),
            .stats(emptyStatsReport, ref: nil),
        ]
        for event in events {
            messages.append(.event(room: "team-alpha", event, serverTime: 1_700_000_000_000))
        }
        for code in ErrorCode.allCases {
            messages.append(.error(code: code, message: "why: \"\(code.rawValue)\" \\ ✓", field: nil, ref: nil))
            messages.append(.error(code: code, message: "", field: "seconds", ref: .string("r")))
        }
        for text in awkwardStrings {
            messages.append(.error(code: .badRequest, message: text, field: text, ref: .string(text)))
            messages.append(.event(room: "r", .memberJoined(member: text, name: text), serverTime: 0))
            messages.append(.you(room: text, member: MemberPayload(id: text, name: text, present: false, connected: true,
                                                                   task: text, stats: StatsPayload(focusCompleted: 1,
                                                                   focusSeconds: .max, interruptions: 0))))
        }
        return messages
    }
}

extension Array where Element == UInt8 {
    init(_ text: String) { self = Array(text.utf8) }
    var text: String { String(decoding: self, as: UTF8.self) }
}
