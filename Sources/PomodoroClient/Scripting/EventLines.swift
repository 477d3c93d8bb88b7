import PomodoroCore
import PomodoroProtocol

/// The plain-lines view (`pomo join` into a pipe or file, `pomo watch` without `--json`): one line per
/// thing that happened, each starting with the local time, no escape codes, no per-second ticks.
public struct EventLines: Sendable {
    public private(set) var dashboard: Dashboard
    private var lastSummary: String?
    public let utcOffsetSeconds: Int

    public init(roomName: String, serverLabel: String, utcOffsetSeconds: Int) {
        dashboard = Dashboard(roomName: roomName, serverLabel: serverLabel, bell: false)
        self.utcOffsetSeconds = utcOffsetSeconds
    }

    /// The lines a session event adds (often none).
    public mutating func lines(for event: SessionEvent) -> [String] {
        var out: [String] = []
        let at: LocalInstant
        switch event {
        case .connecting(let attempt):
            _ = dashboard.handle(event)
            return attempt == 1 ? [] : []
        case let .reconnecting(attempt, retryAt, reason):
            _ = dashboard.handle(event)
            let seconds = max(0, (retryAt.monotonicMs - LocalInstant.now().monotonicMs + 999) / 1000)
            return ["\(stamp(LocalInstant.now())) \(reason.capitalizedFirst); reconnecting in \(seconds)s (attempt \(attempt))"]
        case .ended:
            _ = dashboard.handle(event)
            return []
        case let .message(message, _, receivedAt):
            at = receivedAt
            let before = dashboard.lastEvent
            let flashBefore = dashboard.flash
            _ = dashboard.handle(event)
            if case .welcome(let you, let room, _, _, _) = message {
                out.append("\(stamp(at)) Joined \(room.room) as \(dashboard.room.me?.name ?? "?") (\(you.id))"
                    + (you.resumed ? ", place resumed" : "") + " · " + Labels.settings(room.settings, short: false))
            } else if let notice = dashboard.lastEvent, notice != before {
                out.append("\(stamp(at)) \(notice.text)")
            }
            if let flash = dashboard.flash, flash != flashBefore {
                out.append("\(stamp(at)) \(flash.text)")
            }
        }
        // A summary line whenever the timer's phase or status changes.
        if let s = dashboard.room.snapshot {
            let remaining = Labels.clock(seconds: s.status == .idle ? 0 : dashboard.room.displaySeconds(at: at))
            let summary = "\(Labels.phaseAndPosition(s)) · \(s.status.rawValue)"
            if summary != lastSummary {
                lastSummary = summary
                out.append("\(stamp(at)) \(summary)" + (s.status == .idle ? "" : " · \(remaining) left"))
            }
        }
        return out
    }

    func stamp(_ at: LocalInstant) -> String {
        let secondsOfDay = ((at.wallMs / 1000 + Int64(utcOffsetSeconds)) % 86400 + 86400) % 86400
        return "\(Labels.twoDigits(secondsOfDay / 3600)):\(Labels.twoDigits(secondsOfDay % 3600 / 60)):\(Labels.twoDigits(secondsOfDay % 60))"
    }
}
