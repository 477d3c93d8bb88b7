import ArgumentParser
import Foundation
import PomodoroClient
import PomodoroProtocol

/// `pomo webhooks`: a room's webhooks, listed with their last deliveries, added, tested and removed
/// (docs/PROTOCOL.md §17).
struct WebhooksCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "webhooks",
        abstract: "List a room's webhooks, or add, test and remove them.",
        discussion: """
            The server posts to each webhook when the events it wants happen in the room: Slack's or \
            Discord's incoming-webhook messages, or its own signed JSON. The secret of a json webhook is \
            printed once, when it is added.

            Examples:
              pomo webhooks team-alpha
              pomo webhooks add team-alpha https://hooks.slack.com/services/T0/B0/XXXX --format slack
              pomo webhooks add team-alpha https://example.com/hook --events phase_started,member_joined
              pomo webhooks test team-alpha 1
              pomo webhooks rm team-alpha 1
            """,
        subcommands: [List.self, Add.self, Test.self, Remove.self],
        defaultSubcommand: List.self)

    /// Sends `request` in a short visit and prints the list that answers it. A test is answered `ok`; the
    /// list is then asked for, to say whether the test waits behind a delivery that keeps failing.
    static func perform(_ request: WebhookRequest, room: String, visit: VisitOptions, json: Bool = false) async throws {
        let ref = Ref.string("webhooks")
        let afterTest = Ref.string("webhooks-after-test")
        try await Visit(room: room, options: visit).run { event, _ in
            guard case let .message(reply, raw, _) = event else { return .wait }
            switch reply {
            case .welcome:
                return .send(.webhook(request), ref: ref)
            case let .error(code, text, field, r?, _) where r == ref:
                return .finish(fail("the server refused: \(Labels.refusal(text, field: field)) [\(code.rawValue)]",
                                    status: PomoExit.refused))
            case .ok(_, _, let r?) where r == ref:
                return .send(.webhook(.list), ref: afterTest)
            case .error(_, _, _, let r?, _) where r == afterTest:
                printLine("test queued")
                return .finish(nil)
            case let .webhooks(payload, r?) where r == afterTest:
                if case .test(let id) = request { printLine(WebhookLines.testQueued(webhook: id, in: payload)) }
                return .finish(nil)
            case let .webhooks(payload, r?) where r == ref:
                if json {
                    printLine(String(decoding: raw, as: UTF8.self))
                } else {
                    for line in WebhookLines.lines(payload, utcOffsetSeconds: utcOffsetNow()) { printLine(line) }
                }
                return .finish(nil)
            default:
                return .wait
            }
        }
    }

    struct Target: ParsableArguments {
        @Argument(help: "The room's name.")
        var room: String
        @OptionGroup var visit: VisitOptions
        func validate() throws { try validateRoom(room) }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "List the room's webhooks.")
        @OptionGroup var target: Target
        @Flag(help: "Print the webhooks message as the server sent it.")
        var json = false
        func run() async throws { try await perform(.list, room: target.room, visit: target.visit, json: json) }
    }

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "add", abstract: "Add a webhook.")
        @OptionGroup var target: Target
        @Argument(help: "The URL to post to (http:// or https://).")
        var url: String
        @Option(help: ArgumentHelp("json, slack or discord.", valueName: "format"))
        var format = "json"
        @Option(help: ArgumentHelp("Comma-separated: phase_started, phase_completed, schedule_warning, schedule_ended, member_joined, member_left, task_changed.",
                                   valueName: "events"))
        var events = "phase_started,phase_completed"
        @Option(help: ArgumentHelp("The messages' language: en, ko, zh-Hans, zh-Hant.", valueName: "language"))
        var language: String?
        func run() async throws {
            let fields = WebhookFields(url: url, events: events.split(separator: ",").map(String.init), format: format,
                                       language: language)
            try await perform(.add(fields), room: target.room, visit: target.visit)
        }
    }

    struct Test: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "test", abstract: "Send a test event to a webhook.")
        @OptionGroup var target: Target
        @Argument(help: "The webhook's number.")
        var id: Int
        func run() async throws { try await perform(.test(id: id), room: target.room, visit: target.visit) }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "rm", abstract: "Remove a webhook.")
        @OptionGroup var target: Target
        @Argument(help: "The webhook's number.")
        var id: Int
        func run() async throws { try await perform(.delete(id: id), room: target.room, visit: target.visit) }
    }
}
