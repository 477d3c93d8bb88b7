import PomodoroCore

/// One benchmark run, decided before the first connection: who joins which room, how fast, with which
/// timer settings, and how long each stage may last. Every stage has a bound, so a run always ends.
public struct BenchPlan: Equatable, Sendable {
    /// Simulated members, one WebSocket connection each.
    public var members: Int
    /// Rooms the members are spread over, round robin (member `i` sits in room `i % rooms`).
    public var rooms: Int
    /// New connections per second; 0 opens them all at once (a join storm).
    public var joinRate: Double
    /// At most this many members connecting and not yet welcomed at once (0: no bound). With a bound the
    /// ramp slows down to the pace the server admits members, instead of piling up connections that time
    /// out before the server gets to them: for a test of how many connections it holds, not how fast.
    public var maxPending: Int
    /// Longest wait, once the last connection has been asked for, for every member to be welcomed.
    public var joinTimeout: Double
    /// Whether the rooms are started at all. Without, members join and hold their connections in idle
    /// rooms: a test of how many connections the server holds, with no tick expected.
    public var startsRooms: Bool
    /// Focus and break lengths the first member of each room configures, in seconds. Short phases make
    /// phase changes (an event and a `state` to every member) part of the steady load.
    public var focusSeconds: Int
    public var breakSeconds: Int
    /// Room starts are spread evenly over this many seconds, as rooms started by people would be, so ticks
    /// do not all fall on the same millisecond of every second.
    public var startSpread: Double
    /// Seconds between the last start and the measurement window, for the first ticks to settle.
    public var warmup: Double
    /// Length of the measurement window, in seconds: the steady state that CPU, memory, frames and tick
    /// delays are measured over.
    public var duration: Double
    /// Seconds after the window during which ticks due inside it may still arrive.
    public var drain: Double
    /// Client service threads (libwebsockets contexts) the connections are spread over.
    public var threads: Int
    /// Members on a thread of their own besides `threads`, whose tick delays are also reported apart.
    ///
    /// The client loop `poll`s every connection of its thread at each wake-up, so with thousands of
    /// connections a thread reads a frame some time after it arrived, and that time is counted as the
    /// server's delay. The probe thread holds few connections and mostly sleeps, so the scheduler runs it
    /// at once when its frames arrive: its delays are the server's, with little of the generator's own.
    public var probeMembers: Int
    /// Room names start with this, so runs against the same server never share a room.
    public var roomPrefix: String
    /// Servers the members are spread over (cluster nodes, one `--url` each); 1 for a single server.
    public var nodes: Int
    /// How members are spread over `nodes`.
    public var placement: Placement
    /// Rooms (the last ones, away from the probe rooms) in which a few members send a command with a
    /// `ref` once a second during the window and time its `ok`: one member on each node the room spans,
    /// so that on a cluster one sends to the room's owner and the others through another node.
    public var commandRooms: Int
    /// Members sending timed commands in each of those rooms; nil: one on each node the room spans, and at
    /// least two. Set it to compare a cluster with one server under the same commands: a split room on three
    /// nodes has three senders, one server's room two, unless both are given three.
    public var commandSenders: Int?
    /// Whether members follow a close with 1012 (a node restarting): connect again within a jittered
    /// second, to the next node as a proxy would send them, and join with their token. Without, such a
    /// close is a problem like any other.
    public var followsRestarts = false

    /// Where a room's members connect when there are several nodes.
    public enum Placement: String, CaseIterable, Sendable {
        /// Every room split over every node: member k of a room on node (room + k) mod nodes. The first
        /// member (who starts the room, so its node takes the room's lease) is on node room mod nodes,
        /// so the rooms' owners are spread evenly; the others are relayed. The worst case for the relay.
        case split
        /// All of a room's members on one node, room mod nodes: what a proxy hashing on the room gives.
        case room
    }

    public init(members: Int, rooms: Int, joinRate: Double = 1000, maxPending: Int = 0, joinTimeout: Double = 30,
                startsRooms: Bool = true,
                focusSeconds: Int = 10, breakSeconds: Int = 5, startSpread: Double = 1, warmup: Double = 2,
                duration: Double = 10, drain: Double = 1.5, threads: Int = 2, probeMembers: Int = 100,
                roomPrefix: String = "bench", nodes: Int = 1, placement: Placement = .split, commandRooms: Int = 0) {
        self.members = members
        self.rooms = rooms
        self.joinRate = joinRate
        self.maxPending = maxPending
        self.joinTimeout = joinTimeout
        self.startsRooms = startsRooms
        self.focusSeconds = focusSeconds
        self.breakSeconds = breakSeconds
        self.startSpread = startSpread
        self.warmup = warmup
        self.duration = duration
        self.drain = drain
        self.threads = threads
        self.probeMembers = probeMembers
        self.roomPrefix = roomPrefix
        self.nodes = nodes
        self.placement = placement
        self.commandRooms = commandRooms
    }

