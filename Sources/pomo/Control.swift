import Foundation
import ArgumentParser
import PomodoroClient
import PomodoroCore
import PomodoroProtocol

/// The one-shot commands: send one request to the room's timer, report, exit.
enum Control {
    /// Sends `message`, waits for the reply, prints the timer as it then stands unless quiet.
    /// `refusal` checks the request against the limits in `welcome`; a reason not to send it ends with usage.
    static func perform(_ message: ClientMessage, verb: String, room: String, visit: VisitOptions,
                        quiet: Bool, refusal: @escaping @Sendable (LimitsPayload) -> String? = { _ in nil }) async throws {
        let ref = Ref.string("command")
        var replied = false
        var baseline: UInt64 = 0
        try await Visit(room: room, options: visit).run { event, view in
            guard case let .message(reply, _, at) = event else { return .wait }
            switch reply {
            case .welcome(_, let snapshot, _, let limits, _):
                if let reason = refusal(limits) { return .finish(fail(reason, status: PomoExit.usage)) }
                baseline = snapshot.seq
                return .send(message, ref: ref)
            case .ok(_, _, ref?) where ref == .string("command"):
                replied = true
            case let .error(code, text, field, ref?, _) where ref == .string("command"):
                return .finish(fail("the server refused to \(verb) in \(room): \(Labels.refusal(text, field: field)) [\(code.rawValue)]",
                                    status: PomoExit.refused))
            default:
                break
            }
            // Done once the reply and the state it caused are both in (their order is not fixed).
            if replied, view.seq > baseline {
                if !quiet { printLine(summary(view, at: at)) }
                return .finish(nil)
            }
            return .wait
        }
    }

    static func summary(_ view: RoomView, at now: LocalInstant) -> String {
        guard let s = view.snapshot else { return "" }
        var text = "\(s.room): \(Labels.phaseAndPosition(s)), \(s.status.rawValue)"
        if s.status != .idle { text += ", \(Labels.clock(seconds: view.displaySeconds(at: now))) left" }
        return text
    }

    struct Options: ParsableArguments {
        @Argument(help: "The room's name.")
        var room: String

        @Flag(name: .shortAndLong, help: "Print nothing on success.")
        var quiet = false

        @OptionGroup var visit: VisitOptions

        func validate() throws { try validateRoom(room) }
    }

