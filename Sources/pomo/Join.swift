import ArgumentParser
import Foundation
import Glibc
import PomodoroClient
import PomodoroProtocol

struct Join: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Join a room and show it full-screen; keys control the shared timer.",
        discussion: """
            The view shows the remaining time in large digits, the phase and cycle, a progress bar, the \
            members (● here, ◐ away, ○ offline) with their tasks and completed focus sessions, the room's \
            settings and the keys. Keys that make no sense at the moment are dimmed and do nothing.

            KEYS:
              space   start, pause or resume      s       skip to the next phase
              r       reset to idle (asks first)  + / -   one minute more / less
              1 3 5   add that many minutes       t       my task (enter saves, esc drops)
              a       away / back                 m       bell and notifications off / on
              q       quit (Ctrl-C too; Ctrl-Z suspends)
              ?       the list of keys on the screen (any key closes it)

            THE HOST'S KEYS (on the host's screen only; anyone else is refused):
              p       a new passcode, then enter; an empty enter removes it
              k       remove a member: their number in the list or name, then enter
                      (they may not join again for 10 minutes)
              c       switch the controls between anyone and host only
              h       hand the host role to a member, picked as with k
              esc     drops a prompt without doing anything

            At the end of a phase: the terminal bell (unless --no-bell), a line in the view, and a desktop \
            notification through notify-send when it is installed. `m` silences both, and pomo remembers it \
            (in preferences.json beside its state files) until `m` again. The view speaks the language of \
            LC_ALL, LC_MESSAGES or LANG: English, Simplified or Traditional Chinese, or Korean. When the connection drops, pomo \
            reconnects by itself with backoff (within a quarter of a second when the server says it restarts: close 1012) \
            and resumes the same member. Quitting keeps the member's \
            place for the server's grace period (2 minutes by default), as closing a browser tab does: \
            `pomo join` again with the same name within it gets the same member back, with its count. \
            If another connection takes the member over, pomo says so and exits with status 3.

            With --plain, when standard output is not a terminal, or with TERM=dumb, join prints one sentence \
            per change instead of redrawing a screen, in the same language, for a screen reader or a log: \
            "Focus started, 25 minutes, ends 10:25", "Focus paused, 12 minutes left", "Focus: 1 minute left". \
            The countdown is not repeated every second. Colours follow NO_COLOR and --color.

            LOCAL HOOKS: --on-phase CMD (and "hooks": {"onPhase": [...]} in preferences.json) runs CMD through \
            /bin/sh at the first state of the room and at every change of phase or of running/paused, with \
            POMO_PHASE (idle, focus, shortBreak, longBreak), POMO_STATUS, POMO_FOCUS (1 while a focus runs), \
            POMO_ROOM, POMO_ENDS_AT (UTC, ISO 8601), POMO_ENDS_AT_EPOCH, POMO_REMAINING, POMO_TASK, POMO_CYCLE, \
            POMO_PREVIOUS_PHASE, POMO_NAME and POMO_SERVER in its environment. The screen never waits for it; \
            its output goes to hooks.log beside preferences.json. A hook still running when the next change \
            comes runs again once it ends, for the latest change only.
            """)

    @Argument(help: "The room's name: 1–64 characters of A–Z a–z 0–9 _ -.")
    var room: String

    @Option(name: .shortAndLong, help: ArgumentHelp(
        "Your name in the room. Default: $POMO_NAME, else the name used last time in this room, else $USER.",
        valueName: "name"))
    var name: String?

    @OptionGroup var server: ServerOptions

    @Flag(help: "No terminal bell at the end of a phase.")
    var noBell = false

    @Flag(help: "No desktop notification at the end of a phase.")
    var noNotify = false

    @Option(help: ArgumentHelp("Colours: auto (NO_COLOR and TERM decide), always or never.", valueName: "when"))
    var color: ColorChoice = .auto

    @Flag(help: "One sentence per change instead of a full screen (for screen readers and logs), even on a terminal.")
    var plain = false

    @Option(name: .customLong("on-phase"), help: ArgumentHelp(
        "A shell command to run at every phase change (repeatable; see LOCAL HOOKS).", valueName: "command"))
    var onPhase: [String] = []

    @Option(help: ArgumentHelp(
        "Give up on a connection that is not open and welcomed within this many seconds (each try, a reconnection's too).",
        valueName: "seconds"))
    var timeout: Double = 10

    enum ColorChoice: String, ExpressibleByArgument, CaseIterable {
        case auto, always, never
    }

    func validate() throws {
        try validateRoom(room)
        if let name { try validateName(name) }
        guard timeout > 0 else { throw ValidationError("--timeout must be positive") }
    }

    func run() async throws {
        let address = try server.address()
        let environment = ProcessInfo.processInfo.environment
        let stateFile = StateFile.location(environment: environment, server: address, room: room)
        let stored = stateFile?.load()
        guard let name = name ?? environment["POMO_NAME"].flatMap({ $0.isEmpty ? nil : $0 }) ?? stored?.name
                ?? environment["USER"] else {
            throw ValidationError("say who you are with --name NAME (or set POMO_NAME)")
        }
        try validateName(name)

        // The stored member is resumed only under the same name: another name is another person here.
        let token = stored.flatMap { $0.name == name ? $0.token : nil }
        let session: RoomSession
        do {
            session = try RoomSession(address: address,
                                      configuration: SessionConfiguration(room: room, name: name, token: token,
                                                                          passcode: server.effectivePasscode,
                                                                          connectTimeoutMs: Int64(timeout * 1000)))
        } catch {
            throw fail("cannot start the WebSocket client: \(error)", status: PomoExit.unavailable)
        }
        let fullScreen = !plain && RawTerminal.isTerminal(STDOUT_FILENO) && RawTerminal.isTerminal(STDIN_FILENO)
            && environment["TERM"].map({ $0 != "dumb" && !$0.isEmpty }) ?? false
        let preferences = Preferences.file(environment: environment)
        let hookCommands = onPhase + (preferences?.load().hooks.onPhase ?? [])
        let hooks = hookCommands.isEmpty ? nil : PhaseHooks(
            trigger: PhaseHookTrigger(room: room, name: name, server: address.description),
            runner: HookRunner(commands: hookCommands, logPath: HookRunner.logPath(environment: environment)))
        let end: SessionEnd
        if fullScreen {
            var support = ColorSupport.detect(environment: environment)
            switch color {
            case .auto: break
            case .always: support = .color
            case .never: support = support == .plain ? .plain : .monochrome
            }
            end = await FullScreenView(session: session, address: address, room: room, stateFile: stateFile,
                                       name: name, support: support, bell: !noBell,
                                       notifier: noNotify ? nil : Notifier(),
                                       preferences: preferences, hooks: hooks,
                                       words: Words(Language.from(environment: environment))).run()
        } else {
            end = await PlainLinesView(session: session, address: address, room: room, stateFile: stateFile,
                                       name: name, hooks: hooks,
                                       words: Words(Language.from(environment: environment))).run()
        }
        if let failure = failure(for: end, address: address, room: room) { throw failure }
    }
}

