import Foundation

/// The built `pomodoro-server` as the tests run it: to its end (`finished`), or until it serves (`serving`).
enum ExecutableRun {
    /// The built `pomodoro-server`, beside the test bundle.
    static var executable: URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("pomodoro-server")
    }

    /// How a run that was let finish ended, and what it printed.
    struct Finished {
        let status: Int32
        /// It exited by itself (not by a signal).
        let exited: Bool
        let output: String
        let errors: String
    }

    /// Runs `executable` with `arguments` to its end.
    static func finished(_ arguments: [String], executable: URL = executable) throws -> Finished {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        let output = Pipe(), errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let printed = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let complained = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return Finished(status: process.terminationStatus, exited: process.terminationReason == .exit,
                        output: printed, errors: complained)
    }

    /// Starts `executable` with `arguments` (in `directory`) and waits for its first line, the one that names
    /// the port it serves on. The caller ends the process. `quiet` sends its log to nowhere.
    static func serving(_ arguments: [String], executable: URL = executable, in directory: URL? = nil,
                        quiet: Bool = false) throws -> (process: Process, port: Int) {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        if let directory { process.currentDirectoryURL = directory }
        let output = Pipe()
        process.standardOutput = output
        if quiet { process.standardError = FileHandle.nullDevice }
        try process.run()
        var line = [UInt8]()
        while let byte = try output.fileHandleForReading.read(upToCount: 1)?.first, byte != UInt8(ascii: "\n") {
            line.append(byte)
        }
        let text = String(decoding: line, as: UTF8.self)
        guard let port = Int(text.split(separator: ":").last?.trimmingCharacters(in: .init(charactersIn: "/")) ?? "") else {
            if process.isRunning { process.terminate() }
            throw LiveTestFailure(description: "no port in the first line: \(text)")
        }
        return (process, port)
    }
}
