import ArgumentParser
import Foundation
import PomodoroClient
import PomodoroProtocol

struct Watch: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Watch the room (without joining it) and print what happens, until interrupted.",
        discussion: """
            Without options: one readable line per event (joins, phase changes, controls), as `pomo join` \
            prints into a pipe.
            --json: every message from the server, one JSON object per line, as sent (docs/PROTOCOL.md §5), \
            including the once-a-second ticks.
            --format: a status line (see `pomo status --help` for the specifiers), printed again whenever \
            its text changes, e.g. every second while the timer runs. For polybar: \
            exec = pomo watch team-alpha --format '%p %r' with tail = true. While the connection is lost \
            the line says so at once: %s reads offline, %i ↻, %r --:--, %b an empty bar, %R and %e are \
            empty; it counts down again once the room is back.

            watch observes the room: it is no member, nobody in the room sees it or is told of it, and it \
            earns nothing; a room that is not open is an error, never created. A locked room needs \
            --passcode. It reconnects by itself when the connection drops, and ends on Ctrl-C or SIGTERM. \
            To take part, use `pomo join`; the one-shot controls (start, pause, task, …) join briefly \
            as a member.
            """)

    @Argument(help: "The room's name.")
    var room: String

    @Flag(help: "Print every server message as one JSON line.")
    var json = false

    @Option(help: ArgumentHelp("Print this status line whenever it changes.", valueName: "format"))
    var format: String?

    @OptionGroup var visit: VisitOptions

    func validate() throws {
        try validateRoom(room)
        if json && format != nil { throw ValidationError("--json and --format do not go together") }
        if let format { do { _ = try StatusFormat(format) } catch { throw ValidationError(error.description) } }
    }

    func run() async throws {
        let address = try visit.server.address()
        if json {
            try await Visit(room: room, options: visit).run(reconnect: true, observe: true) { event, _ in
                guard case let .message(_, raw, _) = event else { return .wait }
                printLine(String(decoding: raw, as: UTF8.self))
                return .wait
            }
        } else if let format = try format.map({ try StatusFormat($0) }) {
            let ticker = FormatTicker(format: format)
            try await Visit(room: room, options: visit).run(reconnect: true, observe: true) { event, view in
                switch event {
                case .message: ticker.update(view)
                case .reconnecting: ticker.connectionLost()
                case .connecting, .ended: break
                }
                return .wait
            }
            await ticker.finish()
        } else {
            var lines = EventLines(roomName: room, serverLabel: address.description, utcOffsetSeconds: utcOffsetNow())
            try await Visit(room: room, options: visit).run(reconnect: true, observe: true) { event, _ in
                for line in lines.lines(for: event) { printLine(line) }
                return .wait
            }
        }
    }
}

/// Prints a status format whenever its text changes: on every message, on every second boundary of
/// the countdown in between, and at once when the connection is lost (the line then reads offline until a
/// message comes again).
///
/// One task owns the view and the last line printed; the visit hands it each view through a stream, and a
/// timer task the moment to look again, so nothing of its state is shared between threads.
struct FormatTicker: Sendable {
    private enum Input: Sendable {
        case view(RoomView)
        case connectionLost
        case tick
    }
    private let inputs: AsyncStream<Input>.Continuation
    private let printer: Task<Void, Never>

    init(format: StatusFormat) {
        let (stream, inputs) = AsyncStream.makeStream(of: Input.self)
        self.inputs = inputs
        printer = Task {
            var view = RoomView()
            var offline = false
            var last: String?
            var timer: Task<Void, Never>?
            for await input in stream {
                switch input {
                case .view(let next):
                    view = next
                    offline = false
                case .connectionLost: offline = true
                case .tick: break
                }
                let now = LocalInstant.now()
                var wait: Int64 = 1000
                if view.snapshot != nil {
                    let text = format.expand(view, now: now, utcOffsetSeconds: utcOffsetNow(), offline: offline)
                    if text != last { printLine(text) }
                    last = text
                    if !offline { wait = min(1000, view.msUntilNextSecond(at: now) ?? 1000) + 2 }
                }
                timer?.cancel()
                timer = Task {
                    try? await Task.sleep(for: .milliseconds(wait))
                    if !Task.isCancelled { inputs.yield(.tick) }
                }
            }
            timer?.cancel()
        }
    }

    /// The room as it is now, after a message.
    func update(_ view: RoomView) { inputs.yield(.view(view)) }

    /// The connection dropped: the room is known only as it was until the next message.
    func connectionLost() { inputs.yield(.connectionLost) }

    /// Prints what is still due, then stops looking at the clock.
    func finish() async {
        inputs.finish()
        await printer.value
    }
}
