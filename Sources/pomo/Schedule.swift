import ArgumentParser
import Foundation
import PomodoroClient
import PomodoroCore
import PomodoroProtocol

/// `pomo schedule`: a room's schedules, listed, added, changed, switched and removed (docs/PROTOCOL.md §15).
struct ScheduleCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "schedule",
        abstract: "List a room's scheduled sessions, or add, edit, remove, switch them on and off.",
        discussion: """
            The server starts the room by itself at each schedule's time, warns a few minutes before, and \
            stops after the given number of focus sessions. Times are local to the schedule's zone; the next \
            start is also shown in this machine's zone.

            Examples:
              pomo schedule team-alpha
              pomo schedule add team-alpha "Standup" 09:30 --days mon,tue,wed,thu,fri --sessions 2
              pomo schedule add team-alpha "Launch" 14:00 --date 2026-12-03 --zone America/New_York
              pomo schedule add team-alpha "Deep work" 08:00 --days mon,thu --focus 50m --short-break 10m --sessions 2
              pomo schedule edit team-alpha s1 "Standup" 10:00 --days mon,wed
              pomo schedule off team-alpha s1
              pomo schedule rm team-alpha s1
            """,
        subcommands: [List.self, Add.self, Edit.self, Remove.self, On.self, Off.self],
        defaultSubcommand: List.self)

    /// Sends `request` in a short visit; prints the room's schedules from the `schedules` message that
    /// answers it (a list), or that follows its `ok` (a change).
    static func perform(_ request: ScheduleRequest, room: String, visit: VisitOptions, json: Bool = false) async throws {
        let ref = Ref.string("schedule")
        var done = false
        try await Visit(room: room, options: visit).run { event, _ in
            guard case let .message(reply, raw, _) = event else { return .wait }
            switch reply {
            case .welcome:
                return .send(.schedule(request), ref: ref)
            case let .error(code, text, field, r?, _) where r == ref:
                return .finish(fail("the server refused: \(Labels.refusal(text, field: field)) [\(code.rawValue)]", status: PomoExit.refused))
            case .ok(_, _, let r?) where r == ref:
                done = true
                return .wait
            case let .schedules(payload, r):
                guard r == ref || done else { return .wait }
                if json {
                    printLine(String(decoding: raw, as: UTF8.self))
                } else {
                    for line in ScheduleLines.lines(payload, viewer: .current) { printLine(line) }
                }
                return .finish(nil)
            default:
                return .wait
            }
        }
    }

    struct Target: ParsableArguments {
        @Argument(help: "The room's name.")
        var room: String
        @OptionGroup var visit: VisitOptions
        func validate() throws { try validateRoom(room) }
    }

    struct Fields: ParsableArguments {
        @Argument(help: "The schedule's name.")
        var name: String
        @Argument(help: ArgumentHelp("The start time, HH:MM, local to --zone.", valueName: "time"))
        var time: String
        @Option(help: ArgumentHelp("Weekdays: mon,tue,wed,thu,fri,sat,sun.", valueName: "days"))
        var days: String?
        @Option(help: ArgumentHelp("One date instead, YYYY-MM-DD.", valueName: "date"))
        var date: String?
        @Option(help: ArgumentHelp("The IANA zone of the time. Default: this machine's.", valueName: "zone"))
        var zone: String?
        @Option(help: ArgumentHelp("Focus sessions before the room stops. Default: until stopped.", valueName: "n"))
        var sessions: Int?
        @Option(help: ArgumentHelp("Minutes of warning before the start (0–60). Default: 5.", valueName: "minutes"))
        var warning: Int?
        @Option(help: ArgumentHelp("The session's own focus length (with its own breaks). Default: the room's.",
                                   valueName: "duration"))
        var focus: String?
        @Option(help: ArgumentHelp("The session's own short break. Default: 5m when --focus is given.",
                                   valueName: "duration"))
        var shortBreak: String?
        @Option(help: ArgumentHelp("The session's own long break. Default: 15m when --focus is given.",
                                   valueName: "duration"))
        var longBreak: String?

        func validate() throws {
            guard (days == nil) != (date == nil) else { throw ValidationError("give either --days or --date") }
            for (flag, value) in [("--focus", focus), ("--short-break", shortBreak), ("--long-break", longBreak)] {
                if let value, DurationText.seconds(value) == nil {
                    throw ValidationError("\(flag) must be a duration, e.g. 25m")
                }
            }
            if focus == nil && (shortBreak != nil || longBreak != nil) {
                throw ValidationError("give --focus with the session's own breaks")
            }
        }

        /// The session's own settings: given lengths, the standard ones for the rest; nil runs the room's.
        var settings: RoomSettings? {
            guard let focus = focus.flatMap(DurationText.seconds) else { return nil }
            var settings = RoomSettings.standard
            settings.focus = focus
            if let short = shortBreak.flatMap(DurationText.seconds) { settings.shortBreak = short }
            if let long = longBreak.flatMap(DurationText.seconds) { settings.longBreak = long }
            return settings
        }

        var fields: ScheduleFields {
            ScheduleFields(name: name, time: time, zone: zone ?? TimeZone.current.identifier, date: date,
                           days: days.map { $0.split(separator: ",").map { String($0) } },
                           settings: settings, sessions: sessions, warning: warning)
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "List the room's schedules.")
        @OptionGroup var target: Target
        @Flag(help: "Print the schedules message as the server sent it.")
        var json = false
        func run() async throws { try await perform(.list, room: target.room, visit: target.visit, json: json) }
    }

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "add", abstract: "Add a schedule.")
        @OptionGroup var target: Target
        @OptionGroup var fields: Fields
        func run() async throws { try await perform(.add(fields.fields), room: target.room, visit: target.visit) }
    }

    struct Edit: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "edit", abstract: "Replace a schedule.")
        @Argument(help: "The room's name.")
        var room: String
        @Argument(help: ArgumentHelp("The schedule's id, as listed (s1).", valueName: "id"))
        var id: String
        @OptionGroup var fields: Fields
        @OptionGroup var visit: VisitOptions
        func validate() throws { try validateRoom(room) }
        func run() async throws { try await perform(.change(id: id, fields.fields), room: room, visit: visit) }
    }

    struct Switch: ParsableArguments {
        @Argument(help: "The room's name.")
        var room: String
        @Argument(help: ArgumentHelp("The schedule's id, as listed (s1).", valueName: "id"))
        var id: String
        @OptionGroup var visit: VisitOptions
        func validate() throws { try validateRoom(room) }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "rm", abstract: "Remove a schedule.")
        @OptionGroup var target: Switch
        func run() async throws { try await perform(.delete(id: target.id), room: target.room, visit: target.visit) }
    }

    struct On: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "on", abstract: "Switch a schedule on.")
        @OptionGroup var target: Switch
        func run() async throws {
            try await perform(.setEnabled(id: target.id, enabled: true), room: target.room, visit: target.visit)
        }
    }

    struct Off: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "off", abstract: "Switch a schedule off.")
        @OptionGroup var target: Switch
        func run() async throws {
            try await perform(.setEnabled(id: target.id, enabled: false), room: target.room, visit: target.visit)
        }
    }
}
