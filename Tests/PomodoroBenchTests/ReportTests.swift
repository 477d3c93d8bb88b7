import Foundation
import PomodoroBench
import Testing

/// The report's figures from a run's observations, and its JSON, which scripts read.
@Suite struct ReportTests {
    let plan = BenchPlan(members: 4, rooms: 2, joinRate: 100, focusSeconds: 5, breakSeconds: 2, duration: 10,
                         threads: 2, probeMembers: 1, roomPrefix: "r")
    let window = TickWindow(startMs: 1_000_000, endMs: 1_010_000)

    /// A member welcomed `latency` ms after asking at 0, that saw ticks for `seconds` of its room's grid.
    func member(_ index: Int, latency: Double, seconds: [Int64], gridOffset: Int64 = 500) -> SimulatedMember {
        var member = SimulatedMember(index: index, plan: plan)
        _ = member.handle(.connectRequested(atMs: 0), plan: plan)
        _ = member.handle(.opened, plan: plan)
        _ = member.handle(.welcome(atMs: latency), plan: plan)
        let endsAt: Int64 = 2_000_000 + gridOffset
        for second in seconds {
            let boundary = 1_000_000 + second * 1000 + gridOffset
            _ = member.tally.tick(remainingMs: endsAt - boundary, endsAtMs: endsAt, window: window)
        }
        return member
    }

    func observations(members: [SimulatedMember], problems: [Problem: Int] = [:]) -> RunObservations {
        RunObservations(scenario: "smoke", plan: plan, members: members, problems: problems,
                        tickDelaysMs: (1...100).map(Double.init), probeTickDelaysMs: [1, 2, 3], window: window, framesInWindow: 400,
                        bytesInWindow: 80_000, connectionsHeld: members.filter(\.isConnected).count,
                        firstConnectMs: 0,
                        server: ServerReadings(pid: 42, idleRssKiB: 10_000, steadyRssKiB: 10_040,
                                               cpuAtStart: .init(userTicks: 100, systemTicks: 50),
                                               cpuAtEnd: .init(userTicks: 140, systemTicks: 60),
                                               cpuElapsedSeconds: 10, clockTicksPerSecond: 100),
                        generatorCPUSeconds: 2.5)
    }

    @Test func aCompleteRunHasEveryFigureAndNoFailure() {
        let all = Array(0..<10).map(Int64.init)
        let report = BenchReport(observations(members: (0..<4).map { member($0, latency: Double(10 * ($0 + 1)), seconds: all) }))
        #expect(report.connections.held == 4)
        #expect(report.connections.joined == 4)
        #expect(report.connections.joinSeconds == 0.04)
        #expect(report.connections.joinLatencyMs?.max == 40)
        #expect(report.errors == 0)
        #expect(report.ticks.expected == 40)
        #expect(report.ticks.delivered == 40)
        #expect(report.ticks.missing == 0)
        #expect(report.ticks.delayMs?.p99 == 99)
        #expect(report.ticks.measured == 100)
        #expect(report.ticks.probeDelayMs?.max == 3)
        #expect(report.traffic.framesPerSecond == 40)
        #expect(report.traffic.bytesPerSecond == 8000)
        // 50 ticks of CPU at 100 a second over 10 s: 5% of a core. 40 KiB over 4 connections: 10 KiB each.
        #expect(report.server?.cpuSeconds == 0.5)
        #expect(report.server?.cpuPercentOfCore == 5)
        #expect(report.server?.rssBytesPerConnection == 10_240)
        #expect(report.generatorCPUPercentOfCore == 25)
        #expect(report.everythingDelivered)
        #expect(report.text().contains("everything delivered"))
    }

    /// The server's CPU over the joins is reported when the generator read it (one server), and left out
    /// otherwise (a cluster, or a run that could not read it).
    @Test func theServersCPUOverTheJoinsIsReportedWhenRead() {
        let members = (0..<4).map { member($0, latency: 10, seconds: []) }
        var run = observations(members: members)
        run.joinServerCPUSeconds = 3.38012
        let report = BenchReport(run)
        #expect(report.connections.joinServerCPUSeconds == 3.38)
        #expect(report.text().contains("4 joined in 0.01 s, server CPU 3.38 s"))
        let unread = BenchReport(observations(members: members))
        #expect(unread.connections.joinServerCPUSeconds == nil)
        #expect(!unread.text().contains("server CPU 3"))
    }

