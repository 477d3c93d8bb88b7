import Foundation
import PomodoroServerCLI
import Testing

/// The one settings table (deploy/README.md) and the README's option list keep up with `Setting.all`; the
/// README's module table keeps up with Package.swift.
struct DocumentationTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    @Test func theSettingsTableHasARowPerSetting() throws {
        let page = try String(contentsOf: Self.repository.appendingPathComponent("deploy/README.md"), encoding: .utf8)
        for setting in Setting.all {
            #expect(page.contains("| `\(setting.option)` | `\(setting.environmentVariable)` | `\(setting.name)` |"),
                    "deploy/README.md has a row for \(setting.name)")
        }
    }

    /// The table's default column is written by hand; the defaults are defined in code (ServerSettings,
    /// ServerLimits, RoomPolicy, WebSocketServerOptions.Defaults), and this keeps the two the same.
    @Test func theSettingsTableShowsEachDefaultTheCodeHas() throws {
        let page = try String(contentsOf: Self.repository.appendingPathComponent("deploy/README.md"), encoding: .utf8)
        for setting in Setting.all where setting.name != "web-root" {
            guard let value = setting.value(in: ServerSettings()), !value.isEmpty else { continue }
            let row = "| `\(setting.option)` | `\(setting.environmentVariable)` | `\(setting.name)` | "
            #expect(page.contains(row + value + " |") || page.contains(row + "`\(value)` |"),
                    "deploy/README.md shows \(setting.name)'s default, \(value)")
        }
    }

    @Test func theReadmeNamesEveryOption() throws {
        let readme = try String(contentsOf: Self.repository.appendingPathComponent("README.md"), encoding: .utf8)
        for setting in Setting.all {
            #expect(readme.contains("`\(setting.option)`"), "README.md names \(setting.option)")
        }
    }

    @Test func theModuleTableNamesEveryTarget() throws {
        let manifest = try String(contentsOf: Self.repository.appendingPathComponent("Package.swift"), encoding: .utf8)
        let readme = try String(contentsOf: Self.repository.appendingPathComponent("README.md"), encoding: .utf8)
        guard let start = readme.range(of: "| module | what it holds |"),
              let end = readme.range(of: "\n\n", range: start.upperBound..<readme.endIndex) else {
            Issue.record("README.md has no module table")
            return
        }
        let table = readme[start.lowerBound..<end.lowerBound]
        let targets = manifest.matches(of: /\.(?:systemLibrary|target|executableTarget|testTarget)\(name: "([^"]+)"/)
            .map { String($0.output.1) }
        #expect(targets.count > 10, "targets found in Package.swift: \(targets)")
        for target in targets {
            #expect(table.contains("`\(target)`"), "the README's module table names \(target)")
        }
    }
}
