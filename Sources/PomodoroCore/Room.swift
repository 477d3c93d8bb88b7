/// A shared focus room: the authoritative state machine behind one timer and its members.
///
/// Every mutating call takes `now` and returns an `Outcome` saying what to broadcast; `nextWakeup()` says
/// when to call `advance(to:)` again. The remaining time is always `deadline - now`: nothing counts ticks.
///
/// The room is the phase machine (this file and `Room+Phases.swift`); its parts each own one invariant:
/// `Roster` the members and their counts, `HostRules` who may press the controls, `FocusCredit` the room's
/// focus time, `PendingChanges` what the store has not been given. Members come and go in
/// `Room+Members.swift`, commands are in `Room+Commands.swift`, durable records in `Room+Records.swift`.
public struct Room: Sendable {
    public let id: RoomID
    public let policy: RoomPolicy
    public internal(set) var settings: RoomSettings
    public internal(set) var pendingSettings: RoomSettings?
    public internal(set) var phase: Phase = .idle
    public internal(set) var timer: TimerState = .idle
    /// Length of the current phase including extensions.
    public internal(set) var phaseLength: Duration = .zero
    public internal(set) var cycle = 1
    public internal(set) var stats = RoomStats()
    public internal(set) var seq: UInt64 = 1

    var roster = Roster()
    var access: HostRules
    var credit = FocusCredit()
    var pending = PendingChanges()
    /// Whom the host removed, until when (`Room+Hosting.swift`).
    var bans = Bans()
    /// The room's API tokens (`APITokens.swift`).
    var tokens = APITokens()
    /// The whole seconds shown by the last tick or state: a tick goes out when this number falls.
    var shownSeconds: Int64 = 0
    /// Since when nobody has been connected and nothing has been running (nil otherwise).
    var quietSince: Instant?
    /// Until when the members of a room handed off by a draining node are on their way back
    /// (`resumeAfterRestart(at:handedOff:)`): phases follow each other meanwhile as if they were there.
    var membersBackBy: Instant?
    /// The session a schedule started, while it runs (`Room+Schedule.swift`).
    public internal(set) var scheduledRun: ScheduledRun?
    /// The wall clock minus the monotonic clock, in nanoseconds, as the server last read it: an aligned
    /// room (`Room+Alignment.swift`) places its phases on the wall clock's grid with it. The server sets it
    /// before it hands the room a command; the room reads no clock.
    public var wallOffsetNanoseconds: Int64 = 0

    public init(id: RoomID, settings: RoomSettings = .standard, policy: RoomPolicy = .standard,
                controlMode: ControlMode = .anyone, now: Instant) {
        self.id = id
        self.access = HostRules(mode: controlMode)
        self.settings = settings
        self.policy = policy
        self.quietSince = now
    }

    // MARK: Reading

    /// Who may press the controls.
    public var controlMode: ControlMode { access.mode }
    /// The member who holds the host role: the creator until they hand it on or leave for good.
    public var hostID: MemberID? { access.host }
    /// Members with a connection.
    public var connectedCount: Int { roster.connectedCount }
    /// Members connected and not away.
    public var presentCount: Int { roster.presentCount }
    public var memberCount: Int { roster.count }
    /// The member as last changed: their focus time is credited up to their last change (or the last
    /// phase boundary); `snapshot(at:)` shows it up to the moment.
    public func member(_ id: MemberID) -> Member? { roster[id] }

    /// Whether `token` would get a member's place back (so a locked room need not ask for its passcode).
    public func hasMember(withToken token: ResumeToken) -> Bool {
        roster.member(withTokenHash: token.hash) != nil
    }

    /// The member whose place `token` would get back, if any.
    public func member(withToken token: ResumeToken) -> MemberID? {
        roster.member(withTokenHash: token.hash)
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
        if isFocusRunning { stats.focusTime += credit.uncredited(at: now) }
        return RoomSnapshot(
            id: id, phase: phase, status: status, remaining: remaining(at: now), phaseLength: phaseLength,
            deadline: deadline, cycle: cycle, settings: settings, pendingSettings: pendingSettings,
            members: roster.ids.prefix(max(0, policy.memberListLimit)).compactMap { roster[$0] }.map {
                $0.snapshot(at: now)
            },
            memberCount: roster.count, presentCount: roster.presentCount,
            stats: stats, seq: seq, controlMode: controlMode, host: hostID, scheduledRun: scheduledRun)
    }

