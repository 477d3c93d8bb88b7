import ArgumentParser
import Foundation
import Glibc
import PomodoroClient
import PomodoroCore
import PomodoroProtocol

/// The host's commands: a room's passcode, removing a member, the control mode, handing the role on.
///
/// Only the host may give them, and the host is a member, not a visitor: these act as the member
/// `pomo join` keeps in its state folder for the room (its resume token), found as the control commands find
/// theirs (`StateFile.kept`: under this server address, else under another address of the same server or
/// cluster), so run `pomo join` in the room first. A short visit looks first: a member who is not the host,
/// or a `pomo join` of the member that is running (which resuming would take over), is refused before
/// anything is resumed. The member shows as disconnected when the command is done, until `pomo join` takes
/// it back.
enum Hosting {
    /// What to send, decided from the room as the welcome shows it: a message, or why not (a usage error).
    typealias Decide = @Sendable (SnapshotPayload, _ me: String, LimitsPayload) -> Result<ClientMessage, ValidationError>

    static func perform(verb: String, key: Character, room: String, options: HostOptions,
                        decide: @escaping Decide) async throws {
        let address = try options.server.address()
        let kept = StateFile.kept(environment: ProcessInfo.processInfo.environment, server: address, room: room)
        guard let newest = kept.members.first else {
            throw fail("only the host may \(verb), as the member pomo join keeps: run pomo join \(room) first",
                       status: PomoExit.refused)
        }
        let tries = try await lookFirst(at: room, among: kept, verb: verb, key: key, options: options)
        for stored in tries {
            if try await act(as: stored, verb: verb, room: room, address: address, options: options, decide: decide) {
                return
            }
        }
        throw fail(membershipEnded(tries.first ?? newest, room: room), status: PomoExit.refused)
    }

    /// Resumes `stored` and, as the host, sends what `decide` makes. False when the server does not have the
    /// membership (it let it go, or the token is another server's): nothing was sent as the host.
    static func act(as stored: StateFile.Contents, verb: String, room: String, address: ServerAddress,
                    options: HostOptions, decide: @escaping Decide) async throws -> Bool {
        let session: RoomSession
        do {
            session = try RoomSession(address: address, configuration: SessionConfiguration(
                room: room, name: stored.name, token: stored.token, passcode: options.server.effectivePasscode,
                reconnect: nil, connectTimeoutMs: Int64(options.timeout * 1000)))
        } catch {
            throw fail("cannot start the WebSocket client: \(error)", status: PomoExit.unavailable)
        }
        let sessionTask = Task { await session.run() }
        let timeoutMs = Int64(options.timeout * 1000)
        let timer = Task {
            try? await Task.sleep(for: .milliseconds(timeoutMs))
            if !Task.isCancelled { session.stop() }
        }
        defer { timer.cancel() }

        let ref = Ref.string("host")
        var view = RoomView()
        var result: ExitCode?? = nil
        var replied = false
        var baseline: UInt64 = 0
        var end = SessionEnd.stopped
        var unknown = false
        func finish(_ code: ExitCode?) {
            guard result == nil else { return }
            result = .some(code)
            session.stop()
        }
        for await event in session.events {
            if case .ended(let why) = event { end = why }
            guard case let .message(message, _, at) = event, result == nil else { continue }
            view.apply(message, receivedAt: at)
            switch message {
            case let .welcome(you, snapshot, _, limits, _):
                guard you.resumed else {
                    // The stored member is gone (left, timed out, removed), or the token was never this
                    // server's: this is a new member, not the host.
                    session.send(.leave, ref: .string("leave"))
                    unknown = true
                    finish(nil)
                    continue
                }
                guard snapshot.host == you.id else {
                    finish(fail("only the host may \(verb) in \(room), and \(you.id) is not the host"
                                + (snapshot.host.flatMap { id in snapshot.members.first { $0.id == id }?.name }
                                    .map { " (\($0) is)" } ?? ""), status: PomoExit.refused))
                    continue
                }
                baseline = snapshot.seq
                switch decide(snapshot, you.id, limits) {
                case .success(let request): session.send(request, ref: ref)
                case .failure(let reason): finish(fail(reason.message, status: PomoExit.usage))
                }
            case .ok(_, _, ref?) where ref == .string("host"):
                replied = true
            case let .error(code, text, field, ref?, _) where ref == .string("host"):
                finish(fail("the server refused to \(verb) in \(room): \(Labels.refusal(text, field: field)) [\(code.rawValue)]", status: PomoExit.refused))
            default:
                break
            }
            // Done once the reply and the state it caused are both in (their order is not fixed).
            if replied, view.seq > baseline {
                if !options.quiet { printLine(summary(view)) }
                finish(nil)
            }
        }
        _ = await sessionTask.value
        if case .some(let code) = result {
            if let code { throw code }
            return !unknown
        }
        if end == .stopped {
            throw fail("no answer from \(address) within \(Int(options.timeout)) s", status: PomoExit.unavailable)
        }
        // A locked room lets a member's token in without the passcode, so a stored token refused for want of
        // one (or removed, banned) belongs to a membership the server no longer has.
        if case .refused(let code, _, _) = end, [.badPasscode, .banned].contains(code) { return false }
        if let failure = failure(for: end, address: address, room: room) { throw failure }
        return true
    }

