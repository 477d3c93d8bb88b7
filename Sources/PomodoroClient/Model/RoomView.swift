import PomodoroCore
import PomodoroProtocol

/// What a client knows about its room: the latest snapshot, who it is, and the server's clock.
///
/// Messages are applied in `seq` order: a `state` older than the one shown, or a `tick` older than the
/// last state, is stale and ignored (docs/PROTOCOL.md §7). The remaining time of a running phase is derived
/// from `endsAt` and the server clock estimate at whatever local moment the caller asks about, so the
/// countdown neither drifts nor waits for ticks.
public struct RoomView: Equatable, Sendable {
    /// The latest room snapshot, with ticks folded in; nil before `welcome`.
    public private(set) var snapshot: SnapshotPayload?
    /// My member id in the room, from `welcome`.
    public private(set) var myID: String?
    /// Me as the server last told me alone (`you`), in a big room whose `members` leave me out.
    public private(set) var unlistedMe: MemberPayload?
    /// The bounds the server checks, from `welcome`: the client checks its requests against these.
    public private(set) var limits: LimitsPayload?
    /// Whether the last `welcome` gave an earlier place back.
    public private(set) var resumed = false
    public private(set) var clock = ServerClockEstimate()
    /// The `seq` of the last state applied.
    public private(set) var seq: UInt64 = 0

    public init() {}

    /// What applying one message did.
    public enum Applied: Equatable, Sendable {
        /// The room changed (a welcome, a newer state, a tick).
        case applied
        /// Older than what is shown: ignored.
        case stale
        /// Not about the room's state (replies, events): only the clock was updated.
        case other
    }

    /// Applies one server message that arrived at `receivedAt`.
    @discardableResult
    public mutating func apply(_ message: ServerMessage, receivedAt: LocalInstant) -> Applied {
        switch message {
        case let .welcome(you, room, serverTime, limits, _):
            clock.sample(serverTime: serverTime, receivedAt: receivedAt)
            clock.sample(serverTime: room.serverTime, receivedAt: receivedAt)
            self.limits = limits
            myID = you.id
            unlistedMe = nil
            resumed = you.resumed
            // A welcome starts a new session: a restarted server counts seq from the start again.
            snapshot = room
            seq = room.seq
            return .applied
        case let .observing(room, serverTime, _):
            // Watching, not a member: the room without a place in it.
            clock.sample(serverTime: serverTime, receivedAt: receivedAt)
            clock.sample(serverTime: room.serverTime, receivedAt: receivedAt)
            myID = nil
            unlistedMe = nil
            snapshot = room
            seq = room.seq
            return .applied
        case let .you(room, member):
            guard member.id == myID, room == snapshot?.room else { return .stale }
            unlistedMe = member
            return .applied
        case .state(let room):
            clock.sample(serverTime: room.serverTime, receivedAt: receivedAt)
            guard snapshot == nil || room.seq >= seq else { return .stale }
            snapshot = room
            seq = room.seq
            return .applied
        case .tick(let tick):
            clock.sample(serverTime: tick.serverTime, receivedAt: receivedAt)
            guard var room = snapshot, tick.seq >= seq, tick.room == room.room else { return .stale }
            room.phase = tick.phase
            room.cycle = tick.cycle
            room.endsAt = tick.endsAt
            room.remainingMs = tick.remainingMs
            room.serverTime = tick.serverTime
            room.status = .running
            room.running = true
            snapshot = room
            return .applied
        case let .event(_, _, serverTime), let .pong(serverTime, _):
            clock.sample(serverTime: serverTime, receivedAt: receivedAt)
            return .other
        case .ok, .error, .stats, .schedules, .apiTokens, .webhooks:
            return .other
        }
    }

    /// Forgets who I am (after leaving); the last snapshot stays for display.
    public mutating func forgetMembership() {
        myID = nil
        unlistedMe = nil
    }

    // MARK: Derived

    public var phase: Phase { snapshot?.phase ?? .idle }
    public var status: TimerStatus { snapshot?.status ?? .idle }

    /// Milliseconds left in the phase at a local moment: from `endsAt` while running (never below zero,
    /// never above the phase's length), the snapshot's value otherwise.
    public func remainingMs(at now: LocalInstant) -> Int64 {
        guard let room = snapshot else { return 0 }
        guard room.status == .running, let endsAt = room.endsAt else { return max(0, room.remainingMs) }
        let left = endsAt - clock.serverTime(at: now)
        return min(max(0, left), max(room.phaseLengthMs, room.remainingMs))
    }

    /// Whole seconds to show: rounded up, so 24.3 s reads 0:25 and the display turns on the tick boundaries.
    public func displaySeconds(at now: LocalInstant) -> Int64 {
        let ms = remainingMs(at: now)
        return ms > 0 ? (ms + 999) / 1000 : 0
    }

    /// How much of the phase has passed, 0 to 1 (0 when idle).
    public func progress(at now: LocalInstant) -> Double {
        guard let room = snapshot, room.phaseLengthMs > 0 else { return 0 }
        let done = Double(room.phaseLengthMs - remainingMs(at: now)) / Double(room.phaseLengthMs)
        return min(1, max(0, done))
    }

    /// Milliseconds until the displayed second next changes while running; nil when nothing counts down.
    public func msUntilNextSecond(at now: LocalInstant) -> Int64? {
        guard status == .running else { return nil }
        let ms = remainingMs(at: now)
        guard ms > 0 else { return nil }
        return (ms - 1) % 1000 + 1
    }

    /// The member I am, when joined: as the room lists me, or as the server told me alone when it does not
    /// (a big room lists its first members only).
    public var me: MemberPayload? {
        guard let myID else { return nil }
        return snapshot?.members.first { $0.id == myID } ?? unlistedMe
    }

    /// Whether I said I am away.
    public var iAmAway: Bool {
        guard let me else { return false }
        return me.connected && !me.present
    }

    /// A member's name by id (for telling people who did what).
    public func name(of id: String) -> String? {
        snapshot?.members.first { $0.id == id }?.name
    }

    /// Members other than me.
    public var others: [MemberPayload] { snapshot?.members.filter { $0.id != myID } ?? [] }
}
