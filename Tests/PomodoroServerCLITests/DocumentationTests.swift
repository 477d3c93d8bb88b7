import Foundation
import PomodoroServerCLI
import Testing

/// The one settings table (deploy/README.md) and the README's option list keep up with `Setting.all`.
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

    @Test func theReadmeNamesEveryOption() throws {
        let readme = try String(contentsOf: Self.repository.appendingPathComponent("README.md"), encoding: .utf8)
        for setting in Setting.all {
            #expect(readme.contains("`\(setting.option)`"), "README.md names \(setting.option)")
        }
    }
}