    /// Looks at the room as a short-lived visitor before resuming a kept member, so that neither a running
    /// `pomo join` of that member is taken over nor a member who is not the host is resumed for nothing; says
    /// which kept members to resume in turn (all of them when the room cannot be looked at).
    static func lookFirst(at room: String, among kept: StateFile.Kept, verb: String, key: Character,
                          options: HostOptions) async throws -> [StateFile.Contents] {
        guard let snapshot = try await look(at: room, options: options) else { return kept.members }
        let name = { (id: String) in snapshot.members.first { $0.id == id }?.name ?? id }
        switch kept.asHost(in: snapshot) {
        case .resume(let hosts):
            return hosts
        case .ended(let stored):
            throw fail(membershipEnded(stored, room: room), status: PomoExit.refused)
        case .notHost(let stored):
            throw fail("only the host may \(verb) in \(room), and pomo join's member \(name(stored.member)) is not the host"
                       + (snapshot.host.map { " (\(name($0)) is)" } ?? ""), status: PomoExit.refused)
        case .connected(let stored):
            // Resuming the member would take it over from the running `pomo join`, which then exits.
            throw fail("pomo join is in \(room) as \(name(stored.member)) now, and this command would take its place: "
                       + "press \(key) in that pomo join instead (? lists the host's keys), or quit it (q) and run "
                       + "this again within the server's grace period (2 minutes by default)", status: PomoExit.refused)
        }
    }

    /// Why the stored member cannot act: the server no longer has it (it left, its grace period passed after
    /// `pomo join` quit, or the host removed it), so a resume would make a new member, not the host.
    static func membershipEnded(_ stored: StateFile.Contents, room: String) -> String {
        "the membership pomo join kept in \(room) (\(stored.name), \(stored.member)) has ended: the server let it "
            + "go (it left, was removed, or its grace period passed after pomo join quit), so it is not the host "
            + "any more. pomo join \(room) joins again as a new member; the host role stays with whoever has it now"
    }

