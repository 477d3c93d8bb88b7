import Foundation

/// The server as seen from `/proc` during a run.
public struct ServerReadings: Equatable, Sendable {
    public var pid: Int32
    /// Resident memory before the first connection, and at the end of the measurement window.
    public var idleRssKiB: Int64?
    public var steadyRssKiB: Int64?
    /// CPU time at the start and end of the window, and the wall-clock seconds between the two readings.
    public var cpuAtStart: ProcFiles.CPUTime?
    public var cpuAtEnd: ProcFiles.CPUTime?
    public var cpuElapsedSeconds: Double
    public var clockTicksPerSecond: Int

    public init(pid: Int32, idleRssKiB: Int64? = nil, steadyRssKiB: Int64? = nil, cpuAtStart: ProcFiles.CPUTime? = nil,
                cpuAtEnd: ProcFiles.CPUTime? = nil, cpuElapsedSeconds: Double = 0, clockTicksPerSecond: Int = 100) {
        self.pid = pid
        self.idleRssKiB = idleRssKiB
        self.steadyRssKiB = steadyRssKiB
        self.cpuAtStart = cpuAtStart
        self.cpuAtEnd = cpuAtEnd
        self.cpuElapsedSeconds = cpuElapsedSeconds
        self.clockTicksPerSecond = clockTicksPerSecond
    }
}

/// Everything a run observed, gathered from the client threads once the run is over.
public struct RunObservations: Sendable {
    public var scenario: String?
    public var plan: BenchPlan
    public var members: [SimulatedMember]
    /// Problems in the order they were reported, counted by kind (the members' final ones are added later).
    public var problems: [Problem: Int]
    /// Arrival minus boundary of every tick whose boundary is inside the window, in ms.
    public var tickDelaysMs: [Double]
    /// The part of `tickDelaysMs` measured on the probe thread.
    public var probeTickDelaysMs: [Double]
    public var window: TickWindow
    /// Frames and their bytes that arrived during the window.
    public var framesInWindow: Int
    public var bytesInWindow: Int
    /// Connections open at the end of the window.
    public var connectionsHeld: Int
    /// When the first connection was asked for (epoch ms).
    public var firstConnectMs: Double?
    public var server: ServerReadings?
    /// The generator's own CPU time over the window, in seconds.
    public var generatorCPUSeconds: Double?
    /// The whole machine's CPU time at the start and end of the window.
    public var machineAtStart: ProcFiles.MachineCPU?
    public var machineAtEnd: ProcFiles.MachineCPU?
    /// With several servers (cluster nodes): each one's readings, in the order of the `--url`s.
    public var nodeServers: [ServerReadings] = []
    /// The parts of `tickDelaysMs` measured on members connected to their room's owner, and to another node.
    public var ownerTickDelaysMs: [Double] = []
    public var relayedTickDelaysMs: [Double] = []
    /// The server's tick stage histograms (`/metrics`) at the start and end of the window; nil for a server
    /// without them.
    public var stagesAtStart: [String: StageHistogram]?
    public var stagesAtEnd: [String: StageHistogram]?
    /// The timed commands of the run's command senders, and whether each sender sat on its room's owner.
    public var commandTimers: [(onOwner: Bool, timer: CommandTimer)] = []
    /// The node running each room as the nodes said after the window (`--owners`), where known.
    public var owners: [Int: Int] = [:]
    /// The server's CPU time (one server) from the first connection asked for until every member's join was
    /// over, in seconds: what the joins cost it, which a busy machine changes less than their wall time.
    public var joinServerCPUSeconds: Double?

    public init(scenario: String?, plan: BenchPlan, members: [SimulatedMember], problems: [Problem: Int],
                tickDelaysMs: [Double], probeTickDelaysMs: [Double] = [], window: TickWindow, framesInWindow: Int, bytesInWindow: Int,
                connectionsHeld: Int, firstConnectMs: Double?, server: ServerReadings? = nil,
                generatorCPUSeconds: Double? = nil, machineAtStart: ProcFiles.MachineCPU? = nil,
                machineAtEnd: ProcFiles.MachineCPU? = nil) {
        self.scenario = scenario
        self.plan = plan
        self.members = members
        self.problems = problems
        self.tickDelaysMs = tickDelaysMs
        self.probeTickDelaysMs = probeTickDelaysMs
        self.window = window
        self.framesInWindow = framesInWindow
        self.bytesInWindow = bytesInWindow
        self.connectionsHeld = connectionsHeld
        self.firstConnectMs = firstConnectMs
        self.server = server
        self.generatorCPUSeconds = generatorCPUSeconds
        self.machineAtStart = machineAtStart
        self.machineAtEnd = machineAtEnd
    }
}

