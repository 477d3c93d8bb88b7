/// A shared focus room: the authoritative state machine behind one timer and its members.
///
/// Every mutating call takes `now` and returns an `Outcome` saying what to broadcast; `nextWakeup()` says
/// when to call `advance(to:)` again. The remaining time is always `deadline - now`: nothing counts ticks.
public struct Room: Sendable {
    public let id: RoomID
    public let policy: RoomPolicy
    public private(set) var settings: RoomSettings
    public private(set) var pendingSettings: RoomSettings?
    public private(set) var phase: Phase = .idle
    public private(set) var timer: TimerState = .idle
    /// Length of the current phase including extensions.
    public private(set) var phaseLength: Duration = .zero
    public private(set) var cycle = 1
    public private(set) var stats = RoomStats()
    public private(set) var seq: UInt64 = 1
    public private(set) var controlMode: ControlMode
    /// The member who holds the host role: the creator until they hand it on or leave for good.
    public private(set) var hostID: MemberID?

    private var members: [MemberID: Member] = [:]
    /// Join order, for stable member lists.
    private var order: [MemberID] = []
    private var nextMemberNumber = 1
    /// Members with a connection; kept in step by `put` and `removeMember`.
    public private(set) var connectedCount = 0
    /// Members connected and not away.
    public private(set) var presentCount = 0
    /// Members whose connection dropped (their grace period runs), so that time passing looks at them
    /// alone, not at everyone.
    private var disconnected: Set<MemberID> = []
    /// The room's own focus time has been credited up to this instant (set while a focus runs). Members
    /// carry their own span (`Member.creditedSince`).
    private var focusCreditedUntil: Instant?
    /// The whole seconds shown by the last tick or state: a tick goes out when this number falls.
    private var shownSeconds: Int64 = 0
    /// Since when nobody has been connected and nothing has been running (nil otherwise).
    private var quietSince: Instant?
    /// When the current focus phase first started running (nil until it does, and outside focus).
    private var focusStartedAt: Instant?

    // What a store has not been given yet (see `takeStoreChanges`).
    /// The room's row changed: set with every new `seq`.
    private var roomDirty = false
    /// Members whose rows changed.
    private var dirtyMembers: Set<MemberID> = []
    private var removedMembers: [MemberID] = []
    private var journal: [JournalEntry] = []

    /// A journal entry as the room makes it, on the monotonic clock.
    private enum JournalEntry {
        case focusCompleted(startedAt: Instant, endedAt: Instant, length: Duration,
                            participants: [(MemberID, name: String, task: String, focus: Duration)])
        case interrupted(MemberID?, name: String?, at: Instant)
    }

    public init(id: RoomID, settings: RoomSettings = .standard, policy: RoomPolicy = .standard,
                controlMode: ControlMode = .anyone, now: Instant) {
        self.id = id
        self.controlMode = controlMode
        self.settings = settings
        self.policy = policy
        self.quietSince = now
    }

    // MARK: Reading

    public var memberCount: Int { members.count }
    /// The member as last changed: their focus time is credited up to their last change (or the last
    /// phase boundary); `snapshot(at:)` shows it up to the moment.
    public func member(_ id: MemberID) -> Member? { members[id] }

    /// Whether `token` would get a member's place back (so a locked room need not ask for its passcode).
    public func hasMember(withToken token: ResumeToken) -> Bool {
        let hash = token.hash
        return members.values.contains { ResumeToken.sameHash($0.tokenHash, hash) }
    }

    public var status: TimerStatus {
        switch timer {
        case .idle: .idle
        case .ready: .ready
        case .running: .running
        case .paused: .paused
        }
    }

    /// Time left in the current phase at `now` (never negative).
    public func remaining(at now: Instant) -> Duration {
        switch timer {
        case .idle: .zero
        case .ready(let r), .paused(let r): r
        case .running(let deadline): max(.zero, deadline - now)
        }
    }

