import PomodoroBench
import PomodoroCore
import PomodoroProtocol
import Testing

/// A member's script: join on open, a starter configures on welcome and starts when told, and every
/// problem is reported once.
@Suite struct SimulatedMemberTests {
    let plan = BenchPlan(members: 20, rooms: 4, focusSeconds: 3, breakSeconds: 2, roomPrefix: "bench-7")

    @Test func membersAreSpreadRoundRobinAndTheFirstOfEachRoomStartsIt() {
        #expect((0..<8).map(plan.room(ofMember:)) == [0, 1, 2, 3, 0, 1, 2, 3])
        #expect((0..<8).map(plan.isStarter) == [true, true, true, true, false, false, false, false])
        #expect(plan.roomName(3) == "bench-7-3")
        #expect(plan.settings == RoomSettings(focus: 3, shortBreak: 2, longBreak: 2, longBreakEvery: 4, autoStart: true))
    }

    @Test func aRoomsMembersShareAThreadUnlessThereAreFewerRoomsThanThreads() {
        var many = BenchPlan(members: 40, rooms: 10, threads: 4, probeMembers: 0)
        for index in 0..<40 {
            #expect(many.thread(ofMember: index) == many.room(ofMember: index) % 4)
        }
        #expect(Set((0..<40).map(many.thread(ofMember:))) == [0, 1, 2, 3])
        many.rooms = 1
        #expect((0..<8).map(many.thread(ofMember:)) == [0, 1, 2, 3, 0, 1, 2, 3])
        #expect(many.threadCount == 4)
    }

    @Test func probeMembersAreWholeRoomsOnAThreadOfTheirOwn() {
        let rooms = BenchPlan(members: 10_000, rooms: 1_000, threads: 4, probeMembers: 100)
        #expect(rooms.threadCount == 5)
        let probes = (0..<10_000).filter(rooms.isProbe)
        #expect(probes.count == 100)
        #expect(rooms.probeCount == 100)
        #expect(Set(probes.map(rooms.room(ofMember:))) == Set(0..<10))
        #expect(probes.allSatisfy { rooms.thread(ofMember: $0) == 4 })
        #expect((0..<10_000).filter { !rooms.isProbe($0) }.allSatisfy { rooms.thread(ofMember: $0) < 4 })
        // One big room: the first members.
        let allHands = BenchPlan(members: 5_000, rooms: 1, threads: 4, probeMembers: 50)
        #expect((0..<5_000).filter(allHands.isProbe) == Array(0..<50))
        #expect(allHands.probeCount == 50)
        #expect(allHands.thread(ofMember: 49) == 4)
        #expect(allHands.thread(ofMember: 50) == 2)
        // At most half the members, so the load stays on the load threads.
        let few = BenchPlan(members: 40, rooms: 4, threads: 4, probeMembers: 39)
        #expect(Set((0..<40).filter(few.isProbe).map(few.room(ofMember:))) == [0, 1])
        #expect(few.probeCount == 20)
        let uneven = BenchPlan(members: 23, rooms: 5, threads: 2, probeMembers: 10)
        #expect(uneven.probeCount == (0..<23).filter(uneven.isProbe).count)
        #expect((0..<5).map(uneven.membersIn(room:)) == [5, 5, 5, 4, 4])
        let two = BenchPlan(members: 20, rooms: 2, threads: 1, probeMembers: 100)
        #expect(Set((0..<20).filter(two.isProbe).map(two.room(ofMember:))) == [0])
        #expect(BenchPlan(members: 40, rooms: 4, threads: 4, probeMembers: 0).threadCount == 4)
    }

    @Test func aStarterJoinsConfiguresAndStartsOnlyWhenTold() {
        var member = SimulatedMember(index: 2, plan: plan)
        #expect(member.isStarter)
        #expect(member.handle(.connectRequested(atMs: 1000), plan: plan).isEmpty)
        #expect(member.handle(.opened, plan: plan) == [.send(.join(room: "bench-7-2", name: "m2", token: nil))])
        #expect(member.handle(.welcome(atMs: 1012.5), plan: plan) == [.send(.configure(plan.settings))])
        #expect(member.joinLatencyMs == 12.5)
        #expect(member.handle(.ok(command: "configure"), plan: plan).isEmpty)
        #expect(member.configured)
        #expect(member.handle(.startRoom, plan: plan) == [.send(.start)])
        // Told twice, it starts once.
        #expect(member.handle(.startRoom, plan: plan).isEmpty)
        _ = member.handle(.ok(command: "start"), plan: plan)
        #expect(member.started)
        #expect(member.finalProblem() == nil)
    }

