import PomodoroCore

/// Something a room's webhooks may hear of, with what its messages say.
struct WebhookEvent: Equatable, Sendable {
    var kind: WebhookEventKind
    /// "evt_" and 32 hex digits, made once: every webhook of the room gets the event under the same id.
    var id: String
    var atMs: Int64
    var phase: Phase?
    var minutes: Int?
    /// A completed phase's length as it ran, in whole seconds (`minutes` is it rounded).
    var seconds: Int?
    /// Who is present (a phase that started), in join order.
    var names: [String] = []
    /// The member who joined, left or changed their task.
    var member: String?
    var task: String?
    /// The schedule (a warning, a set that ended) and how many focus sessions it did.
    var schedule: String?
    var focusSessions: Int?
}

extension WebhookEvent {
    /// A phase's length in the messages' minutes: to the nearest minute (a 25-minute focus extended by 40
    /// seconds is still "25-minute").
    static func minutes(ms: Int64) -> Int { Int((ms + 30_000) / 60_000) }
}

/// The bodies a webhook is sent, in its format and language (docs/PROTOCOL.md, "Webhooks").
enum WebhookBodies {
    /// What a delivery is sent, rendered when it is queued: the `json` body carries the room's snapshot then.
    static func body(_ event: WebhookEvent, room: RoomID, format: WebhookFormat, language: String,
                     snapshotJSON: [UInt8]?, maxBytes: Int) -> String {
        let text = WebhookTexts.text(event, room: room, language: language)
        switch format {
        case .json:
            var data: [(String, JSONValue)] = []
            if let phase = event.phase { data.append(("phase", .string(phase.rawValue))) }
            if let minutes = event.minutes { data.append(("minutes", .int(Int64(minutes)))) }
            if let seconds = event.seconds { data.append(("seconds", .int(Int64(seconds)))) }
            if event.kind == .phaseStarted { data.append(("members", .array(event.names.map { .string($0) }))) }
            if let member = event.member { data.append(("member", .string(member))) }
            if event.kind == .taskChanged { data.append(("task", .string(event.task ?? ""))) }
            if let schedule = event.schedule { data.append(("schedule", .string(schedule))) }
            if let n = event.focusSessions { data.append(("focusSessions", .int(Int64(n)))) }
            var fields: [(String, JSONValue)] = [
                ("id", .string(event.id)), ("type", .string(event.kind.rawValue)), ("room", .string(room.rawValue)),
                ("createdAt", .int(event.atMs)), ("text", .string(text)), ("data", .object(data)),
            ]
            let head = JSONValue.object(fields).encoded
            if let snapshotJSON, head.utf8.count + snapshotJSON.count + 16 <= maxBytes {
                fields.append(("snapshot", .raw(String(decoding: snapshotJSON, as: UTF8.self))))
                return JSONValue.object(fields).encoded
            }
            // Too large with the room's snapshot (a crowd's member list): sent without it, saying so.
            fields.append(("snapshotOmitted", .bool(snapshotJSON != nil)))
            return JSONValue.object(fields).encoded
        case .slack:
            // Slack reads &, < and > in text as its own markup: escaped, so a task cannot ping a channel.
            let escaped = text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
                .replacingOccurrences(of: ">", with: "&gt;")
            let clipped = clip(escaped, to: min(3000, maxBytes / 3))
            return JSONValue.object([
                ("text", .string(clipped)),
                ("blocks", .array([.object([("type", .string("section")),
                                            ("text", .object([("type", .string("mrkdwn")), ("text", .string(clipped))]))])])),
            ]).encoded
        case .discord:
            // No mention in a message is acted on (a task reading "@everyone" pings nobody).
            return JSONValue.object([
                ("content", .string(clip(text, to: min(2000, maxBytes / 2)))),
                ("allowed_mentions", .object([("parse", .array([]))])),
            ]).encoded
        }
    }

    /// At most `limit` characters, with an ellipsis when cut.
    static func clip(_ text: String, to limit: Int) -> String {
        text.count <= limit ? text : String(text.prefix(max(0, limit - 1))) + "…"
    }
}

/// Just enough JSON for the webhook bodies, written in one place: objects keep their fields' order.
indirect enum JSONValue {
    case string(String)
    case int(Int64)
    case bool(Bool)
    case array([JSONValue])
    case object([(String, JSONValue)])
    /// Already JSON (the room's snapshot from the wire codec).
    case raw(String)

    var encoded: String {
        switch self {
        case .string(let s): Self.quoted(s)
        case .int(let n): String(n)
        case .bool(let b): b ? "true" : "false"
        case .array(let items): "[" + items.map(\.encoded).joined(separator: ",") + "]"
        case .object(let fields): "{" + fields.map { Self.quoted($0.0) + ":" + $0.1.encoded }.joined(separator: ",") + "}"
        case .raw(let json): json
        }
    }

    static func quoted(_ s: String) -> String {
        var out = "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20 || scalar.value == 0x2028 || scalar.value == 0x2029:
                out += "\\u" + String(repeating: "0", count: 4 - String(scalar.value, radix: 16).count)
                    + String(scalar.value, radix: 16)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}
