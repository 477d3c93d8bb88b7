import Foundation
import PomodoroBench
import PomodoroClient

/// One run, stage after stage, each bounded: connect and join at the planned rate, start the rooms,
/// warm up, measure over the window, let late ticks drain, then stop every connection at once.
struct Generator {
    let plan: BenchPlan
    let scenario: String?
    /// One server, or the nodes of a cluster.
    let addresses: [ServerAddress]
    /// The servers' process ids, in the order of `addresses` (none, or one each).
    let serverPIDs: [Int32]
    /// A file of `NODE ROOM` lines naming the node that runs each room, read after the window.
    let ownersPath: String?
    /// Where to write every measured tick ("room boundary-ms delay-ms" lines), if anywhere.
    let samplesPath: String?
    /// Where to write each command sender's last command answered `ok` and last sent, if anywhere.
    let commandsPath: String?

    func run() throws -> BenchReport {
        var servers = serverPIDs.map { ServerReadings(pid: $0, clockTicksPerSecond: System.clockTicksPerSecond) }
        for index in servers.indices { servers[index].idleRssKiB = System.residentKiB(of: servers[index].pid) }
        let groups = try (0..<plan.threadCount).map { try MemberGroup(number: $0, plan: plan, addresses: addresses) }
        let address = addresses.map(\.description).joined(separator: ", ")

        // Join: connections are asked for in slices every 10 ms at the planned rate, or all at once, and
        // with a bound on members pending, no faster than the server welcomes them. The ramp has the same
        // bound as the wait after it.
        System.progress("connecting \(plan.members) members to \(address), \(plan.rooms) rooms")
        let firstConnect = System.wallNowMs()
        let cpuBeforeJoins = servers.count == 1 ? System.cpuTime(of: servers[0].pid) : nil
        let rampDeadline = firstConnect + (plan.rampSeconds + plan.joinTimeout) * 1000
        var next = 0
        while next < plan.members && System.wallNowMs() < rampDeadline {
            var due = plan.joinRate > 0
                ? min(plan.members, Int(((System.wallNowMs() - firstConnect) / 1000 * plan.joinRate).rounded(.down)) + 1)
                : plan.members
            if plan.maxPending > 0 {
                let settled = groups.map { $0.joinProgress.settled }.reduce(0, +)
                due = min(due, settled + plan.maxPending)
            }
            if due > next {
                var slices = Array(repeating: [Int](), count: plan.threadCount)
                for index in next..<due { slices[plan.thread(ofMember: index)].append(index) }
                for (group, slice) in zip(groups, slices) where !slice.isEmpty { group.connect(slice) }
                next = due
            }
            if next < plan.members { usleep(10_000) }
        }
        if next < plan.members {
            System.progress("gave up connecting after \(next) members: the server admitted too few in time")
        }
        let joinDeadline = min(System.wallNowMs() + plan.joinTimeout * 1000, rampDeadline)
        var progress = (welcomed: 0, settled: 0)
        while System.wallNowMs() < joinDeadline {
            progress = groups.map(\.joinProgress).reduce((0, 0)) { ($0.0 + $1.welcomed, $0.1 + $1.settled) }
            if progress.settled == plan.members { break }
            usleep(100_000)
        }
        let cpuAfterJoins = servers.count == 1 ? System.cpuTime(of: servers[0].pid) : nil
        System.progress("\(progress.welcomed) of \(plan.members) joined in \(String(format: "%.2f", (System.wallNowMs() - firstConnect) / 1000)) s")

        // Start: the rooms' starters, in slices spread evenly over the start spread (`BenchPlan.startSlices`),
        // each slice handed to the threads that hold its starters only.
        let startBegan = System.wallNowMs()
        for slice in plan.startSlices where plan.startsRooms {
            System.sleep(untilMs: startBegan + slice.atMs)
            let threads = Set(slice.rooms.map { plan.thread(ofMember: $0) })
            for thread in threads.sorted() { groups[thread].startRooms(slice.rooms) }
        }
        System.sleep(untilMs: startBegan + plan.startSpread * 1000 + plan.warmup * 1000)

        // Measure: ticks whose boundary falls in the window, frames arriving in it, CPU used across it.
        let windowStart = (System.wallNowMs() + 100).rounded(.up)
        let window = TickWindow(startMs: Int64(windowStart), endMs: Int64(windowStart + plan.duration * 1000))
        for group in groups { group.setWindow(window) }
        System.progress("measuring for \(plan.duration) s")
        System.sleep(untilMs: Double(window.startMs))
        // The server's own stage histograms, when it has them (one server: its /metrics).
        let metricsAddress = addresses.count == 1 ? addresses[0] : nil
        let stagesAtStart = metricsAddress.flatMap { System.httpGet(host: $0.host, port: $0.port, path: "/metrics") }
            .map(ServerStages.parse)
        let cpuStartedAt = System.wallNowMs()
        for index in servers.indices { servers[index].cpuAtStart = System.cpuTime(of: servers[index].pid) }
        let ownCPUAtStart = System.ownCPUSeconds()
        let machineAtStart = System.machineCPU()
        System.sleep(untilMs: Double(window.endMs))
        for index in servers.indices { servers[index].cpuAtEnd = System.cpuTime(of: servers[index].pid) }
        let elapsed = (System.wallNowMs() - cpuStartedAt) / 1000
        for index in servers.indices { servers[index].cpuElapsedSeconds = elapsed }
        let ownCPU = System.ownCPUSeconds() - ownCPUAtStart
        let stagesAtEnd = stagesAtStart == nil ? nil
            : metricsAddress.flatMap { System.httpGet(host: $0.host, port: $0.port, path: "/metrics") }.map(ServerStages.parse)
        let machineAtEnd = System.machineCPU()
        for index in servers.indices { servers[index].steadyRssKiB = System.residentKiB(of: servers[index].pid) }
        let held = groups.map(\.connectionsOpen).reduce(0, +)

        // Drain, then collect and stop. Stopping closes every socket at once; nothing waits on the server.
        System.sleep(untilMs: Double(window.endMs) + plan.drain * 1000)
        var owners: [Int: Int] = [:]
        if let ownersPath {
            if let text = System.readSmallFile(ownersPath) {
                owners = RoomOwners.parse(text, plan: plan)
                let differ = owners.filter { $0.value != plan.ownerNode(ofRoom: $0.key) }.count
                System.progress("\(owners.count) rooms' owners read from \(ownersPath), \(differ) on another node than planned")
            } else {
                System.progress("no owners in \(ownersPath): members counted on the owner by the plan")
            }
        }
        let harvests = groups.map { $0.finish(withSamples: samplesPath != nil, owners: owners) }
        for group in groups { group.client.stop() }
        for group in groups { group.client.waitUntilFinished() }

        if let samplesPath {
            let text = harvests.flatMap(\.sampleLines).joined(separator: "\n") + "\n"
            if !FileManager.default.createFile(atPath: samplesPath, contents: Data(text.utf8)) {
                System.progress("could not write \(samplesPath)")
            }
        }
        if let commandsPath {
            let lines = harvests.flatMap(\.timers).map(\.timer).sorted { $0.member < $1.member }.map {
                "\(plan.roomName(plan.room(ofMember: $0.member))) \(plan.memberName($0.member)) \($0.lastAnswered) \($0.lastSent)"
            }
            if !FileManager.default.createFile(atPath: commandsPath, contents: Data((lines.joined(separator: "\n") + "\n").utf8)) {
                System.progress("could not write \(commandsPath)")
            }
        }
        var problems: [Problem: Int] = [:]
        for harvest in harvests { problems.merge(harvest.problems, uniquingKeysWith: +) }
        var run = RunObservations(
            scenario: scenario, plan: plan,
            members: harvests.flatMap(\.members).sorted { $0.index < $1.index },
            problems: problems, tickDelaysMs: harvests.flatMap(\.delays),
            probeTickDelaysMs: harvests.filter(\.isProbe).flatMap(\.delays), window: window,
            framesInWindow: harvests.map(\.framesInWindow).reduce(0, +),
            bytesInWindow: harvests.map(\.bytesInWindow).reduce(0, +),
            connectionsHeld: held, firstConnectMs: firstConnect, server: servers.count == 1 ? servers[0] : nil,
            generatorCPUSeconds: ownCPU, machineAtStart: machineAtStart, machineAtEnd: machineAtEnd)
        if servers.count > 1 { run.nodeServers = servers }
        run.ownerTickDelaysMs = harvests.flatMap(\.ownerDelays)
        run.relayedTickDelaysMs = harvests.flatMap(\.relayedDelays)
        run.commandTimers = harvests.flatMap(\.timers)
        run.owners = owners
        if let before = cpuBeforeJoins, let after = cpuAfterJoins {
            run.joinServerCPUSeconds = Double(after.totalTicks - before.totalTicks) / Double(System.clockTicksPerSecond)
        }
        run.stagesAtStart = stagesAtStart
        run.stagesAtEnd = stagesAtEnd
        return BenchReport(run)
    }
}
