import Foundation
import ArgumentParser
import PomodoroClient
import PomodoroCore
import PomodoroProtocol

/// The one-shot commands: press one of the room's controls, report, exit. How the press reaches the room
/// (the control API, pomo join's member, a short visit) is `Press`.
enum Control {
    /// Presses `message`, and prints the timer as it then stands unless quiet. `refusal` checks the request
    /// against the limits a join's welcome says; a reason not to send it ends with usage.
    static func perform(_ message: ClientMessage, room: String, visit: VisitOptions, api: APITokenOption, quiet: Bool,
                        refusal: @escaping @Sendable (LimitsPayload) -> String? = { _ in nil }) async throws {
        try await Press.run(ControlRequest(room: room, messages: .fixed(message, check: refusal)),
                            visit: visit, api: api, quiet: quiet)
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

    /// How every control command presses, for its help.
    static let howItPresses = """
        How it presses: with --api-token (or $POMO_API_TOKEN) over the HTTP control API, as that token \
        (api:NAME in the room's events). Otherwise as the member `pomo join` keeps for this room and server \
        (its stored resume token), while that member is in the room and connected: pomo watches the room with \
        the token and presses as that member, so nobody sees anyone come or go and a running pomo join is not \
        taken over (with no token kept for this address, the room's tokens kept for other addresses, e.g. \
        another node of the cluster, are tried in turn: the server knows only its own). Otherwise as a short visit of a member of its own (--name, default pomo-cli) that leaves \
        when done. A room that is not open is refused (exit 1), never made: check the name, or pomo join it.
        """

    struct Start: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Start the timer: a focus from idle, or the phase that is ready or paused.",
            discussion: """
                With --aligned the room is first put on (or taken off) the clock, then started, in one go: \
                pomo start team-alpha --aligned local

                """ + "\n" + howItPresses)
        @OptionGroup var options: Options
        @OptionGroup var api: APITokenOption

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
                return try await perform(.start, room: options.room, visit: options.visit, api: api, quiet: options.quiet)
            }
            let zone = aligned == "off" ? nil : Configure.zone(aligned)
            // From what will be in effect next, so pending changes are not undone; then start once configured.
            var request = ControlRequest(room: options.room, messages: .fromRoom { snapshot, limits in
                var settings = snapshot.pendingSettings ?? snapshot.settings
                settings.aligned = zone
                if let reason = limits?.refusal(configuring: settings) { return .failure(ValidationError(reason)) }
                return .success([.configure(settings), .start])
            })
            // The configure's own state may come after its `ok`: wait for the one that is no longer idle.
            request.settled = { $0.status != .idle }
            try await Press.run(request, visit: options.visit, api: api, quiet: options.quiet)
        }
    }

    struct Pause: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Pause the running timer.", discussion: howItPresses)
        @OptionGroup var options: Options
        @OptionGroup var api: APITokenOption
        func run() async throws {
            try await perform(.pause, room: options.room, visit: options.visit, api: api, quiet: options.quiet)
        }
    }

    struct Resume: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Resume the paused timer.", discussion: howItPresses)
        @OptionGroup var options: Options
        @OptionGroup var api: APITokenOption
        func run() async throws {
            try await perform(.resume, room: options.room, visit: options.visit, api: api, quiet: options.quiet)
        }
    }

    struct Skip: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "End the current phase now and set up the next one.", discussion: howItPresses)
        @OptionGroup var options: Options
        @OptionGroup var api: APITokenOption
        func run() async throws {
            try await perform(.skip, room: options.room, visit: options.visit, api: api, quiet: options.quiet)
        }
    }

    struct Reset: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Reset the room's timer to idle, cycle 1 (no question asked).", discussion: howItPresses)
        @OptionGroup var options: Options
        @OptionGroup var api: APITokenOption
        func run() async throws {
            try await perform(.reset, room: options.room, visit: options.visit, api: api, quiet: options.quiet)
        }
    }

    struct Extend: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Move the end of the current phase: later, or earlier with a negative amount.",
            discussion: """
                AMOUNT is a duration: 5m, 90s, 1m30s, 1h; a bare number is minutes. A negative amount \
                shortens: pomo extend team-alpha -1m. Shortening past zero ends the phase. The server sets how \
                far one call may go (an hour either way by default) and how long a phase may get (8 hours).

                """ + "\n" + howItPresses)

        @Argument(help: "The room's name.")
        var room: String

        @Argument(parsing: .allUnrecognized, help: ArgumentHelp("How much: 5m, -1m, 90s (default 1m).", valueName: "amount"))
        var amount: [String] = []

        @Flag(name: .shortAndLong, help: "Print nothing on success.")
        var quiet = false

        @OptionGroup var visit: VisitOptions
        @OptionGroup var api: APITokenOption

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
            try await perform(.extend(seconds: seconds), room: room, visit: visit, api: api, quiet: quiet,
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

            """ + "\n" + Control.howItPresses + """
             Over the control API the settings start from the room's own, read with GET /api/rooms/ROOM: the \
            room must be open (and a locked one needs --passcode).
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
    @OptionGroup var api: APITokenOption

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
        let room = self.room
        let (focus, shortBreak, longBreak) = (self.focus.flatMap(DurationText.seconds),
                                              self.shortBreak.flatMap(DurationText.seconds),
                                              self.longBreak.flatMap(DurationText.seconds))
        let (every, auto) = (longBreakEvery, autoStart)
        let aligned = self.aligned.map { $0 == "off" ? nil : Self.zone($0) }
        var request = ControlRequest(room: room, messages: .fromRoom { snapshot, limits in
            // Start from what will be in effect next, so pending changes are not undone.
            var settings = snapshot.pendingSettings ?? snapshot.settings
            if let focus { settings.focus = focus }
            if let shortBreak { settings.shortBreak = shortBreak }
            if let longBreak { settings.longBreak = longBreak }
            if let every { settings.longBreakEvery = every }
            if let auto { settings.autoStart = auto }
            if let aligned { settings.aligned = aligned }
            if let reason = limits?.refusal(configuring: settings) { return .failure(ValidationError(reason)) }
            return .success([.configure(settings)])
        })
        request.showsRoom = false
        request.done = { sent, appliesFrom in
            guard case .configure(let settings) = sent else { return "" }
            let applied = appliesFrom == .nextPhase ? "from the next phase" : "now"
            return "\(room): \(Labels.settings(settings, short: false)), applies \(applied)"
        }
        try await Press.run(request, visit: visit, api: api, quiet: quiet)
    }
}