/// The result of a run, as text for people and JSON for scripts (`--json`).
public struct BenchReport: Codable, Equatable, Sendable {
    public struct Setup: Codable, Equatable, Sendable {
        public var scenario: String?
        public var members: Int
        public var rooms: Int
        public var joinRate: Double
        public var startsRooms: Bool
        public var focusSeconds: Int
        public var breakSeconds: Int
        public var windowSeconds: Double
        public var threads: Int
        /// Members on the probe thread.
        public var probeMembers: Int
        /// With several servers only: how many, and how members were spread over them.
        public var nodes: Int?
        public var placement: String?
    }

    public struct Connections: Codable, Equatable, Sendable {
        /// Open at the end of the measurement window.
        public var held: Int
        public var joined: Int
        /// From the first connection asked for to the last `welcome`.
        public var joinSeconds: Double?
        /// Per member, from asking for the connection to its `welcome`.
        public var joinLatencyMs: LatencySummary?
        /// The server's CPU time over the joins (`RunObservations.joinServerCPUSeconds`).
        public var joinServerCPUSeconds: Double?
    }

    public struct Ticks: Codable, Equatable, Sendable {
        /// Whole-second boundaries inside the window, summed over every member: each should reach the
        /// member as a tick or as the end of a phase.
        public var expected: Int
        public var delivered: Int
        public var missing: Int
        public var duplicated: Int
        /// Ticks whose delay was measured (boundaries inside the window that were ticks, not phase ends).
        public var measured: Int
        /// Arrival minus the boundary the tick marks, every tick measured.
        public var delayMs: LatencySummary?
        /// The same for the probe members only, read on a thread with few connections.
        public var probeDelayMs: LatencySummary?
        /// With several servers: members connected to the node that runs their room, and the others,
        /// whose ticks the owner relays through Redis to their node.
        public var ownerNodeDelayMs: LatencySummary?
        public var relayedDelayMs: LatencySummary?
        /// With several servers: the seconds missing on members connected to their room's owner (summed),
        /// how many such members missed any, and the seconds missing on the others (an outage of Redis
        /// costs the relayed ones what it lasts; the owner's members nothing: docs/CLUSTER.md).
        public var ownerNodeMissing: Int?
        public var ownerNodeMembersMissing: Int?
        public var relayedMissing: Int?
    }

    /// Timed commands (`--command-rooms`): from sending a `task` with a `ref` to its `ok`.
    public struct Commands: Codable, Equatable, Sendable {
        public var sent: Int
        public var answered: Int
        public var refused: Int
        /// Sent on a connection that closed before the answer came (a node restarting).
        public var cutOff: Int = 0
        /// Sent by members on the room's owner, and by members on another node (forwarded to the owner).
        public var ownerNodeLatencyMs: LatencySummary?
        public var relayedLatencyMs: LatencySummary?
    }

    public struct Traffic: Codable, Equatable, Sendable {
        public var framesPerSecond: Double
        public var bytesPerSecond: Double
    }

    public struct Server: Codable, Equatable, Sendable {
        public var pid: Int32
        /// CPU time over the window, and as a percentage of one core.
        public var cpuSeconds: Double?
        public var cpuPercentOfCore: Double?
        public var idleRssKiB: Int64?
        public var steadyRssKiB: Int64?
        /// (steady - idle) / connections held.
        public var rssBytesPerConnection: Double?
    }

