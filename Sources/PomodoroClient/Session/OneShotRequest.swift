import PomodoroNet
import PomodoroProtocol

/// How a one-shot request ended.
public enum RequestOutcome: Equatable, Sendable {
    /// The reply: the message that carries the request's ref, or an `error` without a ref (the server's
    /// refusal of a frame it could not read, or its shutdown), with its bytes.
    case reply(ServerMessage, raw: [UInt8])
    /// The server could not be reached: the connection never opened.
    case unreachable(String)
    /// The connection opened, then dropped before the reply.
    case lost(String)
    /// No reply within the time allowed.
    case timedOut
}

/// One request on a connection of its own, joining no room: connect, send the frame, wait for its reply,
/// close politely. A pure state machine like `SessionMachine`; `OneShotRequest` drives it.
public struct RequestMachine: Sendable {
    public enum Action: Equatable, Sendable {
        case connect
        case send(ClientFrame)
        case close(code: UInt16)
        /// The request is over; no action follows.
        case finish(RequestOutcome)
    }

    enum State: Equatable, Sendable {
        case idle
        case connecting(since: LocalInstant)
        case waiting(since: LocalInstant)
        case closing(RequestOutcome, since: LocalInstant)
        case done
    }

    public let frame: ClientFrame
    /// From the start to the reply, connecting included.
    public let timeoutMs: Int64
    /// How long the polite close may take before the request ends regardless.
    public let closeTimeoutMs: Int64
    private var state = State.idle
    private var startedAt = LocalInstant(monotonicMs: 0, wallMs: 0)

    public init(frame: ClientFrame, timeoutMs: Int64, closeTimeoutMs: Int64 = 1_000) {
        self.frame = frame
        self.timeoutMs = timeoutMs
        self.closeTimeoutMs = closeTimeoutMs
    }

    public var isDone: Bool { state == .done }

    /// When `timer(now:)` has something to do next; nil when nothing is pending.
    public var nextDeadline: Int64? {
        switch state {
        case .idle, .done: nil
        case .connecting, .waiting: startedAt.monotonicMs + timeoutMs
        case let .closing(_, since): since.monotonicMs + closeTimeoutMs
        }
    }

    public mutating func start(now: LocalInstant) -> [Action] {
        guard state == .idle else { return [] }
        startedAt = now
        state = .connecting(since: now)
        return [.connect]
    }

    public mutating func opened(now: LocalInstant) -> [Action] {
        guard case .connecting = state else { return [] }
        state = .waiting(since: now)
        return [.send(frame)]
    }

    public mutating func received(_ message: ServerMessage, raw: [UInt8], now: LocalInstant) -> [Action] {
        guard case .waiting = state, isReply(message) else { return [] }
        state = .closing(.reply(message, raw: raw), since: now)
        return [.close(code: 1000)]
    }

    /// The connection closed (or could not be made).
    public mutating func closed(_ why: String, now: LocalInstant) -> [Action] {
        switch state {
        case .connecting: return finish(.unreachable(why))
        case .waiting: return finish(.lost(why))
        case .closing(let outcome, _): return finish(outcome)
        case .idle, .done: return []
        }
    }

    public mutating func timer(now: LocalInstant) -> [Action] {
        guard let deadline = nextDeadline, now.monotonicMs >= deadline else { return [] }
        switch state {
        case .connecting, .waiting:
            state = .closing(.timedOut, since: now)
            return [.close(code: 1000)]
        case .closing(let outcome, _):
            return finish(outcome)
        case .idle, .done:
            return []
        }
    }

    private func isReply(_ message: ServerMessage) -> Bool {
        let ref: Ref?
        switch message {
        case let .welcome(_, _, _, _, r), let .ok(_, _, r), let .pong(_, r), let .stats(_, r),
             let .observing(_, _, r), let .schedules(_, r), let .apiTokens(_, r), let .webhooks(_, r): ref = r
        case let .error(_, _, _, r, _):
            guard let r else { return true }
            ref = r
        case .state, .tick, .event, .you: return false
        }
        return ref != nil && ref == frame.ref
    }

