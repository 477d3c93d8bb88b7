import Foundation
import Testing

/// docs/ARCHITECTURE.md walks through files by path: every path it names must exist, so the tour cannot
/// drift from the code unnoticed.
struct ArchitectureDocTests {
    /// The package's root, found from this source file's path (Tests/PomodoroServerTests/…).
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// Every `Sources/…`, `Tests/…` or `docs/…` path the text names between backticks, or bare.
    static func paths(in text: String) -> [String] {
        let pattern = /(?:Sources|Tests|docs)\/[A-Za-z0-9_+\-\/.]*[A-Za-z0-9_]\.(?:swift|md)/
        return text.matches(of: pattern).map { String($0.output) }
    }

    @Test func everyFileTheTourNamesExists() throws {
        let doc = Self.root.appendingPathComponent("docs/ARCHITECTURE.md")
        let text = try String(contentsOf: doc, encoding: .utf8)
        let named = Set(Self.paths(in: text))
        // The tour names the server's owners and both walks' files: far more than a handful.
        #expect(named.count >= 25, "paths found: \(named.sorted())")
        let missing = named.filter { !FileManager.default.fileExists(atPath: Self.root.appendingPathComponent($0).path) }
        #expect(missing.isEmpty, "named in docs/ARCHITECTURE.md but not in the repository: \(missing.sorted())")
    }

    @Test func thePathsAreFoundAsWritten() {
        #expect(Self.paths(in: "see `Sources/PomodoroServer/RoomHub+Join.swift`, then docs/CLUSTER.md.")
            == ["Sources/PomodoroServer/RoomHub+Join.swift", "docs/CLUSTER.md"])
        #expect(Self.paths(in: "Sources/Nowhere/Gone.swift").count == 1)
    }
}
