#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Logging
import PomodoroServerCLI
import Testing

/// `--log-format json`: one JSON object per line, fixed fields first, metadata as fields.
struct JSONLogHandlerTests {
    final class Lines: @unchecked Sendable {
        private let lock = NSLock()
        private var stored: [String] = []
        func append(_ line: String) { lock.withLock { stored.append(line) } }
        var all: [String] { lock.withLock { stored } }
    }

    func logger(_ lines: Lines, level: Logger.Level = .info) -> Logger {
        Logger(label: "pomodoro") { label in
            var handler = JSONLogHandler(label: label, write: { lines.append($0) },
                                         now: { timespec(tv_sec: 1_767_225_600 + 3_723, tv_nsec: 45_000_000) })
            handler.logLevel = level
            return handler
        }
    }

    @Test func oneObjectPerLineWithMetadataAsFields() throws {
        let lines = Lines()
        var log = logger(lines)
        log[metadataKey: "room.id"] = "design"
        log.info("member joined", metadata: ["member.id": "m1", "port": "\(8080)"])
        log.debug("not at info")
        #expect(lines.all == [
            #"{"timestamp":"2026-01-01T01:02:03.045Z","level":"info","label":"pomodoro","message":"member joined","member.id":"m1","port":"8080","room.id":"design"}"# + "\n",
        ])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(lines.all[0].utf8)) as? [String: String])
        #expect(object["message"] == "member joined")
    }

    @Test func textIsEscapedAndReservedKeysAreKept() throws {
        let lines = Lines()
        let log = logger(lines)
        log.warning("a \"quoted\"\tline\nand a \\ and \u{1}", metadata: [
            "level": "mine", "nested": ["a": ["1", "2"], "b": "c"],
        ])
        let line = try #require(lines.all.first)
        #expect(line.hasSuffix("}\n") && line.filter { $0 == "\n" }.count == 1)
        #expect(line.contains(#""message":"a \"quoted\"\tline\nand a \\ and \u0001""#))
        #expect(line.contains(#""metadata.level":"mine""#))
        #expect(line.contains(#""nested":{"a":["1","2"],"b":"c"}"#))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(object["level"] as? String == "warning")
        #expect(object["message"] as? String == "a \"quoted\"\tline\nand a \\ and \u{1}")
    }

    @Test func theTextFormatIsSwiftLogsStreamHandler() {
        #expect(ServerMain.makeLogHandler(label: "x", format: .text, level: .debug) is StreamLogHandler)
        let json = ServerMain.makeLogHandler(label: "x", format: .json, level: .error)
        #expect(json is JSONLogHandler && json.logLevel == .error)
    }
}
