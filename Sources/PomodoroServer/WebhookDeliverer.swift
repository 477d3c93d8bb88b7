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
/// each webhook's oldest due delivery from the store, sends it (`WebhookHTTP`), and hands the result to the
/// service thread through `report` (the transport's queue and wake-up), which writes it through the store's
/// writer. A webhook waits for its delivery's result to be written before its next is read, so deliveries
/// go out in order, one at a time per webhook; a crash between a send and its write sends it again (at
/// least once, under the same event id).
final class WebhookDeliverer: Sendable {
    struct Result: Sendable {
        var webhook: WebhookRecord
        var delivery: WebhookDelivery
        var attempt: DeliveryAttempt
        /// Set when the delivery was given up and the webhook switched off: why.
        var disabled: String?
    }

    private let store: any WebhookStore
    private let settings: WebhookSettings
    private let nowMs: @Sendable () -> Int64
    private let report: @Sendable (Result) -> Void
    /// What the service thread and the delivery thread share.
    private struct Shared {
        var woken = false
        var stopped = false
        /// Webhooks whose last result is not written yet ("room/id").
        var unsettled: Set<String> = []
        /// Counts results written; `settledAt` says when each webhook's last was. A read of the outbox begun
        /// before a webhook's result was written may still show its delivery due: that one waits for the next.
        var settleCount = 0
        var settledAt: [String: Int] = [:]
    }
    private let shared = LockedState(Shared())
    /// How often the outbox is read without a wake-up (a new owner's rooms after a failover; retries due).
    static let pollMs: Int64 = 1_000

    init(store: any WebhookStore, settings: WebhookSettings, nowMs: @escaping @Sendable () -> Int64,
         report: @escaping @Sendable (Result) -> Void) {
        self.store = store
        self.settings = settings
        self.nowMs = nowMs
        self.report = report
    }

    static func key(_ room: RoomID, _ webhook: Int) -> String { "\(room.rawValue)/\(webhook)" }

    func start() {
        let thread = Thread { [self] in run() }
        thread.name = "pomodoro.webhooks"
        thread.start()
    }

    func stop() {
        shared.withLock { $0.stopped = true }
        shared.signal()
    }

    /// Something new is in the outbox: look now.
    func wake() {
        shared.withLock { $0.woken = true }
        shared.signal()
    }

    /// The result of the webhook's last delivery is written (or could not be): its next may go.
    func settled(_ room: RoomID, _ webhook: Int) {
        let key = Self.key(room, webhook)
        shared.withLock {
            $0.unsettled.remove(key)
            $0.settleCount += 1
            $0.settledAt[key] = $0.settleCount
            $0.woken = true
        }
        shared.signal()
    }

    private func run() {
        /// When each webhook's recent deliveries went out, for the rate bound.
        var sentAt: [String: [Int64]] = [:]
        while true {
            var wait = Self.pollMs
            do {
                let readAfter = shared.withLock { $0.settleCount }
                let heads = try store.nextDeliveries(limit: 200)
                let now = nowMs()
                for (webhook, delivery) in heads {
                    if shared.withLock({ $0.stopped }) { return }
                    let key = Self.key(webhook.room, webhook.id)
                    let (inFlight, stale) = shared.withLock { ($0.unsettled.contains(key), $0.settledAt[key] ?? 0 > readAfter) }
                    if inFlight { continue }
                    if stale {
                        wait = 0
                        continue
                    }
                    if delivery.nextAttemptMs > now {
                        wait = min(wait, delivery.nextAttemptMs - now)
                        continue
                    }
                    var recent = (sentAt[key] ?? []).filter { now - $0 < 60_000 }
                    if recent.count >= settings.deliveriesPerMinute {
                        wait = min(wait, recent[0] + 60_000 - now)
                        sentAt[key] = recent
                        continue
                    }
                    recent.append(now)
                    sentAt[key] = recent
                    let result = send(delivery, to: webhook)
                    shared.withLock { _ = $0.unsettled.insert(key) }
                    report(result)
                }
            } catch {
                wait = Self.pollMs
            }
            let stopped = shared.withLock(when: { $0.woken || $0.stopped },
                                          orUntil: Date(timeIntervalSinceNow: Double(max(0, wait)) / 1000)) {
                $0.woken = false
                return $0.stopped
            }
            if stopped { return }
        }
    }

    private func send(_ delivery: WebhookDelivery, to webhook: WebhookRecord) -> Result {
        let body = Array(delivery.body.utf8)
        let sentMs = nowMs()
        var headers: [(name: String, value: String)] = [("Content-Type", "application/json")]
        if webhook.format == .json {
            headers += [("Pomodoro-Event", delivery.kind.rawValue), ("Pomodoro-Event-Id", delivery.eventID),
                        ("Pomodoro-Signature", WebhookSignature.header(secret: webhook.secret, timestamp: sentMs / 1000,
                                                                       body: body))]
        }
        let answer = WebhookHTTP.post(.init(url: webhook.url, body: body, headers: headers,
                                            timeoutMs: settings.timeoutMs, allowPrivate: settings.allowPrivate))
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
