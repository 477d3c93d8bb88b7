import PomodoroProtocol

/// Something that went wrong for a member. Each is counted once, by kind, in the report.
public enum Problem: Hashable, Sendable, CustomStringConvertible {
    /// The connection could not be made (refused, reset, handshake timed out), with the client library's
    /// reason.
    case connectFailed(String)
    /// The server closed the connection before the run ended, with this close code if it sent one
    /// (1008: a slow reader whose queue overflowed, or too many connections from one address).
    case closed(code: UInt16?)
    /// The server answered a request with `error` and this code.
    case errorReply(String)
    /// The connection stayed open but no `welcome` came before the join stage ended.
    case notJoined
    /// A frame the protocol's decoder refused.
    case undecodable

    public var description: String {
        switch self {
        case .connectFailed(let reason): "connect failed (\(reason))"
        case .closed(let code?): "closed \(code)"
        case .closed(nil): "closed without a code"
        case .errorReply(let code): "error \(code)"
        case .notJoined: "not joined"
        case .undecodable: "undecodable frame"
        }
    }
}

/// One simulated member: connects, joins its room, and, if it is its room's starter, configures the room
/// and starts it when told. A state machine in the manner of the server's rooms: inputs in, messages to send
/// and problems out; the connection that carries them out is someone else's.
public struct SimulatedMember: Sendable {
    public enum Stage: Equatable, Sendable {
        /// `reconnecting`: closed with 1012 (or a try to come back refused), waiting to connect again.
        case idle, connecting, joining, joined, reconnecting, ended
    }

    public enum Input: Equatable, Sendable {
        /// The generator asked for the connection, at this wall-clock time (epoch ms).
        case connectRequested(atMs: Double)
        case opened
        /// Welcomed, with the token that brings this member back as itself.
        case welcome(atMs: Double, token: String? = nil)
        case ok(command: String)
        case error(code: String)
        case phaseCompleted
        /// The connection closed, with the server's code if it sent one, at this time (epoch ms) if known.
        case closed(code: UInt16?, atMs: Double? = nil)
        case failed(reason: String)
        /// The generator says the rooms may start now.
        case startRoom
        /// The run is over: closes from now on are ours, not the server's.
        case finishing
    }

    public enum Output: Equatable, Sendable {
        case send(ClientMessage)
        case problem(Problem)
        /// Connect again (`plan.followsRestarts`), for this reason.
        case reconnect(Reconnect)
    }

    /// Why a member connects again, which says when and where (`MemberGroup`).
    public enum Reconnect: Equatable, Sendable {
        /// The server closed with 1012 (restarting, or its node draining): within a jittered quarter of a
        /// second, as the page and `pomo` do, through the proxy (here: to the next node).
        case restart
        /// A try to come back failed (that node is down too): to the next node, as a proxy would.
        case refused
        /// The node closed with 4005 (the room moved to another node): after the page's first back-off,
        /// to the same node, which relays the room from where it runs now.
        case roomMoved
    }

    public let index: Int
    public let room: Int
    public let isStarter: Bool
    public private(set) var stage = Stage.idle
    /// Whether a connection was open at some point, and whether it was welcomed into its room.
    public private(set) var everOpened = false
    public private(set) var welcomed = false
    public private(set) var connectRequestedMs: Double?
    /// From asking for the connection to the `welcome`, in ms.
    public private(set) var joinLatencyMs: Double?
    public private(set) var welcomedAtMs: Double?
    public private(set) var configured = false
    public private(set) var startSent = false
    public private(set) var started = false
    /// Whether a problem was reported for this member already.
    public private(set) var hadProblem = false
    public var tally = TickTally()
    /// The token of the last `welcome`, sent back with the join when the member comes back.
    public private(set) var token: String?
    /// Closes with 1012 this member followed, tries to come back that failed, and when the last 1012 came.
    public private(set) var restarts = 0
    public private(set) var failedReturns = 0
    /// Closes with 4005 ("room moved") followed.
    public private(set) var roomMoves = 0
    private var restartedAtMs: Double?
    /// From each 1012 or 4005 to the `welcome` that brought the member back, in ms.
    public private(set) var returnLatenciesMs: [Double] = []
    /// Where a member's seconds went around each 1012: from the last tick (or phase end) it heard to the
    /// close, and from the `welcome` that brought it back to the first tick after it, in ms.
    public private(set) var silencesBeforeCloseMs: [Double] = []
    public private(set) var firstTicksAfterReturnMs: [Double] = []
    private var lastHeardMs: Double?
    private var returnedAtMs: Double?
    private var finishing = false

