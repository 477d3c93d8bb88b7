import PomodoroCore

/// Protocol version spoken by this build; see docs/PROTOCOL.md.
public let protocolVersion = 1

/// A request's correlation id, echoed in its reply or error: a string (at most 64 bytes) or an integer.
public enum Ref: Equatable, Hashable, Sendable {
    case string(String)
    case number(Int64)
}

// MARK: Client to server

/// What a client may ask of the server.
public enum ClientMessage: Equatable, Sendable {
    /// Enter a room (creating it when new). `token` asks for an earlier place back. `passcode` opens a
    /// locked room, or locks the room it creates; `control` sets a new room's control mode. `tz` (an IANA
    /// zone name) is the day boundary for this connection's later `stats` requests.
    case join(room: String, name: String, token: String?, passcode: String? = nil, control: ControlMode? = nil,
              tz: String? = nil)
    case start, pause, resume, skip, reset
    /// Move the end of the current phase by `seconds` (negative shortens).
    case extend(seconds: Int)
    case configure(RoomSettings)
    /// Set what I am working on ("" clears it).
    case task(text: String)
    /// Mark myself away (true) or back (false).
    case presence(away: Bool)
    case leave
    case ping
    /// Host only: who may press the controls.
    case control(mode: ControlMode)
    /// Host only: hand the host role to another member.
    case handOff(member: String)
    /// Host only: lock the room with a new passcode, or (nil) unlock it.
    case passcode(String?)
    /// Host only: remove a member, who may not join again for a while.
    case kick(member: String)
    /// Ask for a room's stats report, joined or not (nobody in the room sees it). `room` defaults to the
    /// room joined, `days` to 14, `tz` to the one given on `join`, else UTC; `passcode` opens a locked room
    /// not joined. The server checks the bounds.
    case stats(room: String?, days: Int?, tz: String?, passcode: String?)
    /// Watch a room without joining it: its snapshot, ticks, states and events, as a member gets them, but
    /// no place in it. The room must be open already; a locked one needs its `passcode` or a member's `token`.
    case observe(room: String, token: String? = nil, passcode: String? = nil)
    /// List, add, change, switch or delete the room's schedules (`SchedulePayloads.swift`).
    case schedule(ScheduleRequest)
    /// List, make or revoke the room's API tokens (`WireCodec+APITokens.swift`).
    case apiToken(APITokenRequest)
    /// The room's webhooks (docs/PROTOCOL.md, "Webhooks").
    case webhook(WebhookRequest)

    /// The `type` field on the wire.
    public var type: String {
        switch self {
        case .join: "join"
        case .start: "start"
        case .pause: "pause"
        case .resume: "resume"
        case .skip: "skip"
        case .reset: "reset"
        case .extend: "extend"
        case .configure: "configure"
        case .task: "task"
        case .presence: "presence"
        case .leave: "leave"
        case .ping: "ping"
        case .control: "control"
        case .handOff: "handOff"
        case .passcode: "passcode"
        case .kick: "kick"
        case .stats: "stats"
        case .observe: "observe"
        case .schedule(let request): request.type
        case .apiToken: "apiToken"
        case .webhook(let request): request.type
        }
    }
}

/// One client frame: a message and its optional ref.
public struct ClientFrame: Equatable, Sendable {
    public var message: ClientMessage
    public var ref: Ref?
    public init(_ message: ClientMessage, ref: Ref? = nil) {
        self.message = message
        self.ref = ref
    }
}

// MARK: Server to client