    /// The room as members see it at `now`, focus time included up to `now`. It lists the first
    /// `policy.memberListLimit` members only, so its cost does not grow with the room.
    public func snapshot(at now: Instant) -> RoomSnapshot {
        var deadline: Instant?
        if case .running(let d) = timer { deadline = d }
        var stats = stats
        if isFocusRunning, let from = focusCreditedUntil, now > from { stats.focusTime += now - from }
        return RoomSnapshot(
            id: id, phase: phase, status: status, remaining: remaining(at: now), phaseLength: phaseLength,
            deadline: deadline, cycle: cycle, settings: settings, pendingSettings: pendingSettings,
            members: order.prefix(max(0, policy.memberListLimit)).compactMap { members[$0] }.map {
                MemberSnapshot(id: $0.id, name: $0.name, present: $0.isPresent, connected: $0.connected,
                               task: $0.task, stats: $0.earned(at: now).stats)
            },
            memberCount: members.count, presentCount: presentCount,
            stats: stats, seq: seq, controlMode: controlMode, host: hostID)
    }

    /// The next instant at which `advance(to:)` has something to do: a tick boundary, the phase's end,
    /// a grace period running out, or the room's empty lifetime ending.
    public func nextWakeup() -> Instant? {
        var next: Instant?
        func consider(_ t: Instant) { if next == nil || t < next! { next = t } }
        if case .running(let deadline) = timer {
            // The next boundary below the seconds last shown: deadline - (shown - 1) s.
            consider(deadline - .seconds(max(0, shownSeconds - 1)))
        }
        for id in disconnected {
            if let member = members[id], let lost = member.disconnectedAt { consider(lost + grace(of: member)) }
        }
        if let quiet = quietSince { consider(quiet + policy.emptyRoomLifetime) }
        return next
    }

    /// Whether the room should be dropped: nobody connected, nothing running, for its empty lifetime.
    public func isExpired(at now: Instant) -> Bool {
        guard let quiet = quietSince else { return false }
        return now >= quiet + policy.emptyRoomLifetime
    }

    // MARK: Members

    /// Adds a member, or gives a returning member their place back when `token` matches one in the room.
    /// `freshToken` is used for a new member: the core makes no random numbers of its own.
    public mutating func join(name rawName: String, token: ResumeToken?, freshToken: ResumeToken,
                              now: Instant) throws(RoomError) -> JoinResult {
        let name = try TextRules.clean(rawName, field: "name", allowEmpty: false, maxLength: policy.maxNameLength)
        var outcome = Outcome()
        advanceInternal(to: now, into: &outcome)
        let presentedHash = token?.hash
        if let token, let presentedHash,
           let id = order.first(where: { ResumeToken.sameHash(members[$0]!.tokenHash, presentedHash) }) {
            creditFocus(until: now)
            var member = members[id]!
            let wasConnected = member.connected
            member.connected = true
            member.disconnectedAt = nil
            member.silentlyLost = false
            member.name = name
            put(member)
            recredit(id, at: now)
            dirtyMembers.insert(id)
            if !wasConnected { outcome.events.append(.memberReturned(id)) }
            roomBecameBusy()
            changed(&outcome)
            return JoinResult(memberID: id, token: token, resumed: true, outcome: outcome)
        }
        guard members.count < policy.maxMembers else { throw .roomFull }
        creditFocus(until: now)
        let id = MemberID("m\(nextMemberNumber)")
        var member = Member(id: id, name: name, tokenHash: freshToken.hash)
        member.rank = nextMemberNumber
        if isFocusRunning { member.creditedSince = now }
        nextMemberNumber += 1
        put(member)
        order.append(id)
        dirtyMembers.insert(id)
        outcome.events.append(.memberJoined(id, name: name))
        if hostID == nil {
            // The creator hosts; so does whoever arrives in a room its host left for good.
            hostID = id
            outcome.events.append(.hostChanged(id))
        }
        roomBecameBusy()
        changed(&outcome)
        return JoinResult(memberID: id, token: freshToken, resumed: false, outcome: outcome)
    }

    /// The member's connection dropped: they show as away and keep their place for the grace period, or for
    /// the short `silentGrace` when `silent` (the connection said nothing after joining as a new member).
    public mutating func disconnect(_ id: MemberID, now: Instant, silent: Bool = false) -> Outcome {
        var outcome = Outcome()
        advanceInternal(to: now, into: &outcome)
        guard var member = members[id], member.connected else { return outcome }
        creditFocus(until: now)
        member = members[id]!
        if member.isPresent && isFocusRunning {
            member.stats.interruptions += 1
            journal.append(.interrupted(id, name: member.name, at: now))
        }
        member.silentlyLost = silent
        put(member)
        markDisconnected(id, at: now, into: &outcome)
        roomMayBeQuiet(now)
        changed(&outcome)
        return outcome
    }

