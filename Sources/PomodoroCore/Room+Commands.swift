// The commands a member gives: `handle` checks who may give it, brings the room up to now, and hands it
// to the one method that carries it out.

extension Room {
    /// A command from a member who is in the room.
    public enum Command: Equatable, Sendable {
        case start, pause, resume, skip, reset
        /// Move the end by this many seconds (negative shortens; shortening past zero ends the phase now).
        case extend(seconds: Int)
        case configure(RoomSettings)
        case setTask(String)
        case setAway(Bool)
        /// Host only: who may press the controls.
        case setControlMode(ControlMode)
        /// Host only: hand the host role to another member.
        case handOff(to: MemberID)

        /// Commands that only the host may give in `host` mode (and `setControlMode`/`handOff` always).
        var needsHost: Bool {
            switch self {
            case .setTask, .setAway: false
            default: true
            }
        }

        /// The room's controls: the timer and its settings. What the control API and a watch that showed a
        /// member's token may press; never a member's own task or presence, nor the host's role.
        public var isControl: Bool {
            switch self {
            case .start, .pause, .resume, .skip, .reset, .extend, .configure: true
            case .setTask, .setAway, .setControlMode, .handOff: false
            }
        }
    }

    public mutating func handle(_ command: Command, from id: MemberID, now: Instant) throws(RoomError) -> Outcome {
        guard roster[id]?.connected == true else { throw .unknownMember }
        try access.check(command, from: id)
        return try carryOut(command, by: id, now: now)
    }

    /// A command whose giver has been let give it (a member, or an API token: `Room+APITokens`).
    mutating func carryOut(_ command: Command, by id: MemberID, now: Instant) throws(RoomError) -> Outcome {
        var outcome = Outcome()
        advanceInternal(to: now, into: &outcome)
        creditFocus(until: now)
        switch command {
        case .start: try start(by: id, now: now, into: &outcome)
        case .pause: try pause(by: id, now: now, into: &outcome)
        case .resume: try resume(by: id, now: now, into: &outcome)
        case .skip: try skip(by: id, now: now, into: &outcome)
        case .reset: try reset(by: id, now: now, into: &outcome)
        case .extend(let seconds): try extend(by: seconds, from: id, now: now, into: &outcome)
        case .configure(let settings): try configure(settings, by: id, into: &outcome)
        case .setTask(let text):
            try setTask(text, of: id)
            outcome.changedMembers.append(id)
        case .setAway(let away): setAway(away, of: id, now: now, into: &outcome)
        case .setControlMode(let mode): try setControlMode(mode, by: id, into: &outcome)
        case .handOff(let target): try handOff(from: id, to: target, into: &outcome)
        }
        changed(&outcome)
        return outcome
    }

    // MARK: The timer

    private mutating func start(by id: MemberID, now: Instant, into outcome: inout Outcome) throws(RoomError) {
        switch timer {
        case .idle: enter(.focus, at: now, running: true)
        case .ready where followsTheClock, .paused where followsTheClock: enter(.focus, at: now, running: true)
        case .ready(let r), .paused(let r): run(remaining: r, now: now)
        case .running: throw .invalidState("the timer is already running")
        }
        outcome.events.append(.control(.start, by: id, seconds: nil))
    }

    private mutating func pause(by id: MemberID, now: Instant, into outcome: inout Outcome) throws(RoomError) {
        guard case .running(let deadline) = timer else { throw .invalidState("the timer is not running") }
        countInterruption(at: now, into: &outcome)
        // In whole milliseconds, as it is stored and sent: never more than was left when it last ran (its
        // deadline is on a whole millisecond, at most 1 ms after now + what was left, `run`).
        timer = .paused(remaining: .milliseconds((deadline - now).milliseconds))
        runningStopped(now)
        outcome.events.append(.control(.pause, by: id, seconds: nil))
    }

