import ArgumentParser
import Foundation
import Glibc
import PomodoroClient
import PomodoroCore
import PomodoroProtocol

/// `--api-token` of the control commands: press over the HTTP control API instead.
struct APITokenOption: ParsableArguments {
    @Option(name: .customLong("api-token"), help: ArgumentHelp(
        "Press over the HTTP control API with this API token of the room (default: $POMO_API_TOKEN; see pomo token).",
        valueName: "token"))
    var apiToken: String?

    /// The token from the option, else from the environment.
    var effective: String? {
        apiToken ?? ProcessInfo.processInfo.environment["POMO_API_TOKEN"].flatMap { $0.isEmpty ? nil : $0 }
    }
}

/// A control command (start, pause, resume, skip, reset, extend, configure): what it sends, decided from the room
/// as it stands, and what it prints once done.
struct ControlRequest: Sendable {
    enum Messages: Sendable {
        /// One message, whatever the room; `check` judges it against the limits a join's welcome says.
        case fixed(ClientMessage, check: @Sendable (LimitsPayload) -> String?)
        /// Messages made from the room (its settings), sent in turn, each after the one before was carried
        /// out; limits only when a welcome said them (elsewhere the server judges alone).
        case fromRoom(@Sendable (SnapshotPayload, LimitsPayload?) -> Result<[ClientMessage], ValidationError>)
    }

    let room: String
    let messages: Messages
    /// Whether the room after the last message is what is printed (`summary`); false: `done` says it.
    var showsRoom = true
    /// The room as it must be before the summary is printed (a start: running).
    var settled: @Sendable (SnapshotPayload) -> Bool = { _ in true }
    /// The line printed on success when the room is not shown: from the last message and its `appliesFrom`.
    var done: @Sendable (ClientMessage, AppliesFrom?) -> String = { _, _ in "" }

    /// The messages for the room as it stands.
    func make(_ snapshot: SnapshotPayload?, limits: LimitsPayload?) -> Result<[ClientMessage], ValidationError> {
        switch messages {
        case let .fixed(message, check):
            if let limits, let reason = check(limits) { return .failure(ValidationError(reason)) }
            return .success([message])
        case .fromRoom(let make):
            guard let snapshot else { return .failure(ValidationError("the room could not be read")) }
            return make(snapshot, limits)
        }
    }

    /// Whether the messages are made from the room, which must then be read first.
    var needsRoom: Bool {
        if case .fromRoom = messages { return true }
        return false
    }

    /// The first words of a refusal of `message`.
    func refused(_ message: ClientMessage) -> String {
        if case .configure = message { return "the server refused the settings for \(room)" }
        return "the server refused to \(message.type) in \(room)"
    }
}

/// How a control command reaches its room. In this order:
/// 1. With an API token (`--api-token`, `$POMO_API_TOKEN`): over the HTTP control API, as the token.
/// 2. With the resume token `pomo join` keeps for the room, while that member is connected (a `pomo join` or
///    page is in the room as it): a watch that presses as that member. Nobody sees anyone come or go, the
///    running `pomo join` is not taken over, and the event names the member. The token kept for this server
///    address comes first; without one, those kept for the room under other addresses are tried in turn
///    (`StateFile.kept`, as the host's commands find theirs: another node of a cluster, its proxy, another
///    name of the server), since the server recognises only its own tokens.
/// 3. Otherwise a short visit as a member of its own (`--name`, pomo-cli), but only to a room that is open: a
///    room that is not (a typo, say) is refused with status 1, never made.
/// 2 and 3 watch the room first: that is also how a room that is not open is found without making it.
enum Press {
    static func run(_ request: ControlRequest, visit options: VisitOptions, api: APITokenOption, quiet: Bool) async throws {
        if let token = api.effective {
            return try await overAPI(request, token: token, address: try options.server.address(), options: options,
                                     quiet: quiet)
        }
        try await asMember(room: request.room, options: options, quiet: quiet) { steps(request, quiet: quiet) }
    }