    /// The member shows as away and keeps their place for the grace period from `now`.
    private mutating func markDisconnected(_ id: MemberID, at now: Instant, into outcome: inout Outcome) {
        var member = members[id]!
        member.connected = false
        member.disconnectedAt = now
        put(member)
        recredit(id, at: now)
        dirtyMembers.insert(id)
        outcome.events.append(.memberAway(id, reason: .disconnected))
    }

    /// The member leaves for good.
    public mutating func leave(_ id: MemberID, now: Instant) -> Outcome {
        var outcome = Outcome()
        advanceInternal(to: now, into: &outcome)
        guard let member = members[id] else { return outcome }
        creditFocus(until: now)
        if member.isPresent && isFocusRunning {
            journal.append(.interrupted(id, name: member.name, at: now))
        }
        remove(id, reason: .left, into: &outcome)
        roomMayBeQuiet(now)
        changed(&outcome)
        return outcome
    }

    // MARK: Commands

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
    }

    public mutating func handle(_ command: Command, from id: MemberID, now: Instant) throws(RoomError) -> Outcome {
        guard members[id]?.connected == true else { throw .unknownMember }
        let hostOnly: Bool = switch command {
        case .setControlMode, .handOff: true
        default: command.needsHost && controlMode == .host
        }
        if hostOnly && hostID != id { throw .forbidden }
        var outcome = Outcome()
        advanceInternal(to: now, into: &outcome)
        creditFocus(until: now)
        switch command {
        case .start:
            switch timer {
            case .idle:
                enter(.focus, at: now, running: true)
            case .ready(let r), .paused(let r):
                run(remaining: r, now: now)
            case .running:
                throw .invalidState("the timer is already running")
            }
            outcome.events.append(.control(.start, by: id, seconds: nil))
        case .pause:
            guard case .running(let deadline) = timer else { throw .invalidState("the timer is not running") }
            countInterruption(at: now)
            timer = .paused(remaining: deadline - now)
            runningStopped(now)
            outcome.events.append(.control(.pause, by: id, seconds: nil))
        case .resume:
            guard case .paused(let r) = timer else { throw .invalidState("the timer is not paused") }
            run(remaining: r, now: now)
            outcome.events.append(.control(.resume, by: id, seconds: nil))
        case .skip:
            guard phase != .idle else { throw .invalidState("there is no phase to skip") }
            if isFocusRunning { countInterruption(at: now) }
            moveOn(at: now)
            outcome.events.append(.control(.skip, by: id, seconds: nil))
        case .reset:
            guard phase != .idle || cycle != 1 else { throw .invalidState("the timer is already reset") }
            if isFocusRunning { countInterruption(at: now) }
            phase = .idle
            timer = .idle
            phaseLength = .zero
            cycle = 1
            focusStartedAt = nil
            applyPendingSettings()
            runningStopped(now)
            outcome.events.append(.control(.reset, by: id, seconds: nil))
        case .extend(let seconds):
            try extend(by: seconds, now: now)
            outcome.events.append(.control(.extend, by: id, seconds: seconds))
            // Shortened to nothing (running, paused or ready): the phase ends now.
            if remaining(at: now) == .zero {
                complete(at: now, into: &outcome)
            }
        case .configure(let newSettings):
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
        case .setTask(let text):
            members[id]!.task = try TextRules.clean(text, field: "text", allowEmpty: true,
                                                   maxLength: policy.maxTaskLength)
            dirtyMembers.insert(id)
        case .setControlMode(let mode):
            guard mode != controlMode else { throw .invalidState("the room is already in \(mode.rawValue) mode") }
            controlMode = mode
            outcome.events.append(.controlModeChanged(mode, by: id))
        case .handOff(let target):
            guard target != id else { throw .invalidState("you are the host already") }
            guard members[target] != nil else {
                throw .invalidArgument(field: "member", reason: "is not a member of this room")
            }
            hostID = target
            outcome.events.append(.hostChanged(target))
        case .setAway(let away):
            guard members[id]!.away != away else { break }
            if away && isFocusRunning {
                members[id]!.stats.interruptions += 1
                journal.append(.interrupted(id, name: members[id]!.name, at: now))
            }
            var member = members[id]!
            member.away = away
            put(member)
            recredit(id, at: now)
            dirtyMembers.insert(id)
            outcome.events.append(away ? .memberAway(id, reason: .away) : .memberBack(id))
        }
        changed(&outcome)
        return outcome
    }

    // MARK: Time

    /// Brings the room up to `now`: ticks, phase ends (and auto-started phases), expired grace periods.
    public mutating func advance(to now: Instant) -> Outcome {
        var outcome = Outcome()
        advanceInternal(to: now, into: &outcome)
        return outcome
    }

    private mutating func advanceInternal(to now: Instant, into outcome: inout Outcome) {
        // Phases that ended by now, each on its own deadline; an auto-started phase begins at the previous
        // deadline so a team's schedule never drifts by the server's wake-up latency.
        while case .running(let deadline) = timer, deadline <= now {
            creditFocus(until: deadline)
            complete(at: deadline, into: &outcome)
        }
        creditFocus(until: now)
        if case .running(let deadline) = timer {
            let seconds = (deadline - now).secondsRoundedUp
            if seconds < shownSeconds {
                shownSeconds = seconds
                outcome.tick = Tick(phase: phase, remaining: .seconds(seconds), deadline: deadline,
                                    cycle: cycle, seq: seq)
            }
        }
        // Only the disconnected can expire; they go in join order.
        let expired = disconnected.filter { id in
            members[id].map { member in member.disconnectedAt.map { now >= $0 + grace(of: member) } ?? false } ?? false
        }
        for id in expired.sorted(by: { members[$0]!.rank < members[$1]!.rank }) {
            remove(id, reason: .expired, into: &outcome)
            changed(&outcome)
        }
    }

    // MARK: Transitions

    /// How long a disconnected member keeps their place.
    private func grace(of member: Member) -> Duration {
        member.silentlyLost ? min(policy.silentGrace, policy.reconnectGrace) : policy.reconnectGrace
    }

    private var isFocusRunning: Bool {
        if phase == .focus, case .running = timer { return true }
        return false
    }

    private mutating func changed(_ outcome: inout Outcome) {
        seq += 1
        roomDirty = true
        outcome.stateChanged = true
        // A tick computed earlier in this call carries the seq of the state that follows it.
        outcome.tick?.seq = seq
    }

    /// Credits the room's own focus time up to `t` (members are credited lazily: see `recredit`).
    private mutating func creditFocus(until t: Instant) {
        guard isFocusRunning, let from = focusCreditedUntil, t > from else { return }
        stats.focusTime += t - from
        focusCreditedUntil = t
    }

    /// Adds the member's running span up to `t` to their realized focus time, then starts a new span from
    /// `t` when they earn now (a focus runs and they are present). Call it at `t` after anything that may
    /// change whether they earn: the old span still says whether they did.
    private mutating func recredit(_ id: MemberID, at t: Instant) {
        guard var member = members[id] else { return }
        let earns = isFocusRunning && member.isPresent
        guard member.creditedSince != nil || earns else { return }
        let (stats, session) = member.earned(at: t)
        member.stats = stats
        member.sessionFocusTime = session
        member.creditedSince = earns ? t : nil
        members[id] = member
        dirtyMembers.insert(id)
    }

    /// `recredit` for everyone: at phase boundaries (start, pause, resume, skip, reset, completion), which
    /// change whether the whole room earns.
    private mutating func recreditAll(at t: Instant) {
        for id in order { recredit(id, at: t) }
    }

    /// Keeps the counts and the set of disconnected members in step with a member written back.
    private mutating func put(_ member: Member) {
        if let old = members[member.id] { count(old, -1) }
        count(member, 1)
        members[member.id] = member
    }

    private mutating func removeMember(_ id: MemberID) {
        if let old = members.removeValue(forKey: id) { count(old, -1) }
    }

    private mutating func count(_ member: Member, _ sign: Int) {
        if member.connected { connectedCount += sign }
        if member.isPresent { presentCount += sign }
        if member.disconnectedAt != nil {
            if sign > 0 { disconnected.insert(member.id) } else { disconnected.remove(member.id) }
        }
    }

    private mutating func countInterruption(at now: Instant) {
        guard isFocusRunning else { return }
        stats.interruptions += 1
        journal.append(.interrupted(nil, name: nil, at: now))
        for id in order where members[id]!.isPresent {
            members[id]!.stats.interruptions += 1
            journal.append(.interrupted(id, name: members[id]!.name, at: now))
            dirtyMembers.insert(id)
        }
    }

    private mutating func run(remaining: Duration, now: Instant) {
        timer = .running(deadline: now + remaining)
        shownSeconds = remaining.secondsRoundedUp
        if phase == .focus {
            focusCreditedUntil = now
            if focusStartedAt == nil { focusStartedAt = now }
        }
        recreditAll(at: now)
        quietSince = nil
    }

    private mutating func runningStopped(_ now: Instant) {
        focusCreditedUntil = nil
        recreditAll(at: now)
        roomMayBeQuiet(now)
    }

    /// Sets up `next` with its full length, running from `start` or waiting.
    private mutating func enter(_ next: Phase, at start: Instant, running: Bool) {
        phase = next
        phaseLength = settings.length(of: next)
        focusStartedAt = nil
        if next == .focus {
            for id in order where members[id]!.sessionFocusTime != .zero {
                members[id]!.sessionFocusTime = .zero
                dirtyMembers.insert(id)
            }
        }
        if running {
            run(remaining: phaseLength, now: start)
        } else {
            timer = .ready(remaining: phaseLength)
            runningStopped(start)
        }
    }

    private func phase(after current: Phase) -> Phase {
        switch current {
        case .focus: cycle >= settings.longBreakEvery ? .longBreak : .shortBreak
        case .idle, .shortBreak, .longBreak: .focus
        }
    }

    private mutating func applyPendingSettings() {
        if let pending = pendingSettings {
            settings = pending
            pendingSettings = nil
        }
    }

    /// Ends the current phase at `t` and sets up the next one, which runs only when auto-start is on
    /// and someone is connected to see it.
    private mutating func moveOn(at t: Instant, mayAutoStart: Bool = true) {
        let finished = phase
        // Everyone's span up to the end, before `enter` starts the next phase's session time from zero.
        recreditAll(at: t)
        focusCreditedUntil = nil
        applyPendingSettings()
        let next = phase(after: finished)
        if finished == .longBreak { cycle = 1 } else if finished != .focus && finished != .idle { cycle += 1 }
        // Fewer sessions per set now: start a new set, but a break keeps the cycle of the focus it follows.
        if next == .focus && cycle > settings.longBreakEvery { cycle = 1 }
        enter(next, at: t, running: mayAutoStart && settings.autoStart && connectedCount > 0)
    }

    private mutating func complete(at t: Instant, into outcome: inout Outcome, mayAutoStart: Bool = true) {
        let finished = phase
        if finished == .focus {
            recreditAll(at: t)
            stats.focusCompleted += 1
            var participants: [(MemberID, name: String, task: String, focus: Duration)] = []
            for id in order where members[id]!.isPresent {
                members[id]!.stats.focusCompleted += 1
                let member = members[id]!
                participants.append((id, member.name, member.task, member.sessionFocusTime))
                dirtyMembers.insert(id)
            }
            journal.append(.focusCompleted(startedAt: focusStartedAt ?? t - phaseLength, endedAt: t,
                                           length: phaseLength, participants: participants))
        }
        moveOn(at: t, mayAutoStart: mayAutoStart)
        outcome.events.append(.phaseCompleted(completed: finished, next: phase,
                                              autoStarted: status == .running, cycle: cycle))
        changed(&outcome)
    }

    private mutating func extend(by seconds: Int, now: Instant) throws(RoomError) {
        // `magnitude`, not `abs`: abs(Int.min) traps.
        guard seconds != 0, seconds.magnitude <= policy.maxExtendSeconds.magnitude else {
            throw .invalidArgument(field: "seconds", reason: "must be a non-zero number of seconds within ±\(policy.maxExtendSeconds)")
        }
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

    private mutating func remove(_ id: MemberID, reason: LeaveReason, into outcome: inout Outcome) {
        removeMember(id)
        if let index = order.firstIndex(of: id) { order.remove(at: index) }
        dirtyMembers.remove(id)
        removedMembers.append(id)
        outcome.events.append(.memberLeft(id, reason: reason))
        if hostID == id {
            // The role passes to the longest-present member: the earliest joined who is connected, else the
            // earliest joined at all.
            hostID = order.first { members[$0]!.connected } ?? order.first
            outcome.events.append(.hostChanged(hostID))
        }
    }

    private mutating func roomBecameBusy() {
        quietSince = nil
    }

    /// Starts the empty-room countdown when nobody is connected and nothing runs.
    private mutating func roomMayBeQuiet(_ now: Instant) {
        if case .running = timer { return }
        if quietSince == nil && connectedCount == 0 { quietSince = now }
    }
}

