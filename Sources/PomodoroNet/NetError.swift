import CLibWebSockets
import Foundation

/// Failures of the network layer. This file is the one place that turns libwebsockets' return codes and
/// null pointers into Swift errors.
public enum NetError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The context could not be created: usually the port is taken or the address is not local.
    case cannotListen(host: String?, port: Int)
    /// The client context could not be created.
    case cannotCreateClient
    /// An outgoing connection could not be started.
    case cannotConnect(String)
    /// The web root does not exist or is not a folder.
    case webRootMissing(String)
    /// A TLS certificate or key file cannot be read.
    case tlsFileUnreadable(String)
    /// A symbolic link in the web root leads outside it (it would publish what it points at).
    case webRootLinksOutside(String)

    public var description: String {
        switch self {
        case let .cannotListen(host, port): "cannot listen on \(host ?? "*"):\(port) (port in use or address not local?)"
        case .cannotCreateClient: "cannot create the WebSocket client context"
        case let .cannotConnect(why): "cannot connect: \(why)"
        case let .webRootMissing(path): "web root \(path) is not a folder"
        case let .tlsFileUnreadable(path): "cannot read TLS file \(path)"
        case let .webRootLinksOutside(path): "\(path) links outside the web root; remove it or copy the file in"
        }
    }
}

enum LWS {
    /// Checks a pointer the library returned, mapping nil to `error`.
    static func check<T>(_ pointer: T?, or error: NetError) throws(NetError) -> T {
        guard let pointer else { throw error }
        return pointer
    }

    /// Headroom every `lws_write` buffer needs before its payload.
    static let pre = Int(pomodoro_lws_pre())

    /// Sets the library's own logging: errors only, or warnings and notices too. Its lines go to the sink
    /// set with `LibraryLog.route(to:)`, else to standard error.
    static func configureLogging(verbose: Bool) {
        lws_set_log_level(verbose ? (LLL_ERR | LLL_WARN | LLL_NOTICE) : LLL_ERR, libraryLogLine)
    }
}

/// Where libwebsockets' own log lines go, so that they reach the application's logger (and its JSON log
/// format) instead of being written to standard error behind its back.
public enum LibraryLog {
    /// How serious a line of the library's is.
    public enum Level: Sendable {
        case error, warning, notice, other
    }

    private static let lock = NSLock()
    nonisolated(unsafe) private static var sink: (@Sendable (Level, String) -> Void)?

    /// Sends every later line of the library's to `sink` (called on whichever thread logged it).
    public static func route(to sink: @escaping @Sendable (Level, String) -> Void) {
        lock.withLock { Self.sink = sink }
    }

    static func emit(_ level: Int32, _ line: String) {
        let sink = lock.withLock { Self.sink }
        let kind: Level = level & LLL_ERR != 0 ? .error : level & LLL_WARN != 0 ? .warning
            : level & LLL_NOTICE != 0 ? .notice : .other
        if let sink {
            sink(kind, line)
        } else {
            FileHandle.standardError.write(Data((line.hasSuffix("\n") ? line : line + "\n").utf8))
        }
    }
}

/// The C-callable emitter handed to libwebsockets.
private func libraryLogLine(_ level: Int32, _ line: UnsafePointer<CChar>?) {
    guard let line else { return }
    var text = String(cString: line)
    while text.hasSuffix("\n") { text.removeLast() }
    LibraryLog.emit(level, text)
}
