import Foundation
import PomodoroCore
import PomodoroNet
import PomodoroStore

/// Keeps this node's leases: renews every held room's lease on a thread of its own, every
/// `LeaseTerm.renewalInterval`, all of them in one script per round, and says when one is lost.
///
/// The service thread asks `isValid(_:at:)` before each tick, broadcast and write as a room's owner; that
/// answer comes from the node's own clock (`LeaseTerm`), so it turns false at the end of the term even
/// when Redis cannot be reached or this thread was held up. `lost` is called (on the keeper's thread) once
/// for each room given up: Redis said the lease is no longer ours, or its term ran out unrenewed.
public final class LeaseKeeper: @unchecked Sendable {  // safe: `terms`, `stopping`, `running` and `releasing` only under `lock`; `leases`, `fences` and `renewal` on the keeper's thread only; `renewedBy` set before `start`
    public enum Loss: Equatable, Sendable {
        /// Redis says the lease is no longer ours (it expired, and perhaps another node took it).
        case taken
        /// The term ran out without a renewal (Redis unreachable or slow, or this node stalled).
        case expired
    }

    private let leases: RedisLeases
    /// Confirms the epochs against the store's fences when Redis cannot renew them (nil: the terms run out).
    private let fences: (any FenceConfirming)?
    private let node: String
    private let clock: @Sendable () -> Instant
    private let lost: @Sendable (RoomID, Int64, Loss) -> Void
    /// Guards `terms`, `stopping` and `running`.
    private let lock = NSCondition()
    private var terms: [RoomID: LeaseTerm] = [:]
    private var stopping = false
    private var running = false

    /// - Parameters:
    ///   - leases: used on the keeper's thread only from now on.
    ///   - clock: the node's monotonic clock.
    ///   - fences: used on the keeper's thread only; with it, an owner that cannot reach Redis keeps its
    ///     rooms while the store's fences confirm its epochs, and puts back the leases Redis forgot.
    public init(leases: RedisLeases, fences: (any FenceConfirming)? = nil, node: String,
                clock: @escaping @Sendable () -> Instant,
                lost: @escaping @Sendable (RoomID, Int64, Loss) -> Void) {
        self.leases = leases
        self.fences = fences
        self.node = node
        self.clock = clock
        self.lost = lost
    }

    /// Keeps renewing `room`'s lease, taken under `term`.
    public func hold(_ room: RoomID, term: LeaseTerm) {
        lock.withLock { terms[room] = term }
    }

    /// Stops renewing `room` and releases its lease in Redis (on the keeper's thread, soon).
    public func release(_ room: RoomID) {
        lock.withLock {
            if let term = terms.removeValue(forKey: room) { releasing.append((room, term.epoch)) }
            lock.broadcast()
        }
    }
    private var releasing: [(RoomID, Int64)] = []

    /// Stops renewing `rooms` without releasing them here: their caller gives the leases back itself, all in
    /// one script (a node draining, `ClusterNode.handOff`).
    public func forget(_ rooms: some Sequence<RoomID>) {
        lock.withLock { for room in rooms { terms.removeValue(forKey: room) } }
    }

    /// Whether this node may act as `room`'s owner at `now`.
    public func isValid(_ room: RoomID, at now: Instant) -> Bool {
        lock.withLock { terms[room]?.isValid(at: now) ?? false }
    }

    /// Called on the keeper's thread when the way the terms are kept changes: `.fence` once Redis could not
    /// renew them and the store's fences did, `.redis` once Redis renews them again (set before `start`).
    public var renewedBy: (@Sendable (Renewal) -> Void)?

    /// What renews the terms now.
    public enum Renewal: Equatable, Sendable {
        case redis
        /// Redis is away; the store's fences confirm the epochs.
        case fence
    }
    private var renewal = Renewal.redis

    /// The rooms held now, with their epochs.
    public var held: [RoomID: Int64] { lock.withLock { terms.mapValues(\.epoch) } }

    public func start() {
        lock.withLock { running = true }
        let thread = Thread { [self] in
            ThreadName.set("pomodoro-leases")  // on Linux a name given before `start` is lost
            run()
        }
        thread.start()
    }

    /// Ends the keeper's thread (leases are not released: see `releaseAll`).
    public func stop() {
        lock.lock()
        stopping = true
        lock.broadcast()
        let deadline = Date().addingTimeInterval(5)
        while running && lock.wait(until: deadline) {}
        lock.unlock()
    }

    private func run() {
        defer { lock.withLock { running = false; lock.broadcast() } }
        var nextRound = clock()
        while true {
            let (rooms, gone, stop) = lock.withLock { () -> ([RoomID: LeaseTerm], [(RoomID, Int64)], Bool) in
                defer { releasing.removeAll() }
                return (terms, releasing, stopping)
            }
            if stop { return }
            for (room, epoch) in gone {
                _ = try? leases.release(room: room.rawValue, holder: LeaseHolder(node: node, epoch: epoch))
            }
            if clock() >= nextRound {
                nextRound = LeaseTerm.nextRenewal(after: clock())
                renew(rooms)
            }
            // Terms that ran out, renewed or not.
            let now = clock()
            let expired = lock.withLock { () -> [(RoomID, Int64)] in
                let ended = terms.filter { $0.value.hasEnded(at: now) }
                for room in ended.keys { terms.removeValue(forKey: room) }
                return ended.map { ($0.key, $0.value.epoch) }
            }
            for (room, epoch) in expired { lost(room, epoch, .expired) }
            // Their keys too, if still ours: one renewed after its term ended (the answer came late) would
            // otherwise name this node for as long as its liveness key lives.
            if !expired.isEmpty { lock.withLock { releasing.append(contentsOf: expired) } }
            let pause = Double((nextRound - clock()).nanoseconds) / 1e9
            lock.withLock {
                if !stopping && releasing.isEmpty && pause > 0 { _ = lock.wait(until: Date().addingTimeInterval(pause)) }
            }
        }
    }

