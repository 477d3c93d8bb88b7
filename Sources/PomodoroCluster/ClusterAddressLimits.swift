import Dispatch
import Foundation
import Logging
import PomodoroServer
import PomodoroCore
import PomodoroNet
import Synchronization

/// The address limits of a cluster node: counted in Redis (`RedisAddressCounts`), so that N nodes allow
/// an address what one server allows, and on this node too (`LocalAddressLimits`).
///
/// - **On the service loop, never waiting.** Each request goes to Redis over the loop's own connection
///   (`RedisLoopClient`, pipelined with the others) and is answered when its reply arrives: no hand-off to
///   another thread and back, and another room's tick never waits for Redis. (Without a loop that watches
///   descriptors, a test's, a round trip on this object's own queue answers through `post`.)
/// - **This node first.** A request this node alone must refuse is refused without asking Redis; one it
///   grants is asked of Redis, and handed back here when Redis refuses it.
/// - **Redis unreachable: open to this node's count.** A request Redis cannot answer is decided by this
///   node's own count (logged once per outage), and Redis is not asked again for `retryAfter`: while Redis
///   is away each node allows what one server does, and no more.
/// - **A node that dies leaks nothing for long.** Its connections stop counting once its beat is five
///   seconds old (`RedisAddressCounts.staleAfterMs`); its reserved places leave the window within a minute.
///
/// Service thread only, except where marked: what it keeps is `LoopBound` to the service thread (checked in
/// debug builds); other threads reach it only through work they post there (`post`), and its `Worker` is
/// thread-safe.
final class ClusterAddressLimits: AddressLimits, Sendable {
    private let bound: LoopBound<State>
    private let logger: Logger
    private let post: @Sendable (@escaping @Sendable () -> Void) -> Void
    private let worker: Worker
    /// Redis on the service loop (nil: through `worker`).
    private let redis: LoopBound<RedisLoopClient>?
    private let incarnation: String

    /// What it keeps, on the service thread.
    private final class State {
        let local: LocalAddressLimits
        /// Redis is not asked until then after it could not be reached (monotonic).
        var downUntil: Instant?
        var outageLogged = false
        /// What each request still in Redis does with its answer.
        var waiting: [UInt64: (RedisAddressCounts.Answer?) -> Void] = [:]
        var nextAsk: UInt64 = 0
        init(local: LocalAddressLimits) { self.local = local }
    }
    private var local: LocalAddressLimits { bound.value.local }
    private var downUntil: Instant? {
        get { bound.value.downUntil }
        set { bound.value.downUntil = newValue }
    }
    private var outageLogged: Bool {
        get { bound.value.outageLogged }
        set { bound.value.outageLogged = newValue }
    }
    /// How long Redis is left alone after it could not be reached.
    static let retryAfter = Duration.seconds(1)
    /// The windows' length, in Redis's milliseconds (the same minute as `SlidingWindowCount.span`).
    static let spanMs = 60_000

    init(local: LocalAddressLimits, redis: RedisAddressCounts, logger: Logger, loop: any LoopThread,
         post: @escaping @Sendable (@escaping @Sendable () -> Void) -> Void) {
        bound = LoopBound(State(local: local), loop: loop)
        self.logger = logger
        self.post = post
        incarnation = redis.incarnation
        self.redis = (loop as? any DescriptorWatching).map {
            LoopBound(RedisLoopClient(address: redis.address, timeout: redis.timeout, loop: $0, post: post), loop: loop)
        }
        worker = Worker(redis: redis)
    }

    /// Runs `operation` in Redis; `done` gets its answer on the service thread.
    private func run(_ operation: RedisAddressCounts.Operation,
                     done: @escaping (Result<RedisAddressCounts.Answer, RedisError>) -> Void) {
        guard let redis else {
            let handed = LoopBound(done, loop: bound.loop)
            return worker.enqueue(operation) { [post] result in post { handed.value(result) } }
        }
        redis.value.send(RedisAddressCounts.arguments(operation, incarnation: incarnation)) { reply in
            done(reply.flatMap { value in
                Result { () throws(RedisError) in try RedisAddressCounts.answer(operation, value) }
            })
        }
    }

