/// A session the server started from a schedule: it runs its focus sessions and the breaks between them by
/// itself (whatever the settings' auto-start, and whether or not anyone is connected yet), and stops after
/// the last focus, giving the room back its own settings.
public struct ScheduledRun: Equatable, Sendable {
    public let schedule: ScheduleID
    public let name: String
    /// Focus sessions still to complete; nil: until somebody stops it.
    public internal(set) var focusSessionsLeft: Int?
    /// Focus sessions completed in this run.
    public internal(set) var focusSessionsDone = 0
    /// The room's settings before the run, put back when it ends (nil: the run kept the room's own).
    public let roomSettings: RoomSettings?

    /// How many focus sessions the run has in all; nil: until somebody stops it.
    public var focusSessions: Int? { focusSessionsLeft.map { $0 + focusSessionsDone } }

    /// A run as a store kept it (`RoomRecord.scheduledRun`).
    public init(schedule: ScheduleID, name: String, focusSessionsLeft: Int?, focusSessionsDone: Int,
                roomSettings: RoomSettings?) {
        self.schedule = schedule
        self.name = name
        self.focusSessionsLeft = focusSessionsLeft
        self.focusSessionsDone = focusSessionsDone
        self.roomSettings = roomSettings
    }
}

extension Room {
    /// Whether a session is under way: the timer is running or paused. A schedule does not cut into one
    /// (see `ScheduleBook`).
    public var inSession: Bool {
        switch timer {
        case .running, .paused: true
        case .idle, .ready: false
        }
    }

    /// Starts `schedule`'s session at `now`: its settings (or the room's) from now, a first focus running,
    /// the cycle from 1. Throws `invalidState` when a session is under way.
    public mutating func startScheduled(_ schedule: Schedule, now: Instant) throws(RoomError) -> Outcome {
        guard !inSession else { throw .invalidState("a session is under way") }
        var outcome = Outcome()
        var previous: RoomSettings?
        if let settings = schedule.settings {
            previous = pendingSettings ?? self.settings
            self.settings = settings
            pendingSettings = nil
        } else {
            applyPendingSettings()
        }
        var sessions: Int?
        if case .focusSessions(let n) = schedule.length { sessions = n }
        scheduledRun = ScheduledRun(schedule: schedule.id, name: schedule.name, focusSessionsLeft: sessions,
                                    focusSessionsDone: 0, roomSettings: previous)
        cycle = 1
        enter(.focus, at: now, running: true)
        changed(&outcome)
        return outcome
    }

    /// A focus of the scheduled run completed at `t`, one that counts (`complete` asks `focusRanLongEnough`:
    /// a focus shortened below the server's shortest is not one of the set's sessions): counts it, and when
    /// it was the last one, stops the room (idle, cycle 1, the room's own settings back). Returns whether the
    /// run ended.
    mutating func scheduledFocusCompleted(at t: Instant, into outcome: inout Outcome) -> Bool {
        guard var run = scheduledRun else { return false }
        run.focusSessionsDone += 1
        if let left = run.focusSessionsLeft { run.focusSessionsLeft = left - 1 }
        scheduledRun = run
        guard run.focusSessionsLeft == 0 else { return false }
        endScheduledRun()
        phase = .idle
        timer = .idle
        phaseLength = .zero
        cycle = 1
        credit.newPhase()
        runningStopped(t)
        outcome.scheduleEnded = run
        return true
    }

    /// Forgets the scheduled run (it ended, or somebody reset the room) and puts the room's settings back.
    mutating func endScheduledRun() {
        if let settings = scheduledRun?.roomSettings {
            self.settings = settings
            pendingSettings = nil
        }
        scheduledRun = nil
    }
}
