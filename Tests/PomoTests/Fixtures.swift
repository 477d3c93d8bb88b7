import PomodoroClient
import PomodoroCore
import PomodoroProtocol

/// Building blocks for the client's tests: snapshots, members, messages, and a manual clock.
enum Fixture {
    /// The server's wall clock at the start of every test: 2026-01-01 00:00:00 UTC.
    static let serverEpoch: Int64 = 1_767_225_600_000

    /// A local moment: `ms` on the monotonic clock; the wall clock runs 1_767_225_000_000 ms ahead of it.
    static func local(_ ms: Int64) -> LocalInstant {
        LocalInstant(monotonicMs: ms, wallMs: 1_767_225_600_000 + ms)
    }

    static func member(_ id: String, _ name: String, present: Bool = true, connected: Bool = true,
                       task: String = "", done: Int = 0) -> MemberPayload {
        MemberPayload(id: id, name: name, present: present, connected: connected, task: task,
                      stats: StatsPayload(focusCompleted: done, focusSeconds: Int64(done) * 1500, interruptions: 0))
    }

    static func snapshot(room: String = "team-alpha", phase: Phase = .idle, status: TimerStatus = .idle,
                         remainingMs: Int64 = 0, phaseLengthMs: Int64 = 0, endsAt: Int64? = nil, cycle: Int = 1,
                         settings: RoomSettings = .standard, pending: RoomSettings? = nil,
                         members: [MemberPayload] = [member("m1", "Ada")], seq: UInt64 = 2,
                         serverTime: Int64 = serverEpoch) -> SnapshotPayload {
        SnapshotPayload(room: room, phase: phase, status: status, running: status == .running,
                        remainingMs: remainingMs, phaseLengthMs: phaseLengthMs, endsAt: endsAt, cycle: cycle,
                        settings: settings, pendingSettings: pending, members: members,
                        stats: StatsPayload(focusCompleted: 0, focusSeconds: 0, interruptions: 0), seq: seq,
                        serverTime: serverTime)
    }

    /// A focus of `lengthMs` that started at server time `startedAt` and runs.
    static func runningFocus(lengthMs: Int64 = 1_500_000, startedAt: Int64 = serverEpoch, at serverTime: Int64,
                             cycle: Int = 1, members: [MemberPayload] = [member("m1", "Ada")],
                             seq: UInt64 = 5) -> SnapshotPayload {
        snapshot(phase: .focus, status: .running, remainingMs: startedAt + lengthMs - serverTime,
                 phaseLengthMs: lengthMs, endsAt: startedAt + lengthMs, cycle: cycle, members: members, seq: seq,
                 serverTime: serverTime)
    }

    /// The limits a server with the default configuration sends in `welcome`.
    static let limits = LimitsPayload(RoomPolicy(), passcodeLength: 4...64)

    static func welcome(_ room: SnapshotPayload, id: String = "m1", resumed: Bool = false,
                        limits: LimitsPayload = limits) -> ServerMessage {
        .welcome(you: YouPayload(id: id, token: "0123456789abcdef0123456789abcdef", resumed: resumed), room: room,
                 serverTime: room.serverTime, limits: limits, ref: .string("join"))
    }

    static func tick(remainingMs: Int64, endsAt: Int64, seq: UInt64, room: String = "team-alpha",
                     phase: Phase = .focus) -> ServerMessage {
        .tick(TickPayload(room: room, phase: phase, remainingMs: remainingMs, endsAt: endsAt, cycle: 1, seq: seq,
                          serverTime: endsAt - remainingMs))
    }

    /// A dashboard that has joined `room` as `id`, as of local moment `at`.
    static func dashboard(_ room: SnapshotPayload, id: String = "m1", at: LocalInstant = local(0),
                          bell: Bool = true, silenced: Bool = false, limits: LimitsPayload = limits,
                          words: Words = Words()) -> Dashboard {
        var d = Dashboard(roomName: room.room, serverLabel: "127.0.0.1:8080", bell: bell, silenced: silenced, words: words)
        _ = d.handle(.connecting(attempt: 1))
        _ = d.handle(.message(welcome(room, id: id, limits: limits), raw: [], receivedAt: at))
        return d
    }
}
