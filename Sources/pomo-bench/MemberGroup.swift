import Dispatch
import Synchronization
import PomodoroBench
import PomodoroClient
import PomodoroNet
import PomodoroProtocol

/// The members on one client service thread: one libwebsockets context, its connections, and what they
/// saw (`GroupMembers`, reached only on that thread through a `LoopBound`). The generator reaches them
/// through `sync`, which runs a closure there and waits for it, or by posting work there.
///
/// Several groups spread the connections over several threads, so that reading thousands of frames
/// arriving in the same millisecond (a tick to a room of 5,000) does not queue behind one thread.
final class MemberGroup: Sendable {
    let client: WebSocketClient
    private let members: LoopBound<GroupMembers>

    init(number: Int, plan: BenchPlan, addresses: [ServerAddress]) throws {
        // Sized for a 10,000-member room's `state` (about 1.7 MB), which arrives whole before it is skipped.
        client = try WebSocketClient(maxMessageBytes: 1 << 23)
        members = LoopBound(GroupMembers(number: number, plan: plan, addresses: addresses, client: client), loop: client)
        client.start()
    }

    /// Runs `body` on the service thread and returns its result.
    func sync<T: Sendable>(_ body: @escaping @Sendable (GroupMembers) -> T) -> T {
        let done = DispatchSemaphore(value: 0)
        let result = Handoff<T>()
        client.post { [members] in
            result.value.withLock { $0 = body(members.value) }
            done.signal()
        }
        done.wait()
        return result.value.withLock { $0! }
    }

    /// Opens the connections of members `indices` (all of this group's).
    func connect(_ indices: [Int]) {
        client.post { [members] in members.value.connect(indices) }
    }

    /// The starters of rooms in `range` start their rooms.
    func startRooms(_ range: Range<Int>) {
        client.post { [members] in members.value.startRooms(range) }
    }

    func setWindow(_ window: TickWindow) {
        client.post { [members] in members.value.window = window }
    }

    /// Members welcomed, and members whose join is over one way or the other (welcomed, or ended first).
    var joinProgress: (welcomed: Int, settled: Int) {
        sync { ($0.welcomedCount, $0.settledCount) }
    }

    var connectionsOpen: Int { sync { $0.members.filter(\.isConnected).count } }

    /// What this group observed, ending the run for its members (closes from now on are expected).
    func finish(withSamples: Bool, owners: [Int: Int]) -> GroupMembers.Harvest {
        sync { $0.finish(withSamples: withSamples, owners: owners) }
    }
}

/// One group's members and what they saw: on the group's service thread only.
final class GroupMembers {
    let client: WebSocketClient
    private let plan: BenchPlan
    /// The servers, one per node: member i connects to `addresses[plan.node(ofMember: i)]`.
    private let addresses: [ServerAddress]
    private let number: Int
    /// The members whose `plan.thread(ofMember:)` is `number`, and where each sits in `members`.
    private(set) var members: [SimulatedMember]
    private let slotOfMember: [Int: Int]
    private var connections: [ClientConnectionID?]
    /// The node each member is connected (or connecting) to: the plan's, then the next one after each
    /// restart followed.
    private var nodeOfSlot: [Int]
    private var problems: [Problem: Int] = [:]
    private var delays: [Double] = []
    /// Beside `delays`: the member that measured it.
    private var delayMember: [Int] = []
    /// The timed commands of this group's command senders, by slot.
    private var timers: [Int: CommandTimer] = [:]
    /// Each measured tick's room and boundary, beside `delays`, for `--samples`.
    private var samples: [(room: Int, boundaryMs: Int64)] = []
    var window: TickWindow?
    private var framesInWindow = 0
    private var bytesInWindow = 0
    /// Members welcomed, and members whose join is over one way or the other (welcomed, or ended first).
    private(set) var welcomedCount = 0
    private(set) var settledCount = 0

    init(number: Int, plan: BenchPlan, addresses: [ServerAddress], client: WebSocketClient) {
        self.number = number
        self.plan = plan
        self.addresses = addresses
        self.client = client
        let mine = (0..<plan.members).filter { plan.thread(ofMember: $0) == number }
        members = mine.map { SimulatedMember(index: $0, plan: plan) }
        slotOfMember = Dictionary(uniqueKeysWithValues: mine.enumerated().map { ($1, $0) })
        connections = Array(repeating: nil, count: members.count)
        nodeOfSlot = mine.map { plan.node(ofMember: $0) }
        for (slot, index) in mine.enumerated() where plan.isCommandSender(index) {
            timers[slot] = CommandTimer(member: index)
        }
    }

