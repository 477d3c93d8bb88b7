import CLibWebSockets

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

    public var description: String {
        switch self {
        case let .cannotListen(host, port): "cannot listen on \(host ?? "*"):\(port) (port in use or address not local?)"
        case .cannotCreateClient: "cannot create the WebSocket client context"
        case let .cannotConnect(why): "cannot connect: \(why)"
        case let .webRootMissing(path): "web root \(path) is not a folder"
        case let .tlsFileUnreadable(path): "cannot read TLS file \(path)"
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

    /// Sets the library's own logging (to standard error): errors only, or warnings and notices too.
    static func configureLogging(verbose: Bool) {
        lws_set_log_level(verbose ? (LLL_ERR | LLL_WARN | LLL_NOTICE) : LLL_ERR, nil)
    }
}
