import CLibWebSockets
import Foundation

/// What happens on a client connection, reported on the client's service thread.
public enum ClientEvent: Equatable, Sendable {
    case opened
    case text([UInt8])
    /// The connection closed; `code` is the status from the peer's close frame, when it sent one.
    case closed(code: UInt16?, reason: String)
    /// The connection could not be made.
    case failed(String)
}

/// Identifies one connection of a `WebSocketClient`.
public struct ClientConnectionID: Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt64
    public var description: String { "client\(rawValue)" }
}

/// A libwebsockets client context holding any number of connections on one service thread.
///
/// Every public method is safe from any thread: it hands the work to the service thread. Handlers run on
/// the service thread.
public final class WebSocketClient: ServiceLoop, @unchecked Sendable {  // safe: restated from ServiceLoop (Swift asks each subclass), same rule
    /// The reason our server gives with close code 1012 (a restart, or a cluster node draining).
    public static let restartReason = "service restart"

    final class Connection {
        let id: ClientConnectionID
        let handler: @Sendable (ClientEvent) -> Void
        var wsi: OpaquePointer?
        var assembler: MessageAssembler
        var outbound: [(bytes: [UInt8], binary: Bool)] = []
        var peerCloseCode: UInt16?
        var peerCloseReason = ""
        var closeCode: UInt16?
        /// Set once the close frame has been handed to the library (`startClose`).
        var closeStarted = false
        var opened = false
        var ended = false
        let strings: [UnsafeMutablePointer<CChar>]
        init(id: ClientConnectionID, maxMessageBytes: Int, strings: [UnsafeMutablePointer<CChar>],
             handler: @escaping @Sendable (ClientEvent) -> Void) {
            self.id = id
            self.handler = handler
            self.strings = strings
            assembler = MessageAssembler(limit: maxMessageBytes)
        }
        deinit { for s in strings { free(s) } }
    }

    private var connections: [ClientConnectionID: Connection] = [:]
    private let nextID = NSLock()
    private var nextRaw: UInt64 = 1
    private let protocols: UnsafeMutablePointer<lws_protocols>
    private let protocolName: UnsafeMutablePointer<CChar>
    /// No keep-alive of the library's: it would re-sort a list of every connection's timer at each frame.
    private let retryPolicy: UnsafeMutablePointer<lws_retry_bo_t>
    public let maxMessageBytes: Int

    /// Creates the context; `start()` begins servicing it.
    public init(maxMessageBytes: Int = 1 << 22, verboseLibraryLogs: Bool = false) throws(NetError) {
        self.maxMessageBytes = maxMessageBytes
        protocolName = strdup("pomodoro-client")
        protocols = .allocate(capacity: 2)
        protocols[0] = lws_protocols()
        protocols[0].name = UnsafePointer(protocolName)
        protocols[0].callback = clientCallback
        protocols[0].rx_buffer_size = 65536
        protocols[1] = lws_protocols()
        retryPolicy = .allocate(capacity: 1)
        retryPolicy.initialize(to: lws_retry_bo_t())
        super.init()
        LWS.configureLogging(verbose: verboseLibraryLogs)
        var info = lws_context_creation_info()
        info.port = CONTEXT_PORT_NO_LISTEN
        info.options = UInt64(LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT)
        info.protocols = UnsafePointer(protocols)
        info.user = Unmanaged.passUnretained(self).toOpaque()
        info.timeout_secs = 10
        info.retry_and_idle_policy = UnsafePointer(retryPolicy)
        joinLoop(&info)
        adopt(try LWS.check(createContext(&info), or: .cannotCreateClient))
    }

    deinit {
        protocols.deallocate()
        retryPolicy.deallocate()
        free(protocolName)
    }

    public func start() { startThread(name: "pomodoro-client") }

    /// Ends the loop, closing whatever is still open.
    public func stop() {
        post { [self] in requestExit() }
    }

    /// How a connection uses TLS.
    public enum Security: Sendable, Equatable {
        /// Plain `ws://`.
        case none
        /// `wss://`, checking the server's certificate against the system's trust store.
        case tls
        /// `wss://` accepting a self-signed certificate whatever its name (for tests and private setups).
        case tlsAcceptingSelfSigned
    }

