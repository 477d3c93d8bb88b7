import ArgumentParser
import Dispatch
import Foundation
import Glibc
import PomodoroClient
import PomodoroCore

/// Exit statuses, the same for every subcommand (listed in `pomo --help`).
enum PomoExit {
    /// The server refused the request (for example `pause` when nothing runs) or the join.
    static let refused: Int32 = 1
    /// `join`: another connection took this member over with its token (close code 4001).
    static let replaced: Int32 = 3
    /// Bad usage: an unknown option, a bad room name or format (ArgumentParser's own status).
    static let usage: Int32 = 64
    /// The server could not be reached, or the connection was lost.
    static let unavailable: Int32 = 69
}

/// Prints `pomo: message` on standard error and exits with `status`.
func fail(_ message: String, status: Int32) -> ExitCode {
    RawTerminal.write("pomo: \(message)\n", to: STDERR_FILENO)
    return ExitCode(status)
}

/// The server and how to reach it, shared by every subcommand.
struct ServerOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp(
        "The server's WebSocket URL, ws://HOST:PORT. Default: $POMO_SERVER, else \(ServerAddress.defaultURL).",
        valueName: "url"))
    var server: String?

    @Option(name: .long, help: ArgumentHelp(
        "The passcode of a locked room (default: $POMO_PASSCODE). Joining a room that does not exist yet locks it with this passcode.",
        valueName: "passcode"))
    var passcode: String?

    /// The passcode from the option, else from the environment.
    var effectivePasscode: String? {
        passcode ?? ProcessInfo.processInfo.environment["POMO_PASSCODE"].flatMap { $0.isEmpty ? nil : $0 }
    }

    func address() throws -> ServerAddress {
        let text = server ?? ProcessInfo.processInfo.environment["POMO_SERVER"].flatMap { $0.isEmpty ? nil : $0 }
            ?? ServerAddress.defaultURL
        do {
            return try ServerAddress(parsing: text)
        } catch {
            throw ValidationError(error.description)
        }
    }
}

/// Checks a room name the way the server does, so a typo is a usage error before any connection.
func validateRoom(_ room: String) throws {
    do {
        _ = try RoomID(validating: room)
    } catch {
        throw ValidationError("bad room name '\(room)': use 1–64 characters of A–Z, a–z, 0–9, '_' or '-'")
    }
}

/// Checks a display name the way the server does.
func validateName(_ name: String) throws {
    do {
        _ = try TextRules.clean(name, field: "name", allowEmpty: false, maxLength: 40)
    } catch {
        throw ValidationError("bad name '\(name)': use 1–40 characters, no control characters")
    }
}

/// The local time zone's offset from UTC now, in seconds.
func utcOffsetNow() -> Int { TimeZone.current.secondsFromGMT() }

/// One line on standard output, written at once (standard output may be a pipe to a status bar).
func printLine(_ text: String) { RawTerminal.write(text + "\n", to: STDOUT_FILENO) }

/// The message for a session that ended without success, and its exit status.
func failure(for end: SessionEnd, address: ServerAddress, room: String) -> ExitCode? {
    switch end {
    case .stopped:
        return nil
    case .replaced:
        return fail("another connection took over this member of \(room) (pomo join with the same token elsewhere?); "
                    + "not reconnecting", status: PomoExit.replaced)
    case .unreachable(let why):
        return fail("cannot reach \(address): \(why) (is pomodoro-server running there?)", status: PomoExit.unavailable)
    case let .refused(.removed, message, _):
        let why = end.rejoinWait.map { "the host removed you from this room; \($0)" } ?? message
        return fail("removed from \(room): \(why); not reconnecting [removed]", status: PomoExit.refused)
    case let .refused(code, message, _):
        let why = code == .banned ? end.rejoinWait.map { "the host removed this member lately; \($0)" } ?? message : message
        return fail("the server refused to let us into \(room): \(why) [\(code.rawValue)]", status: PomoExit.refused)
    case .lost(let why):
        return fail("lost the connection to \(address): \(why)", status: PomoExit.unavailable)
    }
}

/// Catches SIGINT, SIGTERM and SIGHUP (and optionally SIGWINCH) and hands them on as values.
final class SignalWatcher {
    private let sources: [any DispatchSourceSignal]

    init(_ signals: [Int32], _ deliver: @escaping @Sendable (Int32) -> Void) {
        sources = signals.map { signo in
            signal(signo, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signo, queue: .global())
            source.setEventHandler { deliver(signo) }
            source.resume()
            return source
        }
    }

    func cancel() { for source in sources { source.cancel() } }
}

/// Desktop notifications through `notify-send`, when that program is on PATH; silently nothing otherwise.
struct Notifier: Sendable {
    let program: String?

    init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        program = Notifier.find("notify-send", path: environment["PATH"] ?? "")
    }

    /// The first executable called `name` in a PATH-style list of folders.
    static func find(_ name: String, path: String) -> String? {
        for folder in path.split(separator: ":") where !folder.isEmpty {
            let candidate = "\(folder)/\(name)"
            if access(candidate, X_OK) == 0 { return candidate }
        }
        return nil
    }

    func notify(title: String, body: String) {
        guard let program else { return }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: program)
        process.arguments = ["--app-name=pomo", title, body]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try? process.run()
    }
}
