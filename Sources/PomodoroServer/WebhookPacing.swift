import PomodoroCore

/// Which of the outbox's due deliveries go out now, and when to look at the outbox again: the one home of
/// the delivery rules that are not about HTTP (docs/PROTOCOL.md, "Delivery").
///
/// - One in flight per webhook: a webhook whose delivery was sent waits until that result is written
///   (`settled`) before its next is considered, so one webhook's deliveries go out in order.
/// - At most `perMinute` sends to one webhook in any 60 seconds (`--webhook-deliveries-per-minute`),
///   counted per webhook, not per room: the rest wait, in order, until the window lets them go.
/// - At most `maxInFlight` sends at once across webhooks; the rest go as results come back.
///
/// A plain value: time comes in as an argument; the deliverer keeps it under its lock.
struct WebhookPacing: Sendable {
    /// The rate bound's window.
    static let windowMs: Int64 = 60_000

    struct Key: Hashable, Sendable {
        var room: RoomID
        var webhook: Int
    }

    let perMinute: Int
    let maxInFlight: Int
    /// Webhooks with a delivery sent whose result is not written yet.
    private(set) var busy: Set<Key> = []
    /// Counts results written; `settledAt` says when each webhook's last was. A read of the outbox begun
    /// before a webhook's result was written may still show that delivery due: it is not sent again, the
    /// outbox is read again.
    private var settleCount = 0
    private var settledAt: [Key: Int] = [:]
    /// When each webhook's sends of the last window went out.
    private var sentAt: [Key: [Int64]] = [:]

    init(perMinute: Int, maxInFlight: Int) {
        self.perMinute = max(1, perMinute)
        self.maxInFlight = max(1, maxInFlight)
    }

    /// Taken just before a read of the outbox begins; handed back to `plan` with what the read found.
    var readMark: Int { settleCount }

    /// What to send of `heads` (each webhook's oldest due delivery, from a read begun at `mark`) at `now`,
    /// and how long to wait at most before reading the outbox again (`pollMs` when nothing is sooner; 0 to
    /// read again at once). The sends are counted, and their webhooks busy, from here.
    mutating func plan(_ heads: [(WebhookRecord, WebhookDelivery)], readAt mark: Int, now: Int64,
                       pollMs: Int64) -> (send: [(WebhookRecord, WebhookDelivery)], waitMs: Int64) {
        var send: [(WebhookRecord, WebhookDelivery)] = []
        var wait = pollMs
        for (webhook, delivery) in heads {
            let key = Key(room: webhook.room, webhook: webhook.id)
            if busy.contains(key) { continue }
            if settledAt[key] ?? 0 > mark {
                wait = 0
                continue
            }
            if delivery.nextAttemptMs > now {
                wait = min(wait, delivery.nextAttemptMs - now)
                continue
            }
            var recent = (sentAt[key] ?? []).filter { now - $0 < Self.windowMs }
            if recent.count >= perMinute {
                wait = min(wait, recent[0] + Self.windowMs - now)
                sentAt[key] = recent
                continue
            }
            // A full house: a result coming back wakes the deliverer, which reads again.
            if busy.count >= maxInFlight { break }
            recent.append(now)
            sentAt[key] = recent
            busy.insert(key)
            send.append((webhook, delivery))
        }
        return (send, max(0, wait))
    }

    /// The result of the webhook's last send is written (or could not be): its next may go.
    mutating func settled(_ key: Key) {
        busy.remove(key)
        settleCount += 1
        settledAt[key] = settleCount
    }
}
