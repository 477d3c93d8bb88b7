import Foundation
import PomodoroCore
import PomodoroStore

/// The bounds and timings of webhook delivery (docs/PROTOCOL.md, "Webhooks").
public struct WebhookSettings: Sendable, Equatable {
    /// Lets webhooks reach loopback, link-local, private and metadata addresses (`--webhook-allow-private`).
    public var allowPrivate = false
    public var maxPerRoom = 10
    public var maxPayloadBytes = 65_536
    /// Deliveries per minute to one webhook at most; the rest wait their turn.
    public var deliveriesPerMinute = 60
    public var timeoutMs = 5_000
    /// Deliveries in flight at once, each to a different webhook: a receiver that takes its whole timeout
    /// holds up its own webhook only.
    public var maxInFlight = 32
    /// The pause after a first failure, doubling after each next one up to `longestRetryMs`.
    public var firstRetryMs: Int64 = 10_000
    /// `firstRetryMs` in whole seconds, as `--webhook-first-retry` gives it.
    public var firstRetrySeconds: Int {
        get { Int(firstRetryMs / 1000) }
        set { firstRetryMs = Int64(newValue) * 1000 }
    }
    public var longestRetryMs: Int64 = 3_600_000
    /// A delivery failing this long after its event is given up, and its webhook switched off.
    public var giveUpAfterMs: Int64 = 86_400_000
    public init() {}

    /// The pause before attempt `attempts + 1`, after `attempts` failures.
    func retryPause(after attempts: Int) -> Int64 {
        var pause = firstRetryMs
        for _ in 1..<max(1, attempts) where pause < longestRetryMs { pause *= 2 }
        return min(pause, longestRetryMs)
    }
}

/// Delivers the webhook outbox on a thread of its own, which never holds up the service thread: it reads
/// each webhook's oldest due delivery from the store, lets `WebhookPacing` say which go now, sends those
/// together (`WebhookHTTP`, many in flight), and hands each result to the service thread through `report`
/// (the transport's queue and wake-up), which writes it through the store's writer. A webhook waits for its
/// delivery's result to be written before its next is read, so deliveries go out in order, one at a time
/// per webhook, while other webhooks' go on; a crash between a send and its write sends it again (at
/// least once, under the same event id).
final class WebhookDeliverer: Sendable {
    struct Result: Sendable {
        var webhook: WebhookRecord
        var delivery: WebhookDelivery
        var attempt: DeliveryAttempt
        /// Set when the delivery was given up and the webhook switched off: why.
        var disabled: String?
    }

    /// What the service thread and the delivery thread share.
    private struct Shared {
        var woken = false
        var stopped = false
        var pacing: WebhookPacing
    }

    private let store: any WebhookStore
    private let settings: WebhookSettings
    private let nowMs: @Sendable () -> Int64
    private let report: @Sendable (Result) -> Void
    private let shared: LockedState<Shared>
    /// Ends the delivery thread's wait from any thread (the thread's `WebhookHTTP` polls it with its transfers).
    private let waker: WebhookWaker
    /// How often the outbox is read without a wake-up (a new owner's rooms after a failover; retries due).
    static let pollMs: Int64 = 1_000

    init(store: any WebhookStore, settings: WebhookSettings, nowMs: @escaping @Sendable () -> Int64,
         report: @escaping @Sendable (Result) -> Void) {
        self.store = store
        self.settings = settings
        self.nowMs = nowMs
        self.report = report
        shared = LockedState(Shared(pacing: WebhookPacing(perMinute: settings.deliveriesPerMinute,
                                                          maxInFlight: settings.maxInFlight)))
        waker = WebhookWaker()
    }

    func start() {
        let thread = Thread { [self] in run() }
        thread.name = "pomodoro.webhooks"
        thread.start()
    }

    /// Stops the thread; what is in flight is dropped without a result (sent again by the next run).
    func stop() {
        shared.withLock { $0.stopped = true }
        waker.wake()
    }

    /// Something new is in the outbox: look now.
    func wake() {
        shared.withLock { $0.woken = true }
        waker.wake()
    }

    /// The result of the webhook's last delivery is written (or could not be): its next may go.
    func settled(_ room: RoomID, _ webhook: Int) {
        shared.withLock {
            $0.pacing.settled(WebhookPacing.Key(room: room, webhook: webhook))
            $0.woken = true
        }
        waker.wake()
    }