// MARK: - Durable records

extension Room {
    /// What a store has not been told yet, oldest first, and forgets it: the room's row (when anything in
    /// it changed), the members whose rows changed or who left, and new journal entries.
    ///
    /// Ticks alone change nothing here: a member's row holds the focus time credited up to its last change
    /// and the moment since which they have been earning, so a restart re-credits exactly the gap, and a
    /// member's change writes the room's row and theirs only (a phase boundary writes everyone who earns).
    /// `wallOffsetNanoseconds` turns the room's monotonic instants into wall-clock time.
    public mutating func takeStoreChanges(wallOffsetNanoseconds offset: Int64, passcode: String?) -> [StoreChange] {
        // Every change to a member comes with a new `seq`; members marked only by credited time wait for it.
        guard roomDirty || !journal.isEmpty else { return [] }
        func wall(_ instant: Instant) -> Int64 { Self.wallMs(instant, offset) }
        var changes: [StoreChange] = []
        if roomDirty { changes.append(.saveRoom(record(wallOffsetNanoseconds: offset), passcode: passcode)) }
        for id in removedMembers { changes.append(.removeMember(self.id, id)) }
        let saved = dirtyMembers.compactMap { members[$0] }.sorted { $0.rank < $1.rank }
        for member in saved {
            changes.append(.saveMember(self.id, memberRecord(member, wallOffsetNanoseconds: offset)))
        }
        for entry in journal {
            switch entry {
            case let .focusCompleted(startedAt, endedAt, length, participants):
                changes.append(.focusCompleted(FocusSessionRecord(
                    room: self.id, startedAtMs: wall(startedAt), endedAtMs: wall(endedAt),
                    lengthSeconds: Int(length.secondsRoundedUp),
                    participants: participants.map {
                        .init(member: $0.0, name: $0.name, task: $0.task, focusMs: $0.focus.milliseconds)
                    })))
            case let .interrupted(member, name, at):
                changes.append(.interrupted(InterruptionRecord(room: self.id, member: member, name: name,
                                                               atMs: wall(at))))
            }
        }
        roomDirty = false
        dirtyMembers.removeAll(keepingCapacity: true)
        removedMembers.removeAll()
        journal.removeAll()
        return changes
    }