    /// Opens a connection to `ws://host:port/path` (or wss://). Events go to `handler` on the service thread.
    /// `origin` (`http://…` only) sends an Origin header as a browser would; by default none is sent.
    @discardableResult
    public func connect(host: String, port: Int, path: String = "/ws", origin: String? = nil,
                        security: Security = .none,
                        handler: @escaping @Sendable (ClientEvent) -> Void) -> ClientConnectionID {
        let id = nextID.withLock { () -> ClientConnectionID in
            defer { nextRaw += 1 }
            return ClientConnectionID(rawValue: nextRaw)
        }
        post { [self] in
            open(id, host: host, port: port, path: path, origin: origin, security: security, handler: handler)
        }
        return id
    }

    /// Sends one text message (or, for tests of the server's refusals, a binary one).
    public func send(_ bytes: [UInt8], on id: ClientConnectionID, binary: Bool = false) {
        post { [self] in
            guard let connection = connections[id], connection.closeCode == nil else { return }
            connection.outbound.append((bytes, binary))
            if let wsi = connection.wsi { lws_callback_on_writable(wsi) }
        }
    }

    /// Closes with a close frame carrying `code` once queued messages are written.
    public func close(_ id: ClientConnectionID, code: UInt16 = 1000) {
        post { [self] in
            guard let connection = connections[id], let wsi = connection.wsi else { return }
            connection.closeCode = code
            lws_callback_on_writable(wsi)
        }
    }

    private func open(_ id: ClientConnectionID, host: String, port: Int, path: String, origin: String?,
                      security: Security, handler: @escaping @Sendable (ClientEvent) -> Void) {
        let hostC = strdup(host)!, pathC = strdup(path)!
        let hostHeader = strdup("\(host):\(port)")!
        // No Origin unless asked for: this is not a browser, and a server that lists its origins would refuse
        // one made up here. libwebsockets puts "http://" in front of the origin itself.
        let originC = origin.map { strdup($0.hasPrefix("http://") ? String($0.dropFirst(7)) : $0)! }
        let connection = Connection(id: id, maxMessageBytes: maxMessageBytes,
                                    strings: [hostC, pathC, hostHeader] + (originC.map { [$0] } ?? []), handler: handler)
        connections[id] = connection
        var info = lws_client_connect_info()
        info.context = context
        info.address = UnsafePointer(hostC)
        info.port = Int32(port)
        info.path = UnsafePointer(pathC)
        info.host = UnsafePointer(hostHeader)
        info.origin = originC.map { UnsafePointer($0) }
        info.local_protocol_name = UnsafePointer(protocolName)
        info.ietf_version_or_minus_one = -1
        switch security {
        case .none: break
        case .tls: info.ssl_connection = Int32(LCCSCF_USE_SSL.rawValue)
        case .tlsAcceptingSelfSigned:
            info.ssl_connection = Int32(LCCSCF_USE_SSL.rawValue | LCCSCF_ALLOW_SELFSIGNED.rawValue
                                        | LCCSCF_SKIP_SERVER_CERT_HOSTNAME_CHECK.rawValue)
        }
        info.opaque_user_data = UnsafeMutableRawPointer(bitPattern: UInt(id.rawValue))
        var wsi: OpaquePointer?
        withUnsafeMutablePointer(to: &wsi) { pointer in
            info.pwsi = pointer
            _ = lws_client_connect_via_info(&info)
        }
        if wsi == nil {
            // The failure was already reported through CLIENT_CONNECTION_ERROR, or never: report it once.
            end(connection, with: .failed("could not start connecting to \(host):\(port)"))
        } else if !connection.ended {
            connection.wsi = wsi
        }
    }

    /// Starts the close handshake of a connection whose frames are all written: the library writes the close
    /// frame with our code, waits for the server's, then hangs up (and reports `closed`).
    private func startClose(_ connection: Connection) {
        guard !connection.ended, !connection.closeStarted, let wsi = connection.wsi,
              let code = connection.closeCode else { return }
        connection.closeStarted = true
        lws_close_reason(wsi, lws_close_status(rawValue: UInt32(code)), nil, 0)
        lws_set_timeout(wsi, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_SYNC)
    }

    private func end(_ connection: Connection, with event: ClientEvent) {
        guard !connection.ended else { return }
        connection.ended = true
        connections[connection.id] = nil
        connection.handler(event)
    }