    /// This object as work posted from other threads may carry it back here.
    private var bound: LoopBound<GroupMembers> { LoopBound(self, loop: client) }

    /// Opens the connections of members `indices` (all of this group's).
    func connect(_ indices: [Int]) {
        let now = System.wallNowMs()
        for index in indices {
            guard let slot = slotOfMember[index] else { continue }
            open(slot, at: now)
        }
    }

    /// On the service thread: asks for member `slot`'s connection to its node.
    fileprivate func open(_ slot: Int, at now: Double) {
        apply(.connectRequested(atMs: now), to: slot)
        let address = addresses[nodeOfSlot[slot]]
        connections[slot] = client.connect(host: address.host, port: address.port, path: address.path) {
            [bound] event in bound.value.receive(event, slot: slot)
        }
    }

    /// Member `slot` lost its connection: after a 1012 it connects again to the next node (as a proxy
    /// sends a connection to a node that is up) within a jittered quarter of a second, as the page and `pomo`
    /// do (web/connection.js, RESTART_WINDOW_MS; `ReconnectPolicy.restartWindowMs`); a
    /// quarter of a second after a try that failed, to the node after; after a 4005 (its room moved), to
    /// the same node after the page's first back-off.
    private func reconnect(_ slot: Int, _ reason: SimulatedMember.Reconnect) {
        timers[slot]?.connectionClosed()
        connections[slot] = nil
        if reason != .roomMoved { nodeOfSlot[slot] = (nodeOfSlot[slot] + 1) % addresses.count }
        let wait = switch reason {
        case .restart: Double.random(in: 0..<Self.restartJitterSeconds)
        case .refused: Self.retrySeconds
        case .roomMoved: Self.firstBackOffSeconds * Double.random(in: 0.75..<1.25)
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + wait) { [client, bound] in
            client.post {
                guard bound.value.members[slot].stage == .reconnecting else { return }
                bound.value.open(slot, at: System.wallNowMs())
            }
        }
    }

    /// The window over which members come back after a 1012, and the wait before trying another node.
    static let restartJitterSeconds = 0.25
    static let retrySeconds = 0.25
    /// The page's first reconnection back-off (web/connection.js, BACKOFF_MIN_MS), jittered by a quarter.
    static let firstBackOffSeconds = 0.5

    /// The starters of rooms in `range` start their rooms.
    func startRooms(_ range: Range<Int>) {
        for slot in members.indices where members[slot].isStarter && range.contains(members[slot].room) {
            apply(.startRoom, to: slot)
        }
    }

    /// What this group observed, ending the run for its members (closes from now on are expected).
    struct Harvest: Sendable {
        var members: [SimulatedMember]
        var problems: [Problem: Int]
        var delays: [Double]
        var ownerDelays: [Double]
        var relayedDelays: [Double]
        var timers: [(onOwner: Bool, timer: CommandTimer)]
        var isProbe: Bool
        /// One line per measured tick: room, boundary (epoch ms), delay (ms).
        var sampleLines: [String]
        var framesInWindow: Int
        var bytesInWindow: Int
    }

    /// `owners`: the node running each room as the nodes said, where known (else the plan's).
    func finish(withSamples: Bool, owners: [Int: Int]) -> Harvest {
        for slot in members.indices { apply(.finishing, to: slot) }
        let lines = !withSamples ? [] : zip(samples, delays).map { "\($0.room) \($0.boundaryMs) \($1)" }
        let onOwner = delayMember.map { plan.isOnOwnerNode($0, owners: owners) }
        let owner = zip(delays, onOwner).filter { $0.1 }.map { $0.0 }
        let relayed = zip(delays, onOwner).filter { !$0.1 }.map { $0.0 }
        let timers = timers.sorted { $0.key < $1.key }.map {
            (onOwner: plan.isOnOwnerNode(members[$0.key].index, owners: owners), timer: $0.value)
        }
        return Harvest(members: members, problems: problems, delays: delays,
                       ownerDelays: owner, relayedDelays: relayed, timers: timers,
                       isProbe: number == plan.threads, sampleLines: lines,
                       framesInWindow: framesInWindow, bytesInWindow: bytesInWindow)
    }

    // MARK: On the service thread

    fileprivate func receive(_ event: ClientEvent, slot: Int) {
        switch event {
        case .opened:
            apply(.opened, to: slot)
        case .text(let bytes):
            // Stamped before anything else, so the time spent on this frame is not charged to the next.
            let arrived = System.wallNowMs()
            if let window, arrived >= Double(window.startMs), arrived < Double(window.endMs) {
                framesInWindow += 1
                bytesInWindow += bytes.count
            }
            receive(bytes, arrived: arrived, slot: slot)
        case .closed(let code, _):
            apply(.closed(code: code, atMs: System.wallNowMs()), to: slot)
        case .failed(let reason):
            apply(.failed(reason: reason), to: slot)
        }
    }

