/// The one rule for ticks (PROTOCOL.md §7): a running phase shows its whole seconds left, rounded up, and a
/// tick goes out each time that number falls, at the boundary `deadline - n s`. `Room` follows it for a room
/// its server runs; a cluster node follows it for a room another node runs, from the deadline that node
/// replicated. Pure: time is an argument.
public struct Countdown: Equatable, Sendable {
    public let deadline: Instant
    /// The whole seconds last shown (by a state or a tick).
    public private(set) var shown: Int64

    public init(deadline: Instant, shown: Int64) {
        self.deadline = deadline
        self.shown = shown
    }

    /// The whole seconds left at `now`, when fewer than last shown and not yet none: a tick is due (the phase's
    /// end is not a tick; what follows it is the room's to decide).
    public mutating func tick(at now: Instant) -> Int64? {
        let seconds = (deadline - now).secondsRoundedUp
        guard seconds < shown else { return nil }
        shown = seconds
        return seconds > 0 ? seconds : nil
    }

    /// Shows `seconds` when fewer than shown and not yet none: the tick due by the moment a snapshot that
    /// shows them was taken (its boundary is behind that moment). Nil when no tick is due by then.
    public mutating func tick(downTo seconds: Int64) -> Int64? {
        guard seconds < shown, seconds > 0 else { return nil }
        shown = seconds
        return seconds
    }

    /// When the shown seconds next fall: the boundary below them, or the deadline once 1 is shown.
    public var nextBoundary: Instant { deadline - .seconds(max(0, shown - 1)) }

    /// When the next tick falls; nil once the last one (1 s) was shown.
    public var nextTick: Instant? { shown > 1 ? nextBoundary : nil }
}
