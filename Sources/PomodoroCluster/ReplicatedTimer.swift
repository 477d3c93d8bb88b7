import PomodoroCore
import PomodoroProtocol

/// The running phase of a room another node runs, as the last `state` (or `welcome`, or `observing`) its
/// owner sent this node told it: enough to compute the room's ticks here (`Countdown`, the rule the owner's
/// `Room` follows), so that no tick crosses Redis (docs/CLUSTER.md, "Ticks"). The owner still decides every
/// change; this only counts down to the deadline it replicated, and stops there. Pure: time is an argument.
package struct ReplicatedTimer: Equatable {
    let room: String
    let phase: Phase
    let cycle: Int
    let seq: UInt64
    /// The phase's end as the owner announced it (wall-clock epoch milliseconds): every tick carries it.
    let endsAt: Int64
    private(set) var countdown: Countdown

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
    }

    /// The tick due at `now`, if one is: the same fields as the owner's tick for that boundary.
    package mutating func tick(at now: ClockReading) -> TickPayload? {
        guard let seconds = countdown.tick(at: now.monotonic) else { return nil }
        return TickPayload(room: room, phase: phase, remainingMs: seconds * 1_000, endsAt: endsAt, cycle: cycle,
                           seq: seq, serverTime: now.wallMs)
    }

    /// When the next tick falls; nil once the last one was due (the owner's next `state` says what follows).
    package var nextTick: Instant? { countdown.nextTick }
}
