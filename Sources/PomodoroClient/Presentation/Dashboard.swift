import PomodoroCore
import PomodoroProtocol

/// The state behind `pomo join`'s full-screen view, and what keys and session events do to it.
///
/// A value type changed by pure functions: `handle(key:)` and `handle(_ event:)` return the effects to
/// carry out (send a request, ring the bell, quit); `DashboardRenderer` turns the state into a frame.
public struct Dashboard: Sendable {
    /// Where the connection stands, for the title bar and for which keys work.
    public enum Connection: Equatable, Sendable {
        case connecting
        case live
        case reconnecting(attempt: Int, retryAt: LocalInstant, reason: String)
        case ended(SessionEnd)
    }

    /// What the keyboard is doing.
    public enum Mode: Equatable, Sendable {
        case normal
        /// `r` was pressed: `y` resets, anything else does not.
        case confirmReset
        /// `t` was pressed: typing my task.
        case editingTask(LineEditor)
    }

    /// A line of news: what happened last, or why a key did not work.
    public struct Notice: Equatable, Sendable {
        public enum Kind: Sendable { case event, error, info }
        public var text: String
        public var kind: Kind
        public var at: LocalInstant
        public init(_ text: String, kind: Kind, at: LocalInstant) {
            self.text = text
            self.kind = kind
            self.at = at
        }
    }

    /// What the caller must do after a key or an event.
    public enum Effect: Equatable, Sendable {
        case send(ClientMessage, ref: Ref)
        /// The terminal bell (only when the bell is on).
        case bell
        /// A desktop notification.
        case notify(title: String, body: String)
        case quit
        /// Ctrl-Z: give the terminal back and stop until continued.
        case suspend
        /// Ctrl-L: draw everything again.
        case redraw
    }

    /// The commands behind the keys.
    public enum Command: Hashable, Sendable {
        /// Space: start, pause or resume, whichever fits.
        case toggle
        case skip, reset
        /// Move the end by whole minutes (negative shortens).
        case extend(minutes: Int)
        case task, away, quit
    }

    public let roomName: String
    public let serverLabel: String
    public let bell: Bool
    public var room = RoomView()
    public var connection = Connection.connecting
    public var mode = Mode.normal
    /// The last thing that happened in the room.
    public var lastEvent: Notice?
    /// A short-lived message (a refusal, a hint) shown instead of `lastEvent` for `flashMs`.
    public var flash: Notice?
    public static let flashMs: Int64 = 6000
    private var nextRef: Int64 = 1
    private var pending: [Int64: String] = [:]
    /// The presence last asked for and not yet confirmed, so a quick second `a` toggles back.
    private var requestedAway: (away: Bool, ref: Int64)?

    public init(roomName: String, serverLabel: String, bell: Bool = true) {
        self.roomName = roomName
        self.serverLabel = serverLabel
        self.bell = bell
    }

    // MARK: Which keys work

    public var isLive: Bool { connection == .live && room.snapshot != nil && room.myID != nil }

    /// Whether a command makes sense now; keys for commands that do not are dimmed and do nothing.
    public func isEnabled(_ command: Command) -> Bool {
        if command == .quit { return true }
        guard isLive, let snapshot = room.snapshot, let limits = room.limits else { return false }
        // In a host-only room the controls are the host's alone; task and presence stay everyone's.
        let mayControl = snapshot.control == .anyone || snapshot.host == room.myID
        switch command {
        case .task, .away, .quit: return true
        case .toggle: return mayControl
        case .skip, .reset, .extend: guard mayControl else { return false }
        }
        switch command {
        case .toggle, .task, .away, .quit: return true
        case .skip: return snapshot.phase != .idle
        case .reset: return !(snapshot.status == .idle && snapshot.cycle == 1)
        case .extend(let minutes):
            guard snapshot.phase != .idle else { return false }
            // `+` is dimmed where the phase would outgrow the server's longest.
            if minutes > 0 { return limits.allowsLengthening(phaseLengthMs: snapshot.phaseLengthMs, by: minutes * 60) }
            return snapshot.status == .running ? true : snapshot.remainingMs > 0
        }
    }

    /// Whether I am away, or asked to be and the server has not answered yet.
    public var awayRequestedOrShown: Bool { requestedAway?.away ?? room.iAmAway }

    /// What space does now: "start", "pause" or "resume".
    public var toggleLabel: String {
        switch room.status {
        case .idle, .ready: "start"
        case .running: "pause"
        case .paused: "resume"
        }
    }

    // MARK: Keys