    /// Steps 2 and 3 above, for any steps that start from the room's `observing` or `welcome` (made anew for
    /// each watch or visit).
    static func asMember(room: String, options: VisitOptions, quiet: Bool,
                         steps: () -> (SessionEvent, RoomView) -> Visit.Step) async throws {
        let address = try options.server.address()
        let found = StateFile.kept(environment: ProcessInfo.processInfo.environment, server: address, room: room)
        let own = found.here, kept = found.members
        for stored in kept.isEmpty ? [nil] : kept.map(Optional.some) {
            var speaking = true, carried = false
            let pressing = steps()
            try await Visit(room: room, options: options).run(observe: true, token: stored?.token) { event, view in
                guard case let .message(message, _, _) = event else {
                    if case .ended(.refused(.notFound, _, _)) = event {
                        return .finish(fail(notOpen(room, at: address), status: PomoExit.refused))
                    }
                    return pressing(event, view)
                }
                switch message {
                case .observing(let snapshot, _, _):
                    guard let stored, speaks(for: stored, in: snapshot) else {
                        speaking = false
                        return .finish(nil)
                    }
                case .ok:
                    carried = true
                case .error(.observer, _, _, _, _) where own == nil && !carried:
                    // Another server's token that this one does not know, though a member of the same id is
                    // here: nothing was pressed; try the next.
                    speaking = false
                    return .finish(nil)
                default:
                    break
                }
                return pressing(event, view)
            }
            if speaking { return }
        }
        if !quiet, !kept.isEmpty {
            let whom = own.map { "\($0.name) (\($0.member)), the member pomo join keeps in \(room), is not connected there" }
                ?? "no member pomo join keeps in \(room) under another address (\(kept.map(\.server).joined(separator: ", "))) "
                + "is connected there"
            RawTerminal.write("pomo: \(whom); pressing as a short visit of \(options.name)\n", to: STDERR_FILENO)
        }
        // The room was open a moment ago; a join now makes nothing new (a room leaves memory only after its
        // empty-room lifetime).
        try await Visit(room: room, options: options).run(steps())
    }

    /// Whether the stored member is one the watch presses as: listed and connected (a big room that does not
    /// list it: the server says when pressed).
    static func speaks(for stored: StateFile.Contents, in snapshot: SnapshotPayload) -> Bool {
        guard let member = snapshot.members.first(where: { $0.id == stored.member }) else {
            return snapshot.membersTruncated
        }
        return member.connected
    }

    static func notOpen(_ room: String, at address: ServerAddress) -> String {
        "no room named \(room) is open on \(address): nothing was pressed or made (check the name; pomo join \(room) opens it)"
    }

    /// The steps of a visit or a watch that sends the request's messages in turn, and ends once the last was
    /// carried out and the room shows it.
    static func steps(_ request: ControlRequest, quiet: Bool) -> (SessionEvent, RoomView) -> Visit.Step {
        var queue: [ClientMessage] = []
        var sent: ClientMessage?
        var appliesFrom: AppliesFrom?
        var replied = false
        var baseline: UInt64 = 0

        func next() -> Visit.Step {
            let message = queue.removeFirst()
            sent = message
            return .send(message, ref: .string("command"))
        }

        func first(_ made: Result<[ClientMessage], ValidationError>, _ snapshot: SnapshotPayload) -> Visit.Step {
            switch made {
            case .failure(let reason): return .finish(fail(reason.message, status: PomoExit.usage))
            case .success(let messages):
                queue = messages
                baseline = snapshot.seq
                return next()
            }
        }
        return { event, view in
            guard case let .message(reply, _, at) = event else { return .wait }
            switch reply {
            case .welcome(_, let snapshot, _, let limits, _) where sent == nil:
                return first(request.make(snapshot, limits: limits), snapshot)
            case .observing(let snapshot, _, _) where sent == nil:
                return first(request.make(snapshot, limits: nil), snapshot)
            case let .ok(_, applies, ref?) where ref == .string("command"):
                guard queue.isEmpty else {
                    baseline = view.seq
                    return next()
                }
                replied = true
                appliesFrom = applies
            case let .error(code, text, field, ref?, _) where ref == .string("command"):
                return .finish(fail("\(request.refused(sent ?? .ping)): \(Labels.refusal(text, field: field)) [\(code.rawValue)]",
                                    status: PomoExit.refused))
            default:
                break
            }
            guard replied, let sent else { return .wait }
            guard request.showsRoom else {
                if !quiet { printLine(request.done(sent, appliesFrom)) }
                return .finish(nil)
            }
            // Done once the reply and the state it caused are both in (their order is not fixed).
            if view.seq > baseline, let snapshot = view.snapshot, request.settled(snapshot) {
                if !quiet { printLine(Control.summary(view, at: at)) }
                return .finish(nil)
            }
            return .wait
        }
    }