    struct Start: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Start the timer: a focus from idle, or the phase that is ready or paused.",
            discussion: """
                With --aligned the room is first put on (or taken off) the clock, then started, in one visit:                 pomo start team-alpha --aligned local
                """)
        @OptionGroup var options: Options

        @Option(help: ArgumentHelp(
            "Put the room on the clock of a time zone before starting (an IANA zone, `local` for this machine's), or take it off with `off`; the room's other settings stay as they are.",
            valueName: "zone"))
        var aligned: String?

        func validate() throws {
            if let aligned, aligned != "off", Configure.zone(aligned) == nil {
                throw ValidationError("--aligned must be an IANA time zone such as Europe/Berlin, local, or off")
            }
        }

        func run() async throws {
            guard let aligned else {
                return try await perform(.start, verb: "start", room: options.room, visit: options.visit,
                                         quiet: options.quiet)
            }
            try await startAligned(aligned == "off" ? nil : Configure.zone(aligned))
        }

        /// Configures the room's alignment, and once the server has taken it, starts: one visit, two requests.
        private func startAligned(_ zone: ZoneName?) async throws {
            let room = options.room, quiet = options.quiet
            var configured = false, replied = false
            var baseline: UInt64 = 0
            try await Visit(room: room, options: options.visit).run { event, view in
                guard case let .message(reply, _, at) = event else { return .wait }
                switch reply {
                case .welcome(_, let snapshot, _, let limits, _):
                    // From what will be in effect next, so pending changes are not undone.
                    var settings = snapshot.pendingSettings ?? snapshot.settings
                    settings.aligned = zone
                    if let reason = limits.refusal(configuring: settings) {
                        return .finish(fail(reason, status: PomoExit.usage))
                    }
                    return .send(.configure(settings), ref: .string("configure"))
                case .ok(_, _, let ref?) where ref == .string("configure"):
                    configured = true
                    baseline = view.seq
                    return .send(.start, ref: .string("command"))
                case let .error(code, text, field, ref?, _) where ref == .string("configure"):
                    return .finish(fail("the server refused the settings for \(room): \(Labels.refusal(text, field: field)) [\(code.rawValue)]",
                                        status: PomoExit.refused))
                case .ok(_, _, let ref?) where ref == .string("command"):
                    replied = true
                case let .error(code, text, field, ref?, _) where ref == .string("command"):
                    return .finish(fail("the server refused to start in \(room): \(Labels.refusal(text, field: field)) [\(code.rawValue)]",
                                        status: PomoExit.refused))
                default:
                    break
                }
                // The configure's own state may come after its `ok`: wait for the one that is no longer idle.
                if configured, replied, view.seq > baseline, let s = view.snapshot, s.status != .idle {
                    if !quiet { printLine(summary(view, at: at)) }
                    return .finish(nil)
                }
                return .wait
            }
        }
    }

    struct Pause: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Pause the running timer.")
        @OptionGroup var options: Options
        func run() async throws {
            try await perform(.pause, verb: "pause", room: options.room, visit: options.visit, quiet: options.quiet)
        }
    }

    struct Resume: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Resume the paused timer.")
        @OptionGroup var options: Options
        func run() async throws {
            try await perform(.resume, verb: "resume", room: options.room, visit: options.visit, quiet: options.quiet)
        }
    }

    struct Skip: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "End the current phase now and set up the next one.")
        @OptionGroup var options: Options
        func run() async throws {
            try await perform(.skip, verb: "skip", room: options.room, visit: options.visit, quiet: options.quiet)
        }
    }

    struct Reset: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Reset the room's timer to idle, cycle 1 (no question asked).")
        @OptionGroup var options: Options
        func run() async throws {
            try await perform(.reset, verb: "reset", room: options.room, visit: options.visit, quiet: options.quiet)
        }
    }

    struct Extend: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Move the end of the current phase: later, or earlier with a negative amount.",
            discussion: """
                AMOUNT is a duration: 5m, 90s, 1m30s, 1h; a bare number is minutes. A negative amount \
                shortens: pomo extend team-alpha -1m. Shortening past zero ends the phase. The server sets how \
                far one call may go (an hour either way by default) and how long a phase may get (8 hours).
                """)

        @Argument(help: "The room's name.")
        var room: String

        @Argument(parsing: .allUnrecognized, help: ArgumentHelp("How much: 5m, -1m, 90s (default 1m).", valueName: "amount"))
        var amount: [String] = []

        @Flag(name: .shortAndLong, help: "Print nothing on success.")
        var quiet = false

        @OptionGroup var visit: VisitOptions

        func validate() throws {
            try validateRoom(room)
            guard amount.count <= 1 else { throw ValidationError("give one amount, e.g. 5m or -1m") }
            guard let seconds = DurationText.seconds(amount.first ?? "1m") else {
                throw ValidationError("'\(amount.first ?? "")' is not a duration: try 5m, -1m, 90s or 1h")
            }
            guard seconds != 0 else { throw ValidationError("the amount must not be zero") }
        }

        func run() async throws {
            let seconds = DurationText.seconds(amount.first ?? "1m") ?? 60
            try await perform(.extend(seconds: seconds), verb: "extend", room: room, visit: visit, quiet: quiet,
                              refusal: { $0.refusal(extending: seconds) })
        }
    }
}

