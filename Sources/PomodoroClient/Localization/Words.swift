import PomodoroCore
import PomodoroProtocol

/// Everything the full-screen view says, by name. Each language has a table of its own
/// (`Words+English.swift` and beside it); a test checks that every table has every phrase with the same
/// placeholders, as the page's i18n test does.
public enum Phrase: String, CaseIterable, Sendable {
    // The title bar and the screen before the room
    case connecting, live, reconnecting, reconnectingIn, replaced, disconnected
    case connectingTo, retrying, connectionLost, serverUnavailable
    // The phase line
    case phaseIdle, phaseFocus, phaseShortBreak, phaseLongBreak
    case cycleLong, cycleShort, endsAt, paused, ready, notStarted
    // A scheduled run's place in its set (instead of the cycle)
    case setLong, setShort, setOpenLong, setOpenShort
    // Members
    case members, hereOf, hereCount, awayCount, offlineCount, done, youSuffix, offline, away, andMore, plusMore
    // Settings
    case settingsLong, settingsShort, on, off, nextPhase
    // The task editor and the reset question
    case editHintLong, editHintShort, taskPrompt, resetQuestion, resetYes, anyOtherKey, keepsIt
    // Key labels
    case keyStart, keyPause, keyResume, keySkip, keyReset, keyOneMin, keyAdd, keyTask, keyAway, keyBack
    case keyMute, keyUnmute, keyQuit, keyExtend
    // Notices
    case resetCancelled, notConnected, reconnected, reconnectedNew, welcomeBack, joinedRoom
    case notifyTitle, notifyStarted, notifyReady, refused, refusedCommand, tookOver, silencedOn, silencedOff
    // Events
    case you, evJoined, evIsBack, youAway, evAway, evLost, evClosed, youBack, evLeft, evTimedOut
    case evStarted, evPaused, evResumed, evSkipped, evReset, evConfigured, evAdded, evTookOff
    case amountMin, amountSec, youHost, evHost, evHostOnly, evAnyone
    case evRemoved, youRemoved, evLocked, evUnlocked
    case phaseDoneStarted, phaseDoneNext, focusOf
    // The server's refusals, by code (PROTOCOL.md §10)
    case errBadJSON, errBadRequest, errUnknownType, errNotJoined, errAlreadyJoined, errTooLarge
    case errBinaryUnsupported, errInvalidState, errRoomFull, errReplaced, errShuttingDown, errRateLimited
    case errRoomLimit, errForbidden, errBadPasscode, errUnavailable, errStoreUnavailable, errNotFound, errInternal
    case errRemoved, errBanned, errObserver, errWebhookLimit
    // The host's tools (p k c h) and the list of keys (?)
    case keyHelp, keyPasscode, keyRemove, keyControl, keyHandOff, keyHost
    case nobodyElse, noPasscodeToRemove, passcodeLength, noSuchMember
    case passcodePrompt, passcodeHintLong, passcodeHintShort, removePrompt, handOffPrompt, pickHintLong, pickHintShort
    case helpTitle, helpClose, helpToggle, helpSkip, helpReset, helpExtend, helpAdd, helpTask, helpAway, helpMute
    case helpQuit, helpHelp, helpMore, helpHostTitle, helpPasscode, helpRemove, helpControl, helpHandOff
    // The plain lines of `pomo join --plain` (SpokenLines): a sentence per change, for screen readers and logs
    case plainJoined, plainJoinedResumed, plainSummary, plainPerson, plainPeople, plainNotStarted, plainRunning
    case plainPausedLeft, plainReady, plainResumed, plainStarted, plainPaused, plainLastMinute
    case plainMinutes, plainOneMinute, plainSeconds, plainOneSecond
}

/// The phrases of one language, with `{name}` placeholders filled in.
public struct Words: Sendable, Equatable {
    public let language: Language

    public init(_ language: Language = .en) { self.language = language }

    public static func table(_ language: Language) -> [Phrase: String] {
        switch language {
        case .en: english
        case .zhHans: simplifiedChinese
        case .zhHant: traditionalChinese
        case .ko: korean
        }
    }

    /// The phrase in this language (English where a table lacks it), its placeholders filled from `values`.
    public func callAsFunction(_ phrase: Phrase, _ values: [String: CustomStringConvertible] = [:]) -> String {
        var text = Self.table(language)[phrase] ?? Self.english[phrase] ?? phrase.rawValue
        for (name, value) in values { text = text.replacingOccurrences(of: "{\(name)}", with: value.description) }
        return text
    }

    /// Why a connection dropped, from the session's English reason: said in this language when it is one pomo
    /// words itself (a proxy or a restarting server, `RoomSession.explain`), else plainly "the connection was
    /// lost" (the other reasons may quote the transport, in English).
    public func reason(_ english: String) -> String {
        if language == .en { return english }
        for status in RoomSession.unavailableStatuses where english == Words(.en)(.serverUnavailable, ["status": status]) {
            return self(.serverUnavailable, ["status": status])
        }
        return self(.connectionLost)
    }

    public func phase(_ phase: Phase) -> String {
        switch phase {
        case .idle: self(.phaseIdle)
        case .focus: self(.phaseFocus)
        case .shortBreak: self(.phaseShortBreak)
        case .longBreak: self(.phaseLongBreak)
        }
    }

    /// What a refusal means, by its code; the server's own words are English and stay out of other languages.
    public func error(_ code: ErrorCode) -> String {
        switch code {
        case .badJSON: self(.errBadJSON)
        case .badRequest: self(.errBadRequest)
        case .unknownType: self(.errUnknownType)
        case .notJoined: self(.errNotJoined)
        case .alreadyJoined: self(.errAlreadyJoined)
        case .tooLarge: self(.errTooLarge)
        case .binaryUnsupported: self(.errBinaryUnsupported)
        case .invalidState: self(.errInvalidState)
        case .roomFull: self(.errRoomFull)
        case .replaced: self(.errReplaced)
        case .shuttingDown: self(.errShuttingDown)
        case .rateLimited: self(.errRateLimited)
        case .roomLimit: self(.errRoomLimit)
        case .forbidden: self(.errForbidden)
        case .badPasscode: self(.errBadPasscode)
        case .removed: self(.errRemoved)
        case .banned: self(.errBanned)
        case .unavailable: self(.errUnavailable)
        case .storeUnavailable: self(.errStoreUnavailable)
        case .notFound: self(.errNotFound)
        case .webhookLimit: self(.errWebhookLimit)
        case .internalError: self(.errInternal)
        case .observer: self(.errObserver)
        }
    }

    /// The settings in one line, long or short, with lengths as `Labels.duration` writes them ("25m").
    public func settings(_ s: RoomSettings, short: Bool) -> String {
        let values: [String: CustomStringConvertible] = [
            "focus": Labels.duration(seconds: s.focus), "short": Labels.duration(seconds: s.shortBreak),
            "long": Labels.duration(seconds: s.longBreak), "every": s.longBreakEvery,
            "auto": self(s.autoStart ? .on : .off),
        ]
        return self(short ? .settingsShort : .settingsLong, values)
    }

    /// The one-line description of a phase change, e.g. "Focus done · Short break next".
    public func phaseCompleted(completed: Phase, next: Phase, autoStarted: Bool, cycle: Int, longBreakEvery: Int?) -> String {
        var nextText = phase(next)
        if next == .focus, let every = longBreakEvery { nextText = self(.focusOf, ["phase": nextText, "n": cycle, "total": every]) }
        return self(autoStarted ? .phaseDoneStarted : .phaseDoneNext, ["completed": phase(completed), "next": nextText])
    }
}
