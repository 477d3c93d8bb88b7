/// The room's own focus time as a focus runs.
///
/// The invariant it owns: `creditedUntil` is set only while a focus runs, and the room's focus time
/// counts each instant of it once: crediting moves `creditedUntil` forward and never back. Members carry
/// their own span (`Member.creditedSince`, see `Room.recredit`), so a change to one member costs nothing
/// for the others.
struct FocusCredit: Sendable {
    /// The room's focus time has been credited up to this instant (set while a focus runs).
    private(set) var creditedUntil: Instant?
    /// When the current focus phase first started running (nil until it does, and outside focus).
    private(set) var focusStartedAt: Instant?

    init(creditedUntil: Instant? = nil, focusStartedAt: Instant? = nil) {
        self.creditedUntil = creditedUntil
        self.focusStartedAt = focusStartedAt
    }

    /// Adds the span up to `t` to `focusTime`.
    mutating func credit(_ focusTime: inout Duration, until t: Instant) {
        guard let from = creditedUntil, t > from else { return }
        focusTime += t - from
        creditedUntil = t
    }

    /// The span not yet credited at `now`, for showing focus time up to the moment.
    func uncredited(at now: Instant) -> Duration {
        guard let from = creditedUntil, now > from else { return .zero }
        return now - from
    }

    /// A focus runs from `now` (started or resumed).
    mutating func focusRuns(from now: Instant) {
        creditedUntil = now
        if focusStartedAt == nil { focusStartedAt = now }
    }

    /// Nothing earns any more (paused, ended, reset).
    mutating func stopped() { creditedUntil = nil }

    /// A new phase is set up: its focus, if it is one, has not started yet.
    mutating func newPhase() { focusStartedAt = nil }
}

extension Room {
    /// Whether the focus running out now counts as completed: only a focus that ran at least the server's
    /// shortest focus (`policy.minFocusSeconds`, what `configure` accepts). The one place the rule is
    /// asked: `complete` credits `focusCompleted` to the room and the members present, journals the session
    /// and counts it as one of a scheduled run's sessions only then, and says so on `phaseCompleted`
    /// (`counted`), which is all webhooks and the store hear of it. A focus shortened to less (`extend`) still runs out and rings; its running time stays in
    /// the live `focusSeconds`, as that of any focus stopped early does.
    ///
    /// Its length is the time it ran: a phase is set up with its full length, counts down only while it
    /// runs, and an extension moves its length and what is left together; so once nothing is left, its
    /// length (extensions included) is what it ran. A ready focus shortened to zero ran nothing.
    var focusRanLongEnough: Bool {
        phase == .focus && phaseLength >= .seconds(policy.minFocusSeconds)
    }

    /// Credits the room's own focus time up to `t` (members are credited lazily: see `recredit`).
    mutating func creditFocus(until t: Instant) {
        guard isFocusRunning else { return }
        credit.credit(&stats.focusTime, until: t)
    }

    /// Adds the member's running span up to `t` to their realized focus time, then starts a new span from
    /// `t` when they earn now (a focus runs and they are present). Call it at `t` after anything that may
    /// change whether they earn: the old span still says whether they did.
    mutating func recredit(_ id: MemberID, at t: Instant) {
        guard let member = roster[id] else { return }
        let earns = isFocusRunning && member.isPresent
        guard member.creditedSince != nil || earns else { return }
        roster.update(id) { member in
            let (stats, session) = member.earned(at: t)
            member.stats = stats
            member.sessionFocusTime = session
            member.creditedSince = earns ? t : nil
        }
        pending.memberChanged(id)
    }

    /// `recredit` for everyone: at phase boundaries (start, pause, resume, skip, reset, completion), which
    /// change whether the whole room earns.
    mutating func recreditAll(at t: Instant) {
        for id in roster.ids { recredit(id, at: t) }
    }
}
