import ArgumentParser
import Foundation
import Glibc
import PomodoroClient
import PomodoroProtocol

struct Stats: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print a room's focus stats: a table per person, a bar per day, and exit.",
        discussion: """
            The table counts the last --days days (today included) in the time zone --tz: completed focus \
            sessions, focus time (h:mm) and interruptions per person, counted by name, then the whole room; \
            STREAK is how many days in a row up to today (or yesterday, while today has none yet) had a \
            completed focus, LONGEST the longest such run ever. Below, the room's focus minutes per day as bars \
            of block characters, the best day the full width. The output fits 80 columns, or $COLUMNS when \
            narrower, or the terminal's width when that is narrower.

            stats does not join the room: nobody in it sees the request. A locked room needs --passcode (or \
            $POMO_PASSCODE).

            --json prints the report as the server sent it (docs/PROTOCOL.md, "Stats and history"), keys \
            sorted, on one line.

            Examples:
              pomo stats team-alpha
              pomo stats team-alpha --days 7 --tz Europe/Berlin
              pomo stats team-alpha --json | jq '.members[].name'
            """)

    @Argument(help: "The room's name.")
    var room: String

    @Option(help: ArgumentHelp("How many days to count, today included (1–366).", valueName: "n"))
    var days: Int = 14

    @Option(help: ArgumentHelp(
        "The time zone whose midnights divide the days, e.g. Europe/Berlin. Default: this machine's.",
        valueName: "zone"))
    var tz: String?

    @Flag(help: "Print the report as JSON instead.")
    var json = false

    @OptionGroup var server: ServerOptions

    @Option(help: ArgumentHelp("Give up after this many seconds without an answer.", valueName: "seconds"))
    var timeout: Double = 10

    func validate() throws {
        try validateRoom(room)
        guard (1...366).contains(days) else { throw ValidationError("--days must be 1–366") }
        if let tz, TimeZone(identifier: tz) == nil {
            throw ValidationError("unknown time zone '\(tz)': use a name such as Europe/Berlin or UTC")
        }
        guard timeout > 0 else { throw ValidationError("--timeout must be positive") }
    }

    func run() async throws {
        let address = try server.address()
        let zone = tz ?? Self.localZone()
        var outcome = await ask(address, zone: zone)
        // This machine's zone may be a name the server does not know: then the server's default (UTC) will do.
        if tz == nil, zone != nil, case .reply(.error(.badRequest, _, "tz", _, _), _) = outcome {
            outcome = await ask(address, zone: nil)
        }
        switch outcome {
        case let .reply(.stats(report, _), raw):
            if json {
                guard let text = Self.reportJSON(raw) else {
                    throw fail("the server's stats were not readable JSON", status: 70)
                }
                printLine(text)
            } else {
                printLine(StatsRenderer.render(report, columns: Self.width()))
            }
        case .reply(.error(.unknownType, _, _, _, _), _):
            throw fail("this server does not keep stats (\(address) does not know the stats request; it is older "
                       + "than this pomo)", status: PomoExit.refused)
        case let .reply(.error(code, text, _, _, _), _):
            throw fail("the server refused the stats of \(room): \(text) [\(code.rawValue)]", status: PomoExit.refused)
        case let .reply(other, _):
            throw fail("the server answered stats with '\(other.type)'", status: 70)
        case .unreachable(let why):
            throw fail("cannot reach \(address): \(why) (is pomodoro-server running there?)", status: PomoExit.unavailable)
        case .lost(let why):
            throw fail("lost the connection to \(address): \(why)", status: PomoExit.unavailable)
        case .timedOut:
            throw fail("no answer from \(address) within \(Int(timeout)) s", status: PomoExit.unavailable)
        }
    }

    private func ask(_ address: ServerAddress, zone: String?) async -> RequestOutcome {
        let frame = ClientFrame(.stats(room: room, days: days, tz: zone, passcode: server.effectivePasscode),
                                ref: .string("stats"))
        return await OneShotRequest.send(frame, to: address, timeoutMs: Int64(timeout * 1000))
    }

    /// This machine's time zone as an IANA name, when it has one.
    static func localZone() -> String? {
        let name = TimeZone.current.identifier
        return name.isEmpty || TimeZone(identifier: name) == nil ? nil : name
    }

    /// 80 columns, or fewer when $COLUMNS or the terminal says so.
    static func width() -> Int {
        var width = 80
        if let text = ProcessInfo.processInfo.environment["COLUMNS"], let columns = Int(text), columns > 0 {
            width = min(width, columns)
        }
        if RawTerminal.isTerminal(STDOUT_FILENO) {
            width = min(width, RawTerminal(output: STDOUT_FILENO).size().columns)
        }
        return width
    }

    /// The report of a `stats` message: without `type` and `ref`, as compact JSON with sorted keys.
    static func reportJSON(_ message: [UInt8]) -> String? {
        guard var object = try? JSONSerialization.jsonObject(with: Data(message)) as? [String: Any] else { return nil }
        object["type"] = nil
        object["ref"] = nil
        guard let data = try? JSONSerialization.data(withJSONObject: object,
                                                     options: [.sortedKeys, .withoutEscapingSlashes])
        else { return nil }
        return String(decoding: data, as: UTF8.self)
    }
}
