import PomodoroCore

// A room's webhooks on the wire (docs/PROTOCOL.md, "Webhooks"): the requests, the `webhooks` list, encoded
// and decoded side by side.

/// What a member asks of the room's webhooks. Anyone in the room may; in a host-only room, the host.
public enum WebhookRequest: Equatable, Sendable {
    case list
    case add(WebhookFields)
    /// Fields left nil stay as they are.
    case change(id: Int, WebhookFields)
    /// Sends a `test` event to the webhook now, through the outbox like any other.
    case test(id: Int)
    case delete(id: Int)

    public var type: String {
        switch self {
        case .list: "webhooks"
        case .add: "addWebhook"
        case .change: "changeWebhook"
        case .test: "testWebhook"
        case .delete: "deleteWebhook"
        }
    }
}

/// A webhook's fields in a request: `add` needs `url` and `events`; `change` takes any of them.
public struct WebhookFields: Equatable, Sendable {
    public var url: String?
    public var events: [String]?
    public var format: String?
    public var language: String?
    public var enabled: Bool?
    public init(url: String? = nil, events: [String]? = nil, format: String? = nil, language: String? = nil,
                enabled: Bool? = nil) {
        self.url = url
        self.events = events
        self.format = format
        self.language = language
        self.enabled = enabled
    }
}

/// One delivery as the host sees it.
public struct WebhookDeliveryPayload: Equatable, Sendable {
    public var eventID: String
    public var event: String
    /// "due", "delivered" or "failed".
    public var state: String
    public var attempts: Int
    public var status: Int?
    public var error: String?
    public var createdAt: Int64
    public var lastAttemptAt: Int64?
    public var nextAttemptAt: Int64?
    public init(eventID: String, event: String, state: String, attempts: Int, status: Int?, error: String?,
                createdAt: Int64, lastAttemptAt: Int64?, nextAttemptAt: Int64?) {
        self.eventID = eventID
        self.event = event
        self.state = state
        self.attempts = attempts
        self.status = status
        self.error = error
        self.createdAt = createdAt
        self.lastAttemptAt = lastAttemptAt
        self.nextAttemptAt = nextAttemptAt
    }
}

public struct WebhookPayload: Equatable, Sendable {
    public var id: Int
    public var url: String
    public var events: [String]
    public var format: String
    public var language: String
    public var enabled: Bool
    public var disabledReason: String?
    public var createdAt: Int64
    /// The last deliveries, newest first.
    public var deliveries: [WebhookDeliveryPayload]
    public init(id: Int, url: String, events: [String], format: String, language: String, enabled: Bool,
                disabledReason: String?, createdAt: Int64, deliveries: [WebhookDeliveryPayload]) {
        self.id = id
        self.url = url
        self.events = events
        self.format = format
        self.language = language
        self.enabled = enabled
        self.disabledReason = disabledReason
        self.createdAt = createdAt
        self.deliveries = deliveries
    }
}

/// The `webhooks` reply: the room's webhooks; after an `addWebhook`, the new one's id and its secret, shown
/// this once.
public struct WebhooksPayload: Equatable, Sendable {
    public var room: String
    public var webhooks: [WebhookPayload]
    public var added: Int?
    public var secret: String?
    public init(room: String, webhooks: [WebhookPayload], added: Int? = nil, secret: String? = nil) {
        self.room = room
        self.webhooks = webhooks
        self.added = added
        self.secret = secret
    }
}

extension WireCodec {
    static func set(_ request: WebhookRequest, into object: JSONBuilder) {
        switch request {
        case .list: break
        case .add(let fields): set(fields, into: object)
        case let .change(id, fields):
            object.set("id", id)
            set(fields, into: object)
        case .test(let id), .delete(let id): object.set("id", id)
        }
    }

    private static func set(_ f: WebhookFields, into object: JSONBuilder) {
        if let url = f.url { object.set("url", url) }
        if let events = f.events { object.set("events", JSONBuilder.strings(events)) }
        if let format = f.format { object.set("format", format) }
        if let language = f.language { object.set("language", language) }
        if let enabled = f.enabled { object.set("enabled", enabled) }
    }