struct Configure: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Change the room's settings; what is not given stays as it is.",
        discussion: """
            Lengths are durations: 25m, 90s, 1h; a bare number is minutes. The new settings apply at once \
            when the room is idle or a phase is ready, otherwise from the next phase.
            Example: pomo configure team-alpha --focus 50m --short-break 10m --auto-start
            """)

    @Argument(help: "The room's name.")
    var room: String

    @Option(help: ArgumentHelp("Length of a focus.", valueName: "duration"))
    var focus: String?

    @Option(help: ArgumentHelp("Length of a short break.", valueName: "duration"))
    var shortBreak: String?

    @Option(help: ArgumentHelp("Length of a long break.", valueName: "duration"))
    var longBreak: String?

    @Option(help: ArgumentHelp("A long break after every N focus sessions (1–12 by default).", valueName: "n"))
    var longBreakEvery: Int?

    @Flag(inversion: .prefixedNo, help: "Start the next phase by itself when one ends.")
    var autoStart: Bool?

    @Option(help: ArgumentHelp(
        "Run the room on the clock of a time zone: focus at :00 and :30 for 25/5, at :00 for 50/10 (focus plus short break must divide an hour). An IANA zone, `local` for this machine's, or `off`.",
        valueName: "zone"))
    var aligned: String?

    @Flag(name: .shortAndLong, help: "Print nothing on success.")
    var quiet = false

    @OptionGroup var visit: VisitOptions

    func validate() throws {
        try validateRoom(room)
        // The bounds are the server's, checked once its `welcome` has said them.
        for (flag, value) in [("--focus", focus), ("--short-break", shortBreak), ("--long-break", longBreak)] {
            guard let value else { continue }
            guard DurationText.seconds(value) != nil else {
                throw ValidationError("\(flag) must be a duration, e.g. 25m")
            }
        }
        if let aligned, aligned != "off", Self.zone(aligned) == nil {
            throw ValidationError("--aligned must be an IANA time zone such as Europe/Berlin, local, or off")
        }
        if focus == nil && shortBreak == nil && longBreak == nil && longBreakEvery == nil && autoStart == nil
            && aligned == nil {
            throw ValidationError("nothing to change: give --focus, --short-break, --long-break, --long-break-every, --[no-]auto-start or --aligned")
        }
    }

    /// The zone `--aligned` names: an IANA zone, or `local` for this machine's.
    static func zone(_ text: String) -> ZoneName? {
        try? ZoneName(text == "local" ? TimeZone.current.identifier : text)
    }

    func run() async throws {
        let room = self.room, quiet = self.quiet
        let (focus, shortBreak, longBreak) = (self.focus.flatMap(DurationText.seconds),
                                              self.shortBreak.flatMap(DurationText.seconds),
                                              self.longBreak.flatMap(DurationText.seconds))
        let (every, auto) = (longBreakEvery, autoStart)
        let aligned = self.aligned.map { $0 == "off" ? nil : Self.zone($0) }
        var sent: RoomSettings?
        try await Visit(room: room, options: visit).run { event, _ in
            guard case let .message(reply, _, _) = event else { return .wait }
            switch reply {
            case .welcome(_, let snapshot, _, let limits, _) where sent == nil:
                // Start from what will be in effect next, so pending changes are not undone.
                var settings = snapshot.pendingSettings ?? snapshot.settings
                if let focus { settings.focus = focus }
                if let shortBreak { settings.shortBreak = shortBreak }
                if let longBreak { settings.longBreak = longBreak }
                if let every { settings.longBreakEvery = every }
                if let auto { settings.autoStart = auto }
                if let aligned { settings.aligned = aligned }
                if let reason = limits.refusal(configuring: settings) {
                    return .finish(fail(reason, status: PomoExit.usage))
                }
                sent = settings
                return .send(.configure(settings), ref: .string("command"))
            case let .ok(_, appliesFrom, ref?) where ref == .string("command"):
                if !quiet, let sent {
                    let applied = appliesFrom == .nextPhase ? "from the next phase" : "now"
                    printLine("\(room): \(Labels.settings(sent, short: false)), applies \(applied)")
                }
                return .finish(nil)
            case let .error(code, text, field, ref?, _) where ref == .string("command"):
                return .finish(fail("the server refused the settings for \(room): \(Labels.refusal(text, field: field)) [\(code.rawValue)]",
                                    status: PomoExit.refused))
            default:
                return .wait
            }
        }
    }
}