    /// Why a plan cannot run, if it cannot.
    public func problems() -> [String] {
        var found: [String] = []
        if members < 1 { found.append("--members must be at least 1") }
        if rooms < 1 { found.append("--rooms must be at least 1") }
        if rooms > members { found.append("--rooms (\(rooms)) must not exceed --members (\(members))") }
        if joinRate < 0 { found.append("--join-rate must be 0 (all at once) or more") }
        if maxPending < 0 { found.append("--max-pending must be 0 (no bound) or more") }
        if joinTimeout <= 0 { found.append("--join-timeout must be positive") }
        // Every phase needs at least one tick, so that a phase end can be placed on the tick grid.
        for (name, seconds) in [("--focus", focusSeconds), ("--break", breakSeconds)]
        where !(2...RoomSettings.durationRange.upperBound).contains(seconds) {
            found.append("\(name) must be 2–\(RoomSettings.durationRange.upperBound) seconds")
        }
        if startSpread < 0 || warmup < 0 || drain < 0 { found.append("--start-spread, --warmup and --drain must not be negative") }
        if duration < 1 { found.append("--duration must be at least 1 second") }
        if !(1...64).contains(threads) { found.append("--threads must be 1–64") }
        if probeMembers < 0 { found.append("--probe-members must be 0 or more") }
        if !(1...16).contains(nodes) { found.append("give 1–16 servers (--url)") }
        if commandRooms < 0 || commandRooms > rooms { found.append("--command-rooms must be 0–\(rooms) (the rooms)") }
        if let commandSenders, commandSenders < 1 { found.append("--command-senders must be at least 1") }
        if (try? RoomID(validating: roomName(rooms - 1))) == nil || roomPrefix.isEmpty {
            found.append("--room-prefix must be letters, digits, '_' or '-', short enough for room names of at most 64 characters")
        }
        return found
    }

    /// The room member `index` joins.
    public func room(ofMember index: Int) -> Int { index % rooms }

    /// The client thread that carries member `index`. A room's members share a thread, so that a room's
    /// tick wakes one thread, not all: each wake-up costs a `poll` over every connection of the thread,
    /// which dominates the generator's CPU time when rooms are small and many. With fewer rooms than
    /// threads (one big room), members are spread over all threads instead, so that the burst of one
    /// tick to every member is read in parallel.
    /// Probe members are on thread number `threads`, after the others.
    public func thread(ofMember index: Int) -> Int {
        if isProbe(index) { return threads }
        return rooms >= threads ? room(ofMember: index) % threads : index % threads
    }

    /// Client threads in all: `threads`, and one more when there are probe members.
    public var threadCount: Int { probeRooms > 0 ? threads + 1 : threads }

    /// Whether member `index` is on the probe thread: the members of the first few rooms (whole rooms, so
    /// the probe thread wakes for those rooms only), or with fewer rooms than threads, the first members.
    /// At most half the members are probes, and never every room.
    public func isProbe(_ index: Int) -> Bool {
        guard probeRooms > 0 else { return false }
        return rooms < threads ? index < probeRooms : room(ofMember: index) < probeRooms
    }

    /// How many members are on the probe thread.
    public var probeCount: Int {
        guard probeRooms > 0 else { return 0 }
        return rooms < threads ? probeRooms : (0..<probeRooms).reduce(0) { $0 + membersIn(room: $1) }
    }

    /// Members in `room` (round robin: the first `members % rooms` rooms have one more).
    public func membersIn(room: Int) -> Int { members / rooms + (room < members % rooms ? 1 : 0) }

    /// Rooms on the probe thread, or with fewer rooms than threads, members on it.
    private var probeRooms: Int {
        let wanted = min(probeMembers, members / 2)
        guard wanted > 0 else { return 0 }
        return rooms < threads ? wanted : min(rooms - 1, max(1, wanted * rooms / members))
    }

    /// Which of the room's members `index` is: 0 for the first (its starter), 1 for the next, ...
    public func ordinal(ofMember index: Int) -> Int { index / rooms }

    /// The node (an index into the servers given) member `index` connects to.
    public func node(ofMember index: Int) -> Int {
        guard nodes > 1 else { return 0 }
        let room = room(ofMember: index)
        switch placement {
        case .split: return (room + ordinal(ofMember: index)) % nodes
        case .room: return room % nodes
        }
    }

    /// The node of a room's first member. Its join comes first (members join in index order, and the
    /// first `rooms` members are the rooms' first), so that node takes the room's lease and runs it, as a
    /// rule: on a loaded machine a second member's node may take it first, so the nodes' own word
    /// (`--owners`, read by `Tests/bench/cluster.sh` from `GET /api/cluster`) overrules this.
    public func ownerNode(ofRoom room: Int) -> Int { node(ofMember: room) }