    @Test func anOrdinaryMemberOnlyJoins() {
        var member = SimulatedMember(index: 6, plan: plan)
        #expect(!member.isStarter)
        _ = member.handle(.connectRequested(atMs: 0), plan: plan)
        #expect(member.handle(.opened, plan: plan) == [.send(.join(room: "bench-7-2", name: "m6", token: nil))])
        #expect(member.handle(.welcome(atMs: 5), plan: plan).isEmpty)
        #expect(member.handle(.startRoom, plan: plan).isEmpty)
        #expect(member.isConnected)
    }

    @Test func aStarterThatNeverJoinedCannotStart() {
        var member = SimulatedMember(index: 0, plan: plan)
        _ = member.handle(.connectRequested(atMs: 0), plan: plan)
        _ = member.handle(.opened, plan: plan)
        #expect(member.handle(.startRoom, plan: plan).isEmpty)
        #expect(member.finalProblem() == .notJoined)
    }

    @Test func aCloseFromTheServerIsAProblemWithItsCode() {
        var member = SimulatedMember(index: 5, plan: plan)
        _ = member.handle(.connectRequested(atMs: 0), plan: plan)
        _ = member.handle(.opened, plan: plan)
        _ = member.handle(.welcome(atMs: 1), plan: plan)
        #expect(member.handle(.closed(code: 1008), plan: plan) == [.problem(.closed(code: 1008))])
        #expect(!member.isConnected)
        // Already counted: no "not joined" on top, and a second close report changes nothing.
        #expect(member.handle(.closed(code: 1008), plan: plan).isEmpty)
        #expect(member.finalProblem() == nil)
    }

    @Test func aFailedConnectionIsCountedOnceAndNotAlsoAsNotJoined() {
        var member = SimulatedMember(index: 5, plan: plan)
        _ = member.handle(.connectRequested(atMs: 0), plan: plan)
        #expect(member.handle(.failed(reason: "timeout"), plan: plan) == [.problem(.connectFailed("timeout"))])
        #expect(Problem.connectFailed("timeout").description == "connect failed (timeout)")
        #expect(member.finalProblem() == nil)
        #expect(!member.welcomed)
    }

    @Test func closesAfterTheRunAreNotProblems() {
        var member = SimulatedMember(index: 5, plan: plan)
        _ = member.handle(.connectRequested(atMs: 0), plan: plan)
        _ = member.handle(.opened, plan: plan)
        _ = member.handle(.welcome(atMs: 1), plan: plan)
        _ = member.handle(.finishing, plan: plan)
        #expect(member.handle(.closed(code: 1001), plan: plan).isEmpty)
    }

    @Test func anErrorReplyIsAProblemWithItsCode() {
        var member = SimulatedMember(index: 1, plan: plan)
        #expect(member.handle(.error(code: "room_limit"), plan: plan) == [.problem(.errorReply("room_limit"))])
        #expect(Problem.errorReply("room_limit").description == "error room_limit")
        #expect(Problem.closed(code: nil).description == "closed without a code")
    }

    @Test func plansOutsideTheirBoundsAreRefused() {
        #expect(plan.problems().isEmpty)
        #expect(Scenario.allCases.allSatisfy { $0.plan.problems().isEmpty })
        var bad = plan
        bad.rooms = 30
        #expect(bad.problems().contains { $0.contains("--rooms") })
        bad = plan
        bad.focusSeconds = 1
        #expect(bad.problems().contains { $0.contains("--focus") })
        bad = plan
        bad.roomPrefix = "no spaces"
        #expect(bad.problems().contains { $0.contains("--room-prefix") })
        bad = plan
        bad.roomPrefix = String(repeating: "x", count: 70)
        #expect(!bad.problems().isEmpty)
    }

    @Test func theBoundCoversEveryStage() {
        let storm = Scenario.storm.plan
        #expect(storm.rampSeconds == 0)
        #expect(storm.boundSeconds >= storm.joinTimeout + storm.warmup + storm.duration + storm.drain)
        let rooms = Scenario.rooms.plan
        #expect(rooms.rampSeconds == 5)
        #expect(rooms.boundSeconds > rooms.rampSeconds + rooms.joinTimeout + rooms.duration)
    }
}
