import Foundation

/// Messages between nodes over Redis pub/sub: one subscriber connection on a thread of its own, which
/// hands every message on a subscribed channel to `deliver` (on that thread: the node posts it to its
/// service loop and returns).
///
/// Pub/sub delivers at most once: a message published while the subscriber is reconnecting is lost. After
/// every (re)subscription `deliver` gets `.subscribed`, so the node knows to bring its members up to date
/// (ask the owner for the room's state) rather than trust what it last heard.
///
/// It subscribes to the channels it is made with, again after every reconnection.
// `@unchecked Sendable`: its variables are used under `lock` or on its own thread only.
public final class ClusterBus: @unchecked Sendable {
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
    /// Guards `wanted`, `changed`, `stopping` and `thread`.
    private let lock = NSCondition()
    private var wanted: Set<String>
    private var changed = false
    private var stopping = false
    private var running = false

    public init(address: RedisAddress, channels: Set<String> = [], turn: Double = 0.1,
                deliver: @escaping @Sendable (Event) -> Void) {
        self.address = address
        self.turn = turn
        self.wanted = channels
        self.deliver = deliver
    }

    /// Starts the subscriber thread.
    public func start() {
        lock.withLock { running = true }
        let thread = Thread { [self] in run() }
        thread.name = "pomodoro.cluster.subscriber"
        thread.start()
    }

    /// Ends the subscriber thread and waits (at most a few turns) until it has.
    public func stop() {
        lock.lock()
        stopping = true
        let deadline = Date().addingTimeInterval(turn * 3 + 2)
        while running && lock.wait(until: deadline) {}
        lock.unlock()
    }

    /// Drops the connection and subscribes again on a new one, reporting `.disconnected` first: for a node
    /// that found Redis away and back (with sentinels, the master may have changed meanwhile while this
    /// connection, to a Redis that was only paused, never broke and now listens on a replica).
    public func reconnect(because reason: String) {
        lock.withLock { reconnecting = reason; changed = true }
    }
    private var reconnecting: String?

    private func run() {
        defer { lock.withLock { running = false; lock.broadcast() } }
        var connection: RedisConnection?
        var subscribed: Set<String> = []
        var reportedDown = false
        while !lock.withLock({ stopping }) {
            do throws(RedisError) {
                if let reason = lock.withLock({ () -> String? in defer { reconnecting = nil }; return reconnecting }),
                   connection != nil {
                    connection = nil
                    deliver(.disconnected(reason: reason))
                    reportedDown = true
                }
                if connection == nil {
                    connection = try RedisConnection(address, timeout: max(turn, 0.5))
                    subscribed = []
                    lock.withLock { changed = true }
                }
                guard let live = connection else { continue }
                let (target, dirty) = lock.withLock { () -> (Set<String>, Bool) in
                    defer { changed = false }
                    return (wanted, changed)
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
                    if lock.withLock({ stopping || changed }) { break }
                }
            } catch {
                connection = nil
                if !reportedDown { deliver(.disconnected(reason: error.message)) }
                reportedDown = true
                let wait = Date().addingTimeInterval(turn)
                lock.withLock { _ = stopping || !lock.wait(until: wait) }
            }
        }
    }
}
