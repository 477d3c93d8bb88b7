import PomodoroCore
import PomodoroStore

/// How a node takes a room: the lease in Redis first, then the room's fence in the store, then the room.
///
/// 1. `acquire` in Redis: granted with an epoch above every earlier owner's, or held by someone else.
/// 2. `claim` in the store under that epoch: raises the room's fence and loads the room in one transaction.
/// 3. When the store's fence is already higher, Redis has forgotten epochs it gave (it restarted without
///    persistence, or failed over to a replica that had not seen them). The owner under that fence may be
///    alive and keeping the room on it (`LeaseKeeper`, "Without Redis"), about to put its lease back: the
///    caller says whether the fence's epoch may be passed yet (`mayPass`; else `.fenceHeld`). When it may,
///    the epoch counter is raised above the fence, the lease given back and taken again. Since the old owner
///    may still be inside its term (Redis forgot its lease too), the new owner must not act before one full
///    time to live has passed (`startsAt`): by then every earlier term has ended.
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
        /// Redis has no lease for it, but the store's fence holds an epoch (`fence`) whose owner may still
        /// keep the room and put its lease back: not taken (the lease this try was granted is given back).
        case fenceHeld(fence: Int64)
    }

    public let node: String

    public init(node: String) { self.node = node }

    /// Tries to take `room` now; `now` reads the node's monotonic clock; `mayPass(fence)` says whether a
    /// fence above the epoch Redis gave may be passed (step 3; by default at once).
    public func take(_ room: RoomID, leases: RedisLeases, store: FencedRoomStore,
                     now: () -> Instant, mayPass: (Int64) -> Bool = { _ in true }) throws -> Outcome {
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
                guard mayPass(fence) else { return .fenceHeld(fence: fence) }
                try leases.raiseEpoch(room: room.rawValue, to: fence)
                redisForgot = true
            }
        }
        throw StoreError("room \(room): the store's fence kept rising while this node took the room", isFenced: true)
    }

    /// What came of taking many rooms at once: each room's outcome, and the rooms to take alone (`take`)
    /// because the store's fence was above the epoch Redis gave (Redis forgot its epochs).
    public struct Batch: Sendable {
        public var outcomes: [RoomID: Outcome] = [:]
        public var takeAlone: [RoomID] = []
    }

    /// Takes `rooms` together (the rooms a draining node handed this one): every lease in one script
    /// (`RedisLeases.acquire(rooms:node:)`), then every room granted claimed in one transaction whose one
    /// statement raises all their fences (`FencedRoomStore.claim(rooms:)`), loaded with their schedules.
    /// Each room's fence moves once, to the epoch its lease was taken with; the fence rule is a single
    /// take's. A room whose fence was higher already has its lease given back and is left to `take` alone,
    /// which raises the epoch counter and waits for the earlier owner's term (step 3 above).
    /// - Throws: when Redis or the store cannot be reached; the leases taken are given back first.
    public func take(all rooms: [RoomID], leases: RedisLeases, store: FencedRoomStore,
                     now: () -> Instant) throws -> Batch {
        var batch = Batch()
        guard !rooms.isEmpty else { return batch }
        let sent = now()
        let attempts = try leases.acquire(rooms: rooms.map(\.rawValue), node: node)
        var granted: [RoomID: Int64] = [:]
        for (room, attempt) in zip(rooms, attempts) {
            switch attempt {
            case .granted(let epoch): granted[room] = epoch
            case .held(let holder): batch.outcomes[room] = .ownedElsewhere(holder)
            }
        }
        guard !granted.isEmpty else { return batch }
        func giveBack(_ rooms: [RoomID]) {
            for room in rooms { store.disown(room) }
            _ = try? leases.release(rooms.map { (room: $0.rawValue, holder: LeaseHolder(node: node, epoch: granted[$0]!)) })
        }
        let claims: [RoomID: RoomClaim]
        do {
            claims = try store.claim(rooms: granted)
        } catch {
            giveBack(Array(granted.keys))
            throw error
        }
        for (room, epoch) in granted {
            guard case .claimed(let stored)? = claims[room] else {
                batch.takeAlone.append(room)
                continue
            }
            batch.outcomes[room] = .owned(term: LeaseTerm(epoch: epoch, requestedAt: sent, validFrom: sent),
                                          stored: stored, startsAt: sent)
        }
        giveBack(batch.takeAlone)
        return batch
    }
}
