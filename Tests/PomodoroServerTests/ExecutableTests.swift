import Foundation
import PomodoroNet
import PomodoroProtocol
import Testing

/// The built `pomodoro-server` executable, run as an admin would.
@Suite(.timeLimit(.minutes(1)))
struct ExecutableTests {
    /// The executable sits beside the test bundle in the build folder.
    static var executable: URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("pomodoro-server")
    }

    @Test(arguments: ["SIGINT", "SIGTERM"])
    func aSignalClosesConnectionsWith1001AndExitsZero(signal: String) throws {
        let process = Process()
        process.executableURL = Self.executable
        process.arguments = ["--port", "0", "--host", "127.0.0.1", "--web-root", LiveServer.webRoot, "--db", "none",
                             "--log-level", "warning"]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        defer { if process.isRunning { process.terminate() } }

        // The first line names the port it bound.
        var line = [UInt8]()
        while let byte = try output.fileHandleForReading.read(upToCount: 1)?.first, byte != UInt8(ascii: "\n") {
            line.append(byte)
        }
        let text = String(decoding: line, as: UTF8.self)
        let port = try #require(Int(text.split(separator: ":").last?.trimmingCharacters(in: .init(charactersIn: "/")) ?? ""),
                                "unexpected first line: \(text)")

        #expect(try httpGet(port: port, path: "/healthz").status == 200)
        let client = try WebSocketClient()
        client.start()
        defer { client.stop(); client.waitUntilFinished() }
        let peer = try Peer(client, port: port)
        _ = try peer.join("exe", name: "Ana")

        if signal == "SIGINT" { process.interrupt() } else { process.terminate() }
        #expect(try peer.expectClose() == 1001)
        process.waitUntilExit()
        #expect(process.terminationReason == .exit && process.terminationStatus == 0)
    }

    @Test func helpExplainsEveryOption() throws {
        let process = Process()
        process.executableURL = Self.executable
        process.arguments = ["--help"]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let help = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        for option in ["--port", "--host", "--web-root", "--log-level", "--reconnect-grace", "--empty-room-lifetime",
                       "--max-message-bytes", "--metrics"] {
            #expect(help.contains(option), "help mentions \(option)")
        }
    }

    @Test func aTakenPortIsAClearErrorNotACrash() throws {
        let server = try LiveServer()
        defer { server.stop() }
        let process = Process()
        process.executableURL = Self.executable
        process.arguments = ["--port", "\(server.port)", "--host", "127.0.0.1", "--web-root", LiveServer.webRoot, "--db", "none"]
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = Pipe()
        try process.run()
        let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 1)
        #expect(text.contains("cannot listen"))
    }

    @Test func withJSONLogsEveryLineIsJSONTheLibrarysOwnToo() throws {
        let server = try LiveServer()
        defer { server.stop() }
        let process = Process()
        process.executableURL = Self.executable
        // A taken port makes libwebsockets itself log errors before the server gives up.
        process.arguments = ["--port", "\(server.port)", "--host", "127.0.0.1", "--web-root", LiveServer.webRoot, "--db", "none",
                             "--log-format", "json"]
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = Pipe()
        try process.run()
        let data = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let lines = String(decoding: data, as: UTF8.self).split(separator: "\n")
        let objects = lines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        #expect(!lines.isEmpty && objects.count == lines.count, "non-JSON lines: \(lines)")
        #expect(objects.contains { $0["source"] as? String == "libwebsockets" && $0["level"] as? String == "error" })
    }
}
