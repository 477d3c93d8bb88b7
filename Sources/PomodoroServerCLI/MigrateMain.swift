import ArgumentParser
import Foundation
import PomodoroServer
import PomodoroStore

/// `pomodoro-server migrate --from SOURCE --to TARGET`: the options.
public struct MigrateOptions: ParsableArguments {
    @Option(name: .customLong("from"), help: "The database to copy from: a path, sqlite:PATH or postgres://…")
    public var from: String
    @Option(name: .customLong("to"), help: "The database to copy into: a path, sqlite:PATH or postgres://…")
    public var to: String

    public init() {}
}

/// Copies a deployment's rooms, members (their token hashes and room locks), schedules, bans, API tokens,
/// webhooks with their outbox, and focus journal from one database into another, then counts both sides. Stop the server first: rows it writes meanwhile may be
/// missed. Running it again copies only what is missing.
public enum MigrateMain {
    public static let abstract = "Copies rooms, members, schedules, bans, API tokens, webhooks (with their pending deliveries) and the focus journal from one database into another."

    /// Runs the copy, printing a line per room and the counts of both sides. Throws `ExitCode` 78 for
    /// unusable arguments, 1 when the counts differ afterwards or a store fails.
    public static func run(_ options: MigrateOptions, output: (String) -> Void = { print($0) }) throws {
        let source: DatabaseLocation, target: DatabaseLocation
        do {
            source = try DatabaseLocation(parsing: options.from)
            target = try DatabaseLocation(parsing: options.to)
        } catch {
            FileHandle.standardError.write(Data("pomodoro-server migrate: \(error.reason)\n".utf8))
            throw ExitCode(ServerMain.configurationErrorStatus)
        }
        guard source != .memory, target != .memory else {
            FileHandle.standardError.write(Data("pomodoro-server migrate: none keeps nothing to copy from or into\n".utf8))
            throw ExitCode(ServerMain.configurationErrorStatus)
        }
        guard source != target else {
            FileHandle.standardError.write(Data("pomodoro-server migrate: --from and --to are the same database\n".utf8))
            throw ExitCode(ServerMain.configurationErrorStatus)
        }
        do {
            // Nothing is pruned on either side: the copy is of everything the source still holds.
            guard let from = try source.open(retention: .keepEverything),
                  let to = try target.open(retention: .keepEverything) else { return }
            output("copying \(source) into \(target)")
            let report = try StoreCopy.copy(from: from, to: to) { room, counts in
                output("  \(room): " + [counted(counts.members, "member"), counted(counts.sessions, "focus session"),
                                         counted(counts.interruptions, "interruption"), counted(counts.apiTokens, "API token"),
                                         counted(counts.webhooks, "webhook"),
                                         counted(counts.deliveries, "webhook delivery", plural: "webhook deliveries")].joined(separator: ", "))
            }
            output("copied \(counted(report.sessionsCopied, "focus session")) and "
                   + counted(report.interruptionsCopied, "interruption"))
            let widths = [8, 9, 10, 15, 8, 10, 12]
            func row(_ label: String, _ cells: [String]) -> String {
                label.padding(toLength: 8, withPad: " ", startingAt: 0)
                    + zip(cells, widths).map { $0.leftPadded(to: $1) }.joined()
            }
            output(row("", ["rooms", "members", "sessions", "interruptions", "tokens", "webhooks", "deliveries"]))
            for (label, counts) in [("source", report.source), ("target", report.target)] {
                output(row(label, [counts.rooms, counts.members, counts.sessions, counts.interruptions, counts.apiTokens,
                                   counts.webhooks, counts.deliveries].map(String.init)))
            }
            guard report.verified else {
                FileHandle.standardError.write(Data("pomodoro-server migrate: the target does not hold everything the source does\n".utf8))
                throw ExitCode(1)
            }
            output("verified: the target holds every room, member, API token, webhook, webhook delivery and journal row of the source")
        } catch let error as StoreError {
            FileHandle.standardError.write(Data("pomodoro-server migrate: \(error)\n".utf8))
            throw ExitCode(1)
        }
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: " ", count: width - count) + self
    }
}
