import PomodoroCore

/// One reading of the server's time: the monotonic instant that deadlines are kept on, and the offset that
/// turns monotonic instants into wall-clock time for clients (`endsAt`, `serverTime`).
///
/// The offset is held steady between readings (see `SystemClock`), so the same deadline always maps to the
/// same `endsAt` in every message.
public struct ClockReading: Equatable, Sendable {
    public var monotonic: Instant
    /// Wall-clock nanoseconds since the epoch minus monotonic nanoseconds.
    public var wallOffsetNanoseconds: Int64

    public init(monotonic: Instant, wallOffsetNanoseconds: Int64) {
        self.monotonic = monotonic
        self.wallOffsetNanoseconds = wallOffsetNanoseconds
    }

    /// Now, as wall-clock epoch milliseconds.
    public var wallMs: Int64 { wallMs(of: monotonic) }

    /// A monotonic instant as wall-clock epoch milliseconds (rounded down).
    public func wallMs(of instant: Instant) -> Int64 {
        instant.wallMilliseconds(offsetNanoseconds: wallOffsetNanoseconds)
    }
}

extension StatsPayload {
    public init(_ stats: FocusStats) {
        self.init(focusCompleted: stats.focusSessions, focusSeconds: stats.focusTime.nanoseconds / 1_000_000_000,
                  interruptions: stats.interruptions)
    }
}

extension SnapshotPayload {
    public init(_ snapshot: RoomSnapshot, clock: ClockReading, locked: Bool = false) {
        self.init(
            room: snapshot.id.rawValue, phase: snapshot.phase, status: snapshot.status, running: snapshot.running,
            remainingMs: snapshot.remaining.milliseconds, phaseLengthMs: snapshot.phaseLength.milliseconds,
            endsAt: snapshot.deadline.map(clock.wallMs(of:)), cycle: snapshot.cycle, settings: snapshot.settings,
            pendingSettings: snapshot.pendingSettings,
            members: snapshot.members.map(MemberPayload.init),
            memberCount: snapshot.memberCount, presentCount: snapshot.presentCount,
            membersTruncated: snapshot.membersTruncated,
            stats: StatsPayload(snapshot.stats), seq: snapshot.seq, serverTime: clock.wallMs,
            control: snapshot.controlMode, host: snapshot.host?.rawValue, locked: locked,
            scheduledRun: snapshot.scheduledRun.map {
                ScheduledRunPayload(schedule: $0.schedule.description, name: $0.name,
                                    focusSessions: $0.focusSessions, focusDone: $0.focusSessionsDone)
            })
    }
}

extension LimitsPayload {
    /// The limits of a server whose rooms follow `policy` and whose passcodes are `passcodeLength` long; the
    /// settings' bounds are the core's (`RoomSettings`).
    public init(_ policy: RoomPolicy, passcodeLength: ClosedRange<Int>) {
        self.init(maxNameLength: policy.maxNameLength, maxTaskLength: policy.maxTaskLength,
                  minPasscodeLength: passcodeLength.lowerBound, maxPasscodeLength: passcodeLength.upperBound,
                  maxExtendSeconds: policy.maxExtendSeconds,
                  maxPhaseSeconds: Int(policy.maxPhaseLength.components.seconds),
                  minFocusSeconds: policy.minFocusSeconds,
                  maxSettingSeconds: RoomSettings.durationRange.upperBound,
                  maxLongBreakEvery: RoomSettings.longBreakEveryRange.upperBound)
    }
}

extension TickPayload {
    public init(_ tick: Tick, room: RoomID, clock: ClockReading) {
        self.init(room: room.rawValue, phase: tick.phase, remainingMs: tick.remaining.milliseconds,
                  endsAt: clock.wallMs(of: tick.deadline), cycle: tick.cycle, seq: tick.seq,
                  serverTime: clock.wallMs)
    }
}

extension EventPayload {
    public init(_ event: RoomEvent) {
        switch event {
        case let .phaseCompleted(completed, next, autoStarted, cycle, _, _):
            self = .phaseCompleted(completed: completed, next: next, autoStarted: autoStarted, cycle: cycle)
        case let .memberJoined(id, name): self = .memberJoined(member: id.rawValue, name: name)
        case let .memberReturned(id): self = .memberReturned(member: id.rawValue)
        case let .memberAway(id, reason, connection):
            self = .memberAway(member: id.rawValue, reason: reason, connection: connection)
        case let .memberBack(id): self = .memberBack(member: id.rawValue)
        case let .memberLeft(id, _, reason): self = .memberLeft(member: id.rawValue, reason: reason)
        case let .control(action, by, seconds): self = .control(action: action, by: by.rawValue, seconds: seconds)
        case let .hostChanged(id): self = .hostChanged(member: id?.rawValue)
        case let .controlModeChanged(mode, by): self = .controlModeChanged(mode: mode, by: by.rawValue)
        case let .lockChanged(locked, by): self = .lockChanged(locked: locked, by: by.rawValue)
        }
    }
}

extension ScheduleEventPayload {
    /// `scheduleMissed` for one of `schedule`'s occurrences; `inSession`: the room was in a session then.
    public static func missed(_ schedule: Schedule, at occurrence: WallTime, inSession: Bool) -> Self {
        .missed(schedule: schedule.id.description, name: schedule.name, occurrence: occurrence.milliseconds,
                busy: inSession)
    }
}

extension MemberPayload {
    public init(_ member: MemberSnapshot) {
        self.init(id: member.id.rawValue, name: member.name, present: member.present, connected: member.connected,
                  task: member.task, stats: StatsPayload(member.stats))
    }
}
