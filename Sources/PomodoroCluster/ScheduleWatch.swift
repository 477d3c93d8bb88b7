import Dispatch
import Foundation
import PomodoroNet
import Synchronization

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
public final class ScheduleWatch: Sendable {
    /// What the node should read again.
    public enum Event: Equatable, Sendable {
        /// This room's schedules changed.
        case changed(room: String)
        /// Notices may have been missed: every room's.
        case rereadAll
    }

    /// How often every room's schedules are read again, whatever the notices said.
    public static let rereadInterval = DispatchTimeInterval.seconds(30)

    private let serial = SerialQueue(label: "pomodoro.cluster.schedules")
    private var queue: DispatchQueue { serial.queue }
    /// Used on `queue` only (checked in debug builds): `PUBLISH` and `MGET` of lease keys.
    private let redis: LoopBound<RedisLeases>
    private let bus: ClusterBus
    private let timer = Mutex<DispatchSourceTimer?>(nil)
    private let handler = Mutex<(@Sendable (Event) -> Void)?>(nil)
    /// Whether the last read the handler made failed (a reread of every room is then due in a second).
    private let failing = Mutex(false)

    /// How soon every room's schedules are read again after a read failed.
    public static let retryAfterFailure = DispatchTimeInterval.seconds(1)

    public init(address: RedisAddress) {
        redis = LoopBound(RedisLeases(address: address), loop: serial)
        let box = WeakWatch()
        bus = ClusterBus(address: address, channels: [BusMessage.schedulesChannel]) { event in
            box.watch?.heard(event)
        }
        box.set(self)
    }

    /// Where events go (on the watch's queue).
    public func onEvent(_ body: @escaping @Sendable (Event) -> Void) {
        handler.withLock { $0 = body }
    }

    /// Subscribes, and starts the periodic rereads.
    public func start() {
        bus.start()
        timer.withLock { [serial] timer in
            let made = DispatchSource.makeTimerSource(queue: serial.queue)
            made.schedule(deadline: .now() + Self.rereadInterval, repeating: Self.rereadInterval)
            made.setEventHandler { [self] in deliver(.rereadAll) }
            made.resume()
            timer = made
        }
    }

    public func stop() {
        queue.sync { timer.withLock { $0?.cancel() } }
        bus.stop()
    }

    /// Tells every node that `room`'s schedules changed (best effort: a lost notice is made up for by the
    /// periodic reread).
    public func announce(_ room: String) {
        queue.async { [self] in
            _ = try? redis.value.command(["PUBLISH", BusMessage.schedulesChannel, BusMessage.schedulesChanged(room: room).encoded])
        }
    }

    /// Which of `rooms` nobody holds a lease on now; `completion` runs on the watch's queue.
    public func unheld(_ rooms: [String], completion: @escaping @Sendable (Result<[String], RedisError>) -> Void) {
        queue.async { [self] in
            do throws(RedisError) {
                let holders = try redis.value.holders(rooms: rooms)
                completion(.success(zip(rooms, holders).compactMap { $1 == nil ? $0 : nil }))
            } catch {
                completion(.failure(error))
            }
        }
    }

    /// The handler could not read what an event asked for: every room's schedules are read again in
    /// `retryAfterFailure`. Returns whether this is the first failure since a read succeeded.
    @discardableResult
    public func readFailed() -> Bool {
        queue.asyncAfter(deadline: .now() + Self.retryAfterFailure) { [weak self] in self?.deliver(.rereadAll) }
        return !failing.withLock { failing in defer { failing = true }; return failing }
    }

    /// The handler's read succeeded.
    public func readSucceeded() {
        failing.withLock { $0 = false }
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
        let body = handler.withLock { $0 }
        body?(event)
    }
}

/// Lets the bus's callback, made before the watch exists, reach it (weakly: the watch owns the bus).
private final class WeakWatch: Sendable {
    private struct Weak { weak var watch: ScheduleWatch? }
    private let weak = Mutex(Weak())
    func set(_ watch: ScheduleWatch) { weak.withLock { $0.watch = watch } }
    var watch: ScheduleWatch? { weak.withLock { $0.watch } }
}