    private func receive(_ bytes: [UInt8], arrived: Double, slot: Int) {
        switch FrameKind(of: bytes) {
        case .pong:
            return
        case .state:
            snapshotArrived(bytes, arrived: arrived, slot: slot)
            return
        case .welcome:
            apply(.welcome(atMs: arrived, token: plan.followsRestarts ? FrameKind.token(inWelcome: bytes) : nil), to: slot)
            snapshotArrived(bytes, arrived: arrived, slot: slot)
            return
        case .event(let kind):
            if kind == "phaseCompleted" {
                // Decoded (one a phase): the phase it set up places it (`TickTally.phaseCompleted`).
                var next: PhaseMark?
                if case .event(_, .phaseCompleted(_, let phase, _, let cycle), _)? = try? WireCodec.decodeServerMessage(bytes) {
                    next = PhaseMark(phase.rawValue, cycle: cycle)
                }
                members[slot].tally.phaseCompleted(next: next, window: window)
                members[slot].heard(atMs: arrived)
            }
            return
        case .tick, .ok, .error, .other:
            break
        }
        let message: ServerMessage
        do {
            message = try WireCodec.decodeServerMessage(bytes)
        } catch {
            // A type this generator does not know is skipped, as the protocol asks of every client.
            if error.code != .unknownType { count(.undecodable, slot: slot) }
            return
        }
        switch message {
        case .tick(let tick):
            members[slot].heard(atMs: arrived)
            if let boundary = members[slot].tally.tick(remainingMs: tick.remainingMs, endsAtMs: tick.endsAt,
                                                       phase: PhaseMark(tick.phase.rawValue, cycle: tick.cycle),
                                                       window: window) {
                delays.append(arrived - Double(boundary))
                delayMember.append(members[slot].index)
                samples.append((members[slot].room, boundary))
                if let frame = timers[slot]?.tickArrived(atMs: arrived), let connection = connections[slot] {
                    client.send(WireCodec.encode(frame), on: connection)
                }
            }
        case .ok(let command, _, let ref):
            if ref != nil { timers[slot]?.replied(ref: ref, ok: true, atMs: arrived) }
            apply(.ok(command: command), to: slot)
        case .error(let code, _, _, let ref, _):
            if ref != nil { timers[slot]?.replied(ref: ref, ok: false, atMs: arrived) }
            apply(.error(code: code.rawValue), to: slot)
        case .welcome:
            apply(.welcome(atMs: arrived), to: slot)
        case .event(_, .phaseCompleted(_, let next, _, let cycle), _):
            members[slot].tally.phaseCompleted(next: PhaseMark(next.rawValue, cycle: cycle), window: window)
        case .state, .event, .pong, .stats, .observing, .schedules, .apiTokens, .webhooks, .you:
            break
        }
    }

    /// A `welcome` or `state` of the running room shows its member the second it was taken in: with
    /// `--follow-restarts` (members coming back after a 1012 see their room in the `welcome` before its next
    /// tick), that second counts as delivered (`TickTally.snapshot`). Other runs count ticks and phase ends
    /// alone, as they always did.
    private func snapshotArrived(_ bytes: [UInt8], arrived: Double, slot: Int) {
        guard plan.followsRestarts, let timer = FrameKind.runningTimer(inSnapshot: bytes) else { return }
        members[slot].tally.snapshot(remainingMs: timer.remainingMs, endsAtMs: timer.endsAtMs, phase: timer.phase,
                                     window: window)
    }

    private func apply(_ input: SimulatedMember.Input, to slot: Int) {
        let settled = Self.settled(members[slot])
        let outputs = members[slot].handle(input, plan: plan)
        if !settled && Self.settled(members[slot]) {
            settledCount += 1
            if members[slot].welcomed { welcomedCount += 1 }
        }
        for output in outputs {
            switch output {
            case .send(let message):
                if let connection = connections[slot] {
                    client.send(WireCodec.encode(ClientFrame(message)), on: connection)
                }
            case .problem(let problem):
                problems[problem, default: 0] += 1
            case .reconnect(let reason):
                reconnect(slot, reason)
            }
        }
    }

    private static func settled(_ member: SimulatedMember) -> Bool { member.welcomed || member.stage == .ended }

    private func count(_ problem: Problem, slot: Int) {
        problems[problem, default: 0] += 1
    }
}

/// Carries a result from the service thread to the thread waiting in `sync`.
private final class Handoff<T: Sendable>: Sendable {
    let value = Mutex<T?>(nil)
}