/// Keeps the resume token of every welcome, so the next `pomo join` resumes this member.
func remember(_ event: SessionEvent, in stateFile: StateFile?, address: ServerAddress, room: String, name: String) {
    guard let stateFile, case let .message(.welcome(you, _, _, _, _), _, _) = event else { return }
    try? stateFile.save(StateFile.Contents(server: address.description, room: room, name: name, member: you.id,
                                           token: you.token))
}

/// `pomo join` on a terminal: raw keys in, frames out, one loop owning the dashboard.
struct FullScreenView {
    let session: RoomSession
    let address: ServerAddress
    let room: String
    let stateFile: StateFile?
    let name: String
    let support: ColorSupport
    let bell: Bool
    let notifier: Notifier?
    /// Where the silence (`m`) is kept across runs; nil when there is no state folder.
    let preferences: Preferences.File?
    let hooks: PhaseHooks?
    let words: Words

    enum Input: Sendable {
        case session(SessionEvent)
        case keys([UInt8])
        case resize
        case signal(Int32)
        case wake
    }

    func run() async -> SessionEnd {
        var hooks = hooks
        let terminal = RawTerminal()
        let (inputs, sink) = AsyncStream.makeStream(of: Input.self)
        let sessionTask = Task { await session.run() }
        let forward = Task {
            for await event in session.events { sink.yield(.session(event)) }
        }
        let signals = SignalWatcher([SIGINT, SIGTERM, SIGHUP, SIGWINCH]) { signo in
            sink.yield(signo == SIGWINCH ? .resize : .signal(signo))
        }
        // The full screen opens once the room is there, or after a moment: a server that is down gets its
        // one line on standard error without the screen flashing first.
        let opensAt = LocalInstant.now().monotonicMs + 400
        var open = false
        KeyReader.start({ sink.yield(.keys($0)) }, atEnd: {})

        var dashboard = Dashboard(roomName: room, serverLabel: address.shortDescription, bell: bell,
                                  silenced: preferences?.load().silenced ?? false, words: words)
        var decoder = KeyDecoder()
        var encoder = AnsiEncoder(support: support)
        var size = terminal.size()
        var wake: Task<Void, Never>?
        var end = SessionEnd.stopped
        var quitting = false

        loop: for await input in inputs {
            let now = LocalInstant.now()
            var effects: [Dashboard.Effect] = []
            switch input {
            case .session(let event):
                remember(event, in: stateFile, address: address, room: room, name: name)
                await hooks?.observe(event)
                effects = dashboard.handle(event)
                if case .ended(let why) = event {
                    end = why
                    break loop
                }
            case .keys(let bytes):
                for key in decoder.decode(bytes) { effects += dashboard.handle(key: key, at: now) }
            case .resize:
                size = terminal.size()
                encoder.invalidate()
            case .signal:
                effects = [.quit]
            case .wake:
                break
            }
            for effect in effects {
                switch effect {
                case let .send(message, ref): session.send(message, ref: ref)
                case .bell: terminal.write(AnsiEncoder.bell)
                case let .notify(title, body): notifier?.notify(title: title, body: body)
                case .quit:
                    if !quitting {
                        quitting = true
                        session.stop()
                    }
                case .redraw: encoder.invalidate()
                case .silenced(let silenced):
                    var kept = preferences?.load() ?? Preferences()
                    kept.silenced = silenced
                    try? preferences?.save(kept)
                case .suspend:
                    terminal.write(AnsiEncoder.leaveFullScreen)
                    terminal.restore()
                    raise(SIGSTOP)
                    // Continued (fg): take the terminal back and draw everything.
                    _ = terminal.enterRaw()
                    terminal.write(AnsiEncoder.enterFullScreen)
                    size = terminal.size()
                    encoder.invalidate()
                }
            }
            let drawnAt = LocalInstant.now()
            if !open {
                guard dashboard.room.snapshot != nil || drawnAt.monotonicMs >= opensAt else {
                    wake?.cancel()
                    let wait = max(1, opensAt - drawnAt.monotonicMs)
                    wake = Task {
                        try? await Task.sleep(for: .milliseconds(wait))
                        if !Task.isCancelled { sink.yield(.wake) }
                    }
                    continue
                }
                open = true
                _ = terminal.enterRaw()
                terminal.write(AnsiEncoder.enterFullScreen)
                size = terminal.size()
            }
            let frame = DashboardRenderer.render(dashboard, in: .init(columns: size.columns, rows: size.rows,
                                                                      now: drawnAt, utcOffsetSeconds: utcOffsetNow()))
            terminal.write(encoder.encode(frame))

            wake?.cancel()
            let wait = dashboard.msUntilRedraw(at: drawnAt) + 2
            wake = Task {
                try? await Task.sleep(for: .milliseconds(wait))
                if !Task.isCancelled { sink.yield(.wake) }
            }
        }
        wake?.cancel()
        signals.cancel()
        if open {
            terminal.write(AnsiEncoder.leaveFullScreen)
            terminal.restore()
        }
        forward.cancel()
        _ = await sessionTask.value
        return end
    }
}

