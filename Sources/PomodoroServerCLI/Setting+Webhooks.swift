import ArgumentParser
import PomodoroServer

extension Setting {
    /// The webhooks' settings (docs/PROTOCOL.md, "Webhooks"), after the others in `Setting.all`.
    static let webhookSettings: [Setting] = [
        .choice("webhook-allow-private", group: .limits, ["on", "off"],
                summary: "Let webhooks reach loopback, link-local, private and metadata addresses (on: for a receiver on this machine or network).",
                get: { $0.webhooks.allowPrivate ? "on" : "off" }, set: { $0.webhooks.allowPrivate = $1 == "on" }),
        .integer("webhooks-per-room", group: .limits, valueName: "count", in: 0...100,
                 summary: "Webhooks a room holds at most; more get webhook_limit.", \.webhooks.maxPerRoom),
        .integer("webhook-max-payload-bytes", group: .limits, valueName: "bytes", in: 1024...(1 << 20),
                 summary: "Largest webhook body, in bytes; a json body that would be larger goes without the room's snapshot.",
                 \.webhooks.maxPayloadBytes),
        .integer("webhook-deliveries-per-minute", group: .limits, valueName: "count", in: 1...6000,
                 summary: "Deliveries per minute to one webhook at most; the rest wait their turn.",
                 \.webhooks.deliveriesPerMinute),
        .integer("webhook-first-retry", group: .limits, valueName: "seconds", in: 1...3600,
                 summary: "Seconds before a failed delivery is tried again, doubling after each failure up to an hour; given up after a day.",
                 \.webhooks.firstRetrySeconds),
    ]
}

struct WebhookGroup: ParsableArguments {
    @Option(name: .customLong("webhook-allow-private"), help: webhookHelp("webhook-allow-private")) var allowPrivate: String?
    @Option(name: .customLong("webhooks-per-room"), help: webhookHelp("webhooks-per-room")) var perRoom: String?
    @Option(name: .customLong("webhook-max-payload-bytes"), help: webhookHelp("webhook-max-payload-bytes"))
    var maxPayloadBytes: String?
    @Option(name: .customLong("webhook-deliveries-per-minute"), help: webhookHelp("webhook-deliveries-per-minute"))
    var deliveriesPerMinute: String?
    @Option(name: .customLong("webhook-first-retry"), help: webhookHelp("webhook-first-retry")) var firstRetry: String?

    var given: [(String, [String])] {
        [("webhook-allow-private", allowPrivate.map { [$0] } ?? []), ("webhooks-per-room", perRoom.map { [$0] } ?? []),
         ("webhook-max-payload-bytes", maxPayloadBytes.map { [$0] } ?? []),
         ("webhook-deliveries-per-minute", deliveriesPerMinute.map { [$0] } ?? []),
         ("webhook-first-retry", firstRetry.map { [$0] } ?? [])]
    }
}

private func webhookHelp(_ name: String) -> ArgumentHelp {
    guard let setting = Setting.webhookSettings.first(where: { $0.name == name }) else { preconditionFailure("no setting \(name)") }
    return ArgumentHelp("\(setting.summary) (default: \(setting.render(ServerSettings()) ?? ""))", valueName: setting.valueName)
}
