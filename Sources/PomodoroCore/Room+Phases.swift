// The phase machine: a phase is set up, runs to its deadline, pauses, ends and hands over to the next;
// each change bumps `seq` once.

extension Room {
    var isFocusRunning: Bool {
        if phase == .focus, case .running = timer { return true }
        return false
    }

    mutating func changed(_ outcome: inout Outcome) {
        seq += 1
        pending.roomChanged()
        outcome.stateChanged = true
        // A tick computed earlier in this call carries the seq of the state that follows it.
        outcome.tick?.seq = seq
    }

    /// A running focus stopped early (pause, skip, reset): the room and everyone present count one.
    mutating func countInterruption(at now: Instant, into outcome: inout Outcome) {
        guard isFocusRunning else { return }
        stats.interruptions += 1
        pending.record(.interrupted(nil, name: nil, at: now))
        for id in roster.ids where roster[id]!.isPresent {
            roster.update(id) { $0.stats.interruptions += 1 }
            pending.record(.interrupted(id, name: roster[id]!.name, at: now))
            pending.memberChanged(id)
            outcome.changedMembers.append(id)
        }
    }

    mutating func run(remaining: Duration, now: Instant) {
        timer = .running(deadline: onWholeWallMillisecond(now + remaining))
        shownSeconds = remaining.secondsRoundedUp
        if phase == .focus { credit.focusRuns(from: now) }
        recreditAll(at: now)
        quietSince = nil
    }

    /// `instant`, or the first instant after it that falls on a whole millisecond of the wall clock (at most
    /// 1 ms later). Clients are told a deadline in whole milliseconds (`endsAt`) and count the seconds from
    /// it; a deadline between two of them would make every second's tick leave up to a millisecond after the
    /// moment the clients were told. Later phases follow on from it and stay on whole milliseconds.
    func onWholeWallMillisecond(_ instant: Instant) -> Instant {
        let past = (instant.nanoseconds + wallOffsetNanoseconds) % 1_000_000
        let rest = past < 0 ? -past : (past == 0 ? 0 : 1_000_000 - past)
        return Instant(nanoseconds: instant.nanoseconds + rest)
    }

    mutating func runningStopped(_ now: Instant) {
        credit.stopped()
        recreditAll(at: now)
        roomMayBeQuiet(now)
    }

    /// Sets up `next` with its full length, running from `start` or waiting. An aligned room that runs
    /// enters the grid's phase instead, for what is left of it.
    mutating func enter(_ next: Phase, at start: Instant, running: Bool) {
        let grid = running ? gridPhase(entering: next, at: start) : nil
        let next = grid?.phase ?? next
        phase = next
        phaseLength = grid.map { $0.endsAt - start } ?? settings.length(of: next)
        credit.newPhase()
        if next == .focus {
            for id in roster.ids where roster[id]!.sessionFocusTime != .zero {
                roster.update(id) { $0.sessionFocusTime = .zero }
                pending.memberChanged(id)
            }
        }
        if running {
            run(remaining: phaseLength, now: start)
        } else {
            timer = .ready(remaining: phaseLength)
            runningStopped(start)
        }
    }

    /// What follows `finished` (in `cycle`) when it ends under `settings`: the next phase and its cycle. The
    /// one rule a room's `moveOn` follows, and a cluster node follows for a room another node runs while it
    /// cannot hear the owner (`ReplicatedTimer.following`). An aligned room's grid, a scheduled session and
    /// whether the next phase starts by itself are the caller's.
    public static func following(_ finished: Phase, cycle: Int, settings: RoomSettings) -> (phase: Phase, cycle: Int) {
        let next: Phase
        switch finished {
        case .focus: next = cycle >= settings.longBreakEvery && settings.aligned == nil ? .longBreak : .shortBreak
        case .idle, .shortBreak, .longBreak: next = .focus
        }
        var cycle = cycle
        if finished == .longBreak { cycle = 1 } else if finished != .focus && finished != .idle { cycle += 1 }
        // Fewer sessions per set now: start a new set, but a break keeps the cycle of the focus it follows.
        if next == .focus && cycle > settings.longBreakEvery { cycle = 1 }
        return (next, cycle)
    }

    mutating func applyPendingSettings() {
        if let pending = pendingSettings {
            settings = pending
            pendingSettings = nil
        }
    }

