import PomodoroBench
import Testing

/// Each whole second of a running room reaches each member once, as a tick or as a phase's end; the tally
/// counts those inside the window and the window says how many there should be.
@Suite struct TickTallyTests {
    /// A window of ten seconds starting on an odd millisecond.
    let window = TickWindow(startMs: 1_767_225_600_250, endMs: 1_767_225_610_250)

    @Test func aTenSecondWindowHoldsTenBoundariesOfAnyGrid() {
        for offset: Int64 in [0, 1, 249, 250, 251, 999] {
            #expect(window.boundaries(onGridWithOffset: offset) == 10, "offset \(offset)")
        }
        #expect(window.seconds == 10)
    }

    @Test func aWindowCountsItsStartButNotItsEnd() {
        let short = TickWindow(startMs: 1000, endMs: 3500)
        #expect(short.boundaries(onGridWithOffset: 0) == 3)    // 1000, 2000, 3000
        #expect(short.boundaries(onGridWithOffset: 500) == 2)  // 1500, 2500 (3500 is the end, outside)
        #expect(short.contains(1000))
        #expect(!short.contains(3500))
        #expect(TickWindow(startMs: 1000, endMs: 1000).boundaries(onGridWithOffset: 0) == 0)
    }

    @Test func ticksInsideTheWindowAreCountedAndReturnTheirBoundary() {
        var tally = TickTally()
        let endsAt: Int64 = 1_767_225_605_700
        // Remaining 5000 marks endsAt - 5000 = ...600_700, inside the window.
        #expect(tally.tick(remainingMs: 5000, endsAtMs: endsAt, window: window) == 1_767_225_600_700)
        #expect(tally.tick(remainingMs: 4000, endsAtMs: endsAt, window: window) == 1_767_225_601_700)
        #expect(tally.deliveredInWindow == 2)
        #expect(tally.ticksInWindow == 2)
        #expect(tally.gridOffsetMs == 700)
    }

    @Test func ticksOutsideTheWindowAreReceivedButNotCounted() {
        var tally = TickTally()
        // Boundary 600_000 is before the window's start at 600_250.
        #expect(tally.tick(remainingMs: 9000, endsAtMs: 1_767_225_609_000, window: window) == nil)
        // And without a window (before the measurement), nothing counts either.
        #expect(tally.tick(remainingMs: 8000, endsAtMs: 1_767_225_609_000, window: nil) == nil)
        #expect(tally.ticksReceived == 2)
        #expect(tally.deliveredInWindow == 0)
        #expect(tally.gridOffsetMs == 0)
    }

    @Test func aPhaseEndCountsAsTheSecondItMarks() {
        var tally = TickTally()
        let endsAt: Int64 = 1_767_225_603_000
        for remaining: Int64 in [2000, 1000] { _ = tally.tick(remainingMs: remaining, endsAtMs: endsAt, window: window) }
        // The phase's last second brings phaseCompleted; the next phase ticks on the same grid.
        tally.phaseCompleted(window: window)
        let nextEndsAt = endsAt + 5000
        #expect(tally.tick(remainingMs: 4000, endsAtMs: nextEndsAt, window: window) == endsAt + 1000)
        #expect(tally.deliveredInWindow == 4)
        #expect(tally.ticksInWindow == 3)
        // The window's grid (offset 0) holds boundaries 601_000, 602_000, 603_000, 604_000: all four delivered.
    }

    @Test func aRepeatedBoundaryIsADuplicateNotADelivery() {
        var tally = TickTally()
        let endsAt: Int64 = 1_767_225_605_000
        _ = tally.tick(remainingMs: 3000, endsAtMs: endsAt, window: window)
        #expect(tally.tick(remainingMs: 3000, endsAtMs: endsAt, window: window) == nil)
        #expect(tally.duplicates == 1)
        #expect(tally.deliveredInWindow == 1)
        // A second phaseCompleted for the same phase is not counted twice either.
        _ = tally.tick(remainingMs: 1000, endsAtMs: endsAt, window: window)
        tally.phaseCompleted(window: window)
        tally.phaseCompleted(window: window)
        #expect(tally.deliveredInWindow == 3)
    }

    @Test func aPhaseEndWithoutAnyTickOfItsPhaseCannotBePlaced() {
        var tally = TickTally()
        tally.phaseCompleted(window: window)
        #expect(tally.deliveredInWindow == 0)
    }

    @Test func aLostTickLeavesAGapThatTheExpectationSees() {
        // Ten boundaries expected on grid 0; ticks for 601...610 except 605 arrive.
        var tally = TickTally()
        let endsAt: Int64 = 1_767_225_620_000
        for second: Int64 in 601...610 where second != 605 {
            _ = tally.tick(remainingMs: endsAt - (1_767_225_000_000 + second * 1000), endsAtMs: endsAt, window: window)
        }
        #expect(window.boundaries(onGridWithOffset: 0) == 10)
        #expect(tally.deliveredInWindow == 9)
    }
}