    /// Starts the beat that keeps this node's connections counted (once a second).
    func start() {
        worker.startBeating { [self] sinceLast in
            // Silent longer than the others wait (stalled, or Redis away and back, or Redis restarted): they
            // may have dropped this node's counts; every address's is written again.
            guard sinceLast.map({ $0 > RedisAddressCounts.staleAfterMs / 2 }) ?? true else { return }
            post { [self] in rewriteConnections() }
        }
    }

    func stop() { worker.stop() }

    // MARK: Asking Redis

    private var now: Instant { local.clock.now().monotonic }

    /// Whether Redis is worth asking now.
    private var redisUp: Bool {
        guard let downUntil else { return true }
        if now < downUntil { return false }
        self.downUntil = nil
        return true
    }

    private var waiting: [UInt64: (RedisAddressCounts.Answer?) -> Void] {
        get { bound.value.waiting }
        set { bound.value.waiting = newValue }
    }
    private var nextAsk: UInt64 {
        get { bound.value.nextAsk }
        set { bound.value.nextAsk = newValue }
    }

    /// Runs `operation` in Redis, then `done` with its answer (nil: Redis could not answer) on the service
    /// thread.
    private func ask(_ operation: RedisAddressCounts.Operation,
                     done: @escaping (RedisAddressCounts.Answer?) -> Void) {
        let asked = nextAsk
        nextAsk += 1
        waiting[asked] = done
        run(operation) { [self] result in
            switch result {
            case .success(let answer):
                if outageLogged {
                    outageLogged = false
                    logger.notice("Redis answers again: per-address limits count across the cluster")
                }
                waiting.removeValue(forKey: asked)?(answer)
            case .failure(let error):
                if error.isConnectionLost { downUntil = now + Self.retryAfter }
                if !outageLogged {
                    outageLogged = true
                    logger.warning("per-address limits count on this node alone: Redis did not answer",
                                   metadata: ["error": "\(error)"])
                }
                waiting.removeValue(forKey: asked)?(nil)
            }
        }
    }

    /// Fire and forget, in order with the rest.
    private func tell(_ operation: RedisAddressCounts.Operation) {
        guard redisUp else { return }
        run(operation) { _ in }
    }

    private static func id(_ reservation: LimitReservation) -> String { String(reservation.serial) }

    // MARK: Connections

    func admitConnection(_ connection: ConnectionID, from address: String, answer: @escaping (Bool) -> Void) {
        guard local.admit(connection, from: address) else { return answer(false) }
        guard local.maxConnections > 0, redisUp else { return answer(true) }
        let held = local.connectionsHeld[address, default: 0]
        ask(.connections(address: address, held: held, limit: local.maxConnections)) { [self] reply in
            guard case .connections(admitted: false, _)? = reply else { return answer(true) }
            // Refused by the cluster: no longer counted here, and this node's count written as it is now.
            if local.forget(connection) != nil { writeConnections(of: address) }
            answer(false)
        }
    }

    func connectionClosed(_ connection: ConnectionID) {
        guard let address = local.forget(connection), local.maxConnections > 0 else { return }
        writeConnections(of: address)
    }

    private func writeConnections(of address: String) {
        tell(.connections(address: address, held: local.connectionsHeld[address, default: 0], limit: 0))
    }

    /// Writes this node's count of every address it holds connections from (after Redis may have lost them).
    private func rewriteConnections() {
        guard local.maxConnections > 0 else { return }
        for (address, held) in local.connectionsHeld {
            run(.connections(address: address, held: held, limit: 0)) { _ in }
        }
    }

    // MARK: Windows

    func reserveRoom(for address: String, answer: @escaping (LimitReservation?) -> Void) {
        guard var reservation = local.takeRoom(for: address) else { return answer(nil) }
        guard local.rooms.limit != .max, redisUp else { return answer(reservation) }
        ask(.reserve(kind: "room", address: address, id: Self.id(reservation), limit: local.rooms.limit,
                     spanMs: Self.spanMs)) { [self] reply in
            guard case .window(let granted, _, _)? = reply else { return answer(reservation) }
            guard granted else {
                local.settleRoom(reservation, kept: false)
                return answer(nil)
            }
            reservation.shared = true
            answer(reservation)
        }
    }