    public mutating func handle(key: Key, at now: LocalInstant) -> [Effect] {
        switch key {
        case .control("z"): return [.suspend]
        case .control("l"): return [.redraw]
        default: break
        }
        switch mode {
        case .confirmReset:
            mode = .normal
            if key == .character("y") || key == .character("Y") {
                return isEnabled(.reset) ? request(.reset, "reset") : []
            }
            flash = Notice("Reset cancelled", kind: .info, at: now)
            return []
        case .editingTask(var editor):
            if key == .control("c") || key == .escape {
                mode = .normal
                return []
            }
            switch editor.handle(key) {
            case .editing:
                mode = .editingTask(editor)
                return []
            case .cancelled:
                mode = .normal
                return []
            case .submitted(let text):
                mode = .normal
                let cleaned = text.trimmingWhitespace()
                guard isLive, cleaned != room.me?.task else { return [] }
                return request(.task(text: cleaned), "task")
            }
        case .normal:
            guard let command = Self.command(for: key) else { return [] }
            guard isEnabled(command) else {
                if command != .quit && !isLive {
                    flash = Notice("Not connected: \(Self.commandName(command)) waits for the server", kind: .info, at: now)
                }
                return []
            }
            switch command {
            case .quit: return [.quit]
            case .toggle:
                switch room.status {
                case .idle, .ready: return request(.start, "start")
                case .running: return request(.pause, "pause")
                case .paused: return request(.resume, "resume")
                }
            case .skip: return request(.skip, "skip")
            case .reset:
                mode = .confirmReset
                return []
            case .extend(let minutes): return request(.extend(seconds: minutes * 60), "extend")
            case .task:
                mode = .editingTask(LineEditor(room.me?.task ?? "", limit: room.limits?.maxTaskLength ?? 0))
                return []
            case .away:
                let away = !awayRequestedOrShown
                requestedAway = (away, nextRef)
                return request(.presence(away: away), "away")
            }
        }
    }

    /// The command a key stands for in normal mode.
    public static func command(for key: Key) -> Command? {
        switch key {
        case .character(" "): .toggle
        case .character("s"), .character("S"): .skip
        case .character("r"), .character("R"): .reset
        case .character("+"), .character("="): .extend(minutes: 1)
        case .character("-"), .character("_"): .extend(minutes: -1)
        case .character("1"): .extend(minutes: 1)
        case .character("3"): .extend(minutes: 3)
        case .character("5"): .extend(minutes: 5)
        case .character("t"), .character("T"): .task
        case .character("a"), .character("A"): .away
        case .character("q"), .character("Q"), .control("c"), .control("d"): .quit
        default: nil
        }
    }

    static func commandName(_ command: Command) -> String {
        switch command {
        case .toggle: "start/pause"
        case .skip: "skip"
        case .reset: "reset"
        case .extend: "extend"
        case .task: "task"
        case .away: "away"
        case .quit: "quit"
        }
    }

    private mutating func request(_ message: ClientMessage, _ name: String) -> [Effect] {
        let ref = nextRef
        nextRef += 1
        pending[ref] = name
        return [.send(message, ref: .number(ref))]
    }

    // MARK: Session events

    public mutating func handle(_ event: SessionEvent) -> [Effect] {
        switch event {
        case .connecting:
            if case .reconnecting = connection { return [] }
            if case .ended = connection { return [] }
            connection = .connecting
            return []
        case let .reconnecting(attempt, retryAt, reason):
            connection = .reconnecting(attempt: attempt, retryAt: retryAt, reason: reason)
            pending.removeAll()
            requestedAway = nil
            if case .editingTask = mode {} else { mode = .normal }
            return []
        case .ended(let end):
            connection = .ended(end)
            return []
        case let .message(message, _, at):
            return handle(message, at: at)
        }
    }

