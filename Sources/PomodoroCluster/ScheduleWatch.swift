import Dispatch
import Foundation

/// What a node needs in Redis to keep every room with schedules run by some node (docs/CLUSTER.md,
/// "Schedules on a cluster"): notices that a room's schedules changed, and who holds rooms' leases.
///
/// A node that commits a change to a room's schedules announces it (`BusMessage.schedulesChanged` on
/// `BusMessage.schedulesChannel`); every node hears it, the sender too, and reads that room's schedules
/// again from the store. Pub/sub may lose a notice (a node reconnecting to Redis), so after every
/// (re)subscription, and every `rereadInterval` besides, the node is told to read every room's schedules.
///
/// Events and answers come on a queue of its own, never on the caller's thread: the node may read the store
/// there. Blocking Redis calls run on that queue too.
// `@unchecked Sendable`: `redis` and `timer` are used on `queue` only, `bus` is set once in `init`, `handler` under `lock`.
public final class ScheduleWatch: @unchecked Sendable {
    /// What the node should read again.
    public enum Event: Equatable, Sendable {
        /// This room's schedules changed.
        case changed(room: String)
        /// Notices may have been missed: every room's.
        case rereadAll
    }

    /// How often every room's schedules are read again, whatever the notices said.
    public static let rereadInterval = DispatchTimeInterval.seconds(30)

    private let queue = DispatchQueue(label: "pomodoro.cluster.schedules")
    /// Used on `queue` only: `PUBLISH` and `MGET` of lease keys.
    private let redis: RedisLeases
    private var bus: ClusterBus?
    private var timer: DispatchSourceTimer?
    /// Guards `handler`.
    private let lock = NSLock()
    private var handler: (@Sendable (Event) -> Void)?

    public init(address: RedisAddress) {
        redis = RedisLeases(address: address)
        bus = ClusterBus(address: address, channels: [BusMessage.schedulesChannel]) { [weak self] event in
            self?.heard(event)
        }
    }

    /// Where events go (on the watch's queue).
    public func onEvent(_ body: @escaping @Sendable (Event) -> Void) {
        lock.withLock { handler = body }
    }

    /// Subscribes, and starts the periodic rereads.
    public func start() {
        bus?.start()
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + Self.rereadInterval, repeating: Self.rereadInterval)
        timer.setEventHandler { [self] in deliver(.rereadAll) }
        timer.resume()
        queue.sync { self.timer = timer }
    }

    public func stop() {
        queue.sync { timer?.cancel() }
        bus?.stop()
    }

    /// Tells every node that `room`'s schedules changed (best effort: a lost notice is made up for by the
    /// periodic reread).
    public func announce(_ room: String) {
        queue.async { [self] in
            _ = try? redis.command(["PUBLISH", BusMessage.schedulesChannel, BusMessage.schedulesChanged(room: room).encoded])
        }
    }

    /// Which of `rooms` nobody holds a lease on now; `completion` runs on the watch's queue.
    public func unheld(_ rooms: [String], completion: @escaping @Sendable (Result<[String], RedisError>) -> Void) {
        queue.async { [self] in
            do throws(RedisError) {
                let holders = try redis.holders(rooms: rooms)
                completion(.success(zip(rooms, holders).compactMap { $1 == nil ? $0 : nil }))
            } catch {
                completion(.failure(error))
            }
        }
    }

    private func heard(_ event: ClusterBus.Event) {
        switch event {
        case .subscribed:
            queue.async { [self] in deliver(.rereadAll) }
        case .message(_, let payload):
            guard case .schedulesChanged(let room)? = try? BusMessage(decoding: payload) else { return }
            queue.async { [self] in deliver(.changed(room: room)) }
        case .disconnected:
            break
        }
    }

    private func deliver(_ event: Event) {
        let body = lock.withLock { handler }
        body?(event)
    }
}
