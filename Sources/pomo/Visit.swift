import ArgumentParser
import Foundation
import Glibc
import PomodoroClient
import PomodoroProtocol

/// Options of the commands that visit a room briefly as their own member.
struct VisitOptions: ParsableArguments {
    @OptionGroup var server: ServerOptions

    @Option(name: .shortAndLong, help: ArgumentHelp(
        "The name of pomo's short-lived member, as others see it come and go (commands that join only).",
        valueName: "name"))
    var name = "pomo-cli"

    @Option(help: ArgumentHelp("Give up after this many seconds without an answer.", valueName: "seconds"))
    var timeout: Double = 10

    func validate() throws {
        try validateName(name)
        guard timeout > 0 else { throw ValidationError("--timeout must be positive") }
    }
}

/// A short visit to a room: join as a new member (or observe, joining nothing), do one thing, `leave` (so
/// no member is left behind), close. A join never uses `pomo join`'s stored token: resuming that member would
/// take it over from a running `pomo join` (which would then exit with "replaced"); a watch may show it, which
/// takes nothing over (`Press`).
struct Visit {
    let room: String
    let options: VisitOptions

    /// What the visitor's step function says to do next.
    enum Step {
        case wait
        case send(ClientMessage, ref: Ref)
        /// Leave the room and end with this exit status (nil: success).
        case finish(ExitCode?)
    }

    /// Runs the visit; `step` sees every session event with the room as known so far.
    ///   `observe`: watch the room instead of joining it (nobody in it sees the visit); `token`, a member's
    ///   resume token shown with the watch (it opens a locked room, and presses the controls as that member).
    func run(reconnect: Bool = false, observe: Bool = false, token: String? = nil,
             _ step: @escaping (SessionEvent, RoomView) -> Step) async throws {
        let address = try options.server.address()
        let session: RoomSession
        do {
            var configuration = SessionConfiguration(
                room: room, name: options.name, token: observe ? token : nil, passcode: options.server.effectivePasscode,
                reconnect: reconnect ? .standard : nil,
                connectTimeoutMs: Int64(options.timeout * 1000))
            configuration.observe = observe
            session = try RoomSession(address: address, configuration: configuration)
        } catch {
            throw fail("cannot start the WebSocket client: \(error)", status: PomoExit.unavailable)
        }
        let sessionTask = Task { await session.run() }
        let timeoutMs = Int64(options.timeout * 1000)
        let timer = reconnect ? nil : Task {
            try? await Task.sleep(for: .milliseconds(timeoutMs))
            if !Task.isCancelled { session.stop() }
        }
        let signals = SignalWatcher([SIGINT, SIGTERM, SIGHUP]) { _ in
            session.send(.leave, ref: .string("leave"))
            session.stop()
        }
        defer {
            signals.cancel()
            timer?.cancel()
        }

        var view = RoomView()
        var result: ExitCode?? = nil   // set once finished: .some(nil) is success
        var end = SessionEnd.stopped
        var leaving = false
        for await event in session.events {
            if case let .message(message, _, at) = event {
                view.apply(message, receivedAt: at)
                if leaving, case .ok("leave", _, _) = message { session.stop() }
            }
            if case .ended(let why) = event { end = why }
            guard result == nil else { continue }
            switch step(event, view) {
            case .wait: break
            case let .send(message, ref): session.send(message, ref: ref)
            case .finish(let code):
                result = .some(code)
                leaving = true
                session.send(.leave, ref: .string("leave"))
                Task {
                    // The leave's `ok` normally ends the visit sooner.
                    try? await Task.sleep(for: .seconds(2))
                    session.stop()
                }
            }
        }
        _ = await sessionTask.value
        if case .some(let code) = result {
            if let code { throw code }
            return
        }
        if end == .stopped {
            if reconnect { return }  // interrupted by a signal: a normal end for `watch`
            throw fail("no answer from \(address) within \(Int(options.timeout)) s", status: PomoExit.unavailable)
        }
        if let failure = failure(for: end, address: address, room: room) { throw failure }
    }
}