    /// The room's own row.
    public func record(wallOffsetNanoseconds offset: Int64) -> RoomRecord {
        let stored: StoredTimer = switch timer {
        case .idle: .idle
        case .ready(let r): .ready(remainingMs: r.milliseconds)
        case .running(let deadline): .running(endsAtMs: Self.wallMs(deadline, offset))
        case .paused(let r): .paused(remainingMs: r.milliseconds)
        }
        return RoomRecord(
            id: id, settings: settings, pendingSettings: pendingSettings, phase: phase, timer: stored,
            phaseLengthMs: phaseLength.milliseconds, cycle: cycle, stats: stats, controlMode: controlMode,
            host: hostID, nextMemberNumber: nextMemberNumber,
            focusStartedAtMs: focusStartedAt.map { Self.wallMs($0, offset) },
            focusCreditedUntilMs: focusCreditedUntil.map { Self.wallMs($0, offset) }, seq: seq)
    }

    /// Every member's row, in join order, as a store holds them.
    public func memberRecords(wallOffsetNanoseconds offset: Int64) -> [MemberRecord] {
        order.map { memberRecord(members[$0]!, wallOffsetNanoseconds: offset) }
    }

    private func memberRecord(_ member: Member, wallOffsetNanoseconds offset: Int64) -> MemberRecord {
        MemberRecord(id: member.id, order: member.rank, name: member.name, tokenHash: member.tokenHash,
                     task: member.task, away: member.away, connected: member.connected, stats: member.stats,
                     sessionFocusMs: member.sessionFocusTime.milliseconds,
                     creditedSinceMs: member.creditedSince.map { Self.wallMs($0, offset) })
    }