    private mutating func handle(_ message: ServerMessage, at now: LocalInstant) -> [Effect] {
        var effects: [Effect] = []
        switch message {
        case let .welcome(you, _, _, _, _):
            let wasMember = room.myID
            let myTask = room.me?.task ?? ""
            let reconnected = connection != .connecting
            room.apply(message, receivedAt: now)
            connection = .live
            if reconnected {
                if you.resumed || wasMember == nil {
                    lastEvent = Notice("Reconnected", kind: .info, at: now)
                } else {
                    // The server no longer knew the member (grace period over, or a restart): carry the task over.
                    lastEvent = Notice("Reconnected as a new member: the server had let the old one go", kind: .info, at: now)
                    if !myTask.isEmpty { effects += request(.task(text: myTask), "task") }
                }
            } else if you.resumed {
                lastEvent = Notice("Welcome back: your place was kept", kind: .info, at: now)
            } else {
                lastEvent = Notice("You joined \(roomName)", kind: .info, at: now)
            }
        case .state, .tick, .pong:
            room.apply(message, receivedAt: now)
            if let requested = requestedAway, requested.away == room.iAmAway { requestedAway = nil }
        case let .event(_, event, _):
            // Describe with the names known before the state that follows changes them.
            if let text = describe(event) { lastEvent = Notice(text, kind: .event, at: now) }
            room.apply(message, receivedAt: now)
            if case let .phaseCompleted(completed, next, autoStarted, _) = event {
                if bell { effects.append(.bell) }
                let title = "\(Labels.phase(completed)) done · \(roomName)"
                let body = autoStarted ? "\(Labels.phase(next)) has started." : "\(Labels.phase(next)) is ready: press space to start."
                effects.append(.notify(title: title, body: body))
            }
        case let .ok(_, _, ref):
            if case .number(let n)? = ref { pending[n] = nil }
        case let .error(code, text, _, ref):
            if case .number(let n)? = ref, requestedAway?.ref == n { requestedAway = nil }
            var what = "Refused"
            if case .number(let n)? = ref, let name = pending.removeValue(forKey: n) { what = "\(name.capitalizedFirst) refused" }
            if code == .replaced {
                flash = Notice("Another connection took over this member", kind: .error, at: now)
            } else {
                flash = Notice("\(what): \(text)", kind: .error, at: now)
            }
        case .stats, .schedules:
            break  // the view never asks for stats or schedules
        }
        return effects
    }

    /// The notice line for an event, or nil for events not worth a line.
    func describe(_ event: EventPayload) -> String? {
        func who(_ id: String) -> String { id == room.myID ? "You" : room.name(of: id) ?? id }
        switch event {
        case let .phaseCompleted(completed, next, autoStarted, cycle):
            let every = room.snapshot?.pendingSettings?.longBreakEvery ?? room.snapshot?.settings.longBreakEvery
            return Labels.phaseCompleted(completed: completed, next: next, autoStarted: autoStarted, cycle: cycle,
                                         longBreakEvery: every)
        case let .memberJoined(member, name):
            return member == room.myID ? nil : "\(name) joined"
        case .memberReturned(let member):
            return member == room.myID ? nil : "\(who(member)) is back"
        case let .memberAway(member, reason):
            switch reason {
            case .away: return member == room.myID ? "You are away" : "\(who(member)) stepped away"
            case .disconnected: return "\(who(member)) lost the connection"
            }
        case .memberBack(let member):
            return member == room.myID ? "You are back" : "\(who(member)) is back"
        case let .memberLeft(member, reason):
            return reason == .left ? "\(who(member)) left" : "\(who(member)) timed out"
        case let .control(action, by, seconds):
            let actor = who(by)
            let phase = Labels.phase(room.phase)
            switch action {
            case .start: return "\(actor) started \(room.phase == .idle ? "Focus" : phase)"
            case .pause: return "\(actor) paused"
            case .resume: return "\(actor) resumed"
            case .skip: return "\(actor) skipped \(phase)"
            case .reset: return "\(actor) reset the timer"
            case .configure: return "\(actor) changed the settings"
            case .extend:
                let s = seconds ?? 0
                let amount = s % 60 == 0 ? "\(abs(s) / 60) min" : "\(abs(s)) s"
                return s >= 0 ? "\(actor) added \(amount)" : "\(actor) took off \(amount)"
            }
        case .hostChanged(let member):
            guard let member else { return nil }
            return member == room.myID ? "You are the host now" : "\(who(member)) is the host now"
        case let .controlModeChanged(mode, by):
            return mode == .host ? "\(who(by)) made the controls host-only" : "\(who(by)) opened the controls to everyone"
        case .schedule(let event):
            switch event {
            case let .warning(_, name, _, minutes): return "\(name) starts in \(minutes) min"
            case let .started(_, name, _): return "\(name) started"
            case let .missed(_, name, _, busy): return busy ? "\(name) skipped: a session was running" : "\(name) was missed"
            case let .ended(_, name, n): return "\(name) done: \(n) focus session\(n == 1 ? "" : "s")"
            }
        }
    }

    /// The notice to show at `now`: a fresh flash, else the last event.
    public func notice(at now: LocalInstant) -> Notice? {
        if let flash, now.monotonicMs - flash.at.monotonicMs < Self.flashMs { return flash }
        return lastEvent
    }

    /// Milliseconds until something on screen changes by itself (the next second of the countdown, a
    /// reconnection countdown, a flash fading), at most one second.
    public func msUntilRedraw(at now: LocalInstant) -> Int64 {
        var wait: Int64 = 1000
        if let next = room.msUntilNextSecond(at: now) { wait = min(wait, next) }
        if let flash {
            let left = flash.at.monotonicMs + Self.flashMs - now.monotonicMs
            if left > 0 { wait = min(wait, left) }
        }
        return max(1, wait)
    }
}

extension String {
    var capitalizedFirst: String { prefix(1).uppercased() + dropFirst() }
}