    public init(index: Int, plan: BenchPlan) {
        self.index = index
        room = plan.room(ofMember: index)
        isStarter = plan.isStarter(index)
    }

    /// A tick or a phase's end reached this member at `at` (epoch ms).
    public mutating func heard(atMs at: Double) {
        lastHeardMs = at
        if let returnedAtMs {
            firstTicksAfterReturnMs.append(at - returnedAtMs)
            self.returnedAtMs = nil
        }
    }

    /// Whether the connection is open (joined or still joining).
    public var isConnected: Bool { stage == .joining || stage == .joined }

    public mutating func handle(_ input: Input, plan: BenchPlan) -> [Output] {
        switch input {
        case .connectRequested(let at):
            guard stage == .idle || stage == .reconnecting else { return [] }
            if stage == .idle { connectRequestedMs = at }
            stage = .connecting
            return []

        case .opened:
            guard stage == .connecting else { return [] }
            stage = .joining
            everOpened = true
            return [.send(.join(room: plan.roomName(room), name: plan.memberName(index), token: token))]

        case .welcome(let at, let token):
            guard stage == .joining else { return [] }
            stage = .joined
            if let token { self.token = token }
            if let restartedAtMs {
                returnLatenciesMs.append(at - restartedAtMs)
                self.restartedAtMs = nil
                returnedAtMs = at
                return []
            }
            welcomed = true
            welcomedAtMs = at
            joinLatencyMs = connectRequestedMs.map { at - $0 }
            return isStarter ? [.send(.configure(plan.settings))] : []

        case .ok(let command):
            if command == "configure" { configured = true }
            if command == "start" { started = true }
            return []

        case .error(let code):
            return report(.errorReply(code))

        case .phaseCompleted:
            return []

        case .startRoom:
            guard isStarter, stage == .joined, !startSent else { return [] }
            startSent = true
            return [.send(.start)]

        case .closed(let code, let closedAt):
            if plan.followsRestarts && !finishing && welcomed {
                if code == Self.restartCode || code == Self.roomMovedCode, stage == .joining || stage == .joined {
                    stage = .reconnecting
                    if code == Self.restartCode {
                        restarts += 1
                        if let lastHeardMs, let closedAt { silencesBeforeCloseMs.append(closedAt - lastHeardMs) }
                    } else {
                        roomMoves += 1
                    }
                    returnedAtMs = nil
                    if restartedAtMs == nil { restartedAtMs = closedAt ?? 0 }
                    return [.reconnect(code == Self.restartCode ? .restart : .roomMoved)]
                }
                if restartedAtMs != nil && stage == .connecting { return failedReturn() }
            }
            let wasOpen = stage != .ended
            stage = .ended
            return finishing || !wasOpen ? [] : report(.closed(code: code))

        case .failed(let reason):
            if plan.followsRestarts && !finishing && restartedAtMs != nil && stage == .connecting { return failedReturn() }
            let wasOpen = stage != .ended
            stage = .ended
            return finishing || !wasOpen ? [] : report(.connectFailed(reason))

        case .finishing:
            finishing = true
            return []
        }
    }

    /// The problem this member ends the run with, beyond those already reported: a connection that was
    /// never welcomed.
    public func finalProblem() -> Problem? {
        !welcomed && !hadProblem ? .notJoined : nil
    }

    /// The close code a server sends when it restarts: come back at once (docs/PROTOCOL.md §11); and the
    /// one a cluster node sends when a member's room moved to another node (come back, same token).
    public static let restartCode: UInt16 = 1012
    public static let roomMovedCode: UInt16 = 4005

    /// A try to come back after a 1012 failed (the node is down, a proxy would send the next try
    /// elsewhere): try again, the time of the 1012 kept.
    private mutating func failedReturn() -> [Output] {
        stage = .reconnecting
        failedReturns += 1
        return [.reconnect(.refused)]
    }

    private mutating func report(_ problem: Problem) -> [Output] {
        hadProblem = true
        return [.problem(problem)]
    }
}