    /// A room as a store kept it, with its members as they were; call `resumeAfterRestart(at:)` next.
    ///
    /// `now` and `wallOffsetNanoseconds` are this run's clock: stored wall-clock times become instants on
    /// it, so a deadline that was 10 minutes away when the last run wrote it is `endsAt - now` away now.
    public init(restoring record: RoomRecord, members stored: [MemberRecord], policy: RoomPolicy = .standard,
                now: Instant, wallOffsetNanoseconds offset: Int64) {
        func instant(_ ms: Int64) -> Instant { Instant(nanoseconds: ms * 1_000_000 - offset) }
        self.init(id: record.id, settings: record.settings, policy: policy, controlMode: record.controlMode,
                  now: now)
        pendingSettings = record.pendingSettings
        phase = record.phase
        timer = switch record.timer {
        case .idle: .idle
        case .ready(let ms): .ready(remaining: .milliseconds(ms))
        case .running(let endsAt): .running(deadline: instant(endsAt))
        case .paused(let ms): .paused(remaining: .milliseconds(ms))
        }
        phaseLength = .milliseconds(record.phaseLengthMs)
        cycle = record.cycle
        stats = record.stats
        seq = record.seq
        hostID = record.host
        nextMemberNumber = record.nextMemberNumber
        focusStartedAt = record.focusStartedAtMs.map(instant)
        focusCreditedUntil = record.focusCreditedUntilMs.map(instant)
        for row in stored.sorted(by: { $0.order < $1.order }) {
            var member = Member(id: row.id, name: row.name, tokenHash: row.tokenHash)
            member.rank = row.order
            member.task = row.task
            member.away = row.away
            member.connected = row.connected
            // Gone before the restart: their grace period starts again now.
            if !row.connected { member.disconnectedAt = now }
            member.stats = row.stats
            member.sessionFocusTime = .milliseconds(row.sessionFocusMs)
            // Rows written before members kept their own span got it from the store's migration v3.
            if isFocusRunning && member.isPresent { member.creditedSince = row.creditedSinceMs.map(instant) }
            put(member)
            order.append(row.id)
        }
        if case .running(let deadline) = timer {
            // The countdown shows whole seconds from here on; a tick goes out at the next boundary.
            shownSeconds = (deadline - now).secondsRoundedUp + 1
            quietSince = nil
        }
    }

    /// Brings a restored room up to `now`: a phase that ended while the server was down completes on its
    /// deadline (credited to those present when the server stopped) without starting the next one, a
    /// running phase goes on, and every member shows as disconnected, their place kept for the grace
    /// period so they return with their token.
    public mutating func resumeAfterRestart(at now: Instant) -> Outcome {
        var outcome = Outcome()
        if case .running(let deadline) = timer, deadline <= now {
            creditFocus(until: deadline)
            complete(at: deadline, into: &outcome, mayAutoStart: false)
        }
        creditFocus(until: now)
        if case .running(let deadline) = timer { shownSeconds = (deadline - now).secondsRoundedUp }
        for id in order where members[id]!.connected {
            markDisconnected(id, at: now, into: &outcome)
        }
        roomMayBeQuiet(now)
        changed(&outcome)
        return outcome
    }

    private static func wallMs(_ instant: Instant, _ offset: Int64) -> Int64 {
        instant.wallMilliseconds(offsetNanoseconds: offset)
    }
}
