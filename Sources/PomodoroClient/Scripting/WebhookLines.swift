import PomodoroProtocol

/// `pomo webhooks ROOM`: a room's webhooks, one line each, and under each its recent deliveries.
///
/// A webhook's deliveries go out one at a time, in order (docs/PROTOCOL.md §17): the oldest one still due is
/// first in line, and while it keeps failing every newer one waits behind it, untried. So the list shows the
/// newest few and, however old, that first one with its attempts, its last error and its next try, and says
/// how many wait behind it.
public enum WebhookLines {
    /// How many of the newest deliveries are listed (the first in line comes on top of these).
    public static let recent = 3

    /// The lines for `payload`, times in the reader's zone (`utcOffsetSeconds` east of UTC).
    public static func lines(_ payload: WebhooksPayload, utcOffsetSeconds: Int) -> [String] {
        var out: [String] = []
        if payload.webhooks.isEmpty { out.append("no webhooks") }
        for hook in payload.webhooks {
            let state = hook.enabled ? "on" : "off" + (hook.disabledReason.map { " (\($0))" } ?? "")
            out.append("\(hook.id)  \(hook.format)  \(state)  \(hook.url)  [\(hook.events.joined(separator: ","))]")
            let head = firstInLine(hook)
            let shown = Array(hook.deliveries.prefix(recent).indices) + (head.map { $0 >= recent ? [$0] : [] } ?? [])
            for (n, i) in shown.enumerated() {
                if n > 0, i != shown[n - 1] + 1 { out.append("    …") }
                out.append("    " + line(hook.deliveries[i], isHead: i == head, hook: hook, utcOffsetSeconds: utcOffsetSeconds))
            }
            if let note = waitingNote(hook) { out.append("    " + note) }
        }
        if let secret = payload.secret, let id = payload.added {
            out.append("webhook \(id) added; its signing secret (shown only now): \(secret)")
        }
        return out
    }

    /// What `pomo webhooks test` says once the test is queued: whether it waits behind a delivery that keeps
    /// failing (then it goes out only once that one is taken, or given up).
    public static func testQueued(webhook id: Int, in payload: WebhooksPayload) -> String {
        guard let hook = payload.webhooks.first(where: { $0.id == id }),
              let head = firstInLine(hook).map({ hook.deliveries[$0] }), isBlocking(head) else { return "test queued" }
        return "test queued behind webhook \(id)'s \(head.event) delivery, which keeps failing ("
            + attempts(head.attempts) + (problem(head).map { ", last: \($0)" } ?? "")
            + "): the test goes out once that one is taken"
    }

    // MARK: Parts

    /// The index of the oldest delivery still due: the one the webhook is sending (or retrying) now.
    static func firstInLine(_ hook: WebhookPayload) -> Int? {
        hook.deliveries.lastIndex { $0.state == "due" }
    }

    /// A due delivery that was tried and failed holds up every one after it.
    static func isBlocking(_ d: WebhookDeliveryPayload) -> Bool {
        d.state == "due" && d.attempts > 0
    }

    static func line(_ d: WebhookDeliveryPayload, isHead: Bool, hook: WebhookPayload, utcOffsetSeconds: Int) -> String {
        var text = "\(d.event)  "
        switch d.state {
        case "delivered": text += "delivered after \(attempts(d.attempts))"
        case "failed": text += "failed after \(attempts(d.attempts))"
        case "due" where d.attempts == 0:
            if !isHead, let head = firstInLine(hook).map({ hook.deliveries[$0] }), isBlocking(head) {
                text += "waiting behind the failing \(head.event) delivery"
            } else {
                text += "due, not tried yet"
            }
        case "due":
            text += "due, \(attempts(d.attempts)) so far"
            if let next = d.nextAttemptAt {
                text += ", next try at " + Labels.timeOfDay(epochMs: next, utcOffsetSeconds: utcOffsetSeconds)
            }
        default: text += "\(d.state) after \(attempts(d.attempts))"
        }
        if let problem = problem(d), d.state != "delivered" { text += "; last: \(problem)" }
        if isHead && isBlocking(d) { text += "  (first in line: later deliveries wait for it)" }
        return text
    }

    /// "3 wait behind it" under a webhook whose first delivery in line keeps failing.
    static func waitingNote(_ hook: WebhookPayload) -> String? {
        guard let head = firstInLine(hook), isBlocking(hook.deliveries[head]) else { return nil }
        let behind = hook.deliveries[..<head].filter { $0.state == "due" }.count
        guard behind > 0 else { return nil }
        return "\(behind) \(behind == 1 ? "delivery waits" : "deliveries wait") behind the first in line"
    }

    /// What went wrong with a delivery: the server's error, else a status that was no success.
    static func problem(_ d: WebhookDeliveryPayload) -> String? {
        if let error = d.error, !error.isEmpty { return error }
        if let status = d.status, !(200..<300).contains(status) { return "answered \(status)" }
        return nil
    }

    static func attempts(_ n: Int) -> String { "\(n) attempt\(n == 1 ? "" : "s")" }
}
