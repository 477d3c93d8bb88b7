import Foundation
import Testing

/// The built `pomodoro-server`, as an admin runs it to check a configuration.
@Suite(.timeLimit(.minutes(1)))
struct PrintConfigExecutableTests {
    static var executable: URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("pomodoro-server")
    }

    func run(_ arguments: [String], environment: [String: String]) throws -> (status: Int32, out: String, err: String) {
        let process = Process()
        process.executableURL = Self.executable
        process.arguments = arguments
        process.environment = environment
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let output = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let errors = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, output, errors)
    }

    @Test func printConfigShowsTheMergeAndExitsZero() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("pomodoro-\(getpid()).conf")
        try "port = 7000\nmax-rooms = 9\n".write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        let result = try run(["--print-config", "--max-rooms", "11"],
                             environment: ["POMODORO_CONFIG": file.path, "POMODORO_HOST": "127.0.0.1"])
        #expect(result.status == 0)
        #expect(result.out.contains("port = 7000                                 # from \(file.path):1"))
        #expect(result.out.contains("host = 127.0.0.1                            # from POMODORO_HOST"))
        #expect(result.out.contains("max-rooms = 11                              # from --max-rooms"))
    }

    @Test func aBadConfigurationExits78WithTheReason() throws {
        let result = try run(["--print-config"], environment: ["POMODORO_PORT": "eighty"])
        #expect(result.status == 78)
        #expect(result.err == "pomodoro-server: configuration error: POMODORO_PORT: 'eighty' is not a whole number\n")
    }
}