    func settleRoom(_ reservation: LimitReservation, kept: Bool) {
        local.settleRoom(reservation, kept: kept)
        guard reservation.shared else { return }
        tell(.settle(kind: "room", address: reservation.address, id: Self.id(reservation), counts: kept,
                     spanMs: Self.spanMs))
    }

    func reservePasscodeCheck(for address: String, answer: @escaping (CheckAdmission) -> Void) {
        let mine = local.takePasscodeCheck(for: address)
        guard case .granted(var reservation) = mine else { return answer(mine) }
        guard redisUp else { return answer(.granted(reservation)) }
        ask(.reserve(kind: "passcode", address: address, id: Self.id(reservation), limit: local.wrongPasscodes.limit,
                     spanMs: Self.spanMs)) { [self] reply in
            guard case .window(let granted, let happened, _)? = reply else { return answer(.granted(reservation)) }
            guard granted else {
                local.settlePasscodeCheck(reservation, wrong: false)
                return answer(happened >= local.wrongPasscodes.limit ? .limited : .full)
            }
            reservation.shared = true
            answer(.granted(reservation))
        }
    }

    func settlePasscodeCheck(_ reservation: LimitReservation, wrong: Bool) {
        local.settlePasscodeCheck(reservation, wrong: wrong)
        guard reservation.shared else { return }
        tell(.settle(kind: "passcode", address: reservation.address, id: Self.id(reservation), counts: wrong,
                     spanMs: Self.spanMs))
    }

    /// Each node counts its own `/api` requests, as a single server does.
    func takeAPIRequest(from address: String) -> Bool { local.takeAPIRequest(from: address) }
}

extension ClusterAddressLimits {
    /// Runs Redis operations on a queue of its own, batching those that arrive while a round trip is under
    /// way into the next one. Thread-safe: the connection is used on `queue` only (checked in debug builds),
    /// the waiting operations and the beat's timer are under their locks.
    final class Worker: Sendable {
        typealias Completion = @Sendable (Result<RedisAddressCounts.Answer, RedisError>) -> Void
        private let queue = SerialQueue(label: "pomodoro.cluster.limits")
        private let redis: LoopBound<RedisAddressCounts>
        private let waiting = Mutex<[(RedisAddressCounts.Operation, Completion)]>([])
        private let beat = Mutex<DispatchSourceTimer?>(nil)

        init(redis: RedisAddressCounts) { self.redis = LoopBound(redis, loop: queue) }

        func enqueue(_ operation: RedisAddressCounts.Operation, _ done: @escaping Completion) {
            let first = waiting.withLock { waiting in
                waiting.append((operation, done))
                return waiting.count == 1
            }
            if first { queue.queue.async { [self] in drain() } }
        }

        /// On `queue`: everything waiting, in one round trip.
        private func drain() {
            let batch = waiting.withLock { waiting in
                defer { waiting.removeAll() }
                return waiting
            }
            guard !batch.isEmpty else { return }
            let results: [Result<RedisAddressCounts.Answer, RedisError>]
            do {
                results = try redis.value.run(batch.map(\.0))
            } catch {
                results = Array(repeating: .failure(error), count: batch.count)
            }
            for ((_, done), result) in zip(batch, results) { done(result) }
        }

        /// Beats once a second on `queue`; `heard` gets the time since the beat before (nil: none known)
        /// after each beat Redis answered.
        func startBeating(_ heard: @escaping @Sendable (Int?) -> Void) {
            beat.withLock { [queue, redis] beat in
                let timer = DispatchSource.makeTimerSource(queue: queue.queue)
                timer.schedule(deadline: .now(), repeating: .seconds(1))
                timer.setEventHandler {
                    if case .success(.beat(let since))? = try? redis.value.run([.beat]).first { heard(since) }
                }
                timer.resume()
                beat = timer
            }
        }

        func stop() {
            queue.queue.sync { beat.withLock { $0?.cancel() } }
        }
    }
}
