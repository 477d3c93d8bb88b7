import PomodoroCore
import PomodoroProtocol

/// The running phase of a room another node runs, as the last `state` (or `welcome`, or `observing`) its
/// owner sent this node told it: enough to compute the room's ticks here (`Countdown`, the rule the owner's
/// `Room` follows), so that no tick crosses Redis (docs/CLUSTER.md, "Ticks"). The owner still decides every
/// change; this only counts down to the deadline it replicated, and stops there, unless the node cannot hear
/// the owner (the bus is away) and the room's replicated settings say what follows (`following`). Pure: time
/// is an argument.
package struct ReplicatedTimer: Equatable {
    let room: String
    package private(set) var phase: Phase
    package private(set) var cycle: Int
    package let seq: UInt64
    /// The phase's end as the owner announced it (wall-clock epoch milliseconds): every tick carries it.
    package private(set) var endsAt: Int64
    private(set) var countdown: Countdown
    /// The settings the next phase runs under (the pending ones, which the owner applies at the phase's end).
    private let next: RoomSettings
    /// Whether a scheduled session runs the room (it decides what follows by its own rules).
    private let scheduled: Bool

    /// nil unless the snapshot's timer runs. The deadline is `endsAt` on this node's monotonic clock, and the
    /// seconds shown are those the snapshot showed (a state that arrived after a boundary is ticked at once).
    package init?(_ snapshot: SnapshotPayload, wallOffsetNanoseconds: Int64) {
        guard snapshot.running, let endsAt = snapshot.endsAt, snapshot.remainingMs > 0 else { return nil }
        room = snapshot.room
        phase = snapshot.phase
        cycle = snapshot.cycle
        seq = snapshot.seq
        self.endsAt = endsAt
        countdown = Countdown(deadline: Instant(nanoseconds: endsAt * 1_000_000 - wallOffsetNanoseconds),
                              shown: Duration.milliseconds(snapshot.remainingMs).secondsRoundedUp)
        next = snapshot.pendingSettings ?? snapshot.settings
        scheduled = snapshot.scheduledRun != nil
    }

    /// The phase the owner runs next from this one's end, when the replicated room determines it: auto-start
    /// on, not aligned to the clock, no scheduled session; the phase and cycle from the core's rule
    /// (`Room.following`), starting at this phase's deadline (the owner's room completes a phase on its
    /// deadline), full length, under the pending settings if any. Nil when the owner decides otherwise (the
    /// room waits for a `start`, follows the clock's grid, or runs a schedule). A command the owner took
    /// meanwhile (a pause, a skip) is not known here: the `state` after the bus came back says it.
    package func following() -> ReplicatedTimer? {
        guard next.autoStart, next.aligned == nil, !scheduled, phase != .idle else { return nil }
        let (phase, cycle) = Room.following(phase, cycle: cycle, settings: next)
        let length = next.length(of: phase)
        var successor = self
        successor.phase = phase
        successor.cycle = cycle
        successor.endsAt = endsAt + length.milliseconds
        successor.countdown = Countdown(deadline: countdown.deadline + length, shown: length.secondsRoundedUp)
        return successor
    }

    /// The phase's end on this node's monotonic clock.
    package var deadline: Instant { countdown.deadline }

    /// The same phase as `earlier` (a `state` about something else, one the owner sent before a boundary this
    /// node has ticked already): the seconds already shown stay shown, so no second is ticked twice.
    package mutating func follows(_ earlier: ReplicatedTimer) {
        guard earlier.endsAt == endsAt, earlier.phase == phase, earlier.cycle == cycle,
              earlier.countdown.shown < countdown.shown else { return }
        countdown = Countdown(deadline: countdown.deadline, shown: earlier.countdown.shown)
    }

    /// The tick due at `now`, if one is: the same fields as the owner's tick for that boundary. Like the
    /// owner's room woken late, only the latest boundary passed.
    package mutating func tick(at now: ClockReading) -> TickPayload? {
        guard let seconds = countdown.tick(at: now.monotonic) else { return nil }
        return payload(seconds, at: now)
    }

    /// Every tick whose boundary passed since the seconds last shown, in order: for a snapshot that arrived
    /// late (the owner held it for its commit, or the bus was slow), whose ticks the owner's members heard
    /// meanwhile (a tick held behind a commit goes out with it). None once the phase has ended: the owner's
    /// next `state` says what follows.
    package mutating func ticksSinceShown(at now: ClockReading) -> [TickPayload] {
        var ticks: [TickPayload] = []
        guard now.monotonic < countdown.deadline else { return ticks }
        while let boundary = countdown.nextTick, boundary <= now.monotonic,
              let seconds = countdown.tick(at: boundary) {
            ticks.append(payload(seconds, at: now))
        }
        return ticks
    }

    /// The tick the owner's members heard ahead of `snapshot` that this node has not sent: the owner brings
    /// its room up to the moment of a call before answering it, so the tick of a boundary passed by then goes
    /// out before the call's `state` (PROTOCOL.md §7). A snapshot taken after a boundary this node's timer
    /// has not reached yet (it woke late) is forwarded after that tick, as the owner's members heard them;
    /// only the latest boundary passed, as the owner's room woken late ticks. The moment the snapshot was
    /// taken: for this same running phase (same end), the seconds it shows; otherwise its `serverTime`.
    package mutating func tick(before snapshot: SnapshotPayload, at now: ClockReading) -> TickPayload? {
        let seconds: Int64?
        if snapshot.running, snapshot.endsAt == endsAt, snapshot.phase == phase, snapshot.cycle == cycle {
            seconds = countdown.tick(downTo: Duration.milliseconds(snapshot.remainingMs).secondsRoundedUp)
        } else {
            let taken = Instant(nanoseconds: snapshot.serverTime * 1_000_000 - now.wallOffsetNanoseconds)
            seconds = countdown.tick(at: min(taken, now.monotonic))
        }
        return seconds.map { payload($0, at: now) }
    }

    private func payload(_ seconds: Int64, at now: ClockReading) -> TickPayload {
        TickPayload(room: room, phase: phase, remainingMs: seconds * 1_000, endsAt: endsAt, cycle: cycle, seq: seq,
                    serverTime: now.wallMs)
    }

    /// When the next tick falls; nil once the last one was due (the owner's next `state` says what follows).
    package var nextTick: Instant? { countdown.nextTick }
}