    /// The room as a visitor sees it on joining (and leaving at once), or nil when the visitor is not let in
    /// (a locked room and no passcode given: the member's token gets in without one, so the command goes on
    /// without looking). No answer at all stops the command: going on blind could take over a running
    /// `pomo join`.
    static func look(at room: String, options: HostOptions) async throws -> SnapshotPayload? {
        let address = try options.server.address()
        let session: RoomSession
        do {
            session = try RoomSession(address: address, configuration: SessionConfiguration(
                room: room, name: options.visit.name, token: nil, passcode: options.server.effectivePasscode,
                reconnect: nil, connectTimeoutMs: Int64(options.timeout * 1000)))
        } catch {
            throw fail("cannot start the WebSocket client: \(error)", status: PomoExit.unavailable)
        }
        let sessionTask = Task { await session.run() }
        let timer = Task {
            try? await Task.sleep(for: .milliseconds(Int64(options.timeout * 1000)))
            if !Task.isCancelled { session.stop() }
        }
        defer { timer.cancel() }
        var seen: SnapshotPayload?
        var answered = false
        var end = SessionEnd.stopped
        for await event in session.events {
            if case .ended(let why) = event { end = why }
            if case .ended(.refused) = event { answered = true }
            guard case let .message(message, _, _) = event else { continue }
            switch message {
            case .welcome(_, let snapshot, _, _, _):
                answered = true
                seen = snapshot
                session.send(.leave, ref: .string("leave"))
            case .ok("leave", _, _), .error:
                answered = true
                session.stop()
            default:
                break
            }
        }
        _ = await sessionTask.value
        guard answered else {
            if case .unreachable = end, let failure = failure(for: end, address: address, room: room) { throw failure }
            throw fail("no answer from \(address) within \(Int(options.timeout)) s; nothing was changed",
                       status: PomoExit.unavailable)
        }
        return seen
    }

    /// The room after the change, in one line: who hosts, who may press the controls, the lock, who is in.
    static func summary(_ view: RoomView) -> String {
        guard let s = view.snapshot else { return "" }
        let host = s.host.flatMap { view.name(of: $0) } ?? "nobody"
        let members = s.members.map(\.name).joined(separator: ", ")
        return "\(s.room): host \(host), controls \(s.control.rawValue), \(s.locked ? "locked" : "open"); members: \(members)"
    }

    /// A member by id (`m2`) or by name (any case); a name two members share must be given as an id.
    static func member(_ text: String, in snapshot: SnapshotPayload) -> Result<String, ValidationError> {
        if let byID = snapshot.members.first(where: { $0.id == text }) { return .success(byID.id) }
        let named = snapshot.members.filter { $0.name.lowercased() == text.lowercased() }
        switch named.count {
        case 1: return .success(named[0].id)
        case 0: return .failure(ValidationError("nobody called '\(text)' is in \(snapshot.room) (members: "
                                                + snapshot.members.map { "\($0.id) \($0.name)" }.joined(separator: ", ") + ")"))
        default: return .failure(ValidationError("more than one member is called '\(text)': give the id ("
                                                 + named.map(\.id).joined(separator: ", ") + ")"))
        }
    }
}

/// Options of the host's commands: the server, the look first's visitor and the time to wait.
struct HostOptions: ParsableArguments {
    @OptionGroup var visit: VisitOptions

    @Flag(name: .shortAndLong, help: "Print nothing on success.")
    var quiet = false

    var server: ServerOptions { visit.server }
    var timeout: Double { visit.timeout }
}

extension Hosting {
    static let asTheHost = """
        Only the host may do this. pomo acts as the member pomo join keeps for the room, under this server \
        address or else under another address of the same server or cluster (run pomo join ROOM first, and \
        quit it: a running pomo join is not taken over, the command refuses and names the key that does the \
        same in pomo join; in a locked room give --passcode too, or pomo cannot look first); that member shows \
        as disconnected afterwards until pomo join takes it back, within the grace period. Once the grace \
        period has passed the membership has ended and the command says so.
        """

