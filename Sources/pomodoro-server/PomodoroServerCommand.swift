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

    @Option(name: .customLong("allowed-origin"),
            help: "An origin (e.g. https://focus.example.com) whose pages may connect, besides the server's own. Repeatable.")
    var allowedOrigins: [String] = []

    @OptionGroup(title: "Limits")
    var limits: LimitOptions

    func validate() throws {
        guard (0...65535).contains(port) else { throw ValidationError("--port must be 0–65535") }
        guard reconnectGrace >= 0 else { throw ValidationError("--reconnect-grace must not be negative") }
        guard emptyRoomLifetime >= 0 else { throw ValidationError("--empty-room-lifetime must not be negative") }
        for origin in allowedOrigins where !(origin.hasPrefix("http://") || origin.hasPrefix("https://")) {
            throw ValidationError("--allowed-origin takes an origin such as https://focus.example.com, not \(origin)")
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
        policy.maxMembers = limits.maxMembersPerRoom
        policy.maxNameLength = limits.maxNameLength
        policy.maxTaskLength = limits.maxTaskLength
        let configuration = ServerConfiguration(host: host, port: port, webRoot: webRoot, roomPolicy: policy,
                                                limits: limits.serverLimits, allowedOrigins: allowedOrigins)
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

/// Every bound that keeps one client from hurting the others (see docs/PROTOCOL.md, "Limits").
struct LimitOptions: ParsableArguments {
    @Option(help: "Largest message a client may send, in bytes; larger ones get too_large.")
    var maxMessageBytes: Int = ServerLimits.standard.maxMessageBytes

    @Option(help: "Messages per second a connection may send, sustained; more get rate_limited.")
    var messagesPerSecond: Int = ServerLimits.standard.messagesPerSecond

    @Option(help: "Messages a connection may send at once after a quiet spell.")
    var messageBurst: Int = ServerLimits.standard.messageBurst

    @Option(help: "WebSocket connections one address may hold at once (0: no limit).")
    var maxConnectionsPerAddress: Int = ServerLimits.standard.maxConnectionsPerAddress

    @Option(help: "Rooms one address may create per minute (0: no limit).")
    var roomsPerAddressPerMinute: Int = ServerLimits.standard.roomsCreatedPerAddressPerMinute

    @Option(help: "Rooms the server holds at most.")
    var maxRooms: Int = ServerLimits.standard.maxRooms

    @Option(help: "Members a room holds at most, connected or within their grace period.")
    var maxMembersPerRoom: Int = RoomPolicy.standard.maxMembers

    @Option(help: "Longest member name, in characters.")
    var maxNameLength: Int = RoomPolicy.standard.maxNameLength

    @Option(help: "Longest task text, in characters.")
    var maxTaskLength: Int = RoomPolicy.standard.maxTaskLength

    @Option(help: "Frames queued for one slow reader before it is dropped.")
    var maxQueuedFrames: Int = ServerLimits.standard.maxQueuedFrames

    @Option(help: "Bytes queued for one slow reader before it is dropped.")
    var maxQueuedBytes: Int = ServerLimits.standard.maxQueuedBytes

    @Option(help: "Seconds a connection may take to finish its request or WebSocket handshake.")
    var handshakeTimeout: Int = ServerLimits.standard.handshakeTimeoutSeconds

    @Option(help: "Seconds of silence before the server pings a WebSocket peer.")
    var pingAfter: Int = ServerLimits.standard.pingAfterSeconds

    @Option(help: "Seconds without a pong before a silent peer is dropped (more than --ping-after).")
    var hangUpAfter: Int = ServerLimits.standard.hangUpAfterSeconds

    func validate() throws {
        guard (256...(1 << 20)).contains(maxMessageBytes) else { throw ValidationError("--max-message-bytes must be 256–1048576") }
        guard messagesPerSecond >= 1, messageBurst >= 1 else { throw ValidationError("--messages-per-second and --message-burst must be at least 1") }
        guard maxConnectionsPerAddress >= 0, roomsPerAddressPerMinute >= 0 else { throw ValidationError("per-address limits must not be negative") }
        guard maxRooms >= 1, maxMembersPerRoom >= 1 else { throw ValidationError("--max-rooms and --max-members-per-room must be at least 1") }
        guard (1...200).contains(maxNameLength), (0...10_000).contains(maxTaskLength) else { throw ValidationError("--max-name-length must be 1–200 and --max-task-length 0–10000") }
        guard maxQueuedFrames >= 1, maxQueuedBytes >= 4096 else { throw ValidationError("--max-queued-frames must be at least 1 and --max-queued-bytes at least 4096") }
        guard (1...300).contains(handshakeTimeout) else { throw ValidationError("--handshake-timeout must be 1–300") }
        guard (1...3600).contains(pingAfter), hangUpAfter > pingAfter, hangUpAfter <= 7200 else { throw ValidationError("--ping-after must be 1–3600 and --hang-up-after more than it (at most 7200)") }
    }

    var serverLimits: ServerLimits {
        var limits = ServerLimits()
        limits.maxMessageBytes = maxMessageBytes
        limits.messagesPerSecond = messagesPerSecond
        limits.messageBurst = messageBurst
        limits.maxConnectionsPerAddress = maxConnectionsPerAddress
        limits.roomsCreatedPerAddressPerMinute = roomsPerAddressPerMinute
        limits.maxRooms = maxRooms
        limits.maxQueuedFrames = maxQueuedFrames
        limits.maxQueuedBytes = maxQueuedBytes
        limits.handshakeTimeoutSeconds = handshakeTimeout
        limits.pingAfterSeconds = pingAfter
        limits.hangUpAfterSeconds = hangUpAfter
        return limits
    }
}
