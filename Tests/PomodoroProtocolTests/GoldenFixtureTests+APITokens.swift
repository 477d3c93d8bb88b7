import PomodoroCore
@testable import PomodoroProtocol

// A room's API tokens on the wire (docs/PROTOCOL.md §16), kept apart from the main table.

extension GoldenFixtureTests {
    static let apiTokenTable: [(String, Shape)] = [
        ("client/apiToken-list.json", .client(ClientFrame(.apiToken(.list), ref: .number(1)))),
        ("client/apiToken-create.json", .client(ClientFrame(.apiToken(.create(name: "deploy bot")), ref: .number(2)))),
        ("client/apiToken-revoke.json", .client(ClientFrame(.apiToken(.revoke(id: "t1")), ref: .number(3)))),
        ("server/apiTokens.json", .server(.apiTokens(APITokensPayload(
            room: "team-alpha",
            tokens: [APITokenPayload(id: "t1", name: "deploy bot", createdAt: epoch, lastUsedAt: nil),
                     APITokenPayload(id: "t2", name: "standup", createdAt: epoch + 60_000, lastUsedAt: epoch + 120_000)],
            created: .init(id: "t2", token: "pomo_" + String(repeating: "0123456789abcdef", count: 4))), ref: .number(2)))),
        ("server/event-control-api.json", event(.control(action: .start, by: "api:deploy bot", seconds: nil))),
    ]
}
