import Dispatch
import PomodoroNet

/// A connection to Redis read and written on the service loop, so that the service thread asks Redis without
/// handing work to another thread and back: commands go out pipelined in the order of the calls, and each
/// answer comes to its callback on the service thread, as the loop finds it on the socket. Nothing waits: a
/// write the socket does not take at once goes out when the loop says it can.
///
/// - **Made off the loop.** A connection is made (a sentinel asked, `AUTH`, `ROLE`) on a queue of its own
///   with the blocking `RedisConnection`, then handed to the loop; commands sent meanwhile wait for it
///   (`waitingLimit` at most, those beyond are refused).
/// - **Broken: every command in flight fails**, with a connection error (some may have run); the next command
///   makes a new connection. One that could not be made refuses commands for `pause`, not to try again for each.
/// - **Bounded in time:** a reply later than `timeout` breaks the connection.
///
/// Service thread only (`LoopBound` where it is kept).
final class RedisLoopClient {
    typealias Done = (Result<RedisValue, RedisError>) -> Void
    let address: RedisAddress
    /// Seconds a reply (and a new connection) may take.
    let timeout: Double
    private let loop: any DescriptorWatching
    private let post: @Sendable (@escaping @Sendable () -> Void) -> Void
    /// Where connections are made (blocking): one for every client of the process, it only connects.
    private static let connecting = DispatchQueue(label: "pomodoro.cluster.redis-connect")
    private var connection: RedisConnection?
    private var watch: LoopWatch?
    private var isConnecting = false
    /// Commands sent before the connection was made.
    private var waiting: [(arguments: [String], done: Done?)] = []
    /// Commands sent and not answered yet, oldest first from `head`, with when each went (monotonic ns).
    private var inFlight: [(done: Done?, sentAt: UInt64)] = []
    private var head = 0
    private var timer: LoopTimer?
    /// Commands are refused until then (monotonic ns) after a connection could not be made, with its error.
    private var refusedUntil: (UInt64, RedisError)?
    /// Counts connections begun: the answer of one given up (`stop`, or a newer one) is dropped.
    private var generation = 0
    private var stopped = false
    /// A subscriber's channels and where their events go (`subscribe`); nil for a client of commands.
    private var subscription: (channels: [String], deliver: (ClusterBus.Event) -> Void)?
    /// Whether the subscriber said `.disconnected` since it last subscribed.
    private var reportedDown = false
    private var retryTimer: LoopTimer?
    /// Whether a write is queued for the end of this turn of the loop (`writeAtEndOfTurn`).
    private var writeScheduled = false

    static let waitingLimit = 10_000
    static let pause = 0.25
    /// How soon a subscriber tries again after it lost Redis (the bus thread's `turn`).
    static let resubscribeAfter = 0.1

    init(address: RedisAddress, timeout: Double, loop: any DescriptorWatching,
         post: @escaping @Sendable (@escaping @Sendable () -> Void) -> Void) {
        self.address = address
        self.timeout = timeout
        self.loop = loop
        self.post = post
    }

    private static var now: UInt64 { DispatchTime.now().uptimeNanoseconds }
    private var timeoutNs: UInt64 { UInt64(timeout * 1e9) }

    /// Sends `PUBLISH channel text`: at most once, like the bus (its answer is not awaited).
    func publish(_ text: String, on channel: String) { send(["PUBLISH", channel, text]) }

    /// Sends one command; `done` (if any) gets its answer on the service thread, in the order of the calls.
    func send(_ arguments: [String], done: Done? = nil) {
        guard !stopped else { return done?(.failure(RedisError(.connection, "Redis connection closed: the node stops"))) ?? () }
        guard let connection else {
            if let (until, error) = refusedUntil, Self.now < until { return done?(.failure(error)) ?? () }
            guard waiting.count < Self.waitingLimit else {
                return done?(.failure(RedisError(.connection, "Redis connection lost: too many commands wait for a connection"))) ?? ()
            }
            waiting.append((arguments, done))
            if !isConnecting { connect() }
            return
        }
        do {
            try connection.send(arguments)
        } catch {
            done?(.failure(error))
            return broken(error)
        }
        inFlight.append((done, Self.now))
        armTimer()
        writeAtEndOfTurn()
    }

    /// The commands sent in this turn of the loop go out together once its callbacks are done: a `state`
    /// published to two nodes, the answers of one read pass, in one write (and one read by Redis) rather
    /// than one each. Nothing is scheduled while the socket is full (its writable callback writes).
    private func writeAtEndOfTurn() {
        guard !writeScheduled, watch?.wantsWritable != true else { return }
        writeScheduled = true
        loop.atEndOfTurn { [weak self] in
            guard let self else { return }
            writeScheduled = false
            write()
        }
    }

    /// Makes this client a subscriber to `channels` (the bus on the service loop, as `ClusterBus` on a thread):
    /// every message goes to `deliver`, and `.subscribed` after every (re)subscription, `.disconnected` once
    /// when Redis is lost; it subscribes again every `resubscribeAfter` until Redis answers. Sends no commands.
    func subscribe(_ channels: [String], deliver: @escaping (ClusterBus.Event) -> Void) {
        subscription = (channels, deliver)
        if !isConnecting, connection == nil { connect() }
    }

    /// Drops the subscriber's connection and subscribes again on a new one (`ClusterBus.reconnect`).
    func reconnect(because reason: String) {
        guard subscription != nil, connection != nil else { return }
        broken(RedisError(.connection, reason))
    }