    /// Those of `ids` the room's snapshot leaves out (they joined after its first `policy.memberListLimit`
    /// members) and who are connected, each once, as everyone would see them at `now`.
    public func unlistedMembers(_ ids: [MemberID], at now: Instant) -> [MemberSnapshot] {
        guard roster.count > policy.memberListLimit, !ids.isEmpty else { return [] }
        let listed = Set(roster.ids.prefix(max(0, policy.memberListLimit)))
        var seen: Set<MemberID> = []
        return ids.compactMap { id in
            guard !listed.contains(id), seen.insert(id).inserted, let member = roster[id], member.connected else {
                return nil
            }
            return member.snapshot(at: now)
        }
    }

    /// The next instant at which `advance(to:)` has something to do: a tick boundary, the phase's end,
    /// a grace period running out, or the room's empty lifetime ending.
    public func nextWakeup() -> Instant? { nextWakeup(after: nil) }

    /// `nextWakeup()` for a room that is past `now`: its empty lifetime's end counts only while it is ahead.
    /// A room kept in memory past its lifetime (members within their grace, a scheduled start coming) is
    /// woken by those, not again and again by a moment that has passed.
    public func nextWakeup(after now: Instant?) -> Instant? {
        var next: Instant?
        func consider(_ t: Instant) { if next == nil || t < next! { next = t } }
        if case .running(let deadline) = timer {
            // The next boundary below the seconds last shown: deadline - (shown - 1) s.
            consider(Countdown(deadline: deadline, shown: shownSeconds).nextBoundary)
        }
        for id in roster.disconnected {
            if let member = roster[id], let lost = member.disconnectedAt { consider(lost + grace(of: member)) }
        }
        if let quiet = quietSince, now.map({ quiet + policy.emptyRoomLifetime > $0 }) ?? true {
            consider(quiet + policy.emptyRoomLifetime)
        }
        return next
    }

    /// Whether the room should be dropped: nobody connected, nothing running, for its empty lifetime.
    public func isExpired(at now: Instant) -> Bool {
        guard let quiet = quietSince else { return false }
        return now >= quiet + policy.emptyRoomLifetime
    }

    // MARK: Time

    /// Brings the room up to `now`: ticks, phase ends (and auto-started phases), expired grace periods.
    public mutating func advance(to now: Instant) -> Outcome {
        var outcome = Outcome()
        advanceInternal(to: now, into: &outcome)
        return outcome
    }

    mutating func advanceInternal(to now: Instant, into outcome: inout Outcome) {
        // Phases that ended by now, each on its own deadline; an auto-started phase begins at the previous
        // deadline so a team's schedule never drifts by the server's wake-up latency.
        while case .running(let deadline) = timer, deadline <= now {
            creditFocus(until: deadline)
            complete(at: deadline, into: &outcome)
        }
        creditFocus(until: now)
        if case .running(let deadline) = timer {
            var countdown = Countdown(deadline: deadline, shown: shownSeconds)
            if let seconds = countdown.tick(at: now) {
                outcome.tick = Tick(phase: phase, remaining: .seconds(seconds), deadline: deadline,
                                    cycle: cycle, seq: seq)
            }
            shownSeconds = countdown.shown
        }
        // Only the disconnected can expire; they go in join order.
        let expired = roster.disconnected.filter { id in
            roster[id].map { member in member.disconnectedAt.map { now >= $0 + grace(of: member) } ?? false } ?? false
        }
        for id in expired.sorted(by: { roster[$0]!.joinOrder < roster[$1]!.joinOrder }) {
            remove(id, reason: .expired, into: &outcome)
            changed(&outcome)
        }
    }
}
