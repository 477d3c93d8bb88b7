/// A room's webhooks and their outbox as the store keeps them (docs/PROTOCOL.md, "Webhooks"). Plain values:
/// what a webhook wants, what is waiting to be delivered, and how each attempt went.

/// What a room's webhook may ask to hear of.
public enum WebhookEventKind: String, Sendable, Equatable, CaseIterable, Comparable {
    case phaseStarted = "phase_started"
    case phaseCompleted = "phase_completed"
    case scheduleWarning = "schedule_warning"
    case scheduleEnded = "schedule_ended"
    case memberJoined = "member_joined"
    case memberLeft = "member_left"
    case taskChanged = "task_changed"
    /// Sent by the `test` action only; nobody subscribes to it.
    case test = "test"

    public static func < (a: Self, b: Self) -> Bool {
        allCases.firstIndex(of: a)! < allCases.firstIndex(of: b)!
    }
    /// The kinds a webhook may subscribe to.
    public static let subscribable: [WebhookEventKind] = allCases.filter { $0 != .test }
}

/// The shape of what a webhook is sent.
public enum WebhookFormat: String, Sendable, Equatable, CaseIterable {
    /// Our own payload, signed (`Pomodoro-Signature`).
    case json
    /// A Slack incoming webhook: `{"text": …, "blocks": […]}`.
    case slack
    /// A Discord webhook: `{"content": …}`.
    case discord
}

/// One webhook of a room.
public struct WebhookRecord: Equatable, Sendable {
    public var room: RoomID
    /// Numbered within the room, from 1, never reused while the room has webhooks.
    public var id: Int
    public var url: String
    public var events: [WebhookEventKind]
    public var format: WebhookFormat
    /// The language of its messages: "en", "ko", "zh-Hans" or "zh-Hant" (the page's and pomo's).
    public var language: String
    /// The HMAC key of the `json` format's signature: shown once when the webhook is added.
    public var secret: String
    /// Off when the host switched it off, or after a day of failures.
    public var enabled: Bool
    public var createdMs: Int64
    /// Why it was switched off by the server (nil: on, or switched off by the host).
    public var disabledReason: String?

    public init(room: RoomID, id: Int, url: String, events: [WebhookEventKind], format: WebhookFormat, secret: String,
                language: String = "en", enabled: Bool = true, createdMs: Int64, disabledReason: String? = nil) {
        self.room = room
        self.id = id
        self.url = url
        self.events = events
        self.format = format
        self.secret = secret
        self.language = language
        self.enabled = enabled
        self.createdMs = createdMs
        self.disabledReason = disabledReason
    }
}

/// Where an outbox row stands.
public enum DeliveryState: String, Sendable, Equatable {
    /// Waiting for its (next) attempt.
    case due
    /// The receiver answered 2xx.
    case delivered
    /// Failed for a whole day: given up, and the webhook switched off.
    case failed
}

/// One event for one webhook, rendered once when the change it reports is written (in the same
/// transaction), and delivered from the outbox until the receiver takes it.
public struct WebhookDelivery: Equatable, Sendable {
    public var room: RoomID
    public var webhook: Int
    /// Stable across retries, restarts and failovers: the receiver's key to drop duplicates.
    public var eventID: String
    public var kind: WebhookEventKind
    public var createdMs: Int64
    /// The bytes to send, as rendered for the webhook's format.
    public var body: String
    public var state: DeliveryState
    public var attempts: Int
    public var nextAttemptMs: Int64
    /// The last attempt: when, the HTTP status (nil: no answer), and what went wrong.
    public var lastAttemptMs: Int64?
    public var lastStatus: Int?
    public var lastError: String?
    /// The store's row number (0 until stored): the order of delivery within a webhook.
    public var seq: Int64

    public init(room: RoomID, webhook: Int, eventID: String, kind: WebhookEventKind, createdMs: Int64, body: String,
                state: DeliveryState = .due, attempts: Int = 0, nextAttemptMs: Int64? = nil, lastAttemptMs: Int64? = nil,
                lastStatus: Int? = nil, lastError: String? = nil, seq: Int64 = 0) {
        self.room = room
        self.webhook = webhook
        self.eventID = eventID
        self.kind = kind
        self.createdMs = createdMs
        self.body = body
        self.state = state
        self.attempts = attempts
        self.nextAttemptMs = nextAttemptMs ?? createdMs
        self.lastAttemptMs = lastAttemptMs
        self.lastStatus = lastStatus
        self.lastError = lastError
        self.seq = seq
    }
}

/// How one attempt went, as written back to the outbox row `seq`.
public struct DeliveryAttempt: Equatable, Sendable {
    public var room: RoomID
    public var webhook: Int
    public var seq: Int64
    public var state: DeliveryState
    public var attempts: Int
    public var atMs: Int64
    public var nextAttemptMs: Int64
    public var status: Int?
    public var error: String?

    public init(room: RoomID, webhook: Int, seq: Int64, state: DeliveryState, attempts: Int, atMs: Int64,
                nextAttemptMs: Int64, status: Int?, error: String?) {
        self.room = room
        self.webhook = webhook
        self.seq = seq
        self.state = state
        self.attempts = attempts
        self.atMs = atMs
        self.nextAttemptMs = nextAttemptMs
        self.status = status
        self.error = error
    }
}

/// A change to a room's webhooks or their outbox (`StoreChange.webhook`).
public enum WebhookChange: Equatable, Sendable {
    /// Insert or replace the webhook's row.
    case save(WebhookRecord)
    /// Delete the webhook and its outbox.
    case remove(RoomID, Int)
    /// Queue deliveries (written with the change they report).
    case queue(RoomID, [WebhookDelivery])
    /// Record an attempt's result; a failed one switches the webhook off with `disable` as its reason.
    case attempted(DeliveryAttempt, disable: String?)

    public var room: RoomID {
        switch self {
        case .save(let record): record.room
        case .remove(let room, _): room
        case .queue(let room, _): room
        case .attempted(let attempt, _): attempt.room
        }
    }
}
