/// The measurement window, in wall-clock epoch milliseconds: `[start, end)`.
///
/// A tick belongs to the window when the whole-second boundary it marks does, whenever it arrives: a tick
/// due just before the end that arrives late is still counted, and its delay is what is measured.
public struct TickWindow: Equatable, Sendable {
    public var startMs: Int64
    public var endMs: Int64

    public init(startMs: Int64, endMs: Int64) {
        self.startMs = startMs
        self.endMs = endMs
    }

    public func contains(_ boundaryMs: Int64) -> Bool { boundaryMs >= startMs && boundaryMs < endMs }

    /// How many boundaries of a room's one-second grid fall in the window. The grid is every instant
    /// `offsetMs + k * 1000`: a room's phases follow each other at their deadlines (auto-start), so each of
    /// its whole seconds is on one grid, and each boundary is either a tick or a phase's end.
    public func boundaries(onGridWithOffset offsetMs: Int64) -> Int {
        let offset = ((offsetMs % 1000) + 1000) % 1000
        // The number of k with start <= offset + 1000k < end.
        func firstIndex(atOrAfter time: Int64) -> Int64 { ceilDiv(time - offset, 1000) }
        return Int(max(0, firstIndex(atOrAfter: endMs) - firstIndex(atOrAfter: startMs)))
    }

    public var seconds: Double { Double(endMs - startMs) / 1000 }
}

private func ceilDiv(_ a: Int64, _ b: Int64) -> Int64 {
    let quotient = a / b
    return (a % b != 0 && (a > 0) == (b > 0)) ? quotient + 1 : quotient
}

/// A phase as the frames name it: its name (`focus`, `shortBreak`, ...) and its cycle.
public struct PhaseMark: Equatable, Sendable {
    public var phase: String
    public var cycle: Int

    public init(_ phase: String, cycle: Int) {
        self.phase = phase
        self.cycle = cycle
    }
}

/// What one member saw of its room's seconds: which boundaries reached it inside the window, as a tick, as
/// the end of a phase (a phase's last second brings `phaseCompleted`, not a tick), or as a snapshot of the
/// running room (`welcome`, `state`), which shows the member the second it was taken in.
public struct TickTally: Equatable, Sendable {
    /// Boundaries inside the window that reached this member (ticks and phase ends).
    public private(set) var deliveredInWindow = 0
    /// Ticks inside the window, a part of `deliveredInWindow`.
    public private(set) var ticksInWindow = 0
    /// Seconds inside the window that reached this member only as a snapshot (`welcome`, `state`), a part of
    /// `deliveredInWindow`.
    public private(set) var snapshotsInWindow = 0
    /// Ticks for a boundary this member had already seen (never expected; counted to catch it).
    public private(set) var duplicates = 0
    /// Every tick received, in the window or not.
    public private(set) var ticksReceived = 0
    /// The room's grid offset (a boundary modulo 1000), known from the first tick.
    public private(set) var gridOffsetMs: Int64?
    /// The last boundary seen, and the end of the phase it belonged to (the next phase end's boundary).
    private var lastBoundaryMs: Int64?
    private var phaseEndsAtMs: Int64?
    /// The phase those belong to, when the frame that showed it named it.
    private var lastPhase: PhaseMark?
    /// Whether the last boundary seen came in a snapshot: its tick may still come (no duplicate then).
    private var lastFromSnapshot = false
    /// The longest run of consecutive boundaries inside the window that did not reach this member, between
    /// two that did (or from the window's start); `longestMissedRun(window:)` adds the run at the end.
    private var longestGapSoFar = 0

    public init() {}

