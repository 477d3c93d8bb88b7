import PomodoroProtocol

/// How long to wait before each reconnection attempt: exponential from `initialDelayMs`, capped at
/// `maxDelayMs`, spread by up to ±`jitter` so a room's clients do not all knock at once after a restart.
public struct ReconnectPolicy: Equatable, Sendable {
    public var initialDelayMs: Int64
    public var maxDelayMs: Int64
    /// 0 to 1: the fraction by which a delay may be shortened or lengthened at random.
    public var jitter: Double

    /// After a close with 1012 (the server restarts, or a cluster node drains and its rooms already run
    /// on other nodes: docs/PROTOCOL.md §11) the client comes back at once rather than on its back-off,
    /// at a random moment within this window so that a node's clients do not all knock at once.
    public var restartWindowMs: Int64

    public init(initialDelayMs: Int64 = 500, maxDelayMs: Int64 = 30_000, jitter: Double = 0.2,
                restartWindowMs: Int64 = 250) {
        self.initialDelayMs = initialDelayMs
        self.maxDelayMs = maxDelayMs
        self.jitter = jitter
        self.restartWindowMs = restartWindowMs
    }

    public static let standard = ReconnectPolicy()

    /// The delay before attempt `attempt` (1 for the first retry); `unit` is a random number in 0..<1.
    public func delayMs(attempt: Int, unit: Double) -> Int64 {
        let doublings = min(max(0, attempt - 1), 30)
        let base = min(maxDelayMs, initialDelayMs << Int64(doublings))
        let spread = (unit * 2 - 1) * jitter
        return max(0, Int64((Double(base) * (1 + spread)).rounded()))
    }

    /// The delay before coming back after a close with 1012; `unit` is a random number in 0..<1.
    public func restartDelayMs(unit: Double) -> Int64 {
        max(0, Int64((Double(restartWindowMs) * unit).rounded(.down)))
    }
}

/// What a session needs to know besides the server's address.
public struct SessionConfiguration: Equatable, Sendable {
    public var room: String
    public var name: String
    /// A resume token from an earlier session, if any.
    public var token: String?
    /// The passcode of a locked room (or the one to lock a room this join creates).
    public var passcode: String?
    /// Watch the room (`observe`) instead of joining it: no member, no name, nothing anyone in the room sees;
    /// `token` and `passcode` open a locked room.
    public var observe = false
    /// How to come back after the connection drops; nil: end the session instead.
    public var reconnect: ReconnectPolicy?
    /// Give up on a connection that has not opened and been welcomed within this time.
    public var connectTimeoutMs: Int64
    /// Send a `ping` when nothing has arrived for this long (the room is quiet while not running).
    public var keepaliveMs: Int64
    /// Take the connection for dead when nothing at all has arrived for this long.
    public var deadAfterMs: Int64
    /// How long a polite close may take before the session ends regardless.
    public var closeTimeoutMs: Int64

    public init(room: String, name: String, token: String? = nil, passcode: String? = nil,
                reconnect: ReconnectPolicy? = .standard,
                connectTimeoutMs: Int64 = 10_000, keepaliveMs: Int64 = 15_000, deadAfterMs: Int64 = 40_000,
                closeTimeoutMs: Int64 = 1_000) {
        self.room = room
        self.name = name
        self.token = token
        self.passcode = passcode
        self.reconnect = reconnect
        self.connectTimeoutMs = connectTimeoutMs
        self.keepaliveMs = keepaliveMs
        self.deadAfterMs = deadAfterMs
        self.closeTimeoutMs = closeTimeoutMs
    }
}

/// Why a session ended.
public enum SessionEnd: Equatable, Sendable {
    /// We closed it (quit, or a one-shot command was done).
    case stopped
    /// Another connection took this member over with its token (close code 4001). Do not fight it.
    case replaced
    /// The server could not be reached, or did not let us in: nothing was ever joined.
    case unreachable(String)
    /// The server refused the `join` (bad room name, room full, …), or the host removed us. `retryAfter`:
    /// the seconds until a removed member may join again (`removed`, `banned`).
    case refused(code: ErrorCode, message: String, retryAfter: Int? = nil)
    /// The connection dropped and the session does not reconnect.
    case lost(String)
}

extension SessionEnd {
    /// How long until a member the host removed may join again, in people's words, from the server's
    /// `retryAfter` (never read out of its message): "you may join again in 9 minutes". Nil for any other end.
    public var rejoinWait: String? {
        guard case let .refused(code, _, seconds?) = self, code == .removed || code == .banned, seconds > 0 else { return nil }
        let minutes = (seconds + 59) / 60
        return "you may join again in \(minutes) minute\(minutes == 1 ? "" : "s")"
    }
}

/// What a session tells its owner.
public enum SessionEvent: Equatable, Sendable {
    /// A connection attempt begins (1 for the first).
    case connecting(attempt: Int)
    /// A message from the server, as bytes and decoded, with the local moment it arrived.
    case message(ServerMessage, raw: [UInt8], receivedAt: LocalInstant)
    /// The connection dropped; the next attempt starts at `retryAt`.
    case reconnecting(attempt: Int, retryAt: LocalInstant, reason: String)
    /// The session is over; no event follows.
    case ended(SessionEnd)
}

