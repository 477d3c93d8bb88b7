import PomodoroBench
import Testing

/// When the generator starts the rooms: every room once, spread evenly over the start spread, and no two rooms
/// in the same millisecond while there are no more rooms than milliseconds (their ticks fall where they start).
@Suite struct StartSlicesTests {
    @Test func aThousandRoomsOverASecondEachStartInAMillisecondOfTheirOwn() {
        let plan = Scenario.storm.plan
        let slices = plan.startSlices
        #expect(slices.count == 1_000)
        #expect(slices.flatMap { Array($0.rooms) } == Array(0..<1_000))
        #expect(slices.allSatisfy { $0.rooms.count == 1 })
        let moments = slices.map(\.atMs)
        #expect(moments.first == 0)
        #expect(zip(moments, moments.dropFirst()).allSatisfy { $1 - $0 >= 1 })
        #expect(moments.last.map { $0 < 1_000 } == true)
    }

    @Test func moreRoomsThanMillisecondsShareThemEvenly() {
        let plan = BenchPlan(members: 5_000, rooms: 2_500, startSpread: 0.5)
        let slices = plan.startSlices
        #expect(slices.count == 500)
        #expect(slices.allSatisfy { $0.rooms.count == 5 })
        #expect(slices.flatMap { Array($0.rooms) } == Array(0..<2_500))
        #expect(slices.map(\.atMs) == (0..<500).map(Double.init))
    }

    @Test func noSpreadStartsEveryRoomAtOnce() {
        let plan = BenchPlan(members: 100, rooms: 10, startSpread: 0)
        #expect(plan.startSlices.map(\.atMs) == [0])
        #expect(plan.startSlices.map(\.rooms) == [0..<10])
    }
}
