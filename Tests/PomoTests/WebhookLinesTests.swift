import PomodoroClient
import PomodoroProtocol
import Testing

/// `pomo webhooks ROOM`: the first delivery in line and what went wrong with it are always shown, with those
/// waiting behind it, however many newer deliveries there are.
@Suite struct WebhookLinesTests {
    static let minute: Int64 = 60_000
    static let t0: Int64 = 1_767_225_600_000  // 2026-01-01 00:00 UTC

    static func delivery(_ n: Int, _ state: String, attempts: Int, status: Int? = nil, error: String? = nil,
                         next: Int64? = nil) -> WebhookDeliveryPayload {
        WebhookDeliveryPayload(eventID: "evt_\(n)", event: "phase_started", state: state, attempts: attempts,
                               status: status, error: error, createdAt: t0 + Int64(n) * minute,
                               lastAttemptAt: attempts > 0 ? t0 + Int64(n) * minute : nil, nextAttemptAt: next)
    }

    static func hook(_ deliveries: [WebhookDeliveryPayload]) -> WebhooksPayload {
        WebhooksPayload(room: "team", webhooks: [
            WebhookPayload(id: 1, url: "https://example.com/hook", events: ["phase_started"], format: "json",
                           language: "en", enabled: true, disabledReason: nil, createdAt: t0, deliveries: deliveries),
        ])
    }

    /// Newest first: four untried deliveries wait behind one that the receiver keeps answering 500.
    static let blocked = hook([6, 5, 4, 3].map { delivery($0, "due", attempts: 0) }
        + [delivery(2, "due", attempts: 6, status: 500, error: "answered 500", next: t0 + 90 * minute),
           delivery(1, "delivered", attempts: 1, status: 200)])

    @Test func theFirstInLineIsShownWithItsErrorAndWhatWaitsBehindIt() {
        #expect(WebhookLines.lines(Self.blocked, utcOffsetSeconds: 3600) == [
            "1  json  on  https://example.com/hook  [phase_started]",
            "    phase_started  waiting behind the failing phase_started delivery",
            "    phase_started  waiting behind the failing phase_started delivery",
            "    phase_started  waiting behind the failing phase_started delivery",
            "    …",
            "    phase_started  due, 6 attempts so far, next try at 02:30; last: answered 500"
                + "  (first in line: later deliveries wait for it)",
            "    4 deliveries wait behind the first in line",
        ])
    }

    @Test func failuresSayWhatWentWrong() {
        let payload = Self.hook([Self.delivery(3, "due", attempts: 0),
                                 Self.delivery(2, "failed", attempts: 12, status: nil, error: "connection refused"),
                                 Self.delivery(1, "delivered", attempts: 2, status: 200)])
        #expect(WebhookLines.lines(payload, utcOffsetSeconds: 0).dropFirst() == [
            "    phase_started  due, not tried yet",
            "    phase_started  failed after 12 attempts; last: connection refused",
            "    phase_started  delivered after 2 attempts",
        ])
        // A status without an error text still says what the receiver answered.
        let answered = Self.hook([Self.delivery(1, "due", attempts: 1, status: 404, next: Self.t0)])
        #expect(WebhookLines.lines(answered, utcOffsetSeconds: 0).last
                == "    phase_started  due, 1 attempt so far, next try at 00:00; last: answered 404"
                    + "  (first in line: later deliveries wait for it)")
    }

    @Test func aTestSaysWhenItWaitsBehindAFailingDelivery() {
        #expect(WebhookLines.testQueued(webhook: 1, in: Self.blocked)
                == "test queued behind webhook 1's phase_started delivery, which keeps failing (6 attempts, "
                    + "last: answered 500): the test goes out once that one is taken")
        #expect(WebhookLines.testQueued(webhook: 1, in: Self.hook([Self.delivery(1, "delivered", attempts: 1, status: 200)]))
                == "test queued")
        #expect(WebhookLines.testQueued(webhook: 2, in: Self.blocked) == "test queued")
    }
}
