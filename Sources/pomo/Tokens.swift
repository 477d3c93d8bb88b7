import ArgumentParser
import Foundation
import PomodoroClient
import PomodoroProtocol

/// `pomo token ROOM`: the room's API tokens for the control API (docs/PROTOCOL.md §16), listed, made or revoked
/// as anyone who may press the controls may (in a host-only room, only the host), the way the control commands
/// press (`Press.asMember`): as the member `pomo join` keeps while it is connected, else in a short visit, and
/// only in a room that is open (a typo makes no room).
struct Tokens: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "token",
        abstract: "List, make (--create NAME) or revoke (--revoke ID) the room's API tokens for the control API.",
        discussion: """
            A token lets another system press the room's controls over HTTP:
              curl -X POST http://HOST:PORT/api/rooms/ROOM/commands -H "Authorization: Bearer TOKEN" -d '{"type":"start"}'
            The token is shown once, by --create; the server keeps its SHA-256 only. With -q, --create prints the \
            token alone: TOKEN=$(pomo token team-alpha --create ci -q).
            """)

    @OptionGroup var options: Control.Options

    @Option(help: ArgumentHelp("Make a token with this name (1–40 characters) and print it, once.", valueName: "name"))
    var create: String?

    @Option(help: ArgumentHelp("Revoke the token with this id (t1, t2, … as listed).", valueName: "id"))
    var revoke: String?

    func validate() throws {
        if create != nil && revoke != nil { throw ValidationError("give --create or --revoke, not both") }
    }

    func run() async throws {
        let request: APITokenRequest = if let create { .create(name: create) }
            else if let revoke { .revoke(id: revoke) } else { .list }
        let room = options.room, quiet = options.quiet
        try await Press.asMember(room: room, options: options.visit, quiet: quiet) { Self.steps(request, room: room, quiet: quiet) }
    }

    /// Asks once the room is seen (a watch's `observing`, a visit's `welcome`), prints the answer and ends.
    static func steps(_ request: APITokenRequest, room: String, quiet: Bool) -> (SessionEvent, RoomView) -> Visit.Step {
        var asked = false
        return { event, _ in
            guard case let .message(reply, _, _) = event else { return .wait }
            switch reply {
            case .welcome, .observing:
                guard !asked else { return .wait }
                asked = true
                return .send(.apiToken(request), ref: .string("token"))
            case let .apiTokens(payload, ref?) where ref == .string("token"):
                for line in Self.lines(payload, request: request, quiet: quiet) { printLine(line) }
                return .finish(nil)
            case let .error(code, text, field, ref?, _) where ref == .string("token"):
                return .finish(fail("\(Self.refusedWhat(request, room: room)): \(Labels.refusal(text, field: field)) [\(code.rawValue)]",
                                    status: PomoExit.refused))
            default:
                return .wait
            }
        }
    }

    /// What could not be done, for the refusal's line.
    static func refusedWhat(_ request: APITokenRequest, room: String) -> String {
        switch request {
        case .list: "cannot list the API tokens of \(room)"
        case .create(let name): "cannot make the API token \(name) in \(room)"
        case .revoke(let id): "cannot revoke \(id) in \(room)"
        }
    }

    /// What is printed: the new token (alone with -q), then the list unless quiet.
    static func lines(_ payload: APITokensPayload, request: APITokenRequest, quiet: Bool) -> [String] {
        var lines: [String] = []
        if let created = payload.created {
            if quiet { return [created.token] }
            lines.append("\(created.id) \(created.token)")
            lines.append("(shown once: keep it now)")
        }
        if quiet { return lines }
        if payload.tokens.isEmpty { lines.append("\(payload.room): no API tokens") }
        for token in payload.tokens {
            let used = token.lastUsedAt.map { "last used \(Self.time($0))" } ?? "never used"
            lines.append("\(token.id)  \(token.name)  made \(Self.time(token.createdAt)), \(used)")
        }
        return lines
    }

    static func time(_ epochMs: Int64) -> String {
        let formatter = DateFormatter()
        formatter.dateFormat = "yyyy-MM-dd HH:mm"
        return formatter.string(from: Date(timeIntervalSince1970: Double(epochMs) / 1000))
    }
}