    private mutating func finish(_ outcome: RequestOutcome) -> [Action] {
        state = .done
        return [.finish(outcome)]
    }
}

/// Sends one frame over a WebSocket connection of its own and waits for the reply (see `RequestMachine`).
public enum OneShotRequest {
    enum Input: Sendable {
        case network(ClientEvent, LocalInstant)
        case timer
    }

    /// The path to open: with the room a frame names in the query (`ServerAddress.path(forRoom:)`).
    static func path(for frame: ClientFrame, at address: ServerAddress) -> String {
        switch frame.message {
        case .join(let room, _, _, _, _, _), .observe(let room, _, _):
            address.path(forRoom: room)
        case .stats(let room?, _, _, _):
            address.path(forRoom: room)
        default:
            address.path
        }
    }

    /// Connects to `address`, sends `frame` (give it a ref: the reply is told by it), returns how it went.
    public static func send(_ frame: ClientFrame, to address: ServerAddress, timeoutMs: Int64,
                            clock: @escaping @Sendable () -> LocalInstant = LocalInstant.now) async -> RequestOutcome {
        let client: WebSocketClient
        do {
            client = try WebSocketClient()
        } catch {
            return .unreachable("cannot start the WebSocket client: \(error)")
        }
        client.start()
        let outcome = await exchange(frame, on: client, to: address, timeoutMs: timeoutMs, clock: clock)
        // Only once the service thread has ended: the caller may exit as soon as this returns.
        client.stop()
        await client.finished()
        return outcome
    }

    private static func exchange(_ frame: ClientFrame, on client: WebSocketClient, to address: ServerAddress,
                                 timeoutMs: Int64, clock: @escaping @Sendable () -> LocalInstant) async -> RequestOutcome {
        let (inputs, sink) = AsyncStream.makeStream(of: Input.self)
        var machine = RequestMachine(frame: frame, timeoutMs: timeoutMs)
        var connection: ClientConnectionID?
        var timer: Task<Void, Never>?
        var scheduled: Int64?
        var pending = machine.start(now: clock())
        var iterator = inputs.makeAsyncIterator()
        defer { timer?.cancel() }

        while true {
            for action in pending {
                switch action {
                case .connect:
                    connection = client.connect(host: address.host, port: address.port,
                                                path: path(for: frame, at: address)) { event in
                        sink.yield(.network(event, clock()))
                    }
                case .send(let frame):
                    if let connection { client.send(WireCodec.encode(frame), on: connection) }
                case .close(let code):
                    if let connection { client.close(connection, code: code) }
                case .finish(let outcome):
                    return outcome
                }
            }
            let deadline = machine.nextDeadline
            if deadline != scheduled {
                timer?.cancel()
                scheduled = deadline
                if let deadline {
                    let wait = max(0, deadline - clock().monotonicMs)
                    timer = Task {
                        try? await Task.sleep(for: .milliseconds(wait))
                        if !Task.isCancelled { sink.yield(.timer) }
                    }
                }
            }
            guard let input = await iterator.next() else { return .lost("the request was cancelled") }
            switch input {
            case let .network(.opened, at):
                pending = machine.opened(now: at)
            case let .network(.text(bytes), at):
                // Messages of unknown types are skipped (docs/PROTOCOL.md §13).
                guard let message = try? WireCodec.decodeServerMessage(bytes) else { pending = []; continue }
                pending = machine.received(message, raw: bytes, now: at)
            case let .network(.closed(code, reason), at):
                connection = nil
                let why = code.map { "the connection closed (\($0)\(reason.isEmpty ? "" : ": \(reason)"))" }
                    ?? "the connection closed"
                pending = machine.closed(why, now: at)
            case let .network(.failed(why), at):
                connection = nil
                pending = machine.closed(RoomSession.explain(why), now: at)
            case .timer:
                scheduled = nil
                pending = machine.timer(now: clock())
            }
        }
    }
}
