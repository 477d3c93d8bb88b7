import Foundation
import PomodoroCore
import PomodoroNet
import PomodoroProtocol
import Prometheus

/// The server's numbers for `GET /metrics`, in the Prometheus text format.
///
/// Every server has a `PrometheusCollectorRegistry` of its own, and makes its metrics with the registry's
/// `makeCounter`, `makeGauge` and `makeDurationHistogram`. Two other ways were weighed:
/// - swift-metrics' `MetricsSystem.bootstrap` with a `PrometheusMetricsFactory` is global and can run once
///   per process, so the tests, which start many servers in one process, would share one set of numbers;
/// - swift-metrics' `Counter(label:dimensions:factory:)` with a per-server `PrometheusMetricsFactory`
///   avoids that, but the factory registers every metric without help text (so no `# HELP` lines) and
///   takes histogram buckets from a table keyed by label.
/// The registry's handles are swift-metrics handlers all the same (`CounterHandler`, `TimerHandler`), so
/// code that reports through swift-metrics can be pointed at this registry later.
///
/// The hot path stays cheap: the hub counts what it sends once per reply and once per broadcast (not per
/// recipient), which is one relaxed atomic add per counter; a tick's delay takes one uncontended lock per
/// running room per second. Levels (connections, rooms, members) and the transport's count of dropped slow
/// clients are read only when `/metrics` is fetched. With `/metrics` off the counting goes on all the same:
/// it costs those few adds, and keeps the hub free of checks. Confined to the service thread, like the hub
/// that owns it.
package final class ServerMetrics {
    /// The path the hub answers, unless the server was configured without metrics.
    static let path = "/metrics"
    /// The text format's media type, version 0.0.4.
    static let contentType = "text/plain; version=0.0.4; charset=utf-8"
    /// A tick is due on its whole-second boundary; the timer wakes the service thread a little after it.
    /// These buckets resolve that lateness from half a millisecond to a tenth of a second.
    static let tickDelayBuckets: [Duration] = [
        .microseconds(500), .milliseconds(1), .microseconds(2500), .milliseconds(5), .milliseconds(10),
        .milliseconds(25), .milliseconds(50), .milliseconds(100),
    ]

    /// Where a tick's time goes, each measured from the whole-second boundary it marks (monotonic clock):
    /// the room's timer ran (`wakeup`), the tick was let out after a commit in flight (`letOut`: equal to
    /// the wake-up unless the room had one), the pass that writes it to every member began (`first_write`:
    /// the first frame is written at once) and ended (`last_write`). The gaps between them are the waits.
    enum TickStage: String, CaseIterable {
        case wakeup
        case letOut = "released"
        case firstWrite = "first_write"
        case lastWrite = "last_write"
    }

    /// The stages' buckets: finer below a millisecond (a timer's wake-up is tens of microseconds late on an
    /// idle core) and on to a second (on a starved one).
    static let tickStageBuckets: [Duration] = [.microseconds(100), .microseconds(250)] + tickDelayBuckets
        + [.milliseconds(250), .seconds(1)]

    /// What a scrape reads from the hub and the transport.
    struct Levels {
        var connections: Int
        var rooms: Int
        /// Members held by every room: connected, or within their reconnection grace period.
        var members: Int
        /// Connections watching a room without being members (`observe`).
        var observers: Int = 0
        /// Readers of `/api/rooms/{room}/events`.
        var eventStreams: Int = 0
        /// The transport's running count; the counter follows it by the difference since the last scrape.
        var droppedSlowClients: Int
        /// The router's (`RouterLevels`), handed to the metrics it names itself.
        var router = RouterLevels()
    }

    private let registry = PrometheusCollectorRegistry()
    private let connections: Gauge
    private let rooms: Gauge
    private let members: Gauge
    private let observers: Gauge
    private let eventStreams: Gauge
    private let framesSent: Counter
    private let bytesSent: Counter
    private let slowClientsDropped: Counter
    private let errors: [ErrorCode: Counter]
    private let tickDelay: DurationHistogram
    private let tickStages: [DurationHistogram]
    private let storeCommits: DurationHistogram
    private let residentMemory: Gauge
    private var droppedSlowClientsSeen = 0
    /// Set by a router that names metrics of its own: given its levels before each scrape.
    private var routerLevelsRead: ((RouterLevels) -> Void)?

    init() {
        connections = registry.makeGauge(descriptor: Self.name("connections", help: "WebSocket connections open now."))
        rooms = registry.makeGauge(descriptor: Self.name("rooms", help: "Rooms the server holds now."))
        members = registry.makeGauge(descriptor: Self.name(
            "members", help: "Members of every room, connected or within their reconnection grace period."))
        observers = registry.makeGauge(descriptor: Self.name(
            "observers", help: "Connections watching a room without being members of it."))
        eventStreams = registry.makeGauge(descriptor: Self.name(
            "event_streams", help: "Readers of a room's Server-Sent Events."))
        framesSent = registry.makeCounter(descriptor: Self.name(
            "frames_sent", unit: "total", help: "Messages queued for clients: replies and broadcasts, one per recipient."))
        bytesSent = registry.makeCounter(descriptor: Self.name(
            "bytes_sent", unit: "total", help: "Payload bytes of the messages queued for clients, without WebSocket framing."))
        slowClientsDropped = registry.makeCounter(descriptor: Self.name(
            "slow_clients_dropped", unit: "total", help: "Connections closed because their outbound queue overflowed."))
        let registry = registry
        let errorsByCode = Self.name("errors", unit: "total", help: "Error messages sent to clients, by code.")
        errors = Dictionary(uniqueKeysWithValues: ErrorCode.allCases.map { code in
            (code, registry.makeCounter(descriptor: errorsByCode, labels: [("code", code.rawValue)]))
        })
        tickDelay = registry.makeDurationHistogram(
            descriptor: Self.name("tick_delay", unit: "seconds",
                                  help: "How long after the whole-second boundary it marks each tick was sent."),
            buckets: Self.tickDelayBuckets)
        let stages = Self.name("tick_stage", unit: "seconds",
                               help: "When each stage of a tick was reached, after the whole-second boundary it marks.")
        tickStages = TickStage.allCases.map { stage in
            registry.makeDurationHistogram(descriptor: stages, labels: [("stage", stage.rawValue)], buckets: Self.tickStageBuckets)
        }
        storeCommits = registry.makeDurationHistogram(
            descriptor: Self.name("store_commit", unit: "seconds",
                                  help: "From a room's changes handed to the store's writer to their commit, back on the service thread."),
            buckets: Self.tickStageBuckets)
        // The name every Prometheus client library gives it, so that alerts and dashboards written for any
        // process work on ours (deploy/prometheus/alerts.yml watches it grow).
        residentMemory = registry.makeGauge(descriptor: MetricNameDescriptor(
            namespace: "process", metricName: "resident_memory", unitName: "bytes",
            helpText: "Resident memory size in bytes (Linux: /proc/self/statm)."))
    }

    /// The process's resident set from `/proc/self/statm` (its second field, in pages); nil elsewhere.
    static func residentBytes() -> Int64? {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return nil }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Int64(fields[1]) else { return nil }
        return pages * Int64(sysconf(Int32(_SC_PAGESIZE)))
    }

    /// `pomodoro_<name>[_<unit>]`, with its `# HELP` text.
    private static func name(_ name: String, unit: String = "", help: String) -> MetricNameDescriptor {
        MetricNameDescriptor(namespace: "pomodoro", metricName: name, unitName: unit, helpText: help)
    }

    // MARK: Called by the hub

    /// `frames` messages went out (one reply, or one broadcast to that many members), `bytes` in all.
    package func sent(frames: Int, bytes: Int) {
        guard frames > 0 else { return }
        framesSent.increment(by: Int64(frames))
        bytesSent.increment(by: Int64(bytes))
    }

    /// An `error` message was sent (or attempted: a connection that is already gone still made it).
    package func errorSent(_ code: ErrorCode) {
        errors[code]?.increment()
    }

    /// A tick is broadcast at `now`: its delay is `now` minus the boundary it marks, on the monotonic clock.
    func tickSent(_ tick: Tick, at now: Instant) {
        let boundary = tick.deadline - tick.remaining
        tickDelay.record(max(.zero, now - boundary))
    }

    /// A tick reached `stage` at `now`.
    func tick(_ tick: Tick, reached stage: TickStage, at now: Instant) {
        let boundary = tick.deadline - tick.remaining
        tickStages[TickStage.allCases.firstIndex(of: stage)!].record(max(.zero, now - boundary))
    }

    /// A room's changes handed to the writer `waited` ago are committed: as long its broadcasts were held.
    func committed(after waited: Duration) {
        storeCommits.record(max(.zero, waited))
    }

    /// The text of every metric, with the levels read now.
    func response(_ levels: Levels) -> HTTPResponse {
        connections.set(Int64(levels.connections))
        rooms.set(Int64(levels.rooms))
        members.set(Int64(levels.members))
        observers.set(Int64(levels.observers))
        eventStreams.set(Int64(levels.eventStreams))
        routerLevelsRead?(levels.router)
        if let bytes = Self.residentBytes() { residentMemory.set(bytes) }
        if levels.droppedSlowClients > droppedSlowClientsSeen {
            slowClientsDropped.increment(by: Int64(levels.droppedSlowClients - droppedSlowClientsSeen))
            droppedSlowClientsSeen = levels.droppedSlowClients
        }
        return HTTPResponse(status: 200, contentType: Self.contentType, body: registry.emitToBuffer())
    }

    // MARK: Metrics a part of the server names itself (a router's)

    /// A counter `pomodoro_<name>_total` in this server's registry.
    package func counter(_ name: String, help: String) -> MetricCounter {
        MetricCounter(counter: registry.makeCounter(descriptor: Self.name(name, unit: "total", help: help)))
    }

    /// A gauge `pomodoro_<name>` in this server's registry.
    package func gauge(_ name: String, help: String) -> MetricGauge {
        MetricGauge(gauge: registry.makeGauge(descriptor: Self.name(name, help: help)))
    }

    /// `body` gets the router's levels before each scrape (a router that names metrics of its own sets them).
    package func whenScraped(_ body: @escaping (RouterLevels) -> Void) {
        routerLevelsRead = body
    }
}

/// A counter of this server's metrics that a part of the server named (`ServerMetrics.counter`).
package struct MetricCounter: Sendable {
    fileprivate let counter: Counter
    package func increment(by amount: Int = 1) { counter.increment(by: Int64(amount)) }
}

/// A gauge of this server's metrics that a part of the server named (`ServerMetrics.gauge`).
package struct MetricGauge: Sendable {
    fileprivate let gauge: Gauge
    package func set(_ value: Int) { gauge.set(Int64(value)) }
}