    // MARK: The control API

    static func overAPI(_ request: ControlRequest, token: String, address: ServerAddress, options: VisitOptions,
                        quiet: Bool) async throws {
        let room = request.room
        let timeoutMs = Int(options.timeout * 1000)
        var snapshot: SnapshotPayload?
        if request.needsRoom {
            let answer = try await call(.snapshot(room: room, passcode: options.server.effectivePasscode, at: address),
                                        timeoutMs: timeoutMs, address: address)
            guard answer.status == 200, let read = try? WireCodec.decodeSnapshotBody(answer.body) else {
                let why = (try? WireCodec.decodeHTTPError(answer.body)).map { "\($0.message) [\($0.code.rawValue)]" }
                    ?? "HTTP \(answer.status)"
                throw fail("the control API changes settings from the room's own, which could not be read: \(why)"
                           + (answer.status == 401 ? " (a locked room: give --passcode)" : ""),
                           status: answer.status == 404 ? PomoExit.refused : exitStatus(answer.status))
            }
            snapshot = read
        }
        let messages: [ClientMessage]
        switch request.make(snapshot, limits: nil) {
        case .failure(let reason): throw fail(reason.message, status: PomoExit.usage)
        case .success(let made): messages = made
        }
        var appliesFrom: AppliesFrom?
        for message in messages {
            let answer = try await call(.command(ClientFrame(message), room: room, token: token, at: address),
                                        timeoutMs: timeoutMs, address: address)
            if answer.status == 200, case .ok(_, let applies, _)? = answer.message {
                appliesFrom = applies
                continue
            }
            let refusal: String
            if case let .error(code, text, field, _, _)? = answer.message {
                refusal = code == .notFound
                    ? "no room named \(room) on \(address): nothing was pressed or made (check the name)"
                    : "\(request.refused(message)): \(Labels.refusal(text, field: field)) [\(code.rawValue)]"
            } else {
                refusal = "\(request.refused(message)): HTTP \(answer.status) "
                    + String(decoding: answer.body.prefix(200), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            }
            throw fail(refusal + (answer.status == 401 ? " (the API token: --api-token or $POMO_API_TOKEN)" : ""),
                       status: exitStatus(answer.status))
        }
        guard !quiet, let last = messages.last else { return }
        guard request.showsRoom else { return printLine(request.done(last, appliesFrom)) }
        // The room after, when it can be read (an open room; a locked one with --passcode); else the press alone.
        let after = try? await call(.snapshot(room: room, passcode: options.server.effectivePasscode, at: address),
                                    timeoutMs: timeoutMs, address: address)
        if let after, after.status == 200, let room = try? WireCodec.decodeSnapshotBody(after.body) {
            var view = RoomView()
            view.apply(.state(room), receivedAt: LocalInstant.now())
            printLine(Control.summary(view, at: LocalInstant.now()))
        } else {
            printLine("\(room): \(last.type) carried out over the control API")
        }
    }

    /// The exit status for a control API answer that is not a success.
    static func exitStatus(_ status: Int) -> Int32 {
        switch status {
        case 400, 413: PomoExit.usage
        case 500...: PomoExit.unavailable
        default: PomoExit.refused
        }
    }

    private static func call(_ call: ControlAPICall, timeoutMs: Int, address: ServerAddress) async throws -> ControlAPICall.Answer {
        let result = await Task.detached { () -> Result<ControlAPICall.Answer, ControlAPICall.Failure> in
            do throws(ControlAPICall.Failure) { return .success(try call.send(timeoutMs: timeoutMs)) }
            catch { return .failure(error) }
        }.value
        switch result {
        case .success(let answer): return answer
        case .failure(let failure):
            throw fail(failure.connected ? "no answer from \(address): \(failure)"
                       : "cannot reach \(address): \(failure) (is pomodoro-server running there?)",
                       status: PomoExit.unavailable)
        }
    }
}