    public var setup: Setup
    public var connections: Connections
    public var errors: Int
    /// Errors by kind: "closed 1008", "error room_limit", "connect failed", "not joined" ...
    public var errorsByKind: [String: Int]
    public var ticks: Ticks
    public var traffic: Traffic
    public var server: Server?
    /// With several servers: each node as `server` is for one, in the order given, and their CPU summed.
    public var nodes: [Server]?
    public var nodesCPUPercentOfCore: Double?
    public var commands: Commands?
    /// With `followsRestarts` (a cluster restarted under the load): what members saw of it.
    public var restarts: Restarts?
    /// The server's own timings of the window's ticks (`ServerStages`): `delay` when each tick went out, and
    /// the stages `wakeup`, `released`, `first_write`, `last_write`, all from the boundary it marks.
    public var serverTickStages: [String: StageSummary]?
    public var generatorCPUPercentOfCore: Double?
    /// How busy the whole machine was over the window, every process counted, as a percentage of all its
    /// CPUs; beyond what the server and the generator used, that is other work competing with them.
    public var machineBusyPercent: Double?
    public var machineCPUs: Int?
    /// Why the run does not count as "everything delivered" (what `--expect-all` checks); empty when it does.
    public var deliveryFailures: [String]

    public var everythingDelivered: Bool { deliveryFailures.isEmpty }
}

extension BenchReport {
    /// Builds the report: counts, percentiles and rates from what the run observed.
    public init(_ run: RunObservations) {
        let plan = run.plan
        var problems = run.problems
        for member in run.members {
            if let problem = member.finalProblem() { problems[problem, default: 0] += 1 }
        }
        let joined = run.members.filter(\.welcomed)
        let lastWelcome = joined.compactMap(\.welcomedAtMs).max()
        let joinSeconds = both(run.firstConnectMs, lastWelcome).map { ($1 - $0) / 1000 }

        // A room's grid comes from whichever member saw a tick; a room nobody heard tick is still expected
        // to have ticked once a second through the window.
        var gridOfRoom: [Int: Int64] = [:]
        for member in run.members {
            if gridOfRoom[member.room] == nil, let offset = member.tally.gridOffsetMs { gridOfRoom[member.room] = offset }
        }
        var expected = 0, delivered = 0, duplicated = 0
        var ownerMissing = 0, ownerMembersMissing = 0, relayedMissing = 0
        for member in run.members {
            let due = !plan.startsRooms ? 0 : gridOfRoom[member.room].map { run.window.boundaries(onGridWithOffset: $0) }
                ?? Int(run.window.seconds.rounded(.down))
            expected += due
            delivered += min(member.tally.deliveredInWindow, due)
            duplicated += member.tally.duplicates
            let missing = due - min(member.tally.deliveredInWindow, due)
            if plan.isOnOwnerNode(member.index, owners: run.owners) {
                ownerMissing += missing
                if missing > 0 { ownerMembersMissing += 1 }
            } else {
                relayedMissing += missing
            }
        }

        setup = Setup(scenario: run.scenario, members: plan.members, rooms: plan.rooms, joinRate: plan.joinRate,
                      startsRooms: plan.startsRooms, focusSeconds: plan.focusSeconds, breakSeconds: plan.breakSeconds,
                      windowSeconds: run.window.seconds, threads: plan.threads,
                      probeMembers: plan.probeCount, nodes: plan.nodes > 1 ? plan.nodes : nil,
                      placement: plan.nodes > 1 ? plan.placement.rawValue : nil)
        connections = Connections(held: run.connectionsHeld, joined: joined.count,
                                  joinSeconds: joinSeconds.map { rounded($0) },
                                  joinLatencyMs: LatencySummary(samples: joined.compactMap(\.joinLatencyMs))?.rounded,
                                  joinServerCPUSeconds: run.joinServerCPUSeconds.map { rounded($0) })
        errors = problems.values.reduce(0, +)
        errorsByKind = Dictionary(problems.map { ($0.key.description, $0.value) }, uniquingKeysWith: +)
        ticks = Ticks(expected: expected, delivered: delivered, missing: expected - delivered, duplicated: duplicated,
                      measured: run.tickDelaysMs.count, delayMs: LatencySummary(samples: run.tickDelaysMs)?.rounded,
                      probeDelayMs: LatencySummary(samples: run.probeTickDelaysMs)?.rounded,
                      ownerNodeDelayMs: plan.nodes > 1 ? LatencySummary(samples: run.ownerTickDelaysMs)?.rounded : nil,
                      relayedDelayMs: plan.nodes > 1 ? LatencySummary(samples: run.relayedTickDelaysMs)?.rounded : nil,
                      ownerNodeMissing: plan.nodes > 1 ? ownerMissing : nil,
                      ownerNodeMembersMissing: plan.nodes > 1 ? ownerMembersMissing : nil,
                      relayedMissing: plan.nodes > 1 ? relayedMissing : nil)
        let seconds = run.window.seconds
        traffic = Traffic(framesPerSecond: rounded(Double(run.framesInWindow) / seconds, places: 1),
                          bytesPerSecond: rounded(Double(run.bytesInWindow) / seconds, places: 0))
        server = run.server.map { Self.server(from: $0, connectionsHeld: run.connectionsHeld) }
        if !run.nodeServers.isEmpty {
            let each = run.nodeServers.map { Self.server(from: $0, connectionsHeld: nil) }
            nodes = each
            let percents = each.compactMap(\.cpuPercentOfCore)
            nodesCPUPercentOfCore = percents.count == each.count ? rounded(percents.reduce(0, +), places: 1) : nil
        }
        if plan.commandRooms > 0 {
            let timers = run.commandTimers
            commands = Commands(
                sent: timers.map { $0.timer.sent }.reduce(0, +), answered: timers.map { $0.timer.answered }.reduce(0, +),
                refused: timers.map { $0.timer.refused }.reduce(0, +), cutOff: timers.map { $0.timer.cutOff }.reduce(0, +),
                ownerNodeLatencyMs: LatencySummary(samples: timers.filter { $0.onOwner }.flatMap { $0.timer.latenciesMs })?.rounded,
                relayedLatencyMs: LatencySummary(samples: timers.filter { !$0.onOwner }.flatMap { $0.timer.latenciesMs })?.rounded)
        }
        if plan.followsRestarts { restarts = Restarts(members: run.members, window: run.window) }
        if let start = run.stagesAtStart, let end = run.stagesAtEnd, !end.isEmpty {
            serverTickStages = ServerStages.summaries(start: start, end: end)
        }
        generatorCPUPercentOfCore = run.generatorCPUSeconds.map { rounded($0 / seconds * 100, places: 1) }
        if let start = run.machineAtStart, let end = run.machineAtEnd, end.totalTicks > start.totalTicks {
            machineBusyPercent = rounded(Double(end.busyTicks - start.busyTicks) / Double(end.totalTicks - start.totalTicks) * 100,
                                         places: 1)
            machineCPUs = end.cpus
        }
        deliveryFailures = []
        deliveryFailures = Self.deliveryFailures(of: self)
    }

