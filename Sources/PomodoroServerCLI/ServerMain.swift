import ArgumentParser
import Dispatch
import Foundation
import Logging
import PomodoroCluster
import PomodoroServer
import PomodoroStore

/// What `pomodoro-server` does once its command line is parsed: resolve the configuration, set up logging,
/// serve until SIGINT or SIGTERM.
public enum ServerMain {
    /// EX_CONFIG (sysexits.h): the configuration is wrong, and restarting will not help. The systemd unit
    /// lists it in RestartPreventExitStatus=.
    public static let configurationErrorStatus: Int32 = 78

    /// EX_UNAVAILABLE (sysexits.h): the database cannot be opened (PostgreSQL down or unreachable, an SQLite
    /// file that cannot be opened). Not in the unit's RestartPreventExitStatus=: systemd tries again, and a
    /// database that comes back brings the server up.
    public static let databaseUnavailableStatus: Int32 = 69

    public static func run(_ options: ServerOptions) throws {
        var defaults = ServerSettings()
        defaults.webRoot = ServerSettings.defaultWebRoot(executablePath: executablePath(), isDirectory: isDirectory)
        let resolved: ResolvedConfiguration
        do {
            resolved = try ConfigurationResolver.resolve(commandLine: options,
                                                         environment: ProcessInfo.processInfo.environment,
                                                         readFile: readTextFile, defaults: defaults)
        } catch {
            FileHandle.standardError.write(Data("pomodoro-server: configuration error: \(error)\n".utf8))
            throw ExitCode(configurationErrorStatus)
        }
        if options.printConfig {
            FileHandle.standardOutput.write(Data(resolved.printed.utf8))
            return
        }
        // A web root the admin named must be there; the default may be missing (then only the page is).
        if let source = resolved.sources["web-root"], source != .defaultValue, !isDirectory(resolved.settings.webRoot) {
            FileHandle.standardError.write(Data(("pomodoro-server: configuration error: the web root "
                + "\(resolved.settings.webRoot) (from \(source)) is not a folder; set --web-root to the folder of "
                + "the page's files\n").utf8))
            throw ExitCode(configurationErrorStatus)
        }
        try serve(resolved)
    }

    /// The log handler for a format: swift-log's text lines, or `JSONLogHandler`.
    public static func makeLogHandler(label: String, format: LogFormat, level: Logger.Level) -> any LogHandler {
        switch format {
        case .text:
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        case .json:
            var handler = JSONLogHandler(label: label)
            handler.logLevel = level
            return handler
        }
    }

    static func serve(_ resolved: ResolvedConfiguration) throws {
        let settings = resolved.settings
        LoggingSystem.bootstrap { label in
            makeLogHandler(label: label, format: settings.logFormat, level: settings.logLevel)
        }
        let logger = Logger(label: "pomodoro")
        for warning in resolved.warnings { logger.warning("\(warning)") }
        var configuration = settings.serverConfiguration
        if !isDirectory(settings.webRoot) {
            logger.warning("""
                no web page here: neither ./web nor the installed share/pomodoro/web is a folder; the API and \
                WebSocket are served, / answers 404 (set --web-root)
                """,
                           metadata: ["webRoot": "\(settings.webRoot)"])
            configuration.webRoot = nil
        }
        if let file = resolved.configFile { logger.debug("read the config file", metadata: ["path": "\(file)"]) }

        // The database is opened here, not by PomodoroServer, so that a database out of reach is told apart
        // from the server's other start failures.
        let store: (any RoomStore)?
        do {
            store = try configuration.database.open(retention: configuration.journalRetention)
        } catch {
            FileHandle.standardError.write(Data(databaseUnavailableLine(configuration.database, error).utf8))
            throw ExitCode(databaseUnavailableStatus)
        }
        if let cluster = settings.clusterConfiguration { try checkCredentials(of: cluster.redis, logger: logger) }
        let server: PomodoroServer
        do {
            server = try PomodoroServer(configuration: configuration, logger: logger, store: store)
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
        let scheme = settings.tlsCertificatePath == nil ? "http" : "https"
        logger.info("listening", metadata: ["port": "\(server.port)", "host": "\(settings.host ?? "*")",
                                            "webRoot": "\(configuration.webRoot ?? "none")", "scheme": "\(scheme)",
                                            "database": "\(configuration.database)"])
        let shown = settings.host.map { $0.contains(":") ? "[\($0)]" : $0 } ?? "localhost"
        FileHandle.standardOutput.write(Data("pomodoro-server listening on \(scheme)://\(shown):\(server.port)/\n".utf8))
        server.waitUntilFinished()
        withExtendedLifetime(signals) {}
        logger.info("stopped")
    }

    /// A node whose Redis refuses its password (or user) would start and run nothing, saying nothing: it stops
    /// here with one line and `databaseUnavailableStatus` instead. A Redis out of reach is not an error at
    /// start (it may come back; the node fails closed meanwhile), only a warning.
    static func checkCredentials(of redis: RedisAddress, logger: Logger) throws {
        do {
            let connection = try RedisConnection(redis, timeout: 2)
            try connection.command(["PING"])
        } catch where error.isAuthenticationRefused {
            FileHandle.standardError.write(Data(credentialsRefusedLine(redis, error).utf8))
            throw ExitCode(databaseUnavailableStatus)
        } catch {
            logger.warning("the cluster's Redis cannot be reached yet; this node runs no room until it can",
                           metadata: ["redis": "\(redis.redacted)", "reason": "\(error.message)"])
        }
    }

    /// The one line that says the cluster's Redis refused the node's credentials (the password never shown).
    public static func credentialsRefusedLine(_ redis: RedisAddress, _ error: RedisError) -> String {
        var reason = error.message
        if let colon = reason.range(of: "\(redis.redacted): ") { reason = String(reason[colon.upperBound...]) }
        return "pomodoro-server: the cluster's Redis at \(redis.redacted) refuses this node's credentials: \(reason)\n"
    }

    /// The one line that says the database cannot be opened: the database as `--print-config` shows it (no
    /// password) and the store's reason, its line breaks (libpq's hints) folded into one line and without a
    /// second mention of the database.
    public static func databaseUnavailableLine(_ database: DatabaseLocation, _ error: StoreError) -> String {
        var reason = error.message.split(whereSeparator: \.isNewline)
            .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }.joined(separator: " ")
        let named = "connecting to \(database): "
        if reason.hasPrefix(named) { reason.removeFirst(named.count) }
        return "pomodoro-server: cannot open the database \(database): \(reason)\n"
    }

    /// Reads a config file as UTF-8, with the system's reason when it cannot.
    public static func readTextFile(_ path: String) throws(ConfigurationError) -> String {
        guard let file = fopen(path, "r") else {
            throw ConfigurationError("cannot read the config file \(path): \(String(cString: strerror(errno)))")
        }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = fread(&buffer, 1, buffer.count, file)
            if count == 0 { break }
            bytes += buffer[..<count]
        }
        if ferror(file) != 0 {
            throw ConfigurationError("cannot read the config file \(path): \(String(cString: strerror(errno)))")
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw ConfigurationError("the config file \(path) is not UTF-8 text")
        }
        return text
    }

    static func executablePath() -> String {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    }

    static func isDirectory(_ path: String) -> Bool {
        var directory: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &directory) && directory.boolValue
    }
}