    @Test func missingTicksErrorsAndAbsentMembersAreFailures() {
        let all = Array(0..<10).map(Int64.init)
        var dropped = member(3, latency: 5, seconds: [0, 1, 2])
        let closeOutputs = dropped.handle(.closed(code: 1008), plan: plan)
        #expect(closeOutputs == [.problem(.closed(code: 1008))])
        var neverWelcomed = SimulatedMember(index: 2, plan: plan)
        _ = neverWelcomed.handle(.connectRequested(atMs: 0), plan: plan)
        _ = neverWelcomed.handle(.opened, plan: plan)
        let members = [member(0, latency: 1, seconds: all), member(1, latency: 1, seconds: all), neverWelcomed, dropped]
        let report = BenchReport(observations(members: members, problems: [.closed(code: 1008): 1]))
        #expect(report.connections.joined == 3)
        #expect(report.connections.held == 3)
        #expect(report.errors == 2)
        #expect(report.errorsByKind == ["closed 1008": 1, "not joined": 1])
        // Room 0 (members 0 and 2) and room 1 (1 and 3) each owe 10 seconds to each member.
        #expect(report.ticks.expected == 40)
        #expect(report.ticks.delivered == 23)
        #expect(report.ticks.missing == 17)
        #expect(!report.everythingDelivered)
        #expect(report.deliveryFailures == ["3 of 4 members joined", "2 errors (closed 1008: 1, not joined: 1)",
                                            "17 of 40 ticks missing"])
    }

    @Test func aRoomNobodyHeardTickStillOwesEverySecond() {
        let report = BenchReport(observations(members: (0..<4).map { member($0, latency: 1, seconds: []) }))
        #expect(report.ticks.expected == 40)
        #expect(report.ticks.missing == 40)
    }

    @Test func idleRoomsOweNoTicks() {
        var idle = observations(members: (0..<4).map { member($0, latency: 1, seconds: []) })
        idle.plan.startsRooms = false
        let report = BenchReport(idle)
        #expect(report.ticks.expected == 0)
        #expect(report.ticks.missing == 0)
        #expect(report.everythingDelivered)
        #expect(report.text().contains("rooms left idle"))
    }

    @Test func theJSONCarriesEveryFigureUnderStableKeys() throws {
        let all = Array(0..<10).map(Int64.init)
        let report = BenchReport(observations(members: (0..<4).map { member($0, latency: 2, seconds: all) }))
        let json = report.json()
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        #expect(Set(object.keys) == ["setup", "connections", "errors", "errorsByKind", "ticks", "traffic", "server",
                                     "generatorCPUPercentOfCore", "deliveryFailures"])
        let ticks = try #require(object["ticks"] as? [String: Any])
        let delay = try #require(ticks["delayMs"] as? [String: Any])
        #expect(Set(delay.keys) == ["count", "min", "p50", "p99", "p999", "max", "mean"])
        #expect(ticks["probeDelayMs"] is [String: Any])
        #expect(delay["p99"] as? Double == 99)
        let server = try #require(object["server"] as? [String: Any])
        #expect(server["cpuPercentOfCore"] as? Double == 5)
        #expect(server["rssBytesPerConnection"] as? Double == 10_240)
        let setup = try #require(object["setup"] as? [String: Any])
        #expect(setup["scenario"] as? String == "smoke")
        #expect(setup["members"] as? Int == 4)
        // And it reads back as the same report.
        #expect(try JSONDecoder().decode(BenchReport.self, from: Data(json.utf8)) == report)
    }

    @Test func theTextNamesEachFigure() {
        let all = Array(0..<10).map(Int64.init)
        let text = BenchReport(observations(members: (0..<4).map { member($0, latency: 2, seconds: all) })).text()
        for label in ["connections held  4 of 4", "errors            0",
                      "tick delay        p50 50.00 ms, p99 99.00 ms, p99.9 100.00 ms, max 100.00 ms (100 ticks)",
                      "ticks             40 of 40 delivered, 0 missing", "frames delivered  40/s",
                      "server CPU        5.0% of a core", "10.0 KiB per connection", "generator CPU     25.0%",
                      "  probe members   p50 2.00 ms, p99 3.00 ms, p99.9 3.00 ms, max 3.00 ms (3 ticks, 2 members",
                      "delivery          everything delivered"] {
            #expect(text.contains(label), "\(label)")
        }
    }
}