    /// Closes the connection; what waits fails. Service thread only.
    func stop() {
        write()   // what was sent in this turn goes out before the connection closes
        stopped = true
        broken(RedisError(.connection, "Redis connection closed: the node stops"))
    }

    // MARK: The connection

    private func connect() {
        isConnecting = true
        generation += 1
        let generation = generation, address = address, timeout = timeout, post = post
        let this = LoopBound(self, loop: loop)
        Self.connecting.async {
            let made = LoopBound(Result { () throws(RedisError) in try RedisConnection(address, timeout: timeout) }, loop: this.loop)
            post { this.value.connected(made.value, generation: generation) }
        }
    }

    private func connected(_ made: Result<RedisConnection, RedisError>, generation: Int) {
        guard generation == self.generation, !stopped else { return }
        isConnecting = false
        let queued = waiting
        waiting.removeAll()
        switch made {
        case .failure(let error):
            refusedUntil = (Self.now + UInt64(Self.pause * 1e9), error)
            for command in queued { command.done?(.failure(error)) }
            if subscription != nil { lostSubscription(error) }
        case .success(let connection):
            connection.stopBlocking()
            guard let watch = loop.watch(connection.descriptor, ready: { [weak self] readable, writable in
                if writable { self?.write() }
                if readable { self?.read() }
            }) else {
                for command in queued { command.done?(.failure(RedisError(.connection, "the service loop has ended"))) }
                return
            }
            refusedUntil = nil
            self.connection = connection
            self.watch = watch
            if let subscription {
                do {
                    try connection.send(["SUBSCRIBE"] + subscription.channels)
                } catch {
                    return broken(error)
                }
                return write()
            }
            for command in queued { send(command.arguments, done: command.done) }
        }
    }

    private func write() {
        guard let connection, let watch else { return }
        do {
            watch.wantsWritable = try !connection.writeSome()
        } catch {
            broken(error)
        }
    }

    private func read() {
        guard let connection else { return }
        do {
            try connection.readSome()
            while true {
                let answer: Result<RedisValue, RedisError>
                do {
                    guard let reply = try connection.bufferedReply() else { break }
                    answer = .success(reply)
                } catch where !error.isConnectionLost {
                    answer = .failure(error)
                }
                if let subscription {
                    heard(answer, subscription)
                    if self.connection !== connection { return }
                    continue
                }
                guard head < inFlight.count else { continue }   // nothing asked it (never expected)
                let done = inFlight[head].done
                inFlight[head].done = nil
                head += 1
                if head == inFlight.count {
                    inFlight.removeAll(keepingCapacity: true)
                    head = 0
                } else if head >= 1024, head * 2 >= inFlight.count {
                    // Never drained under steady traffic: the answered half goes, so the queue stays bounded.
                    inFlight.removeFirst(head)
                    head = 0
                }
                done?(answer)
                if self.connection !== connection { return }   // the callback stopped or broke it
            }
        } catch {
            broken(error)
        }
    }

    /// Drops the connection: every command in flight fails with `error`.
    private func broken(_ error: RedisError) {
        watch?.close()
        watch = nil
        connection = nil
        timer?.cancel()
        if stopped { retryTimer?.cancel() }
        let failed = inFlight[head...].compactMap(\.done) + (stopped ? waiting.compactMap(\.done) : [])
        inFlight.removeAll()
        head = 0
        if stopped {
            waiting.removeAll()
            generation += 1
        }
        for done in failed { done(.failure(error)) }
        if subscription != nil, !stopped { lostSubscription(error) }
    }

    // MARK: A subscriber

    /// A reply on a subscriber's connection: a message, or the confirmation of its last channel.
    private func heard(_ reply: Result<RedisValue, RedisError>,
                       _ subscription: (channels: [String], deliver: (ClusterBus.Event) -> Void)) {
        guard case .success(.array(let parts)) = reply, parts.count == 3 else { return }
        switch parts[0].text {
        case "message":
            guard let channel = parts[1].text, let payload = parts[2].text else { return }
            subscription.deliver(.message(channel: channel, payload: payload))
        case "subscribe" where parts[1].text == subscription.channels.last:
            reportedDown = false
            subscription.deliver(.subscribed(subscription.channels))
        default:
            break
        }
    }

    /// The subscriber could not reach Redis: said once, and tried again soon.
    private func lostSubscription(_ error: RedisError) {
        if !reportedDown {
            reportedDown = true
            subscription?.deliver(.disconnected(reason: error.message))
        }
        if retryTimer == nil {
            retryTimer = loop.makeTimer { [weak self] in
                guard let self, !stopped, connection == nil, !isConnecting else { return }
                connect()
            }
        }
        retryTimer?.schedule(afterNanoseconds: Int64(Self.resubscribeAfter * 1e9))
    }

    /// Watches the oldest command in flight: one not answered within `timeout` breaks the connection.
    private func armTimer() {
        if timer == nil {
            timer = loop.makeTimer { [weak self] in self?.timerFired() }
        }
        guard head + 1 == inFlight.count else { return }   // armed already for an older one
        timer?.schedule(afterNanoseconds: Int64(timeoutNs))
    }

    private func timerFired() {
        guard head < inFlight.count else { return }
        let oldest = inFlight[head].sentAt, now = Self.now
        if now >= oldest + timeoutNs {
            return broken(RedisError(.connection, "Redis connection lost: no reply within \(timeout) s"))
        }
        timer?.schedule(afterNanoseconds: Int64(oldest + timeoutNs - now))
    }
}
