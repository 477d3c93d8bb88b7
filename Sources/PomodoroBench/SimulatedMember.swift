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
        case idle, connecting, joining, joined, ended
    }

    public enum Input: Equatable, Sendable {
        /// The generator asked for the connection, at this wall-clock time (epoch ms).
        case connectRequested(atMs: Double)
        case opened
        case welcome(atMs: Double)
        case ok(command: String)
        case error(code: String)
        case phaseCompleted
        case closed(code: UInt16?)
        case failed(reason: String)
        /// The generator says the rooms may start now.
        case startRoom
        /// The run is over: closes from now on are ours, not the server's.
        case finishing
    }

    public enum Output: Equatable, Sendable {
        case send(ClientMessage)
        case problem(Problem)
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
    private var finishing = false

    public init(index: Int, plan: BenchPlan) {
        self.index = index
        room = plan.room(ofMember: index)
        isStarter = plan.isStarter(index)
    }

    /// Whether the connection is open (joined or still joining).
    public var isConnected: Bool { stage == .joining || stage == .joined }

    public mutating func handle(_ input: Input, plan: BenchPlan) -> [Output] {
        switch input {
        case .connectRequested(let at):
            guard stage == .idle else { return [] }
            stage = .connecting
            connectRequestedMs = at
            return []

        case .opened:
            guard stage == .connecting else { return [] }
            stage = .joining
            everOpened = true
            return [.send(.join(room: plan.roomName(room), name: plan.memberName(index), token: nil))]

        case .welcome(let at):
            guard stage == .joining else { return [] }
            stage = .joined
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

        case .closed(let code):
            let wasOpen = stage != .ended
            stage = .ended
            return finishing || !wasOpen ? [] : report(.closed(code: code))

        case .failed(let reason):
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

    private mutating func report(_ problem: Problem) -> [Output] {
        hadProblem = true
        return [.problem(problem)]
    }
}
