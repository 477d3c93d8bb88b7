// A clock-aligned room (`RoomSettings.aligned`): its phases sit on the wall clock's grid (`ClockAlignment`),
// so that rooms that never hear of each other break together.
//
// The decisions, in one place:
// - **Starting** (start, resume, a scheduled start) joins the grid where it stands: during the grid's focus
//   the focus runs to the grid's end of it, shorter than a whole one; during its break, the break runs to
//   the next focus on the clock. The phase's length is what is left of it, so the journal holds what ran.
// - **Phases follow by themselves** while anyone is connected (as with auto-start), each from the previous
//   deadline, so they stay on the grid; with nobody there the next phase waits, and a start joins the grid
//   again. There are no long breaks: one would pull the room off the grid.
// - **Extending** is refused: an aligned room keeps to the clock. Pausing is allowed; resuming joins the grid.
//   Skipping a focus starts the break, to the next focus on the clock; skipping a break keeps the clock's
//   break (the next focus starts on the clock, not early).
// - **Lengths that do not fit** the hour (focus plus short break must divide 60 minutes, or be whole hours
//   that divide the day) are refused by `configure`, naming `aligned`.

extension Room {
    /// The wall clock's second at `instant`, by the offset the server last gave.
    func wallTime(at instant: Instant) -> WallTime {
        let ns = instant.nanoseconds + wallOffsetNanoseconds
        return WallTime(seconds: CivilDays.floorDiv(ns, 1_000_000_000))
    }

    /// The monotonic instant of a second on the wall clock.
    func instant(at wall: WallTime) -> Instant {
        Instant(nanoseconds: wall.seconds * 1_000_000_000 - wallOffsetNanoseconds)
    }

    /// For an aligned room, the phase to run from `now` when `requested` is to start, and when it ends on
    /// the grid; nil for a room that is not aligned. A focus (started, resumed, or following a break) is
    /// whatever the grid is in; a break asked for while the grid is in focus (the focus was skipped) runs
    /// to the next focus on the clock.
    func gridPhase(entering requested: Phase, at now: Instant) -> (phase: Phase, endsAt: Instant)? {
        guard let alignment = settings.alignment else { return nil }
        let wall = wallTime(at: now)
        let (phase, endsAt) = alignment.phase(at: wall)
        if phase == .focus && (requested == .shortBreak || requested == .longBreak) {
            return (.shortBreak, instant(at: alignment.nextFocusStart(onOrAfter: wall + 1)))
        }
        return (phase, instant(at: endsAt))
    }

    /// Whether phases follow by themselves.
    var followsTheClock: Bool { settings.aligned != nil }
}
