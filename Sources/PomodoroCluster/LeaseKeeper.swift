import Foundation
import PomodoroCore

/// Keeps this node's leases: renews every held room's lease on a thread of its own, every
/// `LeaseTerm.renewalInterval`, all of them in one script per round, and says when one is lost.
///
/// The service thread asks `isValid(_:at:)` before each tick, broadcast and write as a room's owner; that
/// answer comes from the node's own clock (`LeaseTerm`), so it turns false at the end of the term even
/// when Redis cannot be reached or this thread was held up. `lost` is called (on the keeper's thread) once
/// for each room given up: Redis said the lease is no longer ours, or its term ran out unrenewed.
public final class LeaseKeeper: @unchecked Sendable {
    public enum Loss: Equatable, Sendable {
        /// Redis says the lease is no longer ours (it expired, and perhaps another node took it).
        case taken
        /// The term ran out without a renewal (Redis unreachable or slow, or this node stalled).
        case expired
    }

    private let leases: RedisLeases
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
    public init(leases: RedisLeases, node: String, clock: @escaping @Sendable () -> Instant,
                lost: @escaping @Sendable (RoomID, Int64, Loss) -> Void) {
        self.leases = leases
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

    /// Whether this node may act as `room`'s owner at `now`.
    public func isValid(_ room: RoomID, at now: Instant) -> Bool {
        lock.withLock { terms[room]?.isValid(at: now) ?? false }
    }

    /// The rooms held now, with their epochs.
    public var held: [RoomID: Int64] { lock.withLock { terms.mapValues(\.epoch) } }

    public func start() {
        lock.withLock { running = true }
        let thread = Thread { [self] in run() }
        thread.name = "pomodoro.cluster.leases"
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
            let pause = Double((nextRound - clock()).nanoseconds) / 1e9
            lock.withLock {
                if !stopping && releasing.isEmpty && pause > 0 { _ = lock.wait(until: Date().addingTimeInterval(pause)) }
            }
        }
    }

    /// Renews every held lease in one script; a lease Redis no longer gives us is lost at once.
    private func renew(_ rooms: [RoomID: LeaseTerm]) {
        guard !rooms.isEmpty else { return }
        let order = Array(rooms)
        let sent = clock()
        let renewed: [Bool]
        do {
            renewed = try leases.renew(order.map { (room: $0.key.rawValue, holder: LeaseHolder(node: node, epoch: $0.value.epoch)) })
        } catch {
            return  // Redis unreachable: the terms run out on their own unless a later renewal lands.
        }
        let answered = clock()
        let taken = lock.withLock { () -> [(RoomID, Int64)] in
            var taken: [(RoomID, Int64)] = []
            for ((room, term), done) in zip(order, renewed) {
                // Released or replaced meanwhile: not this round's business.
                guard var current = terms[room], current.epoch == term.epoch else { continue }
                if done {
                    current.renewed(requestedAt: sent, answeredAt: answered)
                    terms[room] = current
                } else {
                    terms.removeValue(forKey: room)
                    taken.append((room, term.epoch))
                }
            }
            return taken
        }
        for (room, epoch) in taken { lost(room, epoch, .taken) }
    }
}