    private mutating func resume(by id: MemberID, now: Instant, into outcome: inout Outcome) throws(RoomError) {
        guard case .paused(let r) = timer else { throw .invalidState("the timer is not paused") }
        if followsTheClock { enter(.focus, at: now, running: true) } else { run(remaining: r, now: now) }
        outcome.events.append(.control(.resume, by: id, seconds: nil))
    }

    private mutating func skip(by id: MemberID, now: Instant, into outcome: inout Outcome) throws(RoomError) {
        guard phase != .idle else { throw .invalidState("there is no phase to skip") }
        if isFocusRunning { countInterruption(at: now, into: &outcome) }
        moveOn(at: now)
        outcome.events.append(.control(.skip, by: id, seconds: nil))
    }

    private mutating func reset(by id: MemberID, now: Instant, into outcome: inout Outcome) throws(RoomError) {
        guard phase != .idle || cycle != 1 else { throw .invalidState("the timer is already reset") }
        if isFocusRunning { countInterruption(at: now, into: &outcome) }
        endScheduledRun()
        phase = .idle
        timer = .idle
        phaseLength = .zero
        cycle = 1
        credit.newPhase()
        applyPendingSettings()
        runningStopped(now)
        outcome.events.append(.control(.reset, by: id, seconds: nil))
    }

    private mutating func extend(by seconds: Int, from id: MemberID, now: Instant,
                                 into outcome: inout Outcome) throws(RoomError) {
        try moveEnd(by: seconds, now: now)
        outcome.events.append(.control(.extend, by: id, seconds: seconds))
        // Shortened to nothing (running, paused or ready): the phase ends now.
        if remaining(at: now) == .zero {
            complete(at: now, into: &outcome)
        }
    }

    private mutating func configure(_ newSettings: RoomSettings, by id: MemberID,
                                    into outcome: inout Outcome) throws(RoomError) {
        try newSettings.validate()
        if newSettings.focus < policy.minFocusSeconds {
            throw .invalidArgument(field: "focus", reason: "must be at least \(policy.minFocusSeconds) seconds on this server")
        }
        switch timer {
        case .running, .paused:
            pendingSettings = newSettings == settings ? nil : newSettings
            outcome.appliesFrom = .nextPhase
        case .idle, .ready:
            settings = newSettings
            pendingSettings = nil
            if case .ready = timer {
                phaseLength = settings.length(of: phase)
                timer = .ready(remaining: phaseLength)
            }
            outcome.appliesFrom = .now
        }
        outcome.events.append(.control(.configure, by: id, seconds: nil))
    }

    // MARK: Members and the host

    private mutating func setTask(_ text: String, of id: MemberID) throws(RoomError) {
        let task = try TextRules.clean(text, field: "text", allowEmpty: true, maxLength: policy.maxTaskLength)
        roster.update(id) { $0.task = task }
        pending.memberChanged(id)
    }

    private mutating func setControlMode(_ mode: ControlMode, by id: MemberID,
                                         into outcome: inout Outcome) throws(RoomError) {
        guard mode != access.mode else { throw .invalidState("the room is already in \(mode.rawValue) mode") }
        access.mode = mode
        outcome.events.append(.controlModeChanged(mode, by: id))
    }

    private mutating func handOff(from id: MemberID, to target: MemberID, into outcome: inout Outcome) throws(RoomError) {
        guard target != id else { throw .invalidState("you are the host already") }
        guard roster[target] != nil else {
            throw .invalidArgument(field: "member", reason: "is not a member of this room")
        }
        access.handOff(to: target)
        outcome.events.append(.hostChanged(target))
    }

    private mutating func setAway(_ away: Bool, of id: MemberID, now: Instant, into outcome: inout Outcome) {
        guard let member = roster[id], member.away != away else { return }
        let interrupted = away && isFocusRunning
        if interrupted { pending.record(.interrupted(id, name: member.name, at: now)) }
        roster.update(id) { member in
            if interrupted { member.stats.interruptions += 1 }
            member.away = away
        }
        recredit(id, at: now)
        pending.memberChanged(id)
        outcome.changedMembers.append(id)
        outcome.events.append(away ? .memberAway(id, reason: .away) : .memberBack(id))
    }
}
