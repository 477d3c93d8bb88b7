import PomodoroCore
import PomodoroProtocol

/// `pomo status --format` and `pomo watch --format`: a one-line template for status bars (tmux, polybar).
///
/// | spec | expands to | example |
/// |---|---|---|
/// | `%p` | phase | `Focus`, `Short break`, `Long break`, `Idle` |
/// | `%P` | phase, as on the wire | `focus`, `shortBreak` |
/// | `%r` | remaining time, MM:SS (H:MM:SS from an hour) | `12:34` |
/// | `%R` | remaining whole seconds | `754` |
/// | `%c` | which focus of the set: of a scheduled set while one runs, else of the long-break cycle | `3` |
/// | `%n` | focus sessions in that set (empty for a scheduled set that runs until stopped) | `4` |
/// | `%s` | status | `running`, `paused`, `ready`, `idle`; `offline` (below) |
/// | `%i` | status symbol | `▶` running, `⏸` paused, `■` otherwise; `↻` offline |
/// | `%b` | progress bar, 10 cells | `███▌░░░░░░` |
/// | `%%` | a percent sign | `%` |
/// | `%m` | members present (not counting pomo's own visit) | `2` |
/// | `%M` | members in the room (not counting pomo's own visit) | `3` |
/// | `%o` | room name | `team-alpha` |
/// | `%e` | when the phase ends, HH:MM local time (empty unless running) | `14:25` |
/// | `%N` | the next scheduled session's start, HH:MM local time (empty when none is coming) | `09:30` |
/// | `%T` | the next scheduled session's name (empty when none is coming) | `Standup` |
///
/// While the connection is lost (`pomo watch` reconnecting), the line says so rather than count down a
/// timer it no longer hears from: `%s` reads `offline`, `%i` `↻`, `%r` `--:--`, `%b` an empty bar, and `%R`
/// and `%e` are empty; the room's other fields keep their last known values.
public struct StatusFormat: Equatable, Sendable {
    public static let `default` = "%p %r"

    enum Piece: Equatable, Sendable {
        case text(String)
        case spec(Character)
    }

    static let specs: Set<Character> = ["p", "P", "r", "R", "c", "n", "s", "i", "b", "m", "M", "o", "e", "N", "T", "%"]

    let pieces: [Piece]
    public let source: String

    /// Why a format was refused.
    public struct Invalid: Error, Equatable, CustomStringConvertible {
        public let description: String
    }

    public init(_ source: String) throws(Invalid) {
        self.source = source
        var pieces: [Piece] = []
        var text = ""
        var iterator = source.makeIterator()
        while let c = iterator.next() {
            guard c == "%" else {
                text.append(c)
                continue
            }
            guard let spec = iterator.next() else {
                throw Invalid(description: "the format ends with a lone '%' (write %% for a percent sign)")
            }
            guard Self.specs.contains(spec) else {
                throw Invalid(description: "unknown format specifier '%\(spec)' (see pomo status --help)")
            }
            if spec == "%" {
                text.append("%")
            } else {
                if !text.isEmpty { pieces.append(.text(text)) }
                text = ""
                pieces.append(.spec(spec))
            }
        }
        if !text.isEmpty { pieces.append(.text(text)) }
        self.pieces = pieces
    }

    /// What `%s` reads while the connection to the server is lost.
    public static let offlineStatus = "offline"
    /// What `%i` shows while the connection to the server is lost.
    public static let offlineSymbol = "↻"
    /// What `%r` shows while the connection to the server is lost.
    public static let offlineClock = "--:--"

    /// Expands the format for the room as seen at `now`. `myID` is pomo's own short visit, left out of
    /// the member counts. `offline`: the connection is lost, so the room is known only as it was (the
    /// timer's fields say so instead of counting down).
    public func expand(_ view: RoomView, now: LocalInstant, utcOffsetSeconds: Int, offline: Bool = false) -> String {
        guard let s = view.snapshot else { return "" }
        // The counts cover the whole room, also a big one that lists only its first members.
        let mine = view.myID == nil ? 0 : 1
        let othersPresent = s.presentCount - (view.me?.present ?? true ? mine : 0)
        var out = ""
        for piece in pieces {
            switch piece {
            case .text(let t): out += t
            case .spec(let c) where offline && "rRsibe".contains(c):
                switch c {
                case "r": out += Self.offlineClock
                case "s": out += Self.offlineStatus
                case "i": out += Self.offlineSymbol
                case "b": out += Self.bar(0, cells: 10)
                default: break  // %R, %e: no number and no end time to give
                }
            case .spec(let c):
                switch c {
                case "p": out += Labels.phase(s.phase)
                case "P": out += s.phase.rawValue
                case "r": out += Labels.clock(seconds: view.displaySeconds(at: now))
                case "R": out += "\(view.displaySeconds(at: now))"
                case "c": out += "\(Labels.setPosition(s).n)"
                case "n": out += Labels.setPosition(s).total.map(String.init) ?? ""
                case "s": out += s.status.rawValue
                case "i": out += s.status == .running ? "▶" : s.status == .paused ? "⏸" : "■"
                case "b": out += Self.bar(view.progress(at: now), cells: 10)
                case "m": out += "\(max(0, othersPresent))"
                case "M": out += "\(max(0, s.memberCount - mine))"
                case "o": out += s.room
                case "e":
                    if s.status == .running {
                        out += Labels.timeOfDay(epochMs: now.wallMs + view.remainingMs(at: now),
                                                utcOffsetSeconds: utcOffsetSeconds)
                    }
                case "N":
                    if let next = s.nextSession {
                        out += Labels.timeOfDay(epochMs: next.startsAt, utcOffsetSeconds: utcOffsetSeconds)
                    }
                case "T": out += s.nextSession?.name ?? ""
                default: break
                }
            }
        }
        return out
    }

    static func bar(_ fraction: Double, cells: Int) -> String {
        let eighths = Int((fraction * Double(cells * 8)).rounded(.down))
        let full = min(cells, eighths / 8)
        let partial = full < cells ? eighths % 8 : 0
        let edges = ["", "▏", "▎", "▍", "▌", "▋", "▊", "▉"]
        return String(repeating: "█", count: full) + edges[partial]
            + String(repeating: "░", count: cells - full - (partial > 0 ? 1 : 0))
    }
}
