import Foundation
import PomodoroTestSupport
import Testing

/// The built `pomodoro-server`, as an admin runs it to check a configuration.
@Suite(.onOwnThreads, .timeLimit(.minutes(TestTime.minutes(1))))
struct PrintConfigExecutableTests {
    func run(_ arguments: [String], environment: [String: String]) throws -> ProcessResult {
        try ProcessLauncher.run(ProcessLauncher.server, arguments, environment: environment)
    }

    @Test func printConfigShowsTheMergeAndExitsZero() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("pomodoro-\(getpid()).conf")
        try "port = 7000\nmax-rooms = 9\n".write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        let result = try run(["--print-config", "--max-rooms", "11"],
                             environment: ["POMODORO_CONFIG": file.path, "POMODORO_HOST": "127.0.0.1"])
        #expect(result.status == 0)
        #expect(result.output.contains("port = 7000                                 # from \(file.path):1"))
        #expect(result.output.contains("host = 127.0.0.1                            # from POMODORO_HOST"))
        #expect(result.output.contains("max-rooms = 11                              # from --max-rooms"))
    }

    @Test func aBadConfigurationExits78WithTheReason() throws {
        let result = try run(["--print-config"], environment: ["POMODORO_PORT": "eighty"])
        #expect(result.status == 78)
        #expect(result.errors == "pomodoro-server: configuration error: POMODORO_PORT: 'eighty' is not a whole number\n")
    }
}
