import PomodoroCore
import PomodoroProtocol

// The client's checks of its own requests, against the limits the server sent in `welcome` rather than a
// copy of the defaults: a server configured otherwise is followed.

extension LimitsPayload {
    /// Why the server would refuse `extend` by `seconds`, or nil when it is within bounds.
    public func refusal(extending seconds: Int) -> String? {
        if seconds == 0 { return "the amount must not be zero" }
        if abs(seconds) > maxExtendSeconds {
            return "at most \(Labels.duration(seconds: maxExtendSeconds)) either way per call"
        }
        return nil
    }

    /// Whether a phase of `phaseLengthMs` may be made longer by `seconds` (the server's `maxPhaseSeconds`).
    public func allowsLengthening(phaseLengthMs: Int64, by seconds: Int) -> Bool {
        phaseLengthMs + Int64(seconds) * 1000 <= Int64(maxPhaseSeconds) * 1000
    }

    /// Why the server would refuse `configure` with `settings`, or nil. Names the option as `pomo` spells it.
    public func refusal(configuring settings: RoomSettings) -> String? {
        let longest = Labels.duration(seconds: maxSettingSeconds)
        if settings.focus < max(1, minFocusSeconds) || settings.focus > maxSettingSeconds {
            return "--focus must be a duration from \(Labels.duration(seconds: max(1, minFocusSeconds))) to \(longest)"
        }
        for (flag, value) in [("--short-break", settings.shortBreak), ("--long-break", settings.longBreak)]
        where !(1...max(1, maxSettingSeconds)).contains(value) {
            return "\(flag) must be a duration from 1s to \(longest)"
        }
        if !(1...max(1, maxLongBreakEvery)).contains(settings.longBreakEvery) {
            return "--long-break-every must be 1–\(maxLongBreakEvery)"
        }
        return nil
    }
}