    /// Records a tick (of `phase`, when the caller read it). Its boundary is `endsAt - remainingMs`; returns
    /// it when it is inside the window and new, so that the caller records its delay.
    public mutating func tick(remainingMs: Int64, endsAtMs: Int64, phase: PhaseMark? = nil, window: TickWindow?) -> Int64? {
        ticksReceived += 1
        let boundary = endsAtMs - remainingMs
        if gridOffsetMs == nil { gridOffsetMs = ((boundary % 1000) + 1000) % 1000 }
        phaseEndsAtMs = endsAtMs
        lastPhase = phase
        if let last = lastBoundaryMs, boundary <= last {
            if !(lastFromSnapshot && boundary == last) { duplicates += 1 }
            return nil
        }
        noteGap(before: boundary, window: window)
        lastBoundaryMs = boundary
        lastFromSnapshot = false
        guard let window, window.contains(boundary) else { return nil }
        deliveredInWindow += 1
        ticksInWindow += 1
        return boundary
    }

    /// Records `phaseCompleted` (with `next`, the phase it set up, when the caller read it): its boundary is
    /// the end of the phase the last tick belonged to. A phase whose every tick was lost cannot be placed, and
    /// its end counts as missing. One that completed the phase before `next` when the member was shown `next`
    /// already (its `welcome` is sent at once, ahead of the phase's end held for its commit, and so may a
    /// `state` or tick worked out from such a `welcome`: docs/PROTOCOL.md, "Durability") ended a phase whose
    /// seconds are behind those seen: it marks none, and the phase shown keeps its own end.
    public mutating func phaseCompleted(next: PhaseMark? = nil, window: TickWindow?) {
        guard let boundary = phaseEndsAtMs else { return }
        if let next, next == lastPhase { return }
        phaseEndsAtMs = nil
        if let last = lastBoundaryMs, boundary <= last { return }
        noteGap(before: boundary, window: window)
        lastBoundaryMs = boundary
        lastFromSnapshot = false
        if let window, window.contains(boundary) { deliveredInWindow += 1 }
    }

    /// Records a snapshot of the room running (`welcome`, `state`: `remainingMs` exact when it was taken,
    /// the phase ending at `endsAt`): it shows the member the second it was taken in, whose boundary is
    /// `endsAt` less the remaining time rounded up to whole seconds. That second counts as delivered (the
    /// member's countdown shows it), not as a tick: no delay is measured for it.
    public mutating func snapshot(remainingMs: Int64, endsAtMs: Int64, phase: PhaseMark? = nil, window: TickWindow?) {
        guard remainingMs > 0 else { return }
        let boundary = endsAtMs - (remainingMs + 999) / 1000 * 1000
        if gridOffsetMs == nil { gridOffsetMs = ((boundary % 1000) + 1000) % 1000 }
        phaseEndsAtMs = endsAtMs
        lastPhase = phase
        if let last = lastBoundaryMs, boundary <= last { return }
        noteGap(before: boundary, window: window)
        lastBoundaryMs = boundary
        lastFromSnapshot = true
        guard let window, window.contains(boundary) else { return }
        deliveredInWindow += 1
        snapshotsInWindow += 1
    }

    /// The longest run of consecutive whole seconds of the window that reached this member neither as a
    /// tick nor as a phase's end: what a member of a restarting cluster missed at worst. Call it once every
    /// boundary of the window has had time to arrive. A member that saw no tick at all missed the window.
    public func longestMissedRun(window: TickWindow) -> Int {
        guard let offset = gridOffsetMs else { return window.boundaries(onGridWithOffset: 0) }
        return max(longestGapSoFar, Self.missed(after: lastBoundaryMs, before: window.endMs, offset: offset, window: window))
    }

    private mutating func noteGap(before boundary: Int64, window: TickWindow?) {
        guard let window, let offset = gridOffsetMs else { return }
        longestGapSoFar = max(longestGapSoFar, Self.missed(after: lastBoundaryMs, before: boundary, offset: offset,
                                                           window: window))
    }

    /// Boundaries of the window on the grid strictly after `last` (from the window's start when nil) and
    /// before `end`.
    private static func missed(after last: Int64?, before end: Int64, offset: Int64, window: TickWindow) -> Int {
        let from = max(window.startMs, (last ?? window.startMs - 1) + 1)
        let to = min(window.endMs, end)
        guard to > from else { return 0 }
        return TickWindow(startMs: from, endMs: to).boundaries(onGridWithOffset: offset)
    }
}
