/// Durable records: what a store keeps so that rooms, members, stats and the focus journal outlive the
/// server process.
///
/// Times here are wall-clock milliseconds since the Unix epoch (`…Ms`), never monotonic instants: a
/// monotonic clock starts again at every boot, a wall clock does not. The core converts with the offset
/// it is given and still reads no clock.

/// Where a stored room's timer stood.
public enum StoredTimer: Equatable, Sendable {
    case idle
    case ready(remainingMs: Int64)
    /// Running: the phase ends at this wall-clock time.
    case running(endsAtMs: Int64)
    case paused(remainingMs: Int64)
}

/// A room as a store keeps it, without its members.
public struct RoomRecord: Equatable, Sendable {
    public var id: RoomID
    public var settings: RoomSettings
    public var pendingSettings: RoomSettings?
    public var phase: Phase
    public var timer: StoredTimer
    public var phaseLengthMs: Int64
    public var cycle: Int
    public var stats: FocusStats
    public var controlMode: ControlMode
    public var host: MemberID?
    /// The number the next new member's id gets, so ids are never reused.
    public var nextMemberNumber: Int
    /// When the current focus phase first started (nil unless a started focus is running or paused).
    public var focusStartedAtMs: Int64?
    /// The room's own focus time (`stats`) was credited up to this moment (nil unless a focus runs).
    /// Members carry their own span (`MemberRecord.creditedSinceMs`); before schema v3 this moment
    /// held for every present member too.
    public var focusCreditedUntilMs: Int64?
    /// The room's state counter, so clients that kept a `seq` see it go on rising.
    public var seq: UInt64
    /// The session a schedule started, while it runs: a restart in the middle of its set carries on with
    /// it, counting what was done (schema v8).
    public var scheduledRun: ScheduledRun?

    public init(id: RoomID, settings: RoomSettings, pendingSettings: RoomSettings?, phase: Phase,
                timer: StoredTimer, phaseLengthMs: Int64, cycle: Int, stats: FocusStats,
                controlMode: ControlMode, host: MemberID?, nextMemberNumber: Int, focusStartedAtMs: Int64?,
                focusCreditedUntilMs: Int64?, seq: UInt64, scheduledRun: ScheduledRun? = nil) {
        self.scheduledRun = scheduledRun
        self.id = id
        self.settings = settings
        self.pendingSettings = pendingSettings
        self.phase = phase
        self.timer = timer
        self.phaseLengthMs = phaseLengthMs
        self.cycle = cycle
        self.stats = stats
        self.controlMode = controlMode
        self.host = host
        self.nextMemberNumber = nextMemberNumber
        self.focusStartedAtMs = focusStartedAtMs
        self.focusCreditedUntilMs = focusCreditedUntilMs
        self.seq = seq
    }
}

/// A member as a store keeps it.
public struct MemberRecord: Equatable, Sendable {
    public var id: MemberID
    /// Place in the room's join order (lower joined earlier; gaps are allowed).
    public var joinOrder: Int
    public var name: String
    /// The SHA-256 of the member's resume token, as 64 lowercase hex digits (`ResumeToken.hash`), so the
    /// member gets their place back after a restart while the store never holds a usable token.
    public var tokenHash: String
    public var task: String
    public var away: Bool
    /// Whether a connection spoke for the member when this was written (restored members are disconnected,
    /// but a phase that ended while the server was down credits those who were present).
    public var connected: Bool
    public var stats: FocusStats
    /// Time present in the current focus phase, for the journal entry when it completes.
    public var sessionFocusMs: Int64
    /// Set while the member earns focus time (a focus runs and they are present): `stats.focusTime` and
    /// `sessionFocusMs` are credited up to this moment, and the time since is theirs too. A row is thus
    /// right on its own, and one member's change rewrites no other member's row.
    public var creditedSinceMs: Int64?

    public init(id: MemberID, joinOrder: Int, name: String, tokenHash: String, task: String, away: Bool,
                connected: Bool, stats: FocusStats, sessionFocusMs: Int64, creditedSinceMs: Int64? = nil) {
        self.id = id
        self.joinOrder = joinOrder
        self.name = name
        self.tokenHash = tokenHash
        self.task = task
        self.away = away
        self.connected = connected
        self.stats = stats
        self.sessionFocusMs = sessionFocusMs
        self.creditedSinceMs = creditedSinceMs
    }
}