/// Stable error codes: clients may switch on these; the message text is for people and may change.
public enum ErrorCode: String, Sendable, Equatable, CaseIterable {
    /// The frame is not valid JSON, or not a JSON object, or nests too deeply.
    case badJSON = "bad_json"
    /// A field is missing, of the wrong type, or out of bounds (see `field`).
    case badRequest = "bad_request"
    /// The `type` is not one this server knows.
    case unknownType = "unknown_type"
    /// A room command came before `join`.
    case notJoined = "not_joined"
    /// `join` on a connection that is already in a room (send `leave` first).
    case alreadyJoined = "already_joined"
    /// The frame is larger than the server accepts.
    case tooLarge = "too_large"
    /// A binary frame: this protocol speaks JSON text frames only.
    case binaryUnsupported = "binary_unsupported"
    /// The command makes no sense in the timer's current state.
    case invalidState = "invalid_state"
    /// The room has no place for another member.
    case roomFull = "room_full"
    /// Another connection joined with this member's resume token; this one is closed.
    case replaced = "replaced"
    /// The server is shutting down.
    case shuttingDown = "shutting_down"
    /// Too many messages; slow down.
    case rateLimited = "rate_limited"
    /// No room can be created now: the server holds its maximum, or this address created too many lately.
    case roomLimit = "room_limit"
    /// In a room in `host` control mode, only the host may press the controls.
    case forbidden = "forbidden"
    /// The room is locked and the passcode is missing or wrong.
    case badPasscode = "bad_passcode"
    /// The host removed this member from the room: sent to their connection, which is then closed (4002).
    case removed = "removed"
    /// The host removed this member lately: they may not join the room again until their ban ends.
    case banned = "banned"
    /// The server could not read its store just now; try again later.
    case unavailable = "unavailable"
    /// The server cannot save changes just now (its database is unreachable); nothing changed.
    case storeUnavailable = "store_unavailable"
    /// No such path (HTTP), a room name that cannot be one, or (`observe`) no open room of that name.
    case notFound = "not_found"
    /// The connection observes a room: it may not press the controls, set a task or presence (`join` to).
    case observer = "observer"
    /// The room has as many webhooks as it may (`--webhooks-per-room`).
    case webhookLimit = "webhook_limit"
    /// Something went wrong on the server; the request was not carried out.
    case internalError = "internal"
}

/// A member as sent on the wire.
public struct MemberPayload: Equatable, Sendable {
    public var id: String
    public var name: String
    public var present: Bool
    public var connected: Bool
    public var task: String
    public var stats: StatsPayload
    public init(id: String, name: String, present: Bool, connected: Bool, task: String, stats: StatsPayload) {
        self.id = id
        self.name = name
        self.present = present
        self.connected = connected
        self.task = task
        self.stats = stats
    }
}

/// Counters as sent on the wire (member and room alike).
public struct StatsPayload: Equatable, Sendable {
    /// Completed focus sessions: `FocusStats.focusSessions`, under the name the wire has always given it
    /// (the `stats` reports call the same count `focusSessions`).
    public var focusCompleted: Int
    public var focusSeconds: Int64
    public var interruptions: Int
    public init(focusCompleted: Int, focusSeconds: Int64, interruptions: Int) {
        self.focusCompleted = focusCompleted
        self.focusSeconds = focusSeconds
        self.interruptions = interruptions
    }
}

/// A room's state as sent on the wire, in `welcome` and `state`.
public struct SnapshotPayload: Equatable, Sendable {
    public var room: String
    public var phase: Phase
    public var status: TimerStatus
    public var running: Bool
    public var remainingMs: Int64
    /// The current phase's full length including extensions (0 when idle).
    public var phaseLengthMs: Int64
    /// Wall-clock end of the running phase, epoch milliseconds; nil unless running.
    public var endsAt: Int64?
    public var cycle: Int
    public var settings: RoomSettings
    public var pendingSettings: RoomSettings?
    /// The first members in join order; a big room lists only some (`membersTruncated`).
    public var members: [MemberPayload]
    /// Every member of the room, listed or not.
    public var memberCount: Int
    /// Members present (connected and not away), listed or not.
    public var presentCount: Int
    /// Whether `members` leaves some out.
    public var membersTruncated: Bool
    public var stats: StatsPayload
    public var seq: UInt64
    public var serverTime: Int64
    /// Who may press the controls, and who hosts (nil when nobody does).
    public var control: ControlMode
    public var host: String?
    /// Whether joining needs a passcode.
    public var locked: Bool
    /// The room's next scheduled start; nil (and left out on the wire) when none is coming.
    public var nextSession: NextSessionPayload?
    /// The scheduled session under way; nil (and left out on the wire) when the room runs on its own.
    public var scheduledRun: ScheduledRunPayload?

