import PomodoroNet
import PomodoroProtocol

/// One client's membership in one room over a real WebSocket: drives a `SessionMachine` with the
/// libwebsockets client, the clock and one timer.
///
/// Everything the session decides happens in `run()`, one input at a time; the socket thread, timers and
/// callers only hand inputs in through an `AsyncStream`. Read what happens from `events`.
public final class RoomSession: Sendable {
    /// What happens, in order; finishes after `.ended`.
    public let events: AsyncStream<SessionEvent>
    private let eventSink: AsyncStream<SessionEvent>.Continuation
    private let inputStream: AsyncStream<Input>
    private let inputs: AsyncStream<Input>.Continuation
    private let client: WebSocketClient
    public let address: ServerAddress
    public let configuration: SessionConfiguration
    private let clock: @Sendable () -> LocalInstant

    enum Input: Sendable {
        case start
        case network(generation: Int, ClientEvent, LocalInstant)
        case send(ClientFrame)
        case stop
        case timer
    }

    public init(address: ServerAddress, configuration: SessionConfiguration,
                clock: @escaping @Sendable () -> LocalInstant = LocalInstant.now) throws(NetError) {
        self.address = address
        self.configuration = configuration
        self.clock = clock
        client = try WebSocketClient()
        (events, eventSink) = AsyncStream.makeStream(of: SessionEvent.self)
        (inputStream, inputs) = AsyncStream.makeStream(of: Input.self)
    }

    /// Sends a request once joined (dropped while not joined: the UI shows that state).
    public func send(_ message: ClientMessage, ref: Ref? = nil) {
        inputs.yield(.send(ClientFrame(message, ref: ref)))
    }

    /// Closes the connection and ends the session (with `.ended(.stopped)`).
    public func stop() { inputs.yield(.stop) }

    /// Runs the session until it ends. Call once.
    public func run() async {
        client.start()
        var machine = SessionMachine(configuration: configuration,
                                     seed: UInt64(truncatingIfNeeded: clock().wallMs))
        var generation = 0
        var current: ClientConnectionID?
        var timer: Task<Void, Never>?
        var scheduled: Int64?
        inputs.yield(.start)

        for await input in inputStream {
            let now = clock()
            var actions: [SessionMachine.Action] = []
            switch input {
            case .start:
                actions = machine.start(now: now)
            case let .network(from, event, at):
                guard from == generation else { continue }  // an abandoned connection
                switch event {
                case .opened:
                    actions = machine.opened(now: at)
                case .text(let bytes):
                    // Unknown message types and event kinds are skipped (docs/PROTOCOL.md §13).
                    guard let message = try? WireCodec.decodeServerMessage(bytes) else { continue }
                    actions = machine.received(message, raw: bytes, now: at)
                case let .closed(code, reason):
                    current = nil
                    actions = machine.closed(code: code, reason: reason, now: at)
                case .failed(let why):
                    current = nil
                    actions = machine.failed(Self.explain(why), passing: Self.unavailableStatus(why) != nil, now: at)
                }
            case .send(let frame):
                actions = machine.send(frame)
            case .stop:
                actions = machine.stop(now: now)
            case .timer:
                scheduled = nil
                actions = machine.timer(now: now)
            }

            for action in actions {
                switch action {
                case .connect:
                    if let old = current { client.close(old) }
                    generation += 1
                    let mine = generation, inputs = self.inputs, clock = self.clock
                    current = client.connect(host: address.host, port: address.port,
                                             path: address.path(forRoom: configuration.room)) { event in
                        inputs.yield(.network(generation: mine, event, clock()))
                    }
                case .send(let frame):
                    if let current { client.send(WireCodec.encode(frame), on: current) }
                case .close(let code):
                    if let current { client.close(current, code: code) }
                case .emit(let event):
                    eventSink.yield(event)
                }
            }
            if machine.isEnded { break }

            // One timer, re-armed only when the machine's next deadline moves.
            let deadline = machine.nextDeadline
            if deadline != scheduled {
                timer?.cancel()
                scheduled = deadline
                if let deadline {
                    let wait = max(0, deadline - clock().monotonicMs)
                    let inputs = self.inputs
                    timer = Task {
                        try? await Task.sleep(for: .milliseconds(wait))
                        if !Task.isCancelled { inputs.yield(.timer) }
                    }
                }
            }
        }
        timer?.cancel()
        if let current { client.close(current) }
        client.stop()
        // The service thread ends before the session does, so a program that exits once its session has
        // ended never exits while libwebsockets is still destroying its context.
        await client.finished()
        inputs.finish()
        eventSink.finish()
    }

    /// The upgrade answers of a proxy whose server is away or of a server restarting (Bad Gateway, Service
    /// Unavailable, Gateway Timeout): worth trying again, not another kind of server.
    public static let unavailableStatuses = [502, 503, 504]

    /// The status of an upgrade refused by a proxy or a restarting server (`unavailableStatuses`), from
    /// libwebsockets' reason for the failed connection ("the server answered 502 to the upgrade (…)").
    static func unavailableStatus(_ why: String) -> Int? {
        unavailableStatuses.first { why.contains("answered \($0) ") }
    }

    /// libwebsockets' reason for a failed connection, in words a person can act on.
    static func explain(_ why: String) -> String {
        let lower = why.lowercased()
        if lower.contains("refused") || lower.contains("unable to connect") { return "nothing answered" }
        if lower.contains("dns") || lower.contains("resolve") || lower.contains("getaddrinfo") {
            return "unknown host"
        }
        if lower.contains("timed out") || lower.contains("timeout") { return "timed out" }
        if let status = unavailableStatus(why) { return Words(.en)(.serverUnavailable, ["status": status]) }
        if lower.contains("403") || lower.contains("404") || lower.contains("upgrade") {
            return "not a Pomodoro server (\(why))"
        }
        return why
    }
}