    /// Renews every held lease in one script; a lease Redis no longer gives us is lost at once, unless the
    /// store's fence confirms the epoch and the lease can be put back (Redis forgot it). When Redis cannot be
    /// reached, the store's fences renew the terms instead (`FenceConfirming`).
    private func renew(_ rooms: [RoomID: LeaseTerm]) {
        guard !rooms.isEmpty else { return }
        let order = Array(rooms)
        let sent = clock()
        let renewed: [Bool]
        do {
            renewed = try leases.renew(order.map { (room: $0.key.rawValue, holder: LeaseHolder(node: node, epoch: $0.value.epoch)) })
        } catch {
            // Redis unreachable: the fences may keep the terms; else they run out unless a later renewal lands.
            confirmByFence(rooms)
            return
        }
        note(.redis)
        let answered = clock()
        var gone: [RoomID: LeaseTerm] = [:]
        for ((room, term), done) in zip(order, renewed) where !done { gone[room] = term }
        extend(order.filter { gone[$0.key] == nil }.map(\.key), rooms, requestedAt: sent, answeredAt: answered)
        guard !gone.isEmpty else { return }
        // Not ours in Redis any more: another node took it, or Redis forgot it (a restart) or let it lapse
        // while unreachable from here. Put back the leases whose fences still hold our epochs (over one a
        // node took for a moment under a lower epoch, from a Redis that forgot: `RedisLeases.restore`); if
        // Redis went away again before they were put back, the fence keeps them as without Redis.
        var kept: [RoomID] = []
        var confirmedAt = sent
        if let fences {
            confirmedAt = clock()
            if let verdicts = try? fences.confirmFences(gone.mapValues(\.epoch), within: Self.fenceTimeout) {
                // A term already over stays over (this node stalled): its lease is not put back.
                let confirmed = gone.filter { verdicts[$0.key] == true && !$0.value.hasEnded(at: confirmedAt) }
                    .map { ($0.key, $0.value) }
                if let restored = try? leases.restore(confirmed.map {
                    (room: $0.0.rawValue, holder: LeaseHolder(node: node, epoch: $0.1.epoch))
                }) {
                    kept = zip(confirmed, restored).filter(\.1).map(\.0.0)
                } else {
                    kept = confirmed.map(\.0)
                }
            }
        }
        extend(kept, rooms, requestedAt: confirmedAt, answeredAt: clock())
        let taken = lock.withLock { () -> [(RoomID, Int64)] in
            var taken: [(RoomID, Int64)] = []
            for (room, term) in gone where !kept.contains(room) {
                // Released or replaced meanwhile: not this round's business.
                guard let current = terms[room], current.epoch == term.epoch else { continue }
                terms.removeValue(forKey: room)
                taken.append((room, term.epoch))
            }
            return taken
        }
        for (room, epoch) in taken { lost(room, epoch, .taken) }
    }

    /// Redis cannot be reached: each room whose fence still holds this node's epoch has its term renewed
    /// from the moment the confirmation was sent; a room whose fence moved on is lost at once. A database
    /// that cannot be reached either renews nothing.
    private func confirmByFence(_ rooms: [RoomID: LeaseTerm]) {
        guard let fences else { return }
        let sent = clock()
        guard let verdicts = try? fences.confirmFences(rooms.mapValues(\.epoch), within: Self.fenceTimeout) else { return }
        note(.fence)
        extend(rooms.keys.filter { verdicts[$0] == true }, rooms, requestedAt: sent, answeredAt: clock())
        let taken = lock.withLock { () -> [(RoomID, Int64)] in
            var taken: [(RoomID, Int64)] = []
            for (room, term) in rooms where verdicts[room] == false {
                guard let current = terms[room], current.epoch == term.epoch else { continue }
                terms.removeValue(forKey: room)
                taken.append((room, term.epoch))
            }
            return taken
        }
        for (room, epoch) in taken { lost(room, epoch, .taken) }
    }

    /// Renews the terms of `rooms` (as they were when the round began) on an answer to a request sent at
    /// `requestedAt`.
    private func extend(_ rooms: [RoomID], _ round: [RoomID: LeaseTerm], requestedAt: Instant, answeredAt: Instant) {
        guard !rooms.isEmpty else { return }
        lock.withLock {
            for room in rooms {
                // Released or replaced meanwhile: not this round's business.
                guard var current = terms[room], current.epoch == round[room]?.epoch else { continue }
                current.renewed(requestedAt: requestedAt, answeredAt: answeredAt)
                terms[room] = current
            }
        }
    }

    /// How long a fence confirmation may take to connect, and then to answer: well inside a term.
    static let fenceTimeout = 0.4

    private func note(_ now: Renewal) {
        guard now != renewal else { return }
        renewal = now
        renewedBy?(now)
    }
}
