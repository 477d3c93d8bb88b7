import ArgumentParser
import Dispatch
import Foundation
import Logging
import PomodoroCore
import PomodoroServer

@main
struct PomodoroServerCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pomodoro-server",
        abstract: "Hosts shared focus rooms: one timer per room, owned by the server, seen alike by every member.",
        discussion: """
            Serves, on one port: the WebSocket endpoint at /ws (see docs/PROTOCOL.md), the web page's files \
            at /, and GET /healthz. SIGINT or SIGTERM closes every connection with status 1001 and exits 0.
            """)

    @Option(help: "TCP port to listen on (0 picks a free port and prints it).")
    var port: Int = 8080

    @Option(help: "Address to listen on, e.g. 127.0.0.1 or ::1 (default: every interface).")
    var host: String?

    @Option(help: "Folder of the web page's static files, served at /.")
    var webRoot: String = "web"

    @Option(help: "Log level: trace, debug, info, notice, warning, error or critical.")
    var logLevel: Logger.Level = .info

    @Option(help: "Seconds a disconnected member keeps their place and may resume with their token.")
    var reconnectGrace: Int = 120

    @Option(help: "Seconds a room with nobody connected and no running timer lives on before it is dropped.")
    var emptyRoomLifetime: Int = 600

    @Option(help: "Largest message a client may send, in bytes.")
    var maxMessageBytes: Int = 16 * 1024

    func validate() throws {
        guard (0...65535).contains(port) else { throw ValidationError("--port must be 0–65535") }
        guard reconnectGrace >= 0 else { throw ValidationError("--reconnect-grace must not be negative") }
        guard emptyRoomLifetime >= 0 else { throw ValidationError("--empty-room-lifetime must not be negative") }
        guard (256...(1 << 20)).contains(maxMessageBytes) else {
            throw ValidationError("--max-message-bytes must be 256–1048576")
        }
    }

    func run() throws {
        let level = logLevel
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "pomodoro")
        var policy = RoomPolicy.standard
        policy.reconnectGrace = .seconds(reconnectGrace)
        policy.emptyRoomLifetime = .seconds(emptyRoomLifetime)
        let configuration = ServerConfiguration(host: host, port: port, webRoot: webRoot, roomPolicy: policy,
                                                maxMessageBytes: maxMessageBytes)
        let server: PomodoroServer
        do {
            server = try PomodoroServer(configuration: configuration, logger: logger)
        } catch {
            logger.critical("cannot start: \(error)")
            throw ExitCode(1)
        }

        let signals = [SIGINT, SIGTERM].map { signo -> DispatchSourceSignal in
            signal(signo, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signo, queue: .global())
            source.setEventHandler {
                logger.info("shutting down", metadata: ["signal": "\(signo)"])
                server.shutdown()
            }
            source.resume()
            return source
        }
        server.start()
        logger.info("listening", metadata: ["port": "\(server.port)", "host": "\(host ?? "*")",
                                            "webRoot": "\(webRoot)"])
        let shown = host.map { $0.contains(":") ? "[\($0)]" : $0 } ?? "localhost"
        FileHandle.standardOutput.write(Data("pomodoro-server listening on http://\(shown):\(server.port)/\n".utf8))
        server.waitUntilFinished()
        withExtendedLifetime(signals) {}
        logger.info("stopped")
    }
}

extension Logger.Level: @retroactive ExpressibleByArgument {}
