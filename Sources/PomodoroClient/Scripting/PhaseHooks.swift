import Foundation
import PomodoroCore
import PomodoroProtocol

/// One phase change seen by `pomo join`: what a local hook (`--on-phase`) is told in its environment.
public struct PhaseChange: Equatable, Sendable {
    public var room: String
    public var phase: Phase
    public var status: TimerStatus
    /// The phase shown before this change; nil for the first state after joining.
    public var previousPhase: Phase?
    /// Which focus of the set this is.
    public var cycle: Int
    /// When the running phase ends, wall-clock epoch milliseconds on this machine; nil unless running.
    public var endsAtMs: Int64?
    /// What is left of the phase, in whole seconds (rounded up), at the moment of the change.
    public var remainingSeconds: Int64
    /// My own task in the room ("" when none).
    public var task: String
    /// My name in the room.
    public var name: String
    public var server: String

    public init(room: String, phase: Phase, status: TimerStatus, previousPhase: Phase?, cycle: Int, endsAtMs: Int64?,
                remainingSeconds: Int64, task: String, name: String, server: String) {
        self.room = room
        self.phase = phase
        self.status = status
        self.previousPhase = previousPhase
        self.cycle = cycle
        self.endsAtMs = endsAtMs
        self.remainingSeconds = remainingSeconds
        self.task = task
        self.name = name
        self.server = server
    }

    /// Whether this is a focus that runs: the moment to be "do not disturb".
    public var isFocusing: Bool { phase == .focus && status == .running }

    /// The variables a hook gets on top of pomo's own environment (documented in README.md, "Local hooks").
    public var environment: [String: String] {
        [
            "POMO_EVENT": "phase",
            "POMO_ROOM": room,
            "POMO_PHASE": phase.rawValue,
            "POMO_STATUS": status.rawValue,
            "POMO_PREVIOUS_PHASE": previousPhase?.rawValue ?? "",
            "POMO_FOCUS": isFocusing ? "1" : "0",
            "POMO_CYCLE": String(cycle),
            "POMO_ENDS_AT": endsAtMs.map(Self.iso8601) ?? "",
            "POMO_ENDS_AT_EPOCH": endsAtMs.map { String($0 / 1000) } ?? "",
            "POMO_REMAINING": String(remainingSeconds),
            "POMO_TASK": task,
            "POMO_NAME": name,
            "POMO_SERVER": server,
        ]
    }

    /// `2026-11-28T09:25:00Z`: UTC, whole seconds, the form `date -d` and every language's parser read.
    static func iso8601(_ epochMs: Int64) -> String {
        var seconds = time_t(epochMs / 1000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        return String(format: "%04d-%02d-%02dT%02d:%02d:%02dZ", Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1,
                      Int(parts.tm_mday), Int(parts.tm_hour), Int(parts.tm_min), Int(parts.tm_sec))
    }
}

/// Watches the events of one `pomo join` and says when a hook should run: at the first state of the room and
/// then whenever the phase or the timer's status changes (focus starts, is paused or resumed, a break begins,
/// the room is reset). Ticks, members coming and going and other changes of the room fire nothing.
///
/// A pure value: the caller hands in each session event and the local moment, and runs what comes back.
public struct PhaseHookTrigger: Sendable {
    private struct Key: Equatable { var phase: Phase; var status: TimerStatus; var cycle: Int }

    public let room: String
    public let name: String
    public let server: String
    private var view = RoomView()
    private var last: Key?
    private var lastPhase: Phase?

    public init(room: String, name: String, server: String) {
        self.room = room
        self.name = name
        self.server = server
    }

    /// The change `event` made, if it is one a hook hears about.
    public mutating func observe(_ event: SessionEvent) -> PhaseChange? {
        guard case let .message(message, _, receivedAt) = event,
              view.apply(message, receivedAt: receivedAt) == .applied,
              let snapshot = view.snapshot else { return nil }
        let key = Key(phase: snapshot.phase, status: snapshot.status, cycle: snapshot.cycle)
        guard key != last else { return nil }
        let previous = lastPhase
        last = key
        lastPhase = snapshot.phase
        let remainingMs = view.remainingMs(at: receivedAt)
        let running = snapshot.status == .running
        return PhaseChange(room: room, phase: snapshot.phase, status: snapshot.status, previousPhase: previous,
                           cycle: snapshot.cycle, endsAtMs: running ? receivedAt.wallMs + remainingMs : nil,
                           remainingSeconds: (remainingMs + 999) / 1000, task: view.me?.task ?? "", name: name,
                           server: server)
    }
}