    public init(room: String, phase: Phase, status: TimerStatus, running: Bool, remainingMs: Int64,
                phaseLengthMs: Int64, endsAt: Int64?, cycle: Int, settings: RoomSettings,
                pendingSettings: RoomSettings?, members: [MemberPayload], memberCount: Int? = nil,
                presentCount: Int? = nil, membersTruncated: Bool? = nil, stats: StatsPayload, seq: UInt64,
                serverTime: Int64, control: ControlMode = .anyone, host: String? = nil, locked: Bool = false,
                nextSession: NextSessionPayload? = nil, scheduledRun: ScheduledRunPayload? = nil) {
        self.scheduledRun = scheduledRun
        // Left out, the counts are those of the list, which is then the whole room.
        let memberCount = memberCount ?? members.count
        self.memberCount = memberCount
        self.presentCount = presentCount ?? members.lazy.filter(\.present).count
        self.membersTruncated = membersTruncated ?? (memberCount > members.count)
        self.control = control
        self.host = host
        self.locked = locked
        self.nextSession = nextSession
        self.room = room
        self.phase = phase
        self.status = status
        self.running = running
        self.remainingMs = remainingMs
        self.phaseLengthMs = phaseLengthMs
        self.endsAt = endsAt
        self.cycle = cycle
        self.settings = settings
        self.pendingSettings = pendingSettings
        self.members = members
        self.stats = stats
        self.seq = seq
        self.serverTime = serverTime
    }
}

/// A tick as sent on the wire.
public struct TickPayload: Equatable, Sendable {
    public var room: String
    public var phase: Phase
    /// The whole-second boundary this tick marks, in milliseconds.
    public var remainingMs: Int64
    public var endsAt: Int64
    public var cycle: Int
    public var seq: UInt64
    public var serverTime: Int64
    public init(room: String, phase: Phase, remainingMs: Int64, endsAt: Int64, cycle: Int, seq: UInt64,
                serverTime: Int64) {
        self.room = room
        self.phase = phase
        self.remainingMs = remainingMs
        self.endsAt = endsAt
        self.cycle = cycle
        self.seq = seq
        self.serverTime = serverTime
    }
}

/// An event as sent on the wire: `{type: "event", room, kind, ...}`.
public enum EventPayload: Equatable, Sendable {
    case phaseCompleted(completed: Phase, next: Phase, autoStarted: Bool, cycle: Int)
    case memberJoined(member: String, name: String)
    case memberReturned(member: String)
    /// `connection`: how the connection of a member who is `.disconnected` ended (closed by their client, or
    /// lost); nil when the server does not say (an older server).
    case memberAway(member: String, reason: AwayReason, connection: ConnectionEnd? = nil)
    case memberBack(member: String)
    case memberLeft(member: String, reason: LeaveReason)
    case control(action: ControlAction, by: String, seconds: Int?)
    case hostChanged(member: String?)
    case controlModeChanged(mode: ControlMode, by: String)
    /// A schedule warned, started, was missed or ended.
    case schedule(ScheduleEventPayload)
    case lockChanged(locked: Bool, by: String)
    /// A webhook failed for a day and the server switched it off.
    case webhookDisabled(webhook: Int, reason: String)

    public var kind: String {
        switch self {
        case .phaseCompleted: "phaseCompleted"
        case .memberJoined: "memberJoined"
        case .memberReturned: "memberReturned"
        case .memberAway: "memberAway"
        case .memberBack: "memberBack"
        case .memberLeft: "memberLeft"
        case .control: "control"
        case .hostChanged: "hostChanged"
        case .controlModeChanged: "controlModeChanged"
        case .schedule(let event): event.kind
        case .lockChanged: "lockChanged"
        case .webhookDisabled: "webhookDisabled"
        }
    }
}

