/// The timer settings of a room. Durations are whole seconds, as on the wire.
public struct RoomSettings: Equatable, Hashable, Sendable {
    public var focus: Int
    public var shortBreak: Int
    public var longBreak: Int
    /// A long break follows every `longBreakEvery`-th focus session.
    public var longBreakEvery: Int
    /// Whether the next phase starts by itself when one ends.
    public var autoStart: Bool
    /// Set: the room runs on the clock of this zone (`ClockAlignment`): focus starts at :00 and :30 for
    /// 25/5, at :00 for 50/10; nil: phases run from whenever they are started.
    public var aligned: ZoneName?

    public init(focus: Int = 25 * 60, shortBreak: Int = 5 * 60, longBreak: Int = 15 * 60,
                longBreakEvery: Int = 4, autoStart: Bool = false, aligned: ZoneName? = nil) {
        self.focus = focus
        self.shortBreak = shortBreak
        self.longBreak = longBreak
        self.longBreakEvery = longBreakEvery
        self.autoStart = autoStart
        self.aligned = aligned
    }

    /// The grid an aligned room keeps to; nil when it is not aligned (or its lengths do not fit the hour,
    /// which `validate()` refuses).
    public var alignment: ClockAlignment? {
        guard let zone = aligned else { return nil }
        return try? ClockAlignment(settings: self, zone: zone)
    }

    /// 25 / 5 / 15 minutes, a long break after every 4 focus sessions, no auto-start.
    public static let standard = RoomSettings()

    /// The allowed range of each phase length, in seconds (1 second to 4 hours).
    public static let durationRange: ClosedRange<Int> = 1...(4 * 3600)
    /// The allowed range of `longBreakEvery`.
    public static let longBreakEveryRange: ClosedRange<Int> = 1...12

    /// Throws `RoomError.invalidArgument` naming the first field out of bounds.
    public func validate() throws(RoomError) {
        for (field, value) in [("focus", focus), ("shortBreak", shortBreak), ("longBreak", longBreak)]
        where !Self.durationRange.contains(value) {
            throw .invalidArgument(field: field, reason: "must be \(Self.durationRange.lowerBound)–\(Self.durationRange.upperBound) seconds")
        }
        if !Self.longBreakEveryRange.contains(longBreakEvery) {
            throw .invalidArgument(field: "longBreakEvery", reason: "must be \(Self.longBreakEveryRange.lowerBound)–\(Self.longBreakEveryRange.upperBound)")
        }
        if let zone = aligned { _ = try ClockAlignment(settings: self, zone: zone) }
    }

    /// The length of `phase` under these settings (zero for idle).
    public func length(of phase: Phase) -> Duration {
        switch phase {
        case .idle: .zero
        case .focus: .seconds(focus)
        case .shortBreak: .seconds(shortBreak)
        case .longBreak: .seconds(longBreak)
        }
    }
}

/// Rules every room follows, set once by the server's configuration.
public struct RoomPolicy: Equatable, Sendable {
    /// How long a disconnected member keeps their place (and may come back with their resume token).
    public var reconnectGrace: Duration
    /// The grace of a new member whose connection dropped without having sent anything after joining
    /// (a join-and-drop flood), when shorter than `reconnectGrace`.
    public var silentGrace: Duration
    /// How long a room with nobody connected and nothing running lives on before it is dropped.
    public var emptyRoomLifetime: Duration
    /// Members a room holds at most (connected or within their grace period).
    public var maxMembers: Int
    /// Longest task text, in characters.
    public var maxTaskLength: Int
    /// Longest name, in characters.
    public var maxNameLength: Int
    /// How far one `extend` may move the end, in seconds either way.
    public var maxExtendSeconds: Int
    /// The longest a phase can be made by extending it.
    public var maxPhaseLength: Duration
    /// Members a room's snapshot lists at most (the first in join order). Above it the room is a crowd:
    /// the transport stops announcing single members' comings and goings and sends their state changes at
    /// a bounded rate, so one join no longer costs every member a full member list.
    public var memberListLimit: Int
    /// The shortest focus `configure` accepts, in seconds: each completed focus writes a journal row, so
    /// this bounds how fast a room (with auto-start) can write them. Tests that run phases of a second or
    /// two lower it; a room's settings from before are not touched.
    public var minFocusSeconds: Int
    /// How long a member the host removed may not join the room again.
    public var removalBan: Duration = .seconds(600)

    public init(reconnectGrace: Duration = .seconds(120), emptyRoomLifetime: Duration = .seconds(600),
                maxMembers: Int = 10_000, maxTaskLength: Int = 200, maxNameLength: Int = 40,
                maxExtendSeconds: Int = 3600, maxPhaseLength: Duration = .seconds(8 * 3600),
                memberListLimit: Int = 100, silentGrace: Duration = .seconds(10),
                minFocusSeconds: Int = RoomPolicy.defaultMinFocusSeconds) {
        self.reconnectGrace = reconnectGrace
        self.silentGrace = silentGrace
        self.emptyRoomLifetime = emptyRoomLifetime
        self.maxMembers = maxMembers
        self.maxTaskLength = maxTaskLength
        self.maxNameLength = maxNameLength
        self.maxExtendSeconds = maxExtendSeconds
        self.maxPhaseLength = maxPhaseLength
        self.memberListLimit = memberListLimit
        self.minFocusSeconds = minFocusSeconds
    }

    /// A minute: at most one journal row a minute per room, 1,440 a day.
    public static let defaultMinFocusSeconds = 60

    /// Whether a room of `memberCount` members lists only some of them.
    public func isCrowd(memberCount: Int) -> Bool { memberCount > memberListLimit }

    public static let standard = RoomPolicy()
}