    /// Whether member `index` is on the node that runs its room (always, with one server): by `owners`
    /// (node by room, as the nodes reported it) where it names the room, else by the plan.
    public func isOnOwnerNode(_ index: Int, owners: [Int: Int] = [:]) -> Bool {
        let room = room(ofMember: index)
        return node(ofMember: index) == (owners[room] ?? ownerNode(ofRoom: room))
    }

    /// Whether member `index` times commands: in the last `commandRooms` rooms, the first member on each
    /// node the room spans (with one server, the first two members, both on the owner), or the first
    /// `commandSenders` (with `.split`, on the nodes in turn).
    public func isCommandSender(_ index: Int) -> Bool {
        let room = room(ofMember: index)
        guard room >= rooms - commandRooms else { return false }
        let spanned = placement == .split ? nodes : 1
        return ordinal(ofMember: index) < min(commandSenders ?? max(2, spanned), membersIn(room: room))
    }

    /// The first member of each room configures and starts it; the others only join.
    public func isStarter(_ index: Int) -> Bool { index < rooms }

    public func roomName(_ room: Int) -> String { "\(roomPrefix)-\(room)" }

    public func memberName(_ index: Int) -> String { "m\(index)" }

    /// What a starter configures: short phases that follow each other by themselves.
    public var settings: RoomSettings {
        RoomSettings(focus: focusSeconds, shortBreak: breakSeconds, longBreak: breakSeconds, longBreakEvery: 4,
                     autoStart: true)
    }

    /// When the rooms start: slices of rooms, each at a moment after the first (in milliseconds), spread
    /// evenly over `startSpread` and at most one slice a millisecond. A room's ticks fall where its start
    /// fell, every second: rooms started in the same slice tick in the same millisecond, and one server
    /// thread writes all their members' frames one after the other, so that a slice of 50 rooms of 10 makes
    /// the last of them wait for 500 writes. Rooms started by people each start at their own moment; so
    /// does each room here while there are no more rooms than milliseconds in the spread.
    public var startSlices: [(atMs: Double, rooms: Range<Int>)] {
        let count = max(1, min(rooms, Int((startSpread * 1000).rounded(.down))))
        return (0..<count).map { slice in
            (atMs: startSpread * 1000 * Double(slice) / Double(count),
             rooms: (rooms * slice / count)..<(rooms * (slice + 1) / count))
        }
    }

    /// Seconds the connections take to open at `joinRate`.
    public var rampSeconds: Double { joinRate > 0 ? Double(members) / joinRate : 0 }

    /// The longest a run can last, every stage at its bound, plus a margin for closing: past it the
    /// generator gives up whatever it is waiting for.
    public var boundSeconds: Double {
        rampSeconds + joinTimeout + startSpread + warmup + duration + drain + 15
    }
}

/// The scenarios of issue 6, each a plan with defaults that any option may override.
public enum Scenario: String, CaseIterable, Sendable {
    /// A few hundred members for a few seconds: checks delivery only (`make test`).
    case smoke
    /// 10,000 members in 1,000 rooms of 10, every room ticking.
    case rooms
    /// One room of 5,000 members.
    case allhands
    /// 10,000 members connecting and joining at once.
    case storm
    /// 19,000 connections held at once, in idle rooms of 10, joining as fast as the server admits them.
    case hold

    public var plan: BenchPlan {
        switch self {
        case .smoke:
            BenchPlan(members: 300, rooms: 30, joinRate: 600, joinTimeout: 15, focusSeconds: 3, breakSeconds: 2,
                      warmup: 1.5, duration: 4, drain: 3)
        case .rooms:
            BenchPlan(members: 10_000, rooms: 1_000, joinRate: 2_000, focusSeconds: 10, breakSeconds: 5,
                      warmup: 3, duration: 20)
        case .allhands:
            // One phase longer than the whole run: a phase change in a room this size sends every member
            // the whole member list, which is measured by the join stage already.
            BenchPlan(members: 5_000, rooms: 1, joinRate: 500, joinTimeout: 60, focusSeconds: 600,
                      breakSeconds: 5, warmup: 3, duration: 20)
        case .storm:
            BenchPlan(members: 10_000, rooms: 1_000, joinRate: 0, joinTimeout: 20, focusSeconds: 10,
                      breakSeconds: 5, warmup: 2, duration: 5, threads: 4)
        case .hold:
            BenchPlan(members: 19_000, rooms: 1_900, joinRate: 2_000, maxPending: 1_000, joinTimeout: 40, startsRooms: false,
                      focusSeconds: 10, breakSeconds: 5, warmup: 3, duration: 20, threads: 4)
        }
    }
}
