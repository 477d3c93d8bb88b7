import ArgumentParser
import Foundation
import PomodoroClient
import PomodoroProtocol

struct Status: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print the room's timer as one line (for tmux and polybar) or as JSON, and exit.",
        discussion: """
            FORMAT SPECIFIERS (--format, default '%p %r'):
              %p  phase: Focus, Short break, Long break, Idle
              %P  phase as on the wire: idle, focus, shortBreak, longBreak
              %r  remaining time, MM:SS (H:MM:SS from an hour on)
              %R  remaining time in whole seconds
              %c  which focus of the set this is (of a scheduled set while one runs)
              %n  focus sessions in the set (a scheduled set's while one runs, else the
                  long-break cycle; empty for a scheduled set that runs until stopped)
              %s  status: running, paused, ready, idle (offline: watch, below)
              %i  status symbol: ▶ running, ⏸ paused, ■ otherwise (↻ offline)
              %b  progress bar of the phase, 10 cells
              %e  when the phase ends, HH:MM local time (empty unless running)
              %m  members present
              %M  members in the room
              %o  the room's name
              %N  the next scheduled session's start, HH:MM local time (empty when none): 'next focus %N'
              %T  the next scheduled session's name (empty when none)
              %%  a percent sign

            `pomo watch --format` marks a lost connection at once, until it is back: %s reads offline, \
            %i ↻, %r --:--, %b an empty bar, %R and %e are empty; the other specifiers keep the room as \
            last seen.

            --json prints the room snapshot as the server sent it (docs/PROTOCOL.md §5), keys sorted.

            status observes the room without joining it: nobody in the room sees it, it is not counted, \
            and a room that is not open is refused (exit 1), never created. A locked room needs \
            --passcode. A status bar that refreshes often is better fed by `pomo watch ROOM --format …`, \
            which keeps watching and prints a line whenever the text changes (polybar: tail = true).

            Examples:
              pomo status team-alpha                           prints: Focus 12:34
              pomo status team-alpha --format '%i %r %c/%n'    prints: ▶ 12:34 3/4
              tmux: set -g status-right '#(pomo status team-alpha --format "%%p %%r")'
            """)

    @Argument(help: "The room's name.")
    var room: String

    @Option(help: ArgumentHelp("What to print; see FORMAT SPECIFIERS.", valueName: "format"))
    var format: String = StatusFormat.default

    @Flag(help: "Print the room snapshot as JSON instead.")
    var json = false

    @OptionGroup var visit: VisitOptions

    func validate() throws {
        try validateRoom(room)
        do { _ = try StatusFormat(format) } catch { throw ValidationError(error.description) }
    }

    func run() async throws {
        let format = try StatusFormat(self.format)
        let json = self.json
        try await Visit(room: room, options: visit).run(observe: true) { event, view in
            guard case let .message(.observing, raw, at) = event else { return .wait }
            if json {
                guard let text = snapshotJSON(raw, without: nil) else {
                    return .finish(fail("the server's answer was not readable JSON", status: 70))
                }
                printLine(text)
            } else {
                printLine(format.expand(view, now: at, utcOffsetSeconds: utcOffsetNow()))
            }
            return .finish(nil)
        }
    }
}

/// The `room` object of a welcome, without the given member, as compact JSON with sorted keys.
func snapshotJSON(_ welcome: [UInt8], without member: String?) -> String? {
    guard let object = try? JSONSerialization.jsonObject(with: Data(welcome)) as? [String: Any],
          var room = object["room"] as? [String: Any] else { return nil }
    if let members = room["members"] as? [[String: Any]] {
        room["members"] = members.filter { ($0["id"] as? String) != member }
    }
    guard let data = try? JSONSerialization.data(withJSONObject: room, options: [.sortedKeys, .withoutEscapingSlashes])
    else { return nil }
    return String(decoding: data, as: UTF8.self)
}
