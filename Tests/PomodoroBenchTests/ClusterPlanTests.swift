import Foundation
import PomodoroBench
import PomodoroProtocol
import Testing

/// Spreading members over the nodes of a cluster, timing commands, and what the report says of both.
@Suite struct ClusterPlanTests {
    @Test func splitPutsEveryRoomOnEveryNodeWithTheOwnersSpreadEvenly() {
        let plan = BenchPlan(members: 30, rooms: 3, nodes: 3, placement: .split)
        for room in 0..<3 {
            let nodes = (0..<30).filter { plan.room(ofMember: $0) == room }.map(plan.node(ofMember:))
            #expect(Set(nodes) == [0, 1, 2])
            // Members of a room cycle through the nodes from the owner's.
            #expect(Array(nodes.prefix(4)) == [room, (room + 1) % 3, (room + 2) % 3, room])
        }
        #expect((0..<3).map(plan.ownerNode(ofRoom:)) == [0, 1, 2])
        // Member 3 is room 0's second member: on node 1, not the owner's.
        #expect(plan.isOnOwnerNode(0))
        #expect(!plan.isOnOwnerNode(3))
        #expect((0..<30).filter { plan.isOnOwnerNode($0) }.count == 12)
    }

    @Test func theNodesOwnSayOverrulesThePlan() {
        let plan = BenchPlan(members: 30, rooms: 3, roomPrefix: "bench-9", nodes: 3, placement: .split)
        let text = "0 bench-9-0\n2 bench-9-1\n1 bench-9-2\n7 bench-9-0\n0 other-1\n1 bench-9-3\nnonsense\n"
        let owners = RoomOwners.parse(text, plan: plan)
        #expect(owners == [0: 0, 1: 2, 2: 1])
        // Room 1 runs on node 2, where its second member (index 4) sits, not on its first's node 1.
        #expect(plan.isOnOwnerNode(4, owners: owners))
        #expect(!plan.isOnOwnerNode(1, owners: owners))
        #expect(plan.isOnOwnerNode(1))
        // A room the file does not name is counted by the plan.
        #expect(plan.isOnOwnerNode(0, owners: [:]))
    }

    @Test func byRoomPutsARoomOnOneNode() {
        let plan = BenchPlan(members: 40, rooms: 4, nodes: 3, placement: .room)
        #expect((0..<8).map(plan.node(ofMember:)) == [0, 1, 2, 0, 0, 1, 2, 0])
        #expect((0..<40).allSatisfy { plan.isOnOwnerNode($0) })
    }

    @Test func oneServerIsNodeZeroForEveryone() {
        let plan = BenchPlan(members: 20, rooms: 4)
        #expect((0..<20).allSatisfy { plan.node(ofMember: $0) == 0 && plan.isOnOwnerNode($0) })
        #expect(plan.problems().isEmpty)
    }

    @Test func commandSendersAreOnePerNodeInTheLastRooms() {
        let split = BenchPlan(members: 100, rooms: 10, nodes: 3, placement: .split, commandRooms: 2)
        let senders = (0..<100).filter(split.isCommandSender)
        #expect(Set(senders.map(split.room(ofMember:))) == [8, 9])
        #expect(senders.count == 6)
        #expect(Set(senders.filter { split.room(ofMember: $0) == 9 }.map(split.node(ofMember:))) == [0, 1, 2])
        #expect(senders.filter { split.isOnOwnerNode($0) }.count == 2)
        let single = BenchPlan(members: 100, rooms: 10, commandRooms: 1)
        #expect((0..<100).filter(single.isCommandSender) == [9, 19])
        // The same commands as the split cluster's: three senders in the room, all on the one server.
        var same = single
        same.commandSenders = 3
        #expect((0..<100).filter(same.isCommandSender) == [9, 19, 29])
        var three = split
        three.commandSenders = 3
        #expect((0..<100).filter(three.isCommandSender) == senders, "three on three nodes: one on each, as without")
        var none = single
        none.commandSenders = 0
        #expect(!none.problems().isEmpty)
        #expect(!BenchPlan(members: 10, rooms: 2, commandRooms: 3).problems().isEmpty)
        #expect(!BenchPlan(members: 10, rooms: 2, nodes: 0).problems().isEmpty)
    }

