import Foundation
import PomodoroCluster
import PomodoroCore
import PomodoroProtocol
import PomodoroServer
import PomodoroStore

/// The cluster as the hub sees it, decided by the test: which rooms another node holds, and until when this
/// node's term on each room it took runs (on the test's manual clock). Takes answer at once, from the
/// store the test gives. The leases themselves are tested against a real Redis (PomodoroClusterTests);
/// this is for what the hub does with their answers.
package final class ManualCluster: HubCluster, @unchecked Sendable {
    package let node: String
    private let lock = NSLock()
    private let store: any RoomStore
    private var elsewhere: [RoomID: String] = [:]
    private var terms: [RoomID: Instant] = [:]
    private var releases: [RoomID] = []
    private var sent: [(node: String, message: BusMessage)] = []
    private var following: [RoomID: String] = [:]
    private var announcements: [RoomID] = []
    private var now: @Sendable () -> Instant
    /// How long a term runs from a take.
    package var term: Duration = .milliseconds(1_350)

    package init(node: String = "here", store: any RoomStore, now: @escaping @Sendable () -> Instant) {
        self.node = node
        self.store = store
        self.now = now
    }

    /// Another node holds `room`'s lease.
    package func held(_ room: RoomID, by node: String) { lock.withLock { elsewhere[room] = node } }

    /// Extends every term held to `term` from now (the keeper's renewals landing).
    package func renewAll() {
        let until = now() + term
        lock.withLock { for room in terms.keys { terms[room] = until } }
    }

    /// What the hub published on the bus, in order, with the node it was for.
    package var published: [(node: String, message: BusMessage)] { lock.withLock { sent } }
    package func clearPublished() { lock.withLock { sent.removeAll() } }
    /// The rooms whose leases the hub watches, with the node it relays their members to.
    package var followed: [RoomID: String] { lock.withLock { following } }
    /// Another node's lease on `room` is gone (it died): the next take owns it.
    package func lapse(_ room: RoomID) { lock.withLock { elsewhere[room] = nil } }

    package func publish(_ message: BusMessage, to node: String) {
        lock.withLock { sent.append((node, message)) }
    }

    package func owner(of room: RoomID, completion: @escaping @Sendable (String?) -> Void) {
        completion(lock.withLock { elsewhere[room] })
    }

    package func follow(_ room: RoomID, owner: String?) {
        lock.withLock { following[room] = owner }
    }

    /// The rooms given back, in order.
    package var released: [RoomID] { lock.withLock { releases } }
    /// The rooms this node holds a term on.
    package var holding: Set<RoomID> { lock.withLock { Set(terms.keys) } }

    /// Another node no longer holds `room`'s lease (it died, and the lease lapsed).
    package func lapsed(_ room: RoomID) { _ = lock.withLock { elsewhere.removeValue(forKey: room) } }

    /// The rooms whose schedules this node said it changed, in order.
    package var announced: [RoomID] { lock.withLock { announcements } }

    package func take(_ room: RoomID, completion: @escaping @Sendable (ClusterTake) -> Void) {
        if let other = lock.withLock({ elsewhere[room] }) { return completion(.elsewhere(node: other)) }
        let until = now() + term
        lock.withLock { terms[room] = until }
        do {
            // As a node's take: the room with its schedules, read after the claim.
            var stored = try store.loadRoom(room)
            if stored != nil { stored!.schedules = try store.loadSchedules(room: room) }
            completion(.owned(stored))
        } catch {
            completion(.failed("\(error)"))
        }
    }

    package func takeIfFree(_ room: RoomID, completion: @escaping @Sendable (ClusterTake) -> Void) {
        if lock.withLock({ terms[room] != nil }) { return completion(.elsewhere(node: node)) }
        take(room, completion: completion)
    }

    package func unheld(_ rooms: [RoomID], completion: @escaping @Sendable ([RoomID]?) -> Void) {
        completion(lock.withLock { rooms.filter { elsewhere[$0] == nil && terms[$0] == nil } })
    }

    package func announceSchedules(_ room: RoomID) { lock.withLock { announcements.append(room) } }

    package func owns(_ room: RoomID, at instant: Instant) -> Bool {
        lock.withLock { terms[room].map { instant < $0 } ?? false }
    }

    package func release(_ room: RoomID) {
        lock.withLock {
            if terms.removeValue(forKey: room) != nil { releases.append(room) }
        }
    }

    /// Set by a test: reading the nodes' registry fails as with Redis gone.
    package var redisDown: String? {
        get { lock.withLock { unreachable } }
        set { lock.withLock { unreachable = newValue } }
    }
    private var unreachable: String?

    package func report(completion: @escaping @Sendable (Result<ClusterPayload, ClusterReadError>) -> Void) {
        if let reason = redisDown { return completion(.failure(ClusterReadError(reason))) }
        completion(.success(ClusterPayload(node: node, rooms: holding.map(\.rawValue).sorted(), nodes: [])))
    }

    package func report(room: RoomID,
                        completion: @escaping @Sendable (Result<ClusterRoomPayload, ClusterReadError>) -> Void) {
        let owner = lock.withLock { terms[room] != nil ? node : elsewhere[room] }
        completion(.success(ClusterRoomPayload(room: room.rawValue, owner: owner, epoch: nil)))
    }
}
