/// Pomodoros on the clock: focus starting at :00 and :30 for 25/5, at :00 for 50/10, so that separate
/// rooms in the same zone break together.
///
/// A cycle is one focus and the short break after it. It must fit the hour exactly (its length divides 60
/// minutes: 25/5, 50/10, 20/10, 15/5, ...) or be whole hours that fit the day (110/10, 2 hours). Aligned rooms
/// take no long breaks: a long break would pull one room off the grid that every other room stays on.
/// Cycles are counted from local midnight in the room's zone, so :00 means :00 on the room's clocks, also in
/// zones half an hour off UTC; on a day whose clocks jump, the cycle after the jump starts on the grid again.
public struct ClockAlignment: Hashable, Sendable {
    public let focus: Int
    public let shortBreak: Int
    public let zone: ZoneName

    /// Throws when one focus and one short break do not fit the hour (or the day) exactly.
    public init(settings: RoomSettings, zone: ZoneName) throws(RoomError) {
        let cycle = settings.focus + settings.shortBreak
        guard cycle > 0, 3600 % cycle == 0 || (cycle % 3600 == 0 && 86_400 % cycle == 0) else {
            throw .invalidArgument(field: "aligned", reason: "focus plus short break must divide an hour (25+5, 50+10, ...) or be whole hours that divide a day")
        }
        focus = settings.focus
        shortBreak = settings.shortBreak
        self.zone = zone
    }

    public var cycle: Int64 { Int64(focus + shortBreak) }

    /// Where an aligned room stands at `now`: the phase on the grid and when it ends.
    public func phase(at now: WallTime) -> (phase: Phase, endsAt: WallTime) {
        let start = cycleStart(containing: now)
        let focusEnds = start + Int64(focus)
        return now < focusEnds ? (.focus, focusEnds) : (.shortBreak, start + cycle)
    }

    /// The first focus start on the grid at or after `now`.
    public func nextFocusStart(onOrAfter now: WallTime) -> WallTime {
        let start = cycleStart(containing: now)
        return start == now ? now : start + cycle
    }

    private func cycleStart(containing now: WallTime) -> WallTime {
        let intoDay = zone.secondsIntoDay(of: now)
        return now - (intoDay % cycle)
    }
}
