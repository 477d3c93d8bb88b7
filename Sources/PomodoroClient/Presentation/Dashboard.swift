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
        /// `?` was pressed: the keys are listed until any key.
        case help
        /// The host pressed `p`: typing the new passcode (empty removes it).
        case editingPasscode(LineEditor)
        /// The host pressed `k` or `h`: picking a member by their number in the list, their name or id.
        case pickingMember(HostPick, LineEditor)
    }

    /// What picking a member is for.
    public enum HostPick: Hashable, Sendable {
        /// Remove them from the room (`kick`).
        case remove
        /// Hand them the host role.
        case handOff
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
        /// The bell and notifications were silenced (true) or let back on (false): worth remembering.
        case silenced(Bool)
    }

    /// The commands behind the keys.
    public enum Command: Hashable, Sendable {
        /// Space: start, pause or resume, whichever fits.
        case toggle
        case skip, reset
        /// Move the end by whole minutes (negative shortens).
        case extend(minutes: Int)
        case task, away, quit
        /// The bell and notifications off, or on again.
        case silence
        /// `?`: the list of keys.
        case help
        /// The host's tools: the passcode, removing a member, who may press the controls, handing the role on.
        case passcode, removeMember, controlMode, handOff

        /// Whether only the host may give the command.
        public var isHostTool: Bool {
            switch self {
            case .passcode, .removeMember, .controlMode, .handOff: true
            default: false
            }
        }
    }

    public let roomName: String
    public let serverLabel: String
    public let bell: Bool
    /// Whether the bell and notifications are silenced (`m`); pomo keeps the choice in its state folder.
    public private(set) var silenced: Bool
    /// The language of everything this view says.
    public let words: Words
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

    public init(roomName: String, serverLabel: String, bell: Bool = true, silenced: Bool = false,
                words: Words = Words()) {
        self.roomName = roomName
        self.serverLabel = serverLabel
        self.bell = bell
        self.silenced = silenced
        self.words = words
    }

    // MARK: Which keys work

    public var isLive: Bool { connection == .live && room.snapshot != nil && room.myID != nil }

    /// Whether a command makes sense now; keys for commands that do not are dimmed and do nothing.
    public func isEnabled(_ command: Command) -> Bool {
        if command == .quit || command == .silence || command == .help { return true }
        guard isLive, let snapshot = room.snapshot, let limits = room.limits else { return false }
        // In a host-only room the controls are the host's alone; task and presence stay everyone's.
        let mayControl = snapshot.control == .anyone || snapshot.host == room.myID
        switch command {
        case .task, .away, .quit, .silence, .help: return true
        case .passcode, .controlMode: return isHost
        case .removeMember, .handOff: return isHost && !room.others.isEmpty
        case .toggle: return mayControl
        case .skip, .reset, .extend: guard mayControl else { return false }
        }
        switch command {
        case .toggle, .task, .away, .quit, .silence, .help, .passcode, .controlMode, .removeMember, .handOff: return true
        case .skip: return snapshot.phase != .idle
        case .reset: return !(snapshot.status == .idle && snapshot.cycle == 1)
        case .extend(let minutes):
            guard snapshot.phase != .idle else { return false }
            // `+` is dimmed where the phase would outgrow the server's longest.
            if minutes > 0 { return limits.allowsLengthening(phaseLengthMs: snapshot.phaseLengthMs, by: minutes * 60) }
            return snapshot.status == .running ? true : snapshot.remainingMs > 0
        }
    }

    /// Whether I hold the room's host role.
    public var isHost: Bool { room.myID != nil && room.snapshot?.host == room.myID }

    /// The members a host may pick by number (`k`, `h`): everyone but me, in the order the list shows them.
    public var pickable: [MemberPayload] { room.others }

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
                return isEnabled(.reset) ? request(.reset, .keyReset) : []
            }
            flash = Notice(words(.resetCancelled), kind: .info, at: now)
            return []
        case .help:
            mode = .normal
            return []
        case .editingPasscode(var editor):
            switch editor.handle(key) {
            case .editing:
                mode = .editingPasscode(editor)
                return []
            case .cancelled:
                mode = .normal
                return []
            case .submitted(let text):
                mode = .normal
                return submitPasscode(text, at: now)
            }
        case .pickingMember(let pick, var editor):
            switch editor.handle(key) {
            case .editing:
                mode = .pickingMember(pick, editor)
                return []
            case .cancelled:
                mode = .normal
                return []
            case .submitted(let text):
                mode = .normal
                return submitPick(pick, text, at: now)
            }
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
                return request(.task(text: cleaned), .keyTask)
            }
        case .normal:
            guard let command = Self.command(for: key) else { return [] }
            if command.isHostTool && isLive && !isHost {
                // The server's own refusal (the protocol's one mapping of it), without asking the server.
                let reason = words.language == .en ? ProtocolError(RoomError.forbidden).message : words.error(.forbidden)
                flash = Notice(words(.refusedCommand, ["command": commandName(command), "reason": reason]).capitalizedFirst,
                               kind: .error, at: now)
                return []
            }
            if (command == .removeMember || command == .handOff) && isLive && pickable.isEmpty {
                flash = Notice(words(.nobodyElse), kind: .info, at: now)
                return []
            }
            guard isEnabled(command) else {
                if command != .quit && !isLive {
                    flash = Notice(words(.notConnected, ["command": commandName(command)]), kind: .info, at: now)
                }
                return []
            }
            switch command {
            case .quit: return [.quit]
            case .silence:
                silenced.toggle()
                flash = Notice(words(silenced ? .silencedOn : .silencedOff), kind: .info, at: now)
                return [.silenced(silenced)]
            case .toggle:
                switch room.status {
                case .idle, .ready: return request(.start, .keyStart)
                case .running: return request(.pause, .keyPause)
                case .paused: return request(.resume, .keyResume)
                }
            case .skip: return request(.skip, .keySkip)
            case .reset:
                mode = .confirmReset
                return []
            case .extend(let minutes): return request(.extend(seconds: minutes * 60), .keyExtend)
            case .task:
                mode = .editingTask(LineEditor(room.me?.task ?? "", limit: room.limits?.maxTaskLength ?? 0))
                return []
            case .away:
                let away = !awayRequestedOrShown
                requestedAway = (away, nextRef)
                return request(.presence(away: away), .keyAway)
            case .help:
                mode = .help
                return []
            case .passcode:
                mode = .editingPasscode(LineEditor("", limit: room.limits?.maxPasscodeLength ?? 64))
                return []
            case .removeMember:
                mode = .pickingMember(.remove, LineEditor("", limit: 64))
                return []
            case .handOff:
                mode = .pickingMember(.handOff, LineEditor("", limit: 64))
                return []
            case .controlMode:
                let next: ControlMode = room.snapshot?.control == .host ? .anyone : .host
                return request(.control(mode: next), .keyControl)
            }
        }
    }

    /// The passcode prompt's line: a new passcode within the server's lengths locks the room with it; an
    /// empty line takes the passcode away.
    private mutating func submitPasscode(_ text: String, at now: LocalInstant) -> [Effect] {
        guard isLive, let limits = room.limits else { return [] }
        if text.trimmingWhitespace().isEmpty {
            guard room.snapshot?.locked == true else {
                flash = Notice(words(.noPasscodeToRemove), kind: .info, at: now)
                return []
            }
            return request(.passcode(nil), .keyPasscode)
        }
        guard (limits.minPasscodeLength...limits.maxPasscodeLength).contains(text.count) else {
            flash = Notice(words(.passcodeLength, ["min": limits.minPasscodeLength, "max": limits.maxPasscodeLength]),
                           kind: .error, at: now)
            return []
        }
        return request(.passcode(text), .keyPasscode)
    }

    /// The member picked by `text`: their number in the list (`pickable`), their id, or their name in any case.
    public func pick(_ text: String) -> MemberPayload? {
        let text = text.trimmingWhitespace()
        let others = pickable
        if let number = Int(text) { return others.indices.contains(number - 1) ? others[number - 1] : nil }
        if let byID = others.first(where: { $0.id == text }) { return byID }
        let named = others.filter { $0.name.lowercased() == text.lowercased() }
        return named.count == 1 ? named[0] : nil
    }

    private mutating func submitPick(_ pick: HostPick, _ text: String, at now: LocalInstant) -> [Effect] {
        guard isLive, !text.trimmingWhitespace().isEmpty else { return [] }
        guard let member = self.pick(text) else {
            flash = Notice(words(.noSuchMember, ["who": text.trimmingWhitespace()]), kind: .error, at: now)
            return []
        }
        switch pick {
        case .remove: return request(.kick(member: member.id), .keyRemove)
        case .handOff: return request(.handOff(member: member.id), .keyHandOff)
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
        case .character("m"), .character("M"): .silence
        case .character("?"): .help
        case .character("p"), .character("P"): .passcode
        case .character("k"), .character("K"): .removeMember
        case .character("c"), .character("C"): .controlMode
        case .character("h"), .character("H"): .handOff
        case .character("q"), .character("Q"), .control("c"), .control("d"): .quit
        default: nil
        }
    }

    /// A command's name in the notices: the word its key has.
    func commandName(_ command: Command) -> String {
        switch command {
        case .toggle: "\(words(.keyStart))/\(words(.keyPause))"
        case .skip: words(.keySkip)
        case .reset: words(.keyReset)
        case .extend: words(.keyAdd)
        case .task: words(.keyTask)
        case .away: words(.keyAway)
        case .quit: words(.keyQuit)
        case .silence: words(.keyMute)
        case .help: words(.keyHelp)
        case .passcode: words(.keyPasscode)
        case .removeMember: words(.keyRemove)
        case .controlMode: words(.keyControl)
        case .handOff: words(.keyHandOff)
        }
    }

    private mutating func request(_ message: ClientMessage, _ name: Phrase) -> [Effect] {
        let ref = nextRef
        nextRef += 1
        pending[ref] = words(name)
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
                    lastEvent = Notice(words(.reconnected), kind: .info, at: now)
                } else {
                    // The server no longer knew the member (grace period over, or a restart): carry the task over.
                    lastEvent = Notice(words(.reconnectedNew), kind: .info, at: now)
                    if !myTask.isEmpty { effects += request(.task(text: myTask), .keyTask) }
                }
            } else if you.resumed {
                lastEvent = Notice(words(.welcomeBack), kind: .info, at: now)
            } else {
                lastEvent = Notice(words(.joinedRoom, ["room": roomName]), kind: .info, at: now)
            }
        case .observing:
            room.apply(message, receivedAt: now)
            connection = .live
        case .state, .tick, .pong, .you:
            room.apply(message, receivedAt: now)
            if let requested = requestedAway, requested.away == room.iAmAway { requestedAway = nil }
        case let .event(_, event, _):
            // Describe with the names known before the state that follows changes them.
            if let text = describe(event) { lastEvent = Notice(text, kind: .event, at: now) }
            room.apply(message, receivedAt: now)
            if case let .phaseCompleted(completed, next, autoStarted, _) = event {
                if bell && !silenced { effects.append(.bell) }
                if !silenced {
                    let title = words(.notifyTitle, ["phase": words.phase(completed), "room": roomName])
                    let body = words(autoStarted ? .notifyStarted : .notifyReady, ["phase": words.phase(next)])
                    effects.append(.notify(title: title, body: body))
                }
            }
        case let .ok(_, _, ref):
            if case .number(let n)? = ref { pending[n] = nil }
        case let .error(code, text, _, ref, _):
            if case .number(let n)? = ref, requestedAway?.ref == n { requestedAway = nil }
            var command: String?
            if case .number(let n)? = ref { command = pending.removeValue(forKey: n) }
            // The server's words are English: other languages say what the code means.
            let reason = words.language == .en ? text : words.error(code)
            if code == .replaced {
                flash = Notice(words(.tookOver), kind: .error, at: now)
            } else if code == .removed {
                flash = Notice(words(.youRemoved), kind: .error, at: now)
            } else if let command {
                flash = Notice(words(.refusedCommand, ["command": command, "reason": reason]).capitalizedFirst, kind: .error, at: now)
            } else {
                flash = Notice(words(.refused, ["reason": reason]), kind: .error, at: now)
            }
        case .stats, .schedules, .apiTokens, .webhooks:
            break  // the view never asks for stats or schedules
        }
        return effects
    }

    /// The notice line for an event, or nil for events not worth a line.
    func describe(_ event: EventPayload) -> String? {
        func who(_ id: String) -> String { id == room.myID ? words(.you) : room.name(of: id) ?? id }
        func said(_ phrase: Phrase, _ id: String, _ values: [String: CustomStringConvertible] = [:]) -> String {
            words(phrase, values.merging(["name": who(id)]) { a, _ in a })
        }
        switch event {
        case let .phaseCompleted(completed, next, autoStarted, cycle):
            if let run = room.snapshot?.scheduledRun {
                // A scheduled set counts its own focus sessions; a break does not change how many are done,
                // so the next focus is the one after them whether this state came before the event or after.
                let n = run.focusSessions.map { min(run.focusDone + 1, $0) } ?? run.focusDone + 1
                return words.phaseCompleted(completed: completed, next: next, autoStarted: autoStarted, cycle: n,
                                            longBreakEvery: run.focusSessions)
            }
            let every = room.snapshot?.pendingSettings?.longBreakEvery ?? room.snapshot?.settings.longBreakEvery
            return words.phaseCompleted(completed: completed, next: next, autoStarted: autoStarted, cycle: cycle,
                                        longBreakEvery: every)
        case let .memberJoined(member, name):
            return member == room.myID ? nil : words(.evJoined, ["name": name])
        case .memberReturned(let member):
            return member == room.myID ? nil : said(.evIsBack, member)
        case let .memberAway(member, reason, connection):
            switch reason {
            case .away: return member == room.myID ? words(.youAway) : said(.evAway, member)
            // Closed on purpose (a tab closed, pomo quit): stepped out; lost, or not said: lost the connection.
            case .disconnected: return said(connection == .closed ? .evClosed : .evLost, member)
            }
        case .memberBack(let member):
            return member == room.myID ? words(.youBack) : said(.evIsBack, member)
        case let .memberLeft(member, reason):
            switch reason {
            case .left: return said(.evLeft, member)
            case .expired: return said(.evTimedOut, member)
            case .removed: return member == room.myID ? words(.youRemoved) : said(.evRemoved, member)
            }
        case let .control(action, by, seconds):
            let phase = words.phase(room.phase)
            switch action {
            case .start: return said(.evStarted, by, ["phase": room.phase == .idle ? words.phase(.focus) : phase])
            case .pause: return said(.evPaused, by)
            case .resume: return said(.evResumed, by)
            case .skip: return said(.evSkipped, by, ["phase": phase])
            case .reset: return said(.evReset, by)
            case .configure: return said(.evConfigured, by)
            case .extend:
                let s = seconds ?? 0
                let amount = s % 60 == 0 ? words(.amountMin, ["n": abs(s) / 60]) : words(.amountSec, ["n": abs(s)])
                return said(s >= 0 ? .evAdded : .evTookOff, by, ["amount": amount])
            }
        case .hostChanged(let member):
            guard let member else { return nil }
            return member == room.myID ? words(.youHost) : said(.evHost, member)
        case let .controlModeChanged(mode, by):
            return said(mode == .host ? .evHostOnly : .evAnyone, by)
        case .schedule(let event):
            switch event {
            case let .warning(_, name, _, minutes): return "\(name) starts in \(minutes) min"
            case let .started(_, name, _): return "\(name) started"
            case let .missed(_, name, _, busy): return busy ? "\(name) skipped: a session was running" : "\(name) was missed"
            case let .ended(_, name, n): return "\(name) done: \(n) focus session\(n == 1 ? "" : "s")"
            }
        case let .lockChanged(locked, by):
            return said(locked ? .evLocked : .evUnlocked, by)
        case let .webhookDisabled(webhook, _):
            return "webhook \(webhook) switched off: it failed for a day"
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
