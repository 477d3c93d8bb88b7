import PomodoroProtocol

extension ServerMessage {
    /// A short label for assertions on order: `welcome`, `ok task`, `error room_limit`, `state`, `tick`,
    /// `event memberJoined`, `pong`, `stats`.
    package var label: String {
        switch self {
        case .welcome: "welcome"
        case .state: "state"
        case .tick: "tick"
        case .event(_, let event, _): "event \(event.kind)"
        case .ok(let command, _, _): "ok \(command)"
        case .error(let code, _, _, _, _): "error \(code.rawValue)"
        case .pong: "pong"
        case .stats: "stats"
        case .observing: "observing"
        case .schedules: "schedules"
        case .apiTokens: "apiTokens"
        case .webhooks: "webhooks"
        case .you: "you"
        }
    }

    /// The room a `welcome` or `state` shows.
    package var snapshot: SnapshotPayload? {
        switch self {
        case .welcome(_, let room, _, _, _), .state(let room), .observing(let room, _, _): room
        default: nil
        }
    }

    /// Who a `welcome` says the joiner is.
    package var you: YouPayload? {
        if case .welcome(let you, _, _, _, _) = self { you } else { nil }
    }

    /// The member a `you` tells its recipient they are.
    package var yourself: MemberPayload? {
        if case .you(_, let member) = self { member } else { nil }
    }

    package var tick: TickPayload? {
        if case .tick(let tick) = self { tick } else { nil }
    }

    /// An `error`'s code and message.
    package var failure: (code: ErrorCode, message: String)? {
        if case .error(let code, let message, _, _, _) = self { (code, message) } else { nil }
    }
}
