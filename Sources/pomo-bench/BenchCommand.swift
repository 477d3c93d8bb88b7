import ArgumentParser
import Foundation
import Glibc
import PomodoroBench
import PomodoroClient
import PomodoroNet

@main
struct BenchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pomo-bench",
        abstract: "Load generator for a running pomodoro-server: many members in many rooms, all ticking.",
        discussion: """
            Opens --members WebSocket connections from this one process, spread over --rooms rooms (member i \
            joins room i mod rooms). The first member of each room configures short phases that follow each \
            other by themselves and starts the room; the starts are spread over --start-spread seconds. After \
            --warmup seconds it measures for --duration seconds: connections held, errors, the delay of every \
            tick (its arrival minus the whole-second boundary it marks: server and generator share this \
            machine's clock), frames delivered per second, and with --server-pid the server's CPU time and \
            resident memory (from /proc). Then it closes everything and prints the report (--json for JSON).

            Connections are spread over --threads client threads, a room's members on one thread. A few rooms \
            (--probe-members) get a thread of their own: each thread polls all its connections at every \
            wake-up, so a thread holding thousands reads a frame a little after it arrived, and the probe's \
            delays show how much of the figure is the generator's own.

            Every stage is bounded, so a run always ends. The generator raises its own open-file limit to the \
            hard limit, and talks to loopback addresses only unless --allow-remote is given.

            A --scenario sets defaults that any option overrides: \(Scenario.allCases.map(\.rawValue).joined(separator: ", ")). \
            docs/PERFORMANCE.md says what each measures and how to run it (make bench).

            Against a cluster, give --url once per node (and --server-pid once per node, in the same order): \
            members are spread over the nodes by --placement, tick delays are reported apart for members on \
            their room's owner and for relayed ones, and CPU per node (make bench-cluster).

            EXIT STATUS: 0 done; 1 --expect-all and something was not delivered (a member not joined, an \
            error, a tick missing); 2 the run overran its bound; 64 bad usage.
            """)

    @Option(help: ArgumentHelp("Defaults for one of the documented scenarios.", valueName: "name"))
    var scenario: String?

    @Option(help: ArgumentHelp("The server's WebSocket URL, ws://HOST:PORT[/PATH] (instead of --host/--port). Repeat it for the nodes of a cluster: members are spread over them by --placement.",
                               valueName: "url"))
    var url: [String] = []

    @Option(help: ArgumentHelp("With several --url: 'split' puts member k of room r on node (r + k) mod nodes, every room on every node (the relay's worst case); 'room' puts all of room r on node r mod nodes (a proxy hashing on the room).",
                               valueName: "split|room"))
    var placement: String = BenchPlan.Placement.split.rawValue

    @Option(name: .customLong("command-rooms"),
            help: ArgumentHelp("In this many rooms, one member on each node the room spans sends a timed 'task' with a ref once a second in the window; the report gives the time to its 'ok', on the owner and forwarded.",
                               valueName: "count"))
    var commandRooms: Int?

    @Option(name: .customLong("command-senders"),
            help: ArgumentHelp("Members sending timed commands in each of those rooms (default: one on each node the room spans, at least two); give a cluster and one server the same number to compare them under the same commands.",
                               valueName: "count"))
    var commandSenders: Int?

    @Option(help: "The server's address (default 127.0.0.1).")
    var host: String?

    @Option(help: "The server's port (default \(WebSocketServerOptions.Defaults.port)).")
    var port: Int?

    @Option(help: "Members to simulate, one connection each.")
    var members: Int?

    @Option(help: "Rooms to spread them over.")
    var rooms: Int?

    @Option(name: .customLong("join-rate"),
            help: ArgumentHelp("New connections per second; 0 opens all at once.", valueName: "per-second"))
    var joinRate: Double?

    @Option(name: .customLong("max-pending"),
            help: ArgumentHelp("At most this many members connecting but not yet welcomed; 0 for no bound.",
                               valueName: "count"))
    var maxPending: Int?

    @Option(name: .customLong("join-timeout"),
            help: ArgumentHelp("Seconds to wait, after the last connection is asked for, for every welcome.",
                               valueName: "seconds"))
    var joinTimeout: Double?

    @Flag(inversion: .prefixedNo, help: "Start the rooms (--no-start leaves them idle: connections held, no ticks).")
    var start: Bool?

    @Option(help: ArgumentHelp("Focus length each room is configured with.", valueName: "seconds"))
    var focus: Int?

    @Option(name: .customLong("break"), help: ArgumentHelp("Short and long break length.", valueName: "seconds"))
    var breakLength: Int?

    @Option(name: .customLong("start-spread"),
            help: ArgumentHelp("Seconds over which the room starts are spread.", valueName: "seconds"))
    var startSpread: Double?

    @Option(help: ArgumentHelp("Seconds between the last start and the measurement.", valueName: "seconds"))
    var warmup: Double?

    @Option(help: ArgumentHelp("Length of the measurement window.", valueName: "seconds"))
    var duration: Double?

    @Option(help: ArgumentHelp("Seconds after the window for its last ticks to arrive.", valueName: "seconds"))
    var drain: Double?

    @Option(help: "Client service threads the connections are spread over.")
    var threads: Int?

    @Option(name: .customLong("probe-members"),
            help: "Members (whole rooms) on a thread of their own, whose tick delays are also reported apart; 0 for none.")
    var probeMembers: Int?

    @Option(name: .customLong("room-prefix"), help: "Room names start with this (default bench-PID).")
    var roomPrefix: String?

    @Option(name: .customLong("server-pid"),
            help: ArgumentHelp("The server's process id, to read its CPU time and memory from /proc; with several --url, one per --url in the same order.",
                               valueName: "pid"))
    var serverPID: [Int32] = []

    @Option(help: ArgumentHelp("Write every measured tick to this file, one \"room boundary-ms delay-ms\" line each.",
                               valueName: "path"))
    var samples: String?

    @Option(help: ArgumentHelp("A file of \"NODE ROOM\" lines (NODE counting the --url from 0), read after the window: which node runs each room, for counting members on the owner or relayed (Tests/bench/cluster.sh writes it from GET /api/cluster).",
                               valueName: "path"))
    var owners: String?

    @Flag(name: .customLong("follow-restarts"),
          help: "Members closed with 1012 (a node restarting) come back within a jittered quarter of a second to the next --url, with their token, as the page and pomo do; the report says how soon, and the longest run of seconds each member missed.")
    var followRestarts = false

    @Option(name: .customLong("commands-out"),
            help: ArgumentHelp("Write each timed-command sender's \"ROOM NAME LAST-OK LAST-SENT\" line to this file after the run: its task must still read \"timed LAST-OK\" or later (Tests/bench/rolling-check.py reads it against the store).",
                               valueName: "path"))
    var commandsOut: String?

    @Flag(help: "Print the report as JSON.")
    var json = false

    @Flag(name: .customLong("expect-all"),
          help: "Exit 1 unless every member joined, no error occurred and every expected tick arrived.")
    var expectAll = false

    @Flag(name: .customLong("allow-remote"), help: "Allow an address that is not this machine's loopback.")
    var allowRemote = false

    func validate() throws {
        if let scenario, Scenario(rawValue: scenario) == nil {
            throw ValidationError("unknown scenario '\(scenario)': use one of \(Scenario.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        if !url.isEmpty && (host != nil || port != nil) { throw ValidationError("give --url or --host/--port, not both") }
        if BenchPlan.Placement(rawValue: placement) == nil {
            throw ValidationError("unknown placement '\(placement)': use split or room")
        }
        let problems = try plan().problems()
        if let first = problems.first { throw ValidationError(first) }
        for target in try addresses() where !allowRemote && !Loopback.isLoopback(target.host) {
            throw ValidationError("\(target.host) is not a loopback address: a load test talks to this machine only (--allow-remote to override)")
        }
        if !serverPID.isEmpty && serverPID.count != max(1, url.count) {
            throw ValidationError("give one --server-pid per --url (\(serverPID.count) for \(max(1, url.count)))")
        }
        for pid in serverPID where System.cpuTime(of: pid) == nil {
            throw ValidationError("no readable /proc/\(pid)/stat: is --server-pid the server's process id?")
        }
    }

    func addresses() throws -> [ServerAddress] {
        if !url.isEmpty {
            return try url.map { url in
                do { return try ServerAddress(parsing: url) } catch { throw ValidationError(String(describing: error)) }
            }
        }
        let host = host ?? "127.0.0.1"
        let port = port ?? WebSocketServerOptions.Defaults.port
        guard (1...65535).contains(port) else { throw ValidationError("--port must be 1–65535") }
        return [ServerAddress(host: host.hasPrefix("[") ? String(host.dropFirst().dropLast()) : host, port: port)]
    }

    func plan() throws -> BenchPlan {
        var plan = scenario.flatMap(Scenario.init(rawValue:))?.plan ?? Scenario.smoke.plan
        plan.roomPrefix = "bench-\(getpid())"
        if let members { plan.members = members }
        if let rooms { plan.rooms = rooms }
        if let joinRate { plan.joinRate = joinRate }
        if let maxPending { plan.maxPending = maxPending }
        if let joinTimeout { plan.joinTimeout = joinTimeout }
        if let start { plan.startsRooms = start }
        if let focus { plan.focusSeconds = focus }
        if let breakLength { plan.breakSeconds = breakLength }
        if let startSpread { plan.startSpread = startSpread }
        if let warmup { plan.warmup = warmup }
        if let duration { plan.duration = duration }
        if let drain { plan.drain = drain }
        if let threads { plan.threads = threads }
        if let probeMembers { plan.probeMembers = probeMembers }
        if let roomPrefix { plan.roomPrefix = roomPrefix }
        plan.nodes = max(1, url.count)
        plan.placement = BenchPlan.Placement(rawValue: placement) ?? .split
        if let commandRooms { plan.commandRooms = commandRooms }
        plan.commandSenders = commandSenders
        plan.followsRestarts = followRestarts
        return plan
    }

    func run() throws {
        let plan = try plan()
        let limit = System.raiseOpenFileLimit()
        if UInt64(plan.members) + 64 > limit {
            System.progress("warning: the open-file limit is \(limit), fewer than \(plan.members) connections need")
        }
        // The last guard: every stage has its own bound, but a stuck thread must not keep the run alive.
        let bound = plan.boundSeconds
        DispatchQueue.global().asyncAfter(deadline: .now() + bound) {
            System.progress("the run overran its bound of \(Int(bound)) s; giving up")
            Glibc.exit(2)
        }
        let report = try Generator(plan: plan, scenario: scenario, addresses: addresses(), serverPIDs: serverPID,
                                   ownersPath: owners, samplesPath: samples, commandsPath: commandsOut).run()
        print(json ? report.json() : report.text(), terminator: json ? "\n" : "")
        if expectAll && !report.everythingDelivered { throw ExitCode(1) }
    }
}