/// The life of one client's membership in one room, as a pure state machine: connect, join (with the
/// resume token once there is one), keep the connection alive, reconnect with backoff, end.
///
/// Every input returns the actions to carry out; `nextDeadline` says when to call `timer(now:)` next.
/// `RoomSession` is the driver that owns the sockets and the clock.
public struct SessionMachine: Sendable {
    public enum Action: Equatable, Sendable {
        /// Open a new connection (any earlier one is abandoned).
        case connect
        case send(ClientFrame)
        /// Close the current connection with this status code.
        case close(code: UInt16)
        case emit(SessionEvent)
    }

    public enum State: Equatable, Sendable {
        case idle
        case connecting(attempt: Int, since: LocalInstant)
        case joining(attempt: Int, since: LocalInstant)
        case joined
        case waiting(attempt: Int, until: LocalInstant)
        case closing(since: LocalInstant)
        case ended(SessionEnd)
    }

    /// The ref of the `join` this machine sends.
    public static let joinRef = Ref.string("join")

    public let configuration: SessionConfiguration
    public private(set) var state: State = .idle
    /// The resume token: from the configuration, then from each welcome.
    public private(set) var token: String?
    public private(set) var everJoined = false
    private var lastReceived = LocalInstant(monotonicMs: 0, wallMs: 0)
    private var pingSentAt: LocalInstant?
    private var replacedAnnounced = false
    /// The host removed this member: the server said why, and for how long, before closing (4002).
    private var removedAnnounced: (message: String, retryAfter: Int?)?
    /// A watch the room's new lock ended: the server said why before closing (4003).
    private var accessEndedAnnounced: String?
    private var random: SplitMix64

    public init(configuration: SessionConfiguration, seed: UInt64 = 0x5eed) {
        self.configuration = configuration
        token = configuration.token
        random = SplitMix64(seed: seed)
    }

    public var isEnded: Bool {
        if case .ended = state { return true }
        return false
    }

    public var isJoined: Bool { state == .joined }

    /// When `timer(now:)` has something to do next; nil when nothing is pending.
    public var nextDeadline: Int64? {
        switch state {
        case .idle, .ended: return nil
        case let .connecting(_, since), let .joining(_, since):
            return since.monotonicMs + configuration.connectTimeoutMs
        case .joined:
            let ping = pingSentAt == nil ? lastReceived.monotonicMs + configuration.keepaliveMs : Int64.max
            return min(ping, lastReceived.monotonicMs + configuration.deadAfterMs)
        case let .waiting(_, until):
            return until.monotonicMs
        case let .closing(since):
            return since.monotonicMs + configuration.closeTimeoutMs
        }
    }

    // MARK: Inputs

    public mutating func start(now: LocalInstant) -> [Action] {
        guard state == .idle else { return [] }
        return connect(attempt: 1, now: now)
    }

    public mutating func opened(now: LocalInstant) -> [Action] {
        guard case let .connecting(attempt, _) = state else { return [] }
        state = .joining(attempt: attempt, since: now)
        lastReceived = now
        if configuration.observe {
            return [.send(ClientFrame(.observe(room: configuration.room, token: token, passcode: configuration.passcode),
                                      ref: Self.joinRef))]
        }
        return [.send(ClientFrame(.join(room: configuration.room, name: configuration.name, token: token,
                                                passcode: configuration.passcode),
                                  ref: Self.joinRef))]
    }

    public mutating func received(_ message: ServerMessage, raw: [UInt8], now: LocalInstant) -> [Action] {
        lastReceived = now
        pingSentAt = nil
        let emit = Action.emit(.message(message, raw: raw, receivedAt: now))
        switch state {
        case .joining:
            switch message {
            case .welcome(let you, _, _, _, _):
                state = .joined
                token = you.token
                everJoined = true
                return [emit]
            case .observing:
                state = .joined
                everJoined = true
                return [emit]
            case let .error(code, text, _, _, retryAfter):
                return [emit, .close(code: 1000)] + end(.refused(code: code, message: text, retryAfter: retryAfter))
            default:
                return [emit]
            }
        case .joined, .closing:
            if case .error(.replaced, _, _, _, _) = message { replacedAnnounced = true }
            if case let .error(.removed, text, _, _, retryAfter) = message { removedAnnounced = (text, retryAfter) }
            if configuration.observe, case let .error(.badPasscode, text, _, _, _) = message { accessEndedAnnounced = text }
            return [emit]
        default:
            return []
        }
    }