    /// Ends the current phase at `t` and sets up the next one, which runs only when auto-start is on
    /// and someone is connected to see it.
    mutating func moveOn(at t: Instant, mayAutoStart: Bool = true) {
        let finished = phase
        // Everyone's span up to the end, before `enter` starts the next phase's session time from zero.
        recreditAll(at: t)
        credit.stopped()
        applyPendingSettings()
        let next: Phase
        (next, cycle) = Self.following(finished, cycle: cycle, settings: settings)
        // A scheduled session runs its set by itself, seen or not.
        // An aligned room follows the clock while anyone is there to see it.
        let seen = roster.connectedCount > 0 || membersBackBy.map { t < $0 } == true
        let autoStart = scheduledRun != nil || ((settings.autoStart || followsTheClock) && seen)
        enter(next, at: t, running: mayAutoStart && autoStart)
    }

    /// The current phase ran out at `t`: a focus that ran long enough (`focusRanLongEnough`) is credited,
    /// journalled and counted by a scheduled run, and the next phase is set up (or the scheduled run ends).
    mutating func complete(at t: Instant, into outcome: inout Outcome, mayAutoStart: Bool = true) {
        let finished = phase
        let counted = focusRanLongEnough
        // Taken before a scheduled run's end sets the room idle: what the phase ran.
        let ran = phaseLength
        if finished == .focus { recreditAll(at: t) }
        if counted {
            stats.focusSessions += 1
            var participants: [(MemberID, name: String, task: String, focus: Duration)] = []
            for id in roster.ids where roster[id]!.isPresent {
                roster.update(id) { $0.stats.focusSessions += 1 }
                let member = roster[id]!
                participants.append((id, member.name, member.task, member.sessionFocusTime))
                pending.memberChanged(id)
                outcome.changedMembers.append(id)
            }
            pending.record(.focusCompleted(startedAt: credit.focusStartedAt ?? t - phaseLength, endedAt: t,
                                           length: phaseLength, participants: participants))
        }
        if counted, scheduledFocusCompleted(at: t, into: &outcome) {
            outcome.events.append(.phaseCompleted(completed: finished, next: .idle, autoStarted: false, cycle: cycle,
                                                  counted: counted, length: ran))
            changed(&outcome)
            return
        }
        moveOn(at: t, mayAutoStart: mayAutoStart)
        outcome.events.append(.phaseCompleted(completed: finished, next: phase, autoStarted: status == .running,
                                              cycle: cycle, counted: counted, length: ran))
        changed(&outcome)
    }

    /// Moves the end of the current phase by `seconds`, within the policy's bounds.
    mutating func moveEnd(by seconds: Int, now: Instant) throws(RoomError) {
        // `magnitude`, not `abs`: abs(Int.min) traps.
        guard seconds != 0, seconds.magnitude <= policy.maxExtendSeconds.magnitude else {
            throw .invalidArgument(field: "seconds", reason: "must be a non-zero number of seconds within ±\(policy.maxExtendSeconds)")
        }
        if followsTheClock { throw .invalidState("an aligned room keeps to the clock: it cannot be extended") }
        let delta = Duration.seconds(seconds)
        let left = remaining(at: now)
        guard phaseLength + delta <= policy.maxPhaseLength else {
            throw .invalidArgument(field: "seconds", reason: "a phase can last at most \(policy.maxPhaseLength.nanoseconds / 1_000_000_000) seconds")
        }
        // Shortening past the end takes the remaining time to zero, not below.
        let applied = max(delta, .zero - left)
        switch timer {
        case .idle:
            throw .invalidState("there is no phase to extend")
        case .running(let deadline):
            timer = .running(deadline: deadline + applied)
            shownSeconds = (deadline + applied - now).secondsRoundedUp
        case .ready(let r):
            timer = .ready(remaining: r + applied)
        case .paused(let r):
            timer = .paused(remaining: r + applied)
        }
        phaseLength += applied
    }

    mutating func roomBecameBusy() {
        quietSince = nil
    }

    /// Starts the empty-room countdown when nobody is connected and nothing runs.
    mutating func roomMayBeQuiet(_ now: Instant) {
        if case .running = timer { return }
        if quietSince == nil && roster.connectedCount == 0 { quietSince = now }
    }
}