    static func set(_ payload: WebhooksPayload, into object: JSONBuilder) {
        object.set("room", payload.room)
        let array = JSONBuilder.array(capacity: payload.webhooks.count)
        for hook in payload.webhooks {
            let h = JSONBuilder.object()
            h.set("id", hook.id)
            h.set("url", hook.url)
            h.set("events", JSONBuilder.strings(hook.events))
            h.set("format", hook.format)
            h.set("language", hook.language)
            h.set("enabled", hook.enabled)
            h.set("disabledReason", hook.disabledReason.map(JSONBuilder.string))
            h.set("createdAt", hook.createdAt)
            let deliveries = JSONBuilder.array(capacity: hook.deliveries.count)
            for d in hook.deliveries {
                let o = JSONBuilder.object()
                o.set("eventId", d.eventID)
                o.set("event", d.event)
                o.set("state", d.state)
                o.set("attempts", d.attempts)
                o.set("status", d.status.map { JSONBuilder.integer(Int64($0)) })
                o.set("error", d.error.map(JSONBuilder.string))
                o.set("createdAt", d.createdAt)
                o.set("lastAttemptAt", d.lastAttemptAt.map(JSONBuilder.integer))
                o.set("nextAttemptAt", d.nextAttemptAt.map(JSONBuilder.integer))
                deliveries.append(o)
            }
            h.set("deliveries", deliveries)
            array.append(h)
        }
        object.set("webhooks", array)
        if let added = payload.added { object.set("added", added) }
        if let secret = payload.secret { object.set("secret", secret) }
    }
}

extension FieldReader {
    /// The webhook request of a frame of type `type`, or nil for a type that is not one.
    func webhookRequest(type: String) throws(ProtocolError) -> WebhookRequest? {
        switch type {
        case "webhooks": return .list
        case "addWebhook":
            let fields = try webhookFields()
            guard fields.url != nil else { throw failure("url", "'url' is required") }
            guard fields.events != nil else { throw failure("events", "'events' is required") }
            return .add(fields)
        case "changeWebhook": return .change(id: try int("id"), try webhookFields())
        case "testWebhook": return .test(id: try int("id"))
        case "deleteWebhook": return .delete(id: try int("id"))
        default: return nil
        }
    }

    func webhookFields() throws(ProtocolError) -> WebhookFields {
        var events: [String]?
        if let value = optionalValue("events") {
            guard value.kind == .array else { throw failure("events", "'events' must be an array of strings") }
            events = []
            for element in value.elements {
                guard let event = element.string else { throw failure("events", "'events' must be an array of strings") }
                events?.append(event)
            }
        }
        return WebhookFields(url: try optionalString("url"), events: events, format: try optionalString("format"),
                             language: try optionalString("language"), enabled: try optionalBool("enabled"))
    }

    func webhooks() throws(ProtocolError) -> WebhooksPayload {
        var hooks: [WebhookPayload] = []
        for h in try objects("webhooks") {
            var deliveries: [WebhookDeliveryPayload] = []
            for d in try h.objects("deliveries") {
                deliveries.append(WebhookDeliveryPayload(
                    eventID: try d.string("eventId"), event: try d.string("event"), state: try d.string("state"),
                    attempts: try d.int("attempts"), status: try d.optionalInt("status"), error: try d.optionalString("error"),
                    createdAt: try d.int64("createdAt"), lastAttemptAt: try d.optionalInt64("lastAttemptAt"),
                    nextAttemptAt: try d.optionalInt64("nextAttemptAt")))
            }
            let fields = try h.webhookFields()
            hooks.append(WebhookPayload(id: try h.int("id"), url: try h.string("url"), events: fields.events ?? [],
                                        format: try h.string("format"), language: try h.string("language"),
                                        enabled: try h.bool("enabled"), disabledReason: try h.optionalString("disabledReason"),
                                        createdAt: try h.int64("createdAt"), deliveries: deliveries))
        }
        return WebhooksPayload(room: try string("room"), webhooks: hooks, added: try optionalInt("added"),
                               secret: try optionalString("secret"))
    }
}
