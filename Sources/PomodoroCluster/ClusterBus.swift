import Dispatch
import Foundation
import Synchronization

/// Messages between nodes over Redis pub/sub: one subscriber connection on a thread of its own, which
/// hands every message on a subscribed channel to `deliver` (on that thread: the node posts it to its
/// service loop and returns).
///
/// Pub/sub delivers at most once: a message published while the subscriber is reconnecting is lost. After
/// every (re)subscription `deliver` gets `.subscribed`, so the node knows to bring its members up to date
/// (ask the owner for the room's state) rather than trust what it last heard.
///
/// It subscribes to the channels it is made with, again after every reconnection.
public final class ClusterBus: Sendable {
    public enum Event: Equatable, Sendable {
        /// Subscribed (again) to these channels: anything published before may have been missed.
        case subscribed([String])
        /// A message on a channel.
        case message(channel: String, payload: String)
        /// Redis cannot be reached; the bus keeps trying every `turn`.
        case disconnected(reason: String)
    }

    public let address: RedisAddress
    /// How long the thread waits for a message before looking at its channels and its stop flag.
    public let turn: Double
    private let deliver: @Sendable (Event) -> Void
    private struct State {
        var wanted: Set<String>
        var changed = false
        var stopping = false
        var running = false
        /// Why the thread is to drop its connection and subscribe again on a new one (`reconnect`).
        var reconnecting: String?
    }
    private let state: Mutex<State>
    /// Signalled by `stop`: ends the thread's wait between two tries at reaching Redis.
    private let stopSignal = DispatchSemaphore(value: 0)
    /// Signalled by the thread as it ends.
    private let ended = DispatchSemaphore(value: 0)

    public init(address: RedisAddress, channels: Set<String> = [], turn: Double = 0.1,
                deliver: @escaping @Sendable (Event) -> Void) {
        self.address = address
        self.turn = turn
        state = Mutex(State(wanted: channels))
        self.deliver = deliver
    }

    /// Starts the subscriber thread.
    public func start() {
        state.withLock { $0.running = true }
        let thread = Thread { [self] in run() }
        thread.name = "pomodoro.cluster.subscriber"
        thread.start()
    }

    /// Ends the subscriber thread and waits (at most a few turns) until it has.
    public func stop() {
        let running = state.withLock { state in
            defer { state.stopping = true }
            return state.running && !state.stopping
        }
        guard running else { return }
        stopSignal.signal()
        _ = ended.wait(timeout: .now() + .milliseconds(Int((turn * 3 + 2) * 1000)))
    }

    /// Drops the connection and subscribes again on a new one, reporting `.disconnected` first: for a node
    /// that found Redis away and back (with sentinels, the master may have changed meanwhile while this
    /// connection, to a Redis that was only paused, never broke and now listens on a replica).
    public func reconnect(because reason: String) {
        state.withLock { $0.reconnecting = reason; $0.changed = true }
    }

    private func run() {
        defer {
            state.withLock { $0.running = false }
            ended.signal()
        }
        var connection: RedisConnection?
        var subscribed: Set<String> = []
        var reportedDown = false
        while !state.withLock({ $0.stopping }) {
            do throws(RedisError) {
                if let reason = state.withLock({ state -> String? in defer { state.reconnecting = nil }; return state.reconnecting }),
                   connection != nil {
                    connection = nil
                    deliver(.disconnected(reason: reason))
                    reportedDown = true
                }
                if connection == nil {
                    connection = try RedisConnection(address, timeout: max(turn, 0.5))
                    subscribed = []
                    state.withLock { $0.changed = true }
                }
                guard let live = connection else { continue }
                let (target, dirty) = state.withLock { state -> (Set<String>, Bool) in
                    defer { state.changed = false }
                    return (state.wanted, state.changed)
                }
                if dirty {
                    let adding = target.subtracting(subscribed), removing = subscribed.subtracting(target)
                    if !adding.isEmpty { try live.send(["SUBSCRIBE"] + adding.sorted()) }
                    if !removing.isEmpty { try live.send(["UNSUBSCRIBE"] + removing.sorted()) }
                    try live.flush()
                    subscribed = target
                    reportedDown = false
                    if !adding.isEmpty { deliver(.subscribed(adding.sorted())) }
                }
                // Confirmations of (un)subscriptions come in the same stream; only messages are passed on.
                while let reply = try live.nextReply(within: turn) {
                    if case .array(let parts) = reply, parts.count == 3, parts[0].text == "message",
                       let channel = parts[1].text, let payload = parts[2].text {
                        deliver(.message(channel: channel, payload: payload))
                    }
                    if state.withLock({ $0.stopping || $0.changed }) { break }
                }
            } catch {
                connection = nil
                if !reportedDown { deliver(.disconnected(reason: error.message)) }
                reportedDown = true
                _ = stopSignal.wait(timeout: .now() + .milliseconds(Int(turn * 1000)))
            }
        }
    }
}
