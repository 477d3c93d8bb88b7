/// The phases of the pomodoro cycle.
public enum Phase: String, Sendable, CaseIterable, Hashable {
    case idle, focus, shortBreak, longBreak
}

/// Where a room's timer stands.
public enum TimerState: Equatable, Sendable {
    /// Nothing set up: the room is idle.
    case idle
    /// A phase is set up with its full length and waits for `start`.
    case ready(remaining: Duration)
    /// A phase runs and ends at `deadline` (monotonic).
    case running(deadline: Instant)
    /// A started phase is paused with `remaining` left.
    case paused(remaining: Duration)
}

/// What the clients show as the timer's status.
public enum TimerStatus: String, Sendable, Equatable {
    case idle, ready, running, paused
}

/// Focus counters, kept alike for each member and for the room while the server runs.
///
/// For a member: focus sessions that completed while they were present, the time they were present in a
/// running focus, and the running focuses they saw stop early (paused, skipped, reset, or left while one
/// ran). For the room: focus phases that ran to their end, the time a focus was running, and the running
/// focuses that were paused, skipped or reset.
public struct FocusStats: Equatable, Sendable {
    /// Completed focus sessions, as the stats reports (`FocusReport`) count them too; the snapshot on the wire
    /// calls this count `focusCompleted` (docs/PROTOCOL.md §8).
    public var focusSessions = 0
    public var focusTime: Duration = .zero
    public var interruptions = 0
    public init(focusSessions: Int = 0, focusTime: Duration = .zero, interruptions: Int = 0) {
        self.focusSessions = focusSessions
        self.focusTime = focusTime
        self.interruptions = interruptions
    }
}

/// A member's counters.
public typealias MemberStats = FocusStats
/// The room's counters.
public typealias RoomStats = FocusStats

/// A person in a room.
public struct Member: Sendable {
    public let id: MemberID
    public var name: String
    /// The SHA-256 of the member's resume token (hex): the token itself is handed out once and kept nowhere.
    let tokenHash: String
    /// Chosen by the member: stepped away from the desk.
    public var away = false
    /// Whether a connection currently speaks for this member.
    public var connected = true
    public var task = ""
    public var stats = MemberStats()
    /// Time present in the current focus phase: what the journal entry credits them when it completes.
    ///
    /// This and `stats.focusTime` are realized values: while the member earns, the span since
    /// `creditedSince` is added on top (see `Room.snapshot(at:)`).
    public var sessionFocusTime: Duration = .zero
    /// When the connection was lost; the member is dropped at this instant plus the grace period.
    var disconnectedAt: Instant?
    /// Set when the member's connection dropped without it having said anything since it joined: such a
    /// member gets `RoomPolicy.silentGrace`, so a flood of join-and-drop connections does not hold a room's
    /// places for the whole reconnection grace.
    var silentlyLost = false
    /// Set when a restart (or a room taken over from another node) found the member connected, or a node
    /// sent their connection back for a restart (`ConnectionEnd.restart`): the server went, not their
    /// connection. Nobody was told they went away, so nobody is told they came back.
    var awayForRestart = false
    /// Since when the member has been earning focus time not yet added to `stats.focusTime` and
    /// `sessionFocusTime`: set exactly while a focus runs and the member is present. Crediting is lazy so
    /// that a change to one member costs nothing for the others.
    var creditedSince: Instant?
    /// Place in the join order: lower joined earlier. Never reused, so a stored row keeps its place without
    /// the rows after it being rewritten when someone leaves.
    var joinOrder = 0

    /// Focus time and session focus time at `now`, with the running span added.
    func earned(at now: Instant) -> (stats: MemberStats, session: Duration) {
        guard let since = creditedSince, now > since else { return (stats, sessionFocusTime) }
        var stats = stats
        stats.focusTime += now - since
        return (stats, sessionFocusTime + (now - since))
    }

    /// Present means connected and not away: only present members earn focus time and sessions.
    public var isPresent: Bool { connected && !away }

    /// The member as everyone sees them at `now`.
    func snapshot(at now: Instant) -> MemberSnapshot {
        MemberSnapshot(id: id, name: name, present: isPresent, connected: connected, task: task,
                       stats: earned(at: now).stats)
    }
}

/// Why a member is away.
public enum AwayReason: String, Sendable, Equatable {
    /// The member said so.
    case away
    /// The connection dropped; the member may come back within the grace period.
    case disconnected
}

/// How a member's connection ended, as far as the server can tell: a client closed on purpose is a member
/// who stepped out (a tab closed, `pomo` quit; they may resume within the grace period), not one whose
/// connection was lost.
public enum ConnectionEnd: String, Sendable, Equatable {
    /// The client closed it: it sent a WebSocket close frame (1000, 1001, or one without a code).
    case closed
    /// It dropped: no close frame (a network cut, a timeout, an error), a close frame that reports an error,
    /// or the server closed it.
    case lost
    /// The server side sent it back for a restart (close 1012: a cluster node draining, or a room's node
    /// passing on its owner's close): the server went, not the member's connection. Never on the wire: such
    /// a member is away without a `memberAway`, and back without a `memberReturned`, as members a restart
    /// found gone are (`Room.resumeAfterRestart`).
    case restart
}

/// Why a member is no longer in the room.
public enum LeaveReason: String, Sendable, Equatable {
    /// The member left.
    case left
    /// The member did not come back within the grace period.
    case expired
    /// The host removed the member, who may not come back for a while.
    case removed
}

/// The controls a member can press.
public enum ControlAction: String, Sendable, Equatable {
    case start, pause, resume, skip, reset, extend, configure
}