    /// The delivery thread: its `WebhookHTTP` and the sends in flight (by their transfer's tag) are its own.
    private func run() {
        guard let http = WebhookHTTP(waker: waker) else { return runWithoutCurl() }
        defer { http.abandonAll() }
        var inFlight: [Int: (webhook: WebhookRecord, delivery: WebhookDelivery)] = [:]
        var lastTag = 0
        // When the outbox is read next, on `nowMs`'s clock.
        var readAt = nowMs()
        while true {
            let (stop, wasWoken) = shared.withLock { state -> (Bool, Bool) in
                defer { state.woken = false }
                return (state.stopped, state.woken)
            }
            if stop { return }
            let now = nowMs()
            if wasWoken || now >= readAt {
                readAt = now + dispatch(at: now, through: http, inFlight: &inFlight, lastTag: &lastTag)
            }
            for finished in http.perform() {
                guard let sent = inFlight.removeValue(forKey: finished.tag) else { continue }
                report(result(of: sent.delivery, to: sent.webhook, finished.result))
            }
            let idle = shared.withLock { !$0.woken && !$0.stopped }
            if idle { http.wait(upToMs: min(Self.pollMs, max(0, readAt - nowMs()))) }
        }
    }

    /// Reads the outbox and starts what may go now; returns how long until the outbox is worth reading again.
    private func dispatch(at now: Int64, through http: WebhookHTTP,
                          inFlight: inout [Int: (webhook: WebhookRecord, delivery: WebhookDelivery)],
                          lastTag: inout Int) -> Int64 {
        let mark = shared.withLock { $0.pacing.readMark }
        let heads: [(WebhookRecord, WebhookDelivery)]
        do { heads = try store.nextDeliveries(limit: 200) } catch { return Self.pollMs }
        let plan = shared.withLock { $0.pacing.plan(heads, readAt: mark, now: now, pollMs: Self.pollMs) }
        for (webhook, delivery) in plan.send {
            lastTag += 1
            if let failure = http.start(request(delivery, to: webhook), tag: lastTag) {
                report(result(of: delivery, to: webhook, .failure(failure)))
            } else {
                inFlight[lastTag] = (webhook, delivery)
            }
        }
        return plan.waitMs
    }

    /// libcurl could not start: every due delivery fails its attempts (and is retried, then given up), so
    /// the hosts see why in their lists.
    private func runWithoutCurl() {
        while !shared.withLock({ $0.stopped }) {
            let now = nowMs()
            let mark = shared.withLock { $0.pacing.readMark }
            if let heads = try? store.nextDeliveries(limit: 200) {
                let plan = shared.withLock { $0.pacing.plan(heads, readAt: mark, now: now, pollMs: Self.pollMs) }
                for (webhook, delivery) in plan.send {
                    report(result(of: delivery, to: webhook, .failure(.transport("libcurl could not start"))))
                }
            }
            waker.wait(upToMs: Self.pollMs)
        }
    }

    private func request(_ delivery: WebhookDelivery, to webhook: WebhookRecord) -> WebhookHTTP.Request {
        let body = Array(delivery.body.utf8)
        var headers: [(name: String, value: String)] = [("Content-Type", "application/json")]
        if webhook.format == .json {
            headers += [("Pomodoro-Event", delivery.kind.rawValue), ("Pomodoro-Event-Id", delivery.eventID),
                        ("Pomodoro-Signature", WebhookSignature.header(secret: webhook.secret, timestamp: nowMs() / 1000,
                                                                       body: body))]
        }
        return .init(url: webhook.url, body: body, headers: headers, timeoutMs: settings.timeoutMs,
                     allowPrivate: settings.allowPrivate)
    }

    private func result(of delivery: WebhookDelivery, to webhook: WebhookRecord,
                        _ answer: Swift.Result<Int, WebhookHTTP.Failure>) -> Result {
        let doneMs = nowMs()
        let attempts = delivery.attempts + 1
        var status: Int?, error: String?
        switch answer {
        case .success(let code):
            status = code
            if (200..<300).contains(code) {
                return Result(webhook: webhook, delivery: delivery,
                              attempt: DeliveryAttempt(room: webhook.room, webhook: webhook.id, seq: delivery.seq,
                                                       state: .delivered, attempts: attempts, atMs: doneMs,
                                                       nextAttemptMs: doneMs, status: code, error: nil),
                              disabled: nil)
            }
            error = (300..<400).contains(code) ? "answered \(code): redirects are not followed" : "answered \(code)"
        case .failure(let failure):
            error = failure.description
        }
        let givingUp = doneMs - delivery.createdMs >= settings.giveUpAfterMs
        let disabled = givingUp ? "failed for a day; last: \(error ?? "")" : nil
        return Result(webhook: webhook, delivery: delivery,
                      attempt: DeliveryAttempt(room: webhook.room, webhook: webhook.id, seq: delivery.seq,
                                               state: givingUp ? .failed : .due, attempts: attempts, atMs: doneMs,
                                               nextAttemptMs: doneMs + settings.retryPause(after: attempts),
                                               status: status, error: error),
                      disabled: disabled)
    }
}
