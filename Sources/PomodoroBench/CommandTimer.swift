import PomodoroProtocol

/// One member's timed commands: a `task` with a numbered `ref`, sent at most once a second (on a tick
/// inside the window) and only when the last one was answered, and the time from sending it to its `ok`.
///
/// `task` is a command every member may send, that the room's owner answers and that changes nothing
/// the ticks depend on; on a cluster a member on another node has it relayed to the owner and back, so
/// the difference between members on the owner and the others is the cost of forwarding a command.
public struct CommandTimer: Equatable, Sendable {
    /// The member index, so that refs are unique across the run.
    public let member: Int
    /// Commands sent inside the window, answered, refused; latencies of the answered ones (ms).
    public private(set) var sent = 0
    public private(set) var answered = 0
    public private(set) var refused = 0
    public private(set) var latenciesMs: [Double] = []
    /// Commands whose connection closed before their answer came (a node restarting): neither answered
    /// nor lost, as the server may have applied them.
    public private(set) var cutOff = 0
    /// The number in the text of the last command answered `ok` ("timed N"): what the member's task must
    /// still be, or a later one, once the run is over.
    public private(set) var lastAnswered: Int64 = 0
    /// The number of the last command sent.
    public var lastSent: Int64 { counter }
    /// The command awaiting its answer: its ref and when it was sent.
    private var outstandingRef: Int64?
    private var outstandingCounter: Int64 = 0
    private var outstandingSentAtMs = 0.0
    private var lastSentAtMs: Double?
    private var counter: Int64 = 0

    public init(member: Int) { self.member = member }

    /// What to send now, if anything: called on a tick that arrived at `nowMs` inside the window.
    public mutating func tickArrived(atMs nowMs: Double) -> ClientFrame? {
        guard outstandingRef == nil else { return nil }
        if let last = lastSentAtMs, nowMs - last < 900 { return nil }
        counter += 1
        let ref = Int64(member) * 1_000_000 + counter
        outstandingRef = ref
        outstandingCounter = counter
        outstandingSentAtMs = nowMs
        lastSentAtMs = nowMs
        sent += 1
        return ClientFrame(.task(text: Self.text(counter)), ref: .number(ref))
    }

    /// An `ok` or `error` with `ref` arrived at `nowMs`; returns the latency when it answers the command
    /// outstanding.
    @discardableResult
    public mutating func replied(ref: Ref?, ok: Bool, atMs nowMs: Double) -> Double? {
        guard let outstandingRef, ref == .number(outstandingRef) else { return nil }
        self.outstandingRef = nil
        guard ok else {
            refused += 1
            return nil
        }
        answered += 1
        lastAnswered = outstandingCounter
        let latency = nowMs - outstandingSentAtMs
        latenciesMs.append(latency)
        return latency
    }

    /// The connection closed: the command outstanding, if any, will get no answer.
    public mutating func connectionClosed() {
        guard outstandingRef != nil else { return }
        outstandingRef = nil
        cutOff += 1
    }

    /// The text of command number `counter`.
    public static func text(_ counter: Int64) -> String { "timed \(counter)" }
}