/// One completed focus session: an entry of the room's focus journal.
public struct FocusSessionRecord: Equatable, Sendable {
    /// Someone who was present when the session completed, with what they were working on.
    public struct Participant: Equatable, Sendable {
        public var member: MemberID
        public var name: String
        public var task: String
        /// Time they were present during this session, in milliseconds.
        public var focusMs: Int64
        public init(member: MemberID, name: String, task: String, focusMs: Int64) {
            self.member = member
            self.name = name
            self.task = task
            self.focusMs = focusMs
        }
    }

    public var room: RoomID
    /// When the focus phase first started, and when it ended (wall clock).
    public var startedAtMs: Int64
    public var endedAtMs: Int64
    /// The phase's length including extensions, in seconds.
    public var lengthSeconds: Int
    public var participants: [Participant]

    public init(room: RoomID, startedAtMs: Int64, endedAtMs: Int64, lengthSeconds: Int,
                participants: [Participant]) {
        self.room = room
        self.startedAtMs = startedAtMs
        self.endedAtMs = endedAtMs
        self.lengthSeconds = lengthSeconds
        self.participants = participants
    }
}

/// A running focus that stopped early for someone: paused, skipped, reset, or they left or went away.
public struct InterruptionRecord: Equatable, Sendable {
    public var room: RoomID
    /// The member it interrupted; nil for the room's own count (the timer itself was stopped).
    public var member: MemberID?
    /// The member's name at the time (nil with `member`).
    public var name: String?
    public var atMs: Int64

    public init(room: RoomID, member: MemberID?, name: String?, atMs: Int64) {
        self.room = room
        self.member = member
        self.name = name
        self.atMs = atMs
    }
}

/// A change a store must make, in the order the room made them.
public enum StoreChange: Equatable, Sendable {
    /// Insert or replace the room's row. `passcode` is the server's encoded verifier, opaque here.
    case saveRoom(RoomRecord, passcode: String?)
    case saveMember(RoomID, MemberRecord)
    case removeMember(RoomID, MemberID)
    case focusCompleted(FocusSessionRecord)
    case interrupted(InterruptionRecord)
    /// Replace the room's schedules by these (an empty list removes them all).
    case saveSchedules(RoomID, [Schedule])
    /// Replace the room's bans by these (an empty list lifts them all).
    case saveBans(RoomID, [BanRecord])
    /// Replace the room's API tokens by these (hashes only; an empty list revokes them all).
    case saveAPITokens(RoomID, [APITokenRecord])
    /// A room's webhooks and their outbox (WebhookRecords.swift).
    case webhook(WebhookChange)
}

/// Someone the host removed from a room, kept out until `untilMs` (wall clock) by name and by resume token.
public struct BanRecord: Equatable, Sendable {
    /// The name as bans compare it (lowercased).
    public var nameKey: String
    /// The SHA-256 of their resume token, as `MemberRecord.tokenHash`.
    public var tokenHash: String
    public var untilMs: Int64

    public init(nameKey: String, tokenHash: String, untilMs: Int64) {
        self.nameKey = nameKey
        self.tokenHash = tokenHash
        self.untilMs = untilMs
    }
}

/// A room as it comes back from a store at start-up.
public struct StoredRoom: Equatable, Sendable {
    public var record: RoomRecord
    public var members: [MemberRecord]
    public var passcode: String?
    /// Whom the host removed, as the store last heard; bans that have ended may be among them.
    public var bans: [BanRecord]
    /// The room's schedules: `RoomStore.loadRoom` reads them with the room (a cluster node taking a room
    /// reads them again right after its claim); `loadRooms` leaves them out (`loadSchedules` reads them all).
    public var schedules: [Schedule]
    /// The room's API tokens (hashes only), read with the room by `loadRoom` and `loadRooms`.
    public var apiTokens: [APITokenRecord]
    public init(record: RoomRecord, members: [MemberRecord], passcode: String?, bans: [BanRecord] = [],
                schedules: [Schedule] = [], apiTokens: [APITokenRecord] = []) {
        self.record = record
        self.members = members
        self.passcode = passcode
        self.bans = bans
        self.schedules = schedules
        self.apiTokens = apiTokens
    }
}
