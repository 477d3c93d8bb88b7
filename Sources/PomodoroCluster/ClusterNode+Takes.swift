import Dispatch
import PomodoroCore

// Taking a room's lease (docs/CLUSTER.md, "Leases"): on the node's taking queue, tried again on timers while
// another node holds it or while a fence Redis forgot is left to its owner.

extension ClusterNode {
    /// How often a take tries again while another node holds the lease.
    static let retryInterval = Duration.milliseconds(100)

    /// A lease held by a node that listens on the bus is answered at once (`.elsewhere`: the joiner's frames
    /// are relayed to it). One held by a node nobody hears is tried again for one time to live (and a try): a
    /// node that died (`kill -9`) leaves its lease to lapse, and its members, reconnecting here, take the room
    /// once it has.
    package func take(_ room: RoomID, completion: @escaping @Sendable (ClusterTake) -> Void) {
        take(room, patience: LeaseTerm.timeToLive + Self.retryInterval, completion: completion)
    }

    /// Takes `room`, trying again while another node holds it until `patience` has passed (`.zero`: once).
    /// The room comes with its schedules, read after the claim, so they are the ones the last owner wrote.
    func take(_ room: RoomID, patience: Duration, completion: @escaping @Sendable (ClusterTake) -> Void) {
        queue.async { [self] in attempt(room, giveUpAt: monotonic() + patience, completion: completion) }
    }

    /// One try at taking `room`, on `queue`. Waits (for a held lease to lapse, for an earlier owner's term
    /// after Redis forgot) are timers, not sleeps: the node's other takes go on meanwhile, which matters
    /// after a Redis restart, when every room is taken again at once.
    func attempt(_ room: RoomID, giveUpAt: Instant, completion: @escaping @Sendable (ClusterTake) -> Void) {
        do {
            // A fence left to its owner (`mayPass`): its lease is only read, never taken (each try would count
            // the room's epoch up past the fence), until the owner put it back or the grace is over.
            if let seen = fencesSeen.value[room], monotonic() - seen.since < Self.fenceGrace,
               try leases.value.holder(room: room.rawValue) == nil {
                return retry(room, giveUpAt: giveUpAt, completion: completion)
            }
            let outcome = try takeover.take(room, leases: leases.value, store: store, now: monotonic,
                                            mayPass: { fence in mayPass(fence, of: room) })
            if case .fenceHeld = outcome {} else { fencesSeen.value[room] = nil }
            switch outcome {
            case .owned(let term, var stored, let startsAt):
                if stored != nil { stored!.schedules = try store.loadSchedules(room: room) }
                keeper.hold(room, term: term)
                // After Redis forgot its epochs: an earlier owner's term may still run until then.
                let wait = startsAt - monotonic(), taken = stored
                guard wait > .zero else { return completion(.owned(taken)) }
                waitingToAct.value[room] = []
                queue.asyncAfter(deadline: .now() + .nanoseconds(Int(wait.nanoseconds))) { [self] in
                    completion(.owned(taken))
                    for later in waitingToAct.value.removeValue(forKey: room) ?? [] { later(.elsewhere(node: node)) }
                }
            case .ownedElsewhere(let holder):
                // This node took it meanwhile (for its schedules, or another join): nothing to wait for.
                // (Its answer comes after the take's own, so the room is in the hub's memory by then.)
                if holder.node == node && keeper.held[room] == holder.epoch {
                    if waitingToAct.value[room] != nil { return waitingToAct.value[room]!.append(completion) }
                    return completion(.elsewhere(node: node))
                }
                // A lease naming this node under an epoch it no longer holds (its term ended, and the key
                // outlived it): given back, and the room taken again.
                if holder.node == node {
                    _ = try leases.value.release(room: room.rawValue, holder: holder)
                    return retry(room, giveUpAt: giveUpAt, completion: completion)
                }
                // A live owner runs the room for this node's members too (relayed over the bus).
                if holder.node != node, listening(holder.node) { return completion(.elsewhere(node: holder.node)) }
                guard monotonic() < giveUpAt else { return completion(.elsewhere(node: holder.node)) }
                retry(room, giveUpAt: giveUpAt, completion: completion)
            case .fenceHeld:
                // Its owner may be putting its lease back (its next round): tried again until it has, or
                // until `fenceGrace` has passed (`mayPass`), whatever the patience (a schedule sweep's too).
                retry(room, giveUpAt: giveUpAt, completion: completion)
            }
        } catch {
            fencesSeen.value[room] = nil
            completion(.failed("\(error)"))
        }
    }

    private func retry(_ room: RoomID, giveUpAt: Instant, completion: @escaping @Sendable (ClusterTake) -> Void) {
        queue.asyncAfter(deadline: .now() + .nanoseconds(Int(Self.retryInterval.nanoseconds))) { [self] in
            attempt(room, giveUpAt: giveUpAt, completion: completion)
        }
    }

    /// Whether a take may pass `room`'s fence at `fence` (Redis forgot the lease of the room's owner under
    /// it): not while that owner may still keep the room on the fence without Redis. Such an owner puts its
    /// lease back on the first round it reaches Redis again (`LeaseKeeper.renew`, at most one renewal interval
    /// away), and one that reached no database renewed nothing and saw its term end one time to live after its
    /// last confirmation; so a fence whose lease is still missing `fenceGrace` after this node first found it
    /// so has no owner left. Until then the take is tried again (and finds the owner's lease once it is back).
    /// Only in the `fenceWindow` after this node last found Redis away: otherwise a fence above Redis's epoch
    /// is a room left idle longer than the epoch counter lives (`RedisLeases.epochTimeToLive`), or one whose
    /// owner is cut from Redis alone, and it is passed at once as before.
    private func mayPass(_ fence: Int64, of room: RoomID) -> Bool {
        let now = monotonic()
        guard let away = redisAwayAt.value, now - away < Self.fenceWindow else { return true }
        guard let seen = fencesSeen.value[room], seen.fence == fence else {
            fencesSeen.value[room] = (fence, now)
            return false
        }
        return now - seen.since >= Self.fenceGrace
    }

    /// How long a fence whose lease Redis forgot is left to its owner (`mayPass`).
    static let fenceGrace = LeaseTerm.timeToLive
    /// How long after this node last found Redis away a take leaves fences to their owners (`mayPass`).
    static let fenceWindow = Duration.seconds(10)
}
