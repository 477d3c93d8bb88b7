import PomodoroCore
import PomodoroStore

/// How a node takes a room: the lease in Redis first, then the room's fence in the store, then the room.
///
/// 1. `acquire` in Redis: granted with an epoch above every earlier owner's, or held by someone else.
/// 2. `claim` in the store under that epoch: raises the room's fence and loads the room in one transaction.
/// 3. When the store's fence is already higher, Redis has forgotten epochs it gave (it restarted without
///    persistence, or failed over to a replica that had not seen them): the epoch counter is raised above
///    the fence, the lease given back and taken again. Since the old owner may still be inside its term
///    (Redis forgot its lease too), the new owner must not act before one full time to live has passed
///    (`startsAt`): by then every earlier term has ended.
///
/// Blocking (Redis and the database): for the cluster's own thread.
public struct RoomTakeover: Sendable {
    /// What came of an attempt to take a room.
    public enum Outcome: Equatable, Sendable {
        /// This node owns the room from `startsAt` on (its term is `term`, valid from then): `stored` is
        /// the room as the store has it (nil when it was never stored).
        case owned(term: LeaseTerm, stored: StoredRoom?, startsAt: Instant)
        /// Another node owns it.
        case ownedElsewhere(LeaseHolder)
    }

    public let node: String

    public init(node: String) { self.node = node }

    /// Tries to take `room` now; `now` reads the node's monotonic clock.
    public func take(_ room: RoomID, leases: RedisLeases, store: FencedRoomStore,
                     now: () -> Instant) throws -> Outcome {
        var redisForgot = false
        for _ in 0..<2 {
            let sent: Instant = now()
            let attempt: LeaseAttempt = try leases.acquire(room: room.rawValue, node: node)
            guard case .granted(let epoch) = attempt else {
                if case .held(let holder) = attempt { return .ownedElsewhere(holder) }
                continue
            }
            let claimed: Result<StoredRoom?, StoreError> = Result { () throws(StoreError) -> StoredRoom? in
                try store.claim(room, epoch: epoch)
            }
            switch claimed {
            case .success(let stored):
                let startsAt: Instant = redisForgot ? sent + LeaseTerm.timeToLive : sent
                let term = LeaseTerm(epoch: epoch, requestedAt: sent, validFrom: startsAt)
                return .owned(term: term, stored: stored, startsAt: startsAt)
            case .failure(let error):
                guard error.isFenced else { throw error }
                _ = try? leases.release(room: room.rawValue, holder: LeaseHolder(node: node, epoch: epoch))
                store.disown(room)
                guard let fence = try store.base.fence(room: room) else { throw error }
                try leases.raiseEpoch(room: room.rawValue, to: fence)
                redisForgot = true
            }
        }
        throw StoreError("room \(room): the store's fence kept rising while this node took the room", isFenced: true)
    }
}