/// `pomo join --plain`, with TERM=dumb, or into a pipe or file: one sentence per change (SpokenLines), each a
/// line of its own for a screen reader or a log, until interrupted.
struct PlainLinesView {
    let session: RoomSession
    let address: ServerAddress
    let room: String
    let stateFile: StateFile?
    let name: String
    let hooks: PhaseHooks?
    let words: Words

    func run() async -> SessionEnd {
        var hooks = hooks
        let signals = SignalWatcher([SIGINT, SIGTERM, SIGHUP]) { [session] _ in session.stop() }
        defer { signals.cancel() }
        let sessionTask = Task { await session.run() }
        var lines = SpokenLines(roomName: room, serverLabel: address.description, utcOffsetSeconds: utcOffsetNow(),
                                words: words)
        var end = SessionEnd.stopped
        for await event in session.events {
            remember(event, in: stateFile, address: address, room: room, name: name)
            await hooks?.observe(event)
            for line in lines.lines(for: event) { printLine(line) }
            if case .ended(let why) = event { end = why }
        }
        _ = await sessionTask.value
        return end
    }
}

/// The local hooks of one `pomo join`: which events are phase changes, and the runner that starts the commands
/// without waiting for them. A value: the one loop that handles session events keeps it and changes it.
struct PhaseHooks: Sendable {
    private var trigger: PhaseHookTrigger
    private let runner: HookRunner

    init(trigger: PhaseHookTrigger, runner: HookRunner) {
        self.trigger = trigger
        self.runner = runner
    }

    mutating func observe(_ event: SessionEvent) async {
        if let change = trigger.observe(event) { await runner.fire(change) }
    }
}