    struct Passcode: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Lock the room with a new passcode, or remove its passcode.",
            discussion: """
                pomo passcode team-alpha "new soup" locks the room with it (4–64 characters): new joins need it, \
                the members inside stay and their resume tokens still work. pomo passcode team-alpha --remove \
                unlocks it. \(Hosting.asTheHost)
                """)

        @Argument(help: "The room's name.")
        var room: String

        @Argument(help: ArgumentHelp("The new passcode.", valueName: "passcode"))
        var passcode: String?

        @Flag(help: "Remove the passcode: anyone may join again.")
        var remove = false

        @OptionGroup var options: HostOptions

        func validate() throws {
            try validateRoom(room)
            guard (passcode != nil) != remove else {
                throw ValidationError("give the new passcode, or --remove to unlock the room")
            }
        }

        func run() async throws {
            let passcode = passcode
            try await Hosting.perform(verb: passcode == nil ? "remove the passcode" : "change the passcode",
                                      key: "p", room: room, options: options) { _, _, limits in
                if let passcode, !(limits.minPasscodeLength...limits.maxPasscodeLength).contains(passcode.count) {
                    return .failure(ValidationError("a passcode has \(limits.minPasscodeLength)–\(limits.maxPasscodeLength) characters"))
                }
                return .success(.passcode(passcode))
            }
        }
    }

    struct Kick: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Remove a member from the room; they may not join it again for a while.",
            discussion: """
                MEMBER is an id (m2) or a name. The member is told the host removed them, and their name and \
                resume token are refused for 10 minutes. \(Hosting.asTheHost)
                """)

        @Argument(help: "The room's name.")
        var room: String

        @Argument(help: ArgumentHelp("Who: a member id (m2) or a name.", valueName: "member"))
        var member: String

        @OptionGroup var options: HostOptions

        func validate() throws { try validateRoom(room) }

        func run() async throws {
            let member = member
            try await Hosting.perform(verb: "remove \(member)", key: "k", room: room, options: options) { snapshot, me, _ in
                Hosting.member(member, in: snapshot).flatMap { id in
                    id == me ? .failure(ValidationError("the host cannot remove themselves: leave instead"))
                        : .success(.kick(member: id))
                }
            }
        }
    }

    struct Control: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "control",
            abstract: "Let anyone press the room's controls, or the host only.",
            discussion: "host: only the host starts, pauses, skips, resets, extends and configures; everyone still sets "
                + "their own task and presence. anyone: everyone may. \(Hosting.asTheHost)")

        @Argument(help: "The room's name.")
        var room: String

        @Argument(help: ArgumentHelp("host or anyone.", valueName: "mode"))
        var mode: ControlModeArgument

        @OptionGroup var options: HostOptions

        func validate() throws { try validateRoom(room) }

        func run() async throws {
            let mode = mode.mode
            try await Hosting.perform(verb: "change who controls the timer", key: "c", room: room,
                                      options: options) { snapshot, _, _ in
                snapshot.control == mode ? .failure(ValidationError("\(snapshot.room) is already in \(mode.rawValue) mode"))
                    : .success(.control(mode: mode))
            }
        }
    }

    struct HandOff: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "handoff",
            abstract: "Hand the host role to another member.",
            discussion: "MEMBER is an id (m2) or a name. \(Hosting.asTheHost)")

        @Argument(help: "The room's name.")
        var room: String

        @Argument(help: ArgumentHelp("Who: a member id (m2) or a name.", valueName: "member"))
        var member: String

        @OptionGroup var options: HostOptions

        func validate() throws { try validateRoom(room) }

        func run() async throws {
            let member = member
            try await Hosting.perform(verb: "hand the host role to \(member)", key: "h", room: room,
                                      options: options) { snapshot, me, _ in
                Hosting.member(member, in: snapshot).flatMap { id in
                    id == me ? .failure(ValidationError("you are the host already")) : .success(.handOff(member: id))
                }
            }
        }
    }
}

/// `host` or `anyone` on the command line.
struct ControlModeArgument: ExpressibleByArgument, Sendable {
    let mode: ControlMode
    init?(argument: String) {
        guard let mode = ControlMode(rawValue: argument.lowercased()) else { return nil }
        self.mode = mode
    }
    static var allValueStrings: [String] { ControlMode.allCases.map(\.rawValue) }
}