    fileprivate func handle(_ wsi: OpaquePointer?, _ reason: lws_callback_reasons,
                            _ input: UnsafeMutableRawPointer?, _ length: Int) -> Int32 {
        guard let wsi, let raw = lws_get_opaque_user_data(wsi),
              let connection = connections[ClientConnectionID(rawValue: UInt64(UInt(bitPattern: raw)))] else {
            return 0
        }
        switch reason {
        case LWS_CALLBACK_CLIENT_ESTABLISHED:
            connection.wsi = wsi
            connection.opened = true
            connection.handler(.opened)
            if !connection.outbound.isEmpty { lws_callback_on_writable(wsi) }

        case LWS_CALLBACK_CLIENT_RECEIVE:
            let chunk = UnsafeRawBufferPointer(start: input, count: input == nil ? 0 : length)
            let result = connection.assembler.append(
                chunk, first: lws_is_first_fragment(wsi) != 0,
                final: lws_is_final_fragment(wsi) != 0 && lws_remaining_packet_payload(wsi) == 0,
                isBinary: lws_frame_is_binary(wsi) != 0)
            if case .text(let bytes) = result { connection.handler(.text(bytes)) }

        case LWS_CALLBACK_CLIENT_WRITEABLE:
            if !connection.outbound.isEmpty {
                let next = connection.outbound.removeFirst()
                var frame = [UInt8](repeating: 0, count: LWS.pre)
                frame.append(contentsOf: next.bytes)
                let written = frame.withUnsafeMutableBufferPointer { buffer in
                    lws_write(wsi, buffer.baseAddress! + LWS.pre, buffer.count - LWS.pre,
                              next.binary ? LWS_WRITE_BINARY : LWS_WRITE_TEXT)
                }
                if written < 0 { return -1 }
                if !connection.outbound.isEmpty || connection.closeCode != nil { lws_callback_on_writable(wsi) }
            } else if connection.closeCode != nil {
                // Started outside this callback: returning -1 here, this build of the library on the libuv
                // loop closes the connection twice and loses the close frame (the server found the same:
                // `WebSocketServer.closeWhenOutside`), and the server would take a client that quit for one
                // whose connection was lost.
                let id = connection.id
                post { [self] in if let connection = connections[id] { startClose(connection) } }
            }

        case LWS_CALLBACK_WS_PEER_INITIATED_CLOSE:
            if let input, length >= 2 {
                let bytes = UnsafeRawBufferPointer(start: input, count: length)
                let code = UInt16(bytes[0]) << 8 | UInt16(bytes[1])
                let reason = String(decoding: bytes.dropFirst(2), as: UTF8.self)
                connection.peerCloseReason = reason
                // This build of the library's client (4.1.6) takes the registered codes above 1011 for invalid
                // and hands them on as 1002 (protocol error), keeping the reason: our server's 1012 ("service
                // restart", docs/PROTOCOL.md §11) is known by its reason.
                connection.peerCloseCode = code == 1002 && reason == Self.restartReason ? 1012 : code
            }

        case LWS_CALLBACK_CLIENT_CONNECTION_ERROR:
            var why = input.map { String(cString: $0.assumingMemoryBound(to: CChar.self)) } ?? "connection error"
            // An upgrade refused with a status says which: a 503 is a server that has begun to stop
            // (docs/PROTOCOL.md §9), not one that is no Pomodoro server.
            let status = lws_http_client_http_response(wsi)
            if status > 0 && status != 101 { why = "the server answered \(status) to the upgrade (\(why))" }
            end(connection, with: .failed(why))

        case LWS_CALLBACK_CLIENT_CLOSED:
            end(connection, with: .closed(code: connection.peerCloseCode, reason: connection.peerCloseReason))

        case LWS_CALLBACK_WSI_DESTROY:
            // The library frees some connections without either report above, e.g. one that timed out while
            // the server had not yet answered its handshake. The handler hears of every end, once.
            end(connection, with: connection.opened
                ? .closed(code: connection.peerCloseCode, reason: connection.peerCloseReason)
                : .failed("the connection ended before it opened"))

        default:
            break
        }
        return 0
    }
}

private func clientCallback(_ wsi: OpaquePointer?, _ reason: lws_callback_reasons, _ user: UnsafeMutableRawPointer?,
                            _ input: UnsafeMutableRawPointer?, _ length: Int) -> Int32 {
    guard let client = serviceLoop(of: wsi, as: WebSocketClient.self) else { return 0 }
    return client.handle(wsi, reason, input, length)
}
