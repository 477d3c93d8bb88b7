import PomodoroCore
import PomodoroProtocol

/// `pomo join --plain` (and `join` with `TERM=dumb` or into a pipe): one sentence per change, in the reader's
/// language, for a screen reader or a log ("Focus started, 25 minutes, ends 10:25"). No escape codes, and the
/// countdown is not repeated: the time left is said when the timer changes and once more at one minute left.
public struct SpokenLines: Sendable {
    public private(set) var dashboard: Dashboard
    public let utcOffsetSeconds: Int
    private var words: Words { dashboard.words }
    /// The timer as last said: its phase, status and cycle.
    private var said: (phase: Phase, status: TimerStatus, cycle: Int)?
    /// The phase whose last minute was said (so it is said once).
    private var warned: String?

    public init(roomName: String, serverLabel: String, utcOffsetSeconds: Int, words: Words = Words()) {
        dashboard = Dashboard(roomName: roomName, serverLabel: serverLabel, bell: false, words: words)
        self.utcOffsetSeconds = utcOffsetSeconds
    }

    /// The lines a session event adds (often none).
    public mutating func lines(for event: SessionEvent) -> [String] {
        var out: [String] = []
        guard case let .message(message, _, at) = event else {
            _ = dashboard.handle(event)
            if case let .reconnecting(attempt, retryAt, reason) = event {
                let seconds = max(0, (retryAt.monotonicMs - LocalInstant.now().monotonicMs + 999) / 1000)
                out.append(words(.retrying, ["reason": words.reason(reason).capitalizedFirst, "s": seconds, "n": attempt]))
            }
            return out
        }
        let before = dashboard.lastEvent
        let flashBefore = dashboard.flash
        _ = dashboard.handle(event)
        if case .welcome(let you, let room, _, _, _) = message {
            out.append(words(you.resumed ? .plainJoinedResumed : .plainJoined,
                             ["room": room.room, "name": dashboard.room.me?.name ?? "?", "id": you.id]))
            said = (room.phase, room.status, room.cycle)
            out.append(summary(room, at: at))
            return out
        }
        if let notice = dashboard.lastEvent, notice != before, !isTimerNotice(message) { out.append(notice.text) }
        if let flash = dashboard.flash, flash != flashBefore { out.append(flash.text) }
        guard let s = dashboard.room.snapshot else { return out }
        let now = (s.phase, s.status, s.cycle)
        if let last = said, last != now {
            out.append(change(from: last, to: s, at: at))
        }
        said = now
        // The last minute, once per phase, when a running phase crosses it.
        let key = "\(s.phase)|\(s.cycle)|\(s.seq)"
        let left = dashboard.room.displaySeconds(at: at)
        if s.status == .running, left <= 60, left > 0, warned != key,
           case .tick = message {
            warned = key
            out.append(words(.plainLastMinute, ["phase": words.phase(s.phase)]))
        }
        return out
    }

    /// The room in one sentence: "Focus, 18 minutes left, ends 10:25, 4 people here".
    public func summary(_ s: SnapshotPayload, at: LocalInstant) -> String {
        let people = words(s.presentCount == 1 ? .plainPerson : .plainPeople, ["n": s.presentCount])
        let state: String
        switch s.status {
        case .idle: state = words(.plainNotStarted)
        case .running:
            state = words(.plainRunning, ["phase": words.phase(s.phase), "left": left(at: at), "time": endsAt(at: at)])
        case .paused: state = words(.plainPausedLeft, ["phase": words.phase(s.phase), "left": left(at: at)])
        case .ready: state = words(.plainReady, ["phase": words.phase(s.phase), "length": minutes(Int64(s.remainingMs / 1000))])
        }
        return words(.plainSummary, ["state": state, "people": people])
    }

    /// What became of the timer, said once: started, paused, resumed, ready, reset.
    private func change(from last: (phase: Phase, status: TimerStatus, cycle: Int), to s: SnapshotPayload,
                        at: LocalInstant) -> String {
        let phase = words.phase(s.phase)
        switch s.status {
        case .running where last.status == .paused && last.phase == s.phase && last.cycle == s.cycle:
            return words(.plainResumed, ["phase": phase, "left": left(at: at), "time": endsAt(at: at)])
        case .running:
            return words(.plainStarted, ["phase": phase, "length": minutes(s.phaseLengthMs / 1000), "time": endsAt(at: at)])
        case .paused: return words(.plainPaused, ["phase": phase, "left": left(at: at)])
        case .ready: return words(.plainReady, ["phase": phase, "length": minutes(Int64(s.remainingMs / 1000))])
        case .idle: return words(.plainNotStarted)
        }
    }

    /// Starts, pauses and resumes are said by `change`, with the time; the event's own line would repeat it.
    private func isTimerNotice(_ message: ServerMessage) -> Bool {
        guard case let .event(_, kind, _) = message, case let .control(action, _, _) = kind else { return false }
        return action == .start || action == .pause || action == .resume
    }

    private func left(at: LocalInstant) -> String { minutes(dashboard.room.displaySeconds(at: at)) }

    /// Whole minutes from a minute and a half on, else seconds: what a person says.
    public func minutes(_ seconds: Int64) -> String {
        if seconds >= 90 { return words(.plainMinutes, ["n": (seconds + 30) / 60]) }
        if seconds >= 60 { return words(.plainOneMinute) }
        return words(seconds == 1 ? .plainOneSecond : .plainSeconds, ["n": seconds])
    }

    /// The local time the running phase ends, "10:25".
    private func endsAt(at: LocalInstant) -> String {
        let endMs = at.wallMs + dashboard.room.remainingMs(at: at)
        let secondsOfDay = ((endMs / 1000 + Int64(utcOffsetSeconds)) % 86400 + 86400) % 86400
        return "\(Labels.twoDigits(secondsOfDay / 3600)):\(Labels.twoDigits(secondsOfDay % 3600 / 60))"
    }
}
