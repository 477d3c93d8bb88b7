import PomodoroCore
@testable import PomodoroProtocol

// A room's webhooks on the wire (docs/PROTOCOL.md §17), kept apart from the main table.

extension GoldenFixtureTests {
    static let webhookTable: [(String, Shape)] = [
        ("server/event-webhookDisabled.json",
         event(.webhookDisabled(webhook: 2, reason: "failed for a day; last: answered 500"))),
        ("client/webhooks.json", .client(ClientFrame(.webhook(.list), ref: .number(21)))),
        ("client/addWebhook.json", .client(ClientFrame(.webhook(.add(WebhookFields(
            url: "https://hooks.slack.com/services/T000/B000/XXXX", events: ["phase_started", "phase_completed"],
            format: "slack", language: "en"))), ref: .number(22)))),
        ("client/changeWebhook.json", .client(ClientFrame(.webhook(.change(id: 1, WebhookFields(enabled: false))),
                                                          ref: .number(23)))),
        ("client/testWebhook.json", .client(ClientFrame(.webhook(.test(id: 1)), ref: .number(24)))),
        ("client/deleteWebhook.json", .client(ClientFrame(.webhook(.delete(id: 1)), ref: .number(25)))),
    ]
}