/// The identity `welcome` hands to the member who joined. The token is for this member alone.
public struct YouPayload: Equatable, Sendable {
    public var id: String
    public var token: String
    public var resumed: Bool
    public init(id: String, token: String, resumed: Bool) {
        self.id = id
        self.token = token
        self.resumed = resumed
    }
}

/// The server's bounds that a client checks before sending, sent in `welcome` so that clients need no copy
/// of their own. Lengths are in characters, times in seconds.
public struct LimitsPayload: Equatable, Sendable {
    public var maxNameLength: Int
    public var maxTaskLength: Int
    public var minPasscodeLength: Int
    public var maxPasscodeLength: Int
    /// How far one `extend` may move the end, either way.
    public var maxExtendSeconds: Int
    /// The longest a phase can be made by extending it.
    public var maxPhaseSeconds: Int
    /// The shortest `focus` that `configure` accepts.
    public var minFocusSeconds: Int
    /// The longest `focus`, `shortBreak` or `longBreak` that `configure` accepts (the shortest break is 1).
    public var maxSettingSeconds: Int
    /// The largest `longBreakEvery` (the smallest is 1).
    public var maxLongBreakEvery: Int

    public init(maxNameLength: Int, maxTaskLength: Int, minPasscodeLength: Int, maxPasscodeLength: Int,
                maxExtendSeconds: Int, maxPhaseSeconds: Int, minFocusSeconds: Int, maxSettingSeconds: Int,
                maxLongBreakEvery: Int) {
        self.maxNameLength = maxNameLength
        self.maxTaskLength = maxTaskLength
        self.minPasscodeLength = minPasscodeLength
        self.maxPasscodeLength = maxPasscodeLength
        self.maxExtendSeconds = maxExtendSeconds
        self.maxPhaseSeconds = maxPhaseSeconds
        self.minFocusSeconds = minFocusSeconds
        self.maxSettingSeconds = maxSettingSeconds
        self.maxLongBreakEvery = maxLongBreakEvery
    }
}

/// What the server may send.
public enum ServerMessage: Equatable, Sendable {
    /// The reply to `join`: who I am, the room, and the bounds the server checks.
    case welcome(you: YouPayload, room: SnapshotPayload, serverTime: Int64, limits: LimitsPayload, ref: Ref?)
    case state(SnapshotPayload)
    case tick(TickPayload)
    case event(room: String, EventPayload, serverTime: Int64)
    /// A command was carried out. `command` is its type; `appliesFrom` is set for `configure`.
    case ok(command: String, appliesFrom: AppliesFrom?, ref: Ref?)
    /// A refusal. `retryAfter` (seconds) is set on `removed` and `banned`: how long until the member may join
    /// the room again.
    case error(code: ErrorCode, message: String, field: String?, ref: Ref?, retryAfter: Int? = nil)
    case pong(serverTime: Int64, ref: Ref?)
    /// The reply to a `stats` request.
    case stats(StatsReportPayload, ref: Ref?)
    /// The reply to `observe`: the room as it is now; its ticks, states and events follow.
    case observing(room: SnapshotPayload, serverTime: Int64, ref: Ref?)
    /// The room's schedules: the reply to `schedules`, and to every member after a change.
    case schedules(SchedulesPayload, ref: Ref?)
    /// The room's API tokens: the reply to `apiToken` (with the new token once, to its maker only).
    case apiTokens(APITokensPayload, ref: Ref?)
    case webhooks(WebhooksPayload, ref: Ref?)
    /// Your own member object, to you alone, when the room's `members` leaves you out (a big room): after
    /// your `welcome`, your `task` or `presence`, and a focus that ended while you were present.
    case you(room: String, member: MemberPayload)

    public var type: String {
        switch self {
        case .welcome: "welcome"
        case .state: "state"
        case .tick: "tick"
        case .event: "event"
        case .ok: "ok"
        case .error: "error"
        case .pong: "pong"
        case .stats: "stats"
        case .observing: "observing"
        case .schedules: "schedules"
        case .apiTokens: "apiTokens"
        case .webhooks: "webhooks"
        case .you: "you"
        }
    }
}