    /// One server's figures from its readings; memory per connection only when it held them all.
    static func server(from readings: ServerReadings, connectionsHeld: Int?) -> Server {
        var cpuSeconds: Double?, percent: Double?
        if let start = readings.cpuAtStart, let end = readings.cpuAtEnd, readings.cpuElapsedSeconds > 0 {
            let used = Double(end.totalTicks - start.totalTicks) / Double(readings.clockTicksPerSecond)
            cpuSeconds = rounded(used, places: 2)
            percent = rounded(used / readings.cpuElapsedSeconds * 100, places: 1)
        }
        var perConnection: Double?
        if let idle = readings.idleRssKiB, let steady = readings.steadyRssKiB, let held = connectionsHeld, held > 0 {
            perConnection = rounded(Double((steady - idle) * 1024) / Double(held), places: 0)
        }
        return Server(pid: readings.pid, cpuSeconds: cpuSeconds, cpuPercentOfCore: percent,
                      idleRssKiB: readings.idleRssKiB, steadyRssKiB: readings.steadyRssKiB,
                      rssBytesPerConnection: perConnection)
    }

    /// What keeps a run from counting as "everything delivered": a member not joined, any error, any
    /// tick missing. Timings are never judged here; a loaded machine may be slow but must not lose anything.
    static func deliveryFailures(of report: BenchReport) -> [String] {
        var failures: [String] = []
        if report.connections.joined < report.setup.members {
            failures.append("\(report.connections.joined) of \(report.setup.members) members joined")
        }
        if report.errors > 0 {
            let kinds = report.errorsByKind.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }
            failures.append("\(report.errors) errors (\(kinds.joined(separator: ", ")))")
        }
        if report.ticks.missing > 0 {
            failures.append("\(report.ticks.missing) of \(report.ticks.expected) ticks missing")
        }
        if report.ticks.duplicated > 0 { failures.append("\(report.ticks.duplicated) ticks came twice") }
        if let commands = report.commands, commands.answered + commands.refused + commands.cutOff < commands.sent {
            let unanswered = commands.sent - commands.answered - commands.refused - commands.cutOff
            failures.append("\(unanswered) of \(commands.sent) timed commands unanswered")
        }
        return failures
    }

    /// One JSON object, keys sorted.
    public func json() -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        // Encoding plain numbers, strings and dictionaries of them cannot fail.
        return String(decoding: try! encoder.encode(self), as: UTF8.self)
    }

    /// A few aligned lines for people.
    public func text() -> String {
        var lines: [String] = []
        let title = setup.scenario.map { "pomo-bench \($0)" } ?? "pomo-bench"
        let rate = setup.joinRate > 0 ? "\(format(setup.joinRate, places: 0))/s" : "all at once"
        lines.append("\(title): \(setup.members) members in \(setup.rooms) rooms, joining \(rate), \(setup.startsRooms ? "focus \(setup.focusSeconds) s, break \(setup.breakSeconds) s" : "rooms left idle"), \(setup.threads) client threads\(setup.probeMembers > 0 ? " and a probe thread" : "")\(setup.nodes.map { ", spread over \($0) nodes (\(setup.placement ?? ""))" } ?? ""), window \(format(setup.windowSeconds, places: 1)) s")
        var join = "\(connections.joined) joined"
        if let seconds = connections.joinSeconds { join += " in \(format(seconds, places: 2)) s" }
        if let cpu = connections.joinServerCPUSeconds { join += ", server CPU \(format(cpu, places: 2)) s" }
        if let latency = connections.joinLatencyMs {
            join += "; join latency p50 \(format(latency.p50)) ms, p99 \(format(latency.p99)) ms, max \(format(latency.max)) ms"
        }
        lines.append(row("connections held", "\(connections.held) of \(setup.members) (\(join))"))
        let kinds = errorsByKind.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }
        lines.append(row("errors", kinds.isEmpty ? "0" : "\(errors) (\(kinds.joined(separator: ", ")))"))
        if let delay = ticks.delayMs {
            lines.append(row("tick delay", "p50 \(format(delay.p50)) ms, p99 \(format(delay.p99)) ms, p99.9 \(format(delay.p999)) ms, max \(format(delay.max)) ms (\(delay.count) ticks)"))
        } else {
            lines.append(row("tick delay", "no tick measured"))
        }
        if let probe = ticks.probeDelayMs {
            lines.append(row("  probe members", "p50 \(format(probe.p50)) ms, p99 \(format(probe.p99)) ms, p99.9 \(format(probe.p999)) ms, max \(format(probe.max)) ms (\(probe.count) ticks, \(setup.probeMembers) members on a thread of their own)"))
        }
        if let owner = ticks.ownerNodeDelayMs {
            lines.append(row("  on the owner", "p50 \(format(owner.p50)) ms, p99 \(format(owner.p99)) ms, p99.9 \(format(owner.p999)) ms, max \(format(owner.max)) ms (\(owner.count) ticks)"))
        }
        if let relayed = ticks.relayedDelayMs {
            lines.append(row("  relayed", "p50 \(format(relayed.p50)) ms, p99 \(format(relayed.p99)) ms, p99.9 \(format(relayed.p999)) ms, max \(format(relayed.max)) ms (\(relayed.count) ticks, members on another node than their room's)"))
        }
        if let stages = serverTickStages {
            // The server's own stages, in the order a tick passes them (its /metrics histograms).
            let shown = ["wakeup", "released", "first_write", "last_write", "delay"].compactMap { name in
                stages[name].map { "\(name) \($0.p50Ms.map { format($0) } ?? "beyond")/\($0.p99Ms.map { format($0) } ?? "beyond")" }
            }
            lines.append(row("  server stages", "p50/p99 ms after the boundary: " + shown.joined(separator: ", ")))
        }
        lines.append(row("ticks", "\(ticks.delivered) of \(ticks.expected) delivered, \(ticks.missing) missing (phase ends count as delivered seconds)"))
        if let owner = ticks.ownerNodeMissing, let members = ticks.ownerNodeMembersMissing, let relayed = ticks.relayedMissing {
            lines.append(row("  missing by node", "\(owner) on the owner's node (\(members) members), \(relayed) relayed"))
        }
        lines.append(row("frames delivered", "\(format(traffic.framesPerSecond, places: 0))/s, \(format(traffic.bytesPerSecond / 1_048_576, places: 2)) MiB/s"))
        if let server {
            if let percent = server.cpuPercentOfCore, let seconds = server.cpuSeconds {
                lines.append(row("server CPU", "\(format(percent, places: 1))% of a core (\(format(seconds, places: 2)) s in \(format(setup.windowSeconds, places: 1)) s)"))
            } else {
                lines.append(row("server CPU", "unreadable (pid \(server.pid))"))
            }
            if let idle = server.idleRssKiB, let steady = server.steadyRssKiB {
                let perConnection = server.rssBytesPerConnection.map { "\(format($0 / 1024, places: 1)) KiB per connection" }
                    ?? "no connection held"
                lines.append(row("server memory", "idle \(format(Double(idle) / 1024, places: 1)) MiB, steady \(format(Double(steady) / 1024, places: 1)) MiB: \(perConnection)"))
            } else {
                lines.append(row("server memory", "unreadable (pid \(server.pid))"))
            }
        }
        if let nodes {
            for (number, node) in nodes.enumerated() {
                let cpu = node.cpuPercentOfCore.map { "\(format($0, places: 1))% of a core" } ?? "unreadable"
                let memory = node.steadyRssKiB.map { ", steady \(format(Double($0) / 1024, places: 1)) MiB" } ?? ""
                lines.append(row("node \(number + 1) CPU", "\(cpu) (pid \(node.pid))\(memory)"))
            }
            if let total = nodesCPUPercentOfCore {
                lines.append(row("nodes CPU", "\(format(total, places: 1))% of a core in all"))
            }
        }
        if let commands {
            var text = "\(commands.answered) of \(commands.sent) answered, \(commands.refused) refused"
            if let owner = commands.ownerNodeLatencyMs {
                text += "; on the owner p50 \(format(owner.p50)) ms, p99 \(format(owner.p99)) ms"
            }
            if let relayed = commands.relayedLatencyMs {
                text += "; forwarded p50 \(format(relayed.p50)) ms, p99 \(format(relayed.p99)) ms"
            }
            if commands.cutOff > 0 { text += "; \(commands.cutOff) cut off by a restart" }
            lines.append(row("timed commands", text))
        }
        if let restarts { lines += restarts.lines().map { row($0.label, $0.value) } }
        if let generator = generatorCPUPercentOfCore {
            lines.append(row("generator CPU", "\(format(generator, places: 1))% of a core"))
        }
        if let busy = machineBusyPercent, let cpus = machineCPUs {
            lines.append(row("machine CPU", "\(format(busy, places: 1))% of \(cpus) CPUs busy (every process)"))
        }
        lines.append(row("delivery", deliveryFailures.isEmpty ? "everything delivered" : deliveryFailures.joined(separator: "; ")))
        return lines.joined(separator: "\n") + "\n"
    }

    func row(_ label: String, _ value: String) -> String {
        label.padding(toLength: 18, withPad: " ", startingAt: 0) + value
    }
}

extension LatencySummary {
    /// Rounded to the microsecond, which is finer than anything the clocks involved can promise.
    var rounded: LatencySummary {
        LatencySummary(count: count, min: Self.round(min), p50: Self.round(p50), p99: Self.round(p99),
                       p999: Self.round(p999), max: Self.round(max), mean: Self.round(mean))
    }
    private static func round(_ value: Double) -> Double { (value * 1000).rounded() / 1000 }
}

func rounded(_ value: Double, places: Int = 3) -> Double {
    let scale = pow(10, Double(places))
    return (value * scale).rounded() / scale
}

func format(_ value: Double, places: Int = 2) -> String {
    String(format: "%.\(places)f", value)
}

private func both<A, B>(_ a: A?, _ b: B?) -> (A, B)? {
    guard let a, let b else { return nil }
    return (a, b)
}