/// Who may press the controls of a room.
public enum ControlMode: String, Sendable, Equatable, CaseIterable {
    /// Everyone in the room, like a kitchen timer shared at a table.
    case anyone
    /// Only the host (the creator, or whoever the host handed the role to).
    case host
}

/// Something that happened in a room that members should hear about, besides the new state itself.
public enum RoomEvent: Equatable, Sendable {
    /// A phase ran to its end. `next` is the phase now set up, `autoStarted` whether it already runs.
    /// `counted`: a focus that counts as completed (`Room.focusRanLongEnough`): credited to the room and the
    /// members present, and journalled. False for a break, and for a focus shortened to less than the
    /// server's shortest focus. `length`: the time the phase ran, extensions included (its settings' length
    /// only when nothing moved its end).
    case phaseCompleted(completed: Phase, next: Phase, autoStarted: Bool, cycle: Int, counted: Bool, length: Duration)
    case memberJoined(MemberID, name: String)
    /// A member came back with their resume token, after a `memberAway` (none for members a restart found
    /// gone, whose going was never announced: `Room.resumeAfterRestart`).
    case memberReturned(MemberID)
    /// A member went away. `connection` says how a connection that ended did (`reason` `.disconnected`); nil
    /// for `.away`.
    case memberAway(MemberID, reason: AwayReason, connection: ConnectionEnd? = nil)
    case memberBack(MemberID)
    /// A member left the room for good; `name` is theirs, as nobody can look it up any more.
    case memberLeft(MemberID, name: String, reason: LeaveReason)
    /// A member pressed a control. `seconds` is set for `extend`.
    case control(ControlAction, by: MemberID, seconds: Int?)
    /// The host role moved (nil: nobody is left to hold it).
    case hostChanged(MemberID?)
    /// The host changed who may press the controls.
    case controlModeChanged(ControlMode, by: MemberID)
    /// The host locked the room with a new passcode (`locked`), or unlocked it.
    case lockChanged(locked: Bool, by: MemberID)

    /// One member came, went, or stepped away or back: news for a small room, noise in a crowd.
    public var isAboutOneMember: Bool {
        switch self {
        case .memberJoined, .memberReturned, .memberAway, .memberBack, .memberLeft: true
        case .phaseCompleted, .control, .hostChanged, .controlModeChanged, .lockChanged: false
        }
    }
}

/// When new settings take effect.
public enum AppliesFrom: String, Sendable, Equatable {
    case now, nextPhase
}

/// A timer tick: sent on every whole-second boundary of a running phase's remaining time.
public struct Tick: Equatable, Sendable {
    public var phase: Phase
    /// The boundary this tick marks: a whole number of seconds, in milliseconds.
    public var remaining: Duration
    public var deadline: Instant
    public var cycle: Int
    public var seq: UInt64
}

/// What a call into a room produced; the transport carries it out and nothing else.
public struct Outcome: Equatable, Sendable {
    public var events: [RoomEvent] = []
    /// The room's state changed: broadcast a new snapshot.
    public var stateChanged = false
    /// A tick to broadcast (at most one per call: the latest boundary crossed).
    public var tick: Tick?
    /// For `configure`: when the new settings apply.
    public var appliesFrom: AppliesFrom?
    /// A scheduled session did its last focus and the room stopped.
    public var scheduleEnded: ScheduledRun?
    /// Members whose own member object changed beyond what every call changes (their task, their presence,
    /// their stats: a focus they earned or one stopped early): in a big room, those its list leaves out
    /// hear themselves (`you`).
    public var changedMembers: [MemberID] = []
    public init() {}

    /// The state changed only in its members (joins, leaves, presence, tasks), not in its timer, settings,
    /// controls or host: a crowd may hear of it a little later, together with others like it.
    public var changedOnlyMembers: Bool {
        stateChanged && events.allSatisfy(\.isAboutOneMember)
    }
}

/// What `join` tells the member who joined.
public struct JoinResult: Sendable {
    public let memberID: MemberID
    /// The new member's fresh token, or on a resume the token they came back with.
    public let token: ResumeToken
    /// The member got their earlier place back with their token.
    public let resumed: Bool
    public var outcome: Outcome
}

/// A member as everyone sees them.
public struct MemberSnapshot: Equatable, Sendable {
    public var id: MemberID
    public var name: String
    public var present: Bool
    public var connected: Bool
    public var task: String
    public var stats: MemberStats
}

/// A room's whole visible state at one instant.
public struct RoomSnapshot: Equatable, Sendable {
    public var id: RoomID
    public var phase: Phase
    public var status: TimerStatus
    public var remaining: Duration
    /// The phase's full length, including extensions: for progress rings.
    public var phaseLength: Duration
    /// Monotonic end of the running phase; nil unless running.
    public var deadline: Instant?
    /// Which focus session of the set this is ("focus 3 of 4").
    public var cycle: Int
    public var settings: RoomSettings
    /// Settings that take effect when the current phase ends.
    public var pendingSettings: RoomSettings?
    /// The first members in join order, at most `RoomPolicy.memberListLimit` of them.
    public var members: [MemberSnapshot]
    /// Every member, listed or not.
    public var memberCount: Int
    /// Members present (connected and not away), listed or not.
    public var presentCount: Int
    /// Whether `members` leaves some out (`memberCount` is above the limit).
    public var membersTruncated: Bool { members.count < memberCount }
    public var stats: RoomStats
    public var seq: UInt64
    public var controlMode: ControlMode
    public var host: MemberID?
    /// The scheduled session under way, if the server started one ("Writing block · focus 2 of 3").
    public var scheduledRun: ScheduledRun? = nil

    public var running: Bool { status == .running }
}