    /// The connection closed; `code` is the status of the server's close frame when it sent one.
    public mutating func closed(code: UInt16?, reason: String, now: LocalInstant) -> [Action] {
        switch state {
        case .closing:
            return end(.stopped)
        case .idle, .ended, .waiting:
            return []
        case .connecting, .joining, .joined:
            if code == 4001 || replacedAnnounced { return end(.replaced) }
            // Removed by the host (4002): the name and token are refused for a while, so never reconnect.
            if code == 4002 || removedAnnounced != nil {
                return end(.refused(code: .removed, message: removedAnnounced?.message ?? "the host removed you from this room",
                                    retryAfter: removedAnnounced?.retryAfter))
            }
            // A watch the room's new lock (or new passcode) ended (4003): what we showed opens it no more, and
            // showing it again would only count as a wrong passcode.
            if code == 4003 || accessEndedAnnounced != nil {
                return end(.refused(code: .badPasscode,
                                    message: accessEndedAnnounced ?? "the room's lock changed: watch it again with its passcode"))
            }
            // The server restarts, or its node drains and hands its rooms to other nodes (1012): come back at
            // once through the same address, within a short random window, and resume with the token.
            if code == 1012, let policy = configuration.reconnect {
                let retryAt = now.advanced(by: policy.restartDelayMs(unit: random.nextUnit()))
                state = .waiting(attempt: 1, until: retryAt)
                return [.emit(.reconnecting(attempt: 1, retryAt: retryAt, reason: "the server is restarting"))]
            }
            let why: String
            switch code {
            case 1012?: why = "the server is restarting"
            case 1001?: why = "the server is shutting down"
            case 1008?: why = "the server dropped the connection (policy)"
            case let c?: why = "the connection closed (\(c)\(reason.isEmpty ? "" : ": \(reason)"))"
            case nil: why = "the connection closed"
            }
            return dropped(why, now: now)
        }
    }

    /// The connection could not be made. `passing`: the failure says the server is there but away just now (a
    /// proxy's 502/503/504 to the upgrade, `RoomSession.unavailableStatus`), so even a session that has not
    /// joined yet tries again, on its back-off, as after a lost connection.
    public mutating func failed(_ why: String, passing: Bool = false, now: LocalInstant) -> [Action] {
        switch state {
        case .connecting, .joining, .joined: return dropped(why, passing: passing, now: now)
        case .closing: return end(.stopped)
        default: return []
        }
    }

    /// The close sent with a connection given up for lost (no answer in time) before connecting again: not
    /// 1000, so that a server that still hears it tells the others the connection was lost, not that this
    /// member stepped out (docs/PROTOCOL.md §5 and §11).
    public static let gaveUpCloseCode: UInt16 = 4000

    public mutating func timer(now: LocalInstant) -> [Action] {
        guard let deadline = nextDeadline, now.monotonicMs >= deadline else { return [] }
        switch state {
        case .connecting, .joining:
            return [.close(code: Self.gaveUpCloseCode)] + dropped("no answer from the server", now: now)
        case .joined:
            if now.monotonicMs >= lastReceived.monotonicMs + configuration.deadAfterMs {
                return [.close(code: Self.gaveUpCloseCode)] + dropped("the server stopped answering", now: now)
            }
            pingSentAt = now
            return [.send(ClientFrame(.ping, ref: .string("keepalive")))]
        case let .waiting(attempt, _):
            return connect(attempt: attempt, now: now)
        case .closing:
            return end(.stopped)
        case .idle, .ended:
            return []
        }
    }

    /// Sends a request when joined; returns no action (the request is dropped) otherwise.
    public mutating func send(_ frame: ClientFrame) -> [Action] {
        guard state == .joined else { return [] }
        return [.send(frame)]
    }

    /// Ends the session: closes the connection politely, or ends at once when there is none.
    public mutating func stop(now: LocalInstant) -> [Action] {
        switch state {
        case .connecting, .joining, .joined:
            state = .closing(since: now)
            return [.close(code: 1000)]
        case .idle, .waiting:
            return end(.stopped)
        case .closing, .ended:
            return []
        }
    }

    // MARK: Steps

    private mutating func connect(attempt: Int, now: LocalInstant) -> [Action] {
        state = .connecting(attempt: attempt, since: now)
        pingSentAt = nil
        return [.emit(.connecting(attempt: attempt)), .connect]
    }

    private mutating func dropped(_ why: String, passing: Bool = false, now: LocalInstant) -> [Action] {
        guard everJoined || (passing && configuration.reconnect != nil) else { return end(.unreachable(why)) }
        guard let policy = configuration.reconnect else { return end(.lost(why)) }
        let attempt: Int
        switch state {
        case let .connecting(a, _), let .joining(a, _): attempt = a + 1
        default: attempt = 1
        }
        let retryAt = now.advanced(by: policy.delayMs(attempt: attempt, unit: random.nextUnit()))
        state = .waiting(attempt: attempt, until: retryAt)
        return [.emit(.reconnecting(attempt: attempt, retryAt: retryAt, reason: why))]
    }

    private mutating func end(_ why: SessionEnd) -> [Action] {
        state = .ended(why)
        return [.emit(.ended(why))]
    }
}

/// A small seeded random source for backoff jitter (deterministic in tests).
struct SplitMix64: Sendable {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    /// A number in 0..<1.
    mutating func nextUnit() -> Double { Double(next() >> 11) / Double(1 << 53) }
}