    @Test func aTimedCommandIsSentOnceASecondAndTimedToItsOwnOk() {
        var timer = CommandTimer(member: 7)
        let first = timer.tickArrived(atMs: 1_000)
        #expect(first == ClientFrame(.task(text: "timed 1"), ref: .number(7_000_001)))
        // Nothing more while it is outstanding; an answer to another ref is not its answer.
        #expect(timer.tickArrived(atMs: 2_000) == nil)
        #expect(timer.replied(ref: .number(7_000_002), ok: true, atMs: 1_003) == nil)
        #expect(timer.replied(ref: .number(7_000_001), ok: true, atMs: 2_004.5) == 1_004.5)
        // Answered: the next tick sends the next one, but never twice within the same second.
        #expect(timer.tickArrived(atMs: 2_500) != nil)
        #expect(timer.replied(ref: .number(7_000_002), ok: false, atMs: 2_510) == nil)
        #expect(timer.tickArrived(atMs: 3_000) == nil)
        #expect(timer.tickArrived(atMs: 3_500)?.ref == .number(7_000_003))
        #expect(timer.sent == 3)
        #expect(timer.answered == 1)
        #expect(timer.refused == 1)
        #expect(timer.latenciesMs == [1_004.5])
    }

    @Test func theReportGivesEachNodeRelayedTicksAndCommandsApart() throws {
        let plan = BenchPlan(members: 6, rooms: 2, duration: 10, probeMembers: 0, roomPrefix: "r", nodes: 2,
                             commandRooms: 1)
        let window = TickWindow(startMs: 0, endMs: 10_000)
        func readings(_ pid: Int32, ticks: Int64) -> ServerReadings {
            ServerReadings(pid: pid, idleRssKiB: 1_000, steadyRssKiB: 2_000, cpuAtStart: .init(userTicks: 0, systemTicks: 0),
                           cpuAtEnd: .init(userTicks: ticks, systemTicks: 0), cpuElapsedSeconds: 10)
        }
        var run = RunObservations(scenario: nil, plan: plan, members: [], problems: [:], tickDelaysMs: [1, 2, 3, 10],
                                  window: window, framesInWindow: 0, bytesInWindow: 0, connectionsHeld: 6, firstConnectMs: nil)
        run.nodeServers = [readings(11, ticks: 100), readings(12, ticks: 50)]
        run.ownerTickDelaysMs = [1, 2, 3]
        run.relayedTickDelaysMs = [10]
        var owner = CommandTimer(member: 1), relayed = CommandTimer(member: 3), lost = CommandTimer(member: 5)
        _ = owner.tickArrived(atMs: 0)
        owner.replied(ref: .number(1_000_001), ok: true, atMs: 2)
        _ = relayed.tickArrived(atMs: 0)
        relayed.replied(ref: .number(3_000_001), ok: true, atMs: 5)
        _ = lost.tickArrived(atMs: 0)
        run.commandTimers = [(true, owner), (false, relayed), (false, lost)]
        let report = BenchReport(run)
        #expect(report.server == nil)
        #expect(report.nodes?.map(\.cpuPercentOfCore) == [10, 5])
        #expect(report.nodesCPUPercentOfCore == 15)
        #expect(report.setup.nodes == 2)
        #expect(report.setup.placement == "split")
        #expect(report.ticks.ownerNodeDelayMs?.max == 3)
        #expect(report.ticks.relayedDelayMs?.p50 == 10)
        #expect(report.commands?.sent == 3)
        #expect(report.commands?.ownerNodeLatencyMs?.p50 == 2)
        #expect(report.commands?.relayedLatencyMs?.max == 5)
        #expect(report.deliveryFailures.contains("1 of 3 timed commands unanswered"))
        let text = report.text()
        #expect(text.contains("node 2 CPU"))
        #expect(text.contains("forwarded p50 5.00 ms"))
    }

    @Test func aSingleServerReportHasNoClusterFields() throws {
        let plan = BenchPlan(members: 2, rooms: 1, probeMembers: 0)
        let run = RunObservations(scenario: nil, plan: plan, members: [], problems: [:], tickDelaysMs: [1],
                                  window: TickWindow(startMs: 0, endMs: 1_000), framesInWindow: 0, bytesInWindow: 0,
                                  connectionsHeld: 2, firstConnectMs: nil)
        let json = BenchReport(run).json()
        for key in ["nodes", "placement", "ownerNodeDelayMs", "relayedDelayMs", "commands", "nodesCPUPercentOfCore"] {
            #expect(!json.contains("\"\(key)\""))
        }
    }
}
