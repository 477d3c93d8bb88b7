import PomodoroCore

// The fields of each event kind (docs/PROTOCOL.md §5, `event`).

extension WireCodec {
    static func set(_ event: EventPayload, into object: JSONBuilder) {
        switch event {
        case let .phaseCompleted(completed, next, autoStarted, cycle):
            object.set("completed", completed.rawValue)
            object.set("next", next.rawValue)
            object.set("autoStarted", autoStarted)
            object.set("cycle", cycle)
        case let .memberJoined(member, name):
            object.set("member", member)
            object.set("name", name)
        case let .memberReturned(member), let .memberBack(member):
            object.set("member", member)
        case let .memberAway(member, reason, connection):
            object.set("member", member)
            object.set("reason", reason.rawValue)
            if let connection { object.set("connection", connection.rawValue) }
        case let .memberLeft(member, reason):
            object.set("member", member)
            object.set("reason", reason.rawValue)
        case let .control(action, by, seconds):
            object.set("action", action.rawValue)
            object.set("by", by)
            if let seconds { object.set("seconds", seconds) }
        case let .hostChanged(member):
            object.set("member", member.map(JSONBuilder.string))  // null when nobody is left to host
        case let .controlModeChanged(mode, by):
            object.set("mode", mode.rawValue)
            object.set("by", by)
        case let .schedule(event):
            set(event, into: object)
        case let .lockChanged(locked, by):
            object.set("locked", locked)
            object.set("by", by)
        case let .webhookDisabled(webhook, reason):
            object.set("webhook", webhook)
            object.set("reason", reason)
        }
    }
}

extension FieldReader {
    func event() throws(ProtocolError) -> EventPayload {
        switch try string("kind") {
        case "phaseCompleted":
            return .phaseCompleted(completed: try enumeration("completed"), next: try enumeration("next"),
                                   autoStarted: try bool("autoStarted"), cycle: try int("cycle"))
        case "memberJoined": return .memberJoined(member: try string("member"), name: try string("name"))
        case "memberReturned": return .memberReturned(member: try string("member"))
        case "memberAway":
            // A `connection` this client does not know (a later server's) says no more than none.
            return .memberAway(member: try string("member"), reason: try enumeration("reason"),
                               connection: try optionalString("connection").flatMap(ConnectionEnd.init(rawValue:)))
        case "memberBack": return .memberBack(member: try string("member"))
        case "memberLeft": return .memberLeft(member: try string("member"), reason: try enumeration("reason"))
        case "control":
            let seconds: Int? = optionalValue("seconds") == nil ? nil : try int("seconds")
            return .control(action: try enumeration("action"), by: try string("by"), seconds: seconds)
        case "hostChanged": return .hostChanged(member: try optionalString("member"))
        case "controlModeChanged": return .controlModeChanged(mode: try enumeration("mode"), by: try string("by"))
        case "lockChanged": return .lockChanged(locked: try bool("locked"), by: try string("by"))
        case "webhookDisabled": return .webhookDisabled(webhook: try int("webhook"), reason: try string("reason"))
        case let other:
            guard let event = try scheduleEvent(kind: other) else {
                throw ProtocolError(.unknownType, "unknown event kind", field: name("kind"), ref: ref)
            }
            return .schedule(event)
        }
    }
}
