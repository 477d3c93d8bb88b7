import CLibUV
import CLibWebSockets
import Foundation

/// A libwebsockets server on one port: WebSocket at one path, static files, a few dynamic paths.
public final class WebSocketServer: ServiceLoop, @unchecked Sendable {  // safe: restated from ServiceLoop (Swift asks each subclass), same rule
    public let options: WebSocketServerOptions
    /// The port actually bound.
    public private(set) var port = 0
    public weak var delegate: WebSocketServerDelegate?
    /// Connections dropped because their outbound queue overflowed.
    public internal(set) var droppedSlowClients = 0
    /// The second thread of a big fan-out's write pass (WebSocketServer+FanOut.swift).
    let fanOutWriter = FanOutWriter()
    /// What the two-thread write passes did: passes, frames written whole, frames a socket took only part of
    /// (the rest handed to the library), frames a full socket did not take (queued for its next turn).
    public internal(set) var fanOutCounts = FanOutCounts()

    final class Connection {
        let id: ConnectionID
        let wsi: OpaquePointer
        var assembler: MessageAssembler
        var queue: OutboundQueue
        /// Set when the connection is to be closed once its queue has drained.
        var closeCode: UInt16?
        var closeReason = ""
        let peer: String
        /// Whether the delegate was told about this connection (refused ones never reach it).
        var announced = false
        /// The loop's time (ms) when the peer was last heard from: any frame, pongs included.
        var lastHeardMs: UInt64
        /// A keep-alive ping is due to be written, or was written and not yet answered.
        var pingDue = false
        var pinged = false
        /// Set once the close frame has been handed to the library (from `closeTimer`).
        var closeStarted = false
        /// The status of the close frame the peer sent first (1005 for one without a status); nil while it
        /// has sent none.
        var peerCloseCode: UInt16?
        init(id: ConnectionID, wsi: OpaquePointer, peer: String, options: WebSocketServerOptions, nowMs: UInt64) {
            self.id = id
            lastHeardMs = nowMs
            self.wsi = wsi
            self.peer = peer
            assembler = MessageAssembler(limit: options.maxMessageBytes)
            queue = OutboundQueue(maxFrames: options.maxQueuedFrames, maxBytes: options.maxQueuedBytes)
        }
    }

    var connections: [ConnectionID: Connection] = [:]
    /// Connections refused at the handshake: wrong path, foreign origin. (How many one address may hold is
    /// the application's to count: the delegate closes those beyond.)
    public internal(set) var refusedConnections = 0
    var nextConnection: UInt64 = 1
    /// Dynamic HTTP requests from arrival until their answer is written, by id; the id of the one a
    /// connection carries. Both are cleared in LWS_CALLBACK_CLOSED_HTTP, so no pointer outlives its connection.
    var httpExchanges: [UInt64: HTTPExchange] = [:]
    /// How many of `httpExchanges` each address has, by `AddressKey`.
    var httpExchangesPerAddress: [String: Int] = [:]
    var httpExchangeOn: [OpaquePointer: UInt64] = [:]
    /// Bytes a kept-alive connection had received when the first byte of its last answer was written: the
    /// start of its next head (WebSocketServer+BadRequests.swift). Cleared at the next bind and at the close.
    var receivedBeforeAnswer: [OpaquePointer: UInt64] = [:]
    var nextHTTPExchange: UInt64 = 1
    /// Where each piece of a body is copied behind the library's headroom before it is written.
    var httpScratch = [UInt8]()
    var draining = false
    /// From `refuseUpgrades()` (or `shutdown`) on, a WebSocket upgrade is answered 503 (a server about to stop).
    var upgradesRefused = false
    var drainTimer: LoopTimer?
    /// The keep-alive sweep, once a second over every connection (KeepAlive below).
    var keepAliveTimer: LoopTimer?
    /// Connections whose close is to be started outside the library's callbacks (with a close frame, or
    /// without: a hang-up), and the timer that starts them.
    var closesDue: [(id: ConnectionID, hangUp: Bool)] = []
    var closeTimer: LoopTimer?
    /// New connections taken on a turn's share at a time, those held back, and the timer that hands them to the
    /// library in a later turn (WebSocketServer+Accepting.swift).
    var acceptPacer: AcceptPacer
    var adoptTimer: LoopTimer?
    /// The vhost of the listening socket, which held connections are handed to.
    var listening: OpaquePointer?
    private var retained = [UnsafeMutableRawPointer]()
    private var protocols: UnsafeMutablePointer<lws_protocols>?
    private var retryPolicy: UnsafeMutablePointer<lws_retry_bo_t>?
    private var tokenLimits: UnsafeMutablePointer<lws_token_limits>?
    let headScreen = RequestHeadScreen()

    /// Creates the context and binds the port; `start()` begins serving.
    public init(options: WebSocketServerOptions) throws(NetError) {
        self.options = options
        acceptPacer = AcceptPacer(perTurn: max(1, options.acceptsPerTurn))
        super.init()
        if let root = options.webRoot {
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: root, isDirectory: &isFolder), isFolder.boolValue else {
                throw .webRootMissing(root)
            }
            if let escape = Self.linkLeaving(root) { throw .webRootLinksOutside(escape) }
        }
        LWS.configureLogging(verbose: options.verboseLibraryLogs)

        let protocols = UnsafeMutablePointer<lws_protocols>.allocate(capacity: 2)
        protocols[0] = lws_protocols()
        protocols[0].name = UnsafePointer(keep(strdup("pomodoro")))
        protocols[0].callback = serverCallback
        protocols[0].rx_buffer_size = 4096
        // Room for what tells an unreadable request head from other closes (WebSocketServer+BadRequests.swift).
        protocols[0].per_session_data_size = MemoryLayout<pomodoro_http_session_t>.size
        // The most one send() takes; a bigger lws_write is copied into the library's own buffer and trickled
        // out. HTTP bodies go in pieces of this size, one per writable callback.
        protocols[0].tx_packet_size = Self.httpPieceBytes
        protocols[1] = lws_protocols()
        self.protocols = protocols

        var mounts: UnsafeMutablePointer<lws_http_mount>?
        for path in options.dynamicPaths.reversed() {
            mounts = makeMount(at: path, next: mounts) { mount in
                mount.origin = UnsafePointer(keep(strdup("pomodoro")))
                mount.protocol = UnsafePointer(keep(strdup("pomodoro")))
                mount.origin_protocol = UInt8(LWSMPRO_CALLBACK.rawValue)
            }
        }
        if let root = options.webRoot {
            mounts = makeMount(at: "/", next: mounts) { mount in
                mount.origin = UnsafePointer(keep(strdup(root)))
                mount.def = UnsafePointer(keep(strdup("index.html")))
                mount.origin_protocol = UInt8(LWSMPRO_FILE.rawValue)
                // Browsers may keep the page's files for a minute, then revalidate.
                mount.cache_max_age = 60
                mount.cache_reusable = 1
                mount.cache_revalidate = 1
            }
        }

        // No keep-alive of the library's: it keeps every connection's in one sorted list, and re-sorts it at
        // each frame received. Ours is a sweep a second (`sweepKeepAlive`).
        let retry = UnsafeMutablePointer<lws_retry_bo_t>.allocate(capacity: 1)
        retry.initialize(to: lws_retry_bo_t())
        retryPolicy = retry

        var info = lws_context_creation_info()
        info.port = Int32(options.port)
        info.protocols = UnsafePointer(protocols)
        info.mounts = UnsafePointer(mounts)
        info.retry_and_idle_policy = UnsafePointer(retry)
        let limits = Self.makeTokenLimits()
        tokenLimits = limits
        info.token_limits = UnsafePointer(limits)
        info.options = UInt64(LWS_SERVER_OPTION_VALIDATE_UTF8)
        // A head the library cannot read as HTTP (an unknown method, no request line) comes to the callback as
        // raw bytes rather than getting the library's own 403, on plain TCP: answered 501 or 400 there
        // (`headNotHTTP`). Over TLS the library answers it still: its bytes cannot be written from outside.
        if options.tlsCertificatePath == nil {
            info.options |= UInt64(LWS_SERVER_OPTION_FALLBACK_TO_APPLY_LISTEN_ACCEPT_CONFIG)
        }
        // The library's own set of security headers (LWS_SERVER_OPTION_HTTP_HEADERS_SECURITY_BEST_PRACTICES_
        // ENFORCE) lets the page connect to any host (`connect-src 'self' ws: wss:`); ours lets it reach its
        // own origin only. Added to every HTTP response, files and API alike.
        var headers: UnsafeMutablePointer<lws_protocol_vhost_options>?
        for (name, value) in Self.securityHeaders.reversed() {
            let raw = calloc(1, MemoryLayout<lws_protocol_vhost_options>.size)!
            retained.append(raw)
            let header = raw.bindMemory(to: lws_protocol_vhost_options.self, capacity: 1)
            header.pointee.next = UnsafePointer(headers)
            header.pointee.name = UnsafePointer(keep(strdup(name)))
            header.pointee.value = UnsafePointer(keep(strdup(value)))
            headers = header
        }
        info.headers = UnsafePointer(headers)
        info.user = Unmanaged.passUnretained(self).toOpaque()
        // The handshake bound covers both the library's round-trip timeout and how long a connection may
        // hold a header table without finishing its request (10 s by default: the slow-loris window).
        info.timeout_secs = UInt32(options.handshakeTimeoutSeconds)
        info.timeout_secs_ah_idle = UInt32(options.handshakeTimeoutSeconds)
        info.fd_limit_per_thread = 0
        if let certificate = options.tlsCertificatePath, let key = options.tlsPrivateKeyPath {
            for path in [certificate, key] where !FileManager.default.isReadableFile(atPath: path) {
                throw .tlsFileUnreadable(path)
            }
            info.options |= UInt64(LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT)
            info.ssl_cert_filepath = UnsafePointer(keep(strdup(certificate)))
            info.ssl_private_key_filepath = UnsafePointer(keep(strdup(key)))
        }
        if let host = options.host {
            info.iface = UnsafePointer(keep(strdup(host)))
            // With IPv6 enabled, this libwebsockets writes an IPv4 literal into an IPv6 socket address and
            // ends up listening on every interface: an IPv4 address must be bound with IPv6 off.
            if host.contains(".") && !host.contains(":") {
                info.options |= UInt64(LWS_SERVER_OPTION_DISABLE_IPV6)
            }
        }
        joinLoop(&info)
        adopt(try LWS.check(createContext(&info), or: .cannotListen(host: options.host, port: options.port)))
        // With a loop of ours the library returns a context even when it could not listen (its vhost is
        // missing), already being destroyed: the destruction is finished here.
        guard let vhost = lws_get_vhost_by_name(context, "default") else {
            abandonContext()
            throw .cannotListen(host: options.host, port: options.port)
        }
        listening = vhost
        port = Int(lws_get_vhost_listen_port(vhost))
        if port <= 0 { port = options.port }
        deferAccepting(port: port)
    }

    /// Sent with every HTTP response. `connect-src 'self'` covers the page's own ws:// and wss:// origin
    /// (CSP level 3, as browsers implement it), and nothing else; `manifest-src 'self'` lets the page's web app
    /// manifest load (under `default-src 'none'` browsers refuse it, and offer no install).
    static let securityHeaders: [(name: String, value: String)] = [
        ("content-security-policy:", "default-src 'none'; img-src 'self' data:; script-src 'self'; font-src 'self'; "
            + "style-src 'self'; connect-src 'self'; manifest-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"),
        ("x-content-type-options:", "nosniff"),
        ("x-frame-options:", "deny"),
        ("referrer-policy:", "no-referrer"),
    ]

    /// The first symbolic link under `root` that resolves outside it, if any. The library follows links
    /// when it serves files, so such a link would publish whatever it points at.
    static func linkLeaving(_ root: String) -> String? {
        let base = URL(fileURLWithPath: root).resolvingSymlinksInPath().standardizedFileURL.path
        guard let walker = FileManager.default.enumerator(atPath: root) else { return nil }
        for case let relative as String in walker {
            let path = root + "/" + relative
            guard (try? FileManager.default.destinationOfSymbolicLink(atPath: path)) != nil else { continue }
            let target = URL(fileURLWithPath: path).resolvingSymlinksInPath().standardizedFileURL.path
            if target != base && !target.hasPrefix(base + "/") { return path }
        }
        return nil
    }

    deinit {
        protocols?.deallocate()
        retryPolicy?.deallocate()
        tokenLimits?.deallocate()
        for pointer in retained { free(pointer) }
    }

    private func keep(_ pointer: UnsafeMutablePointer<CChar>?) -> UnsafeMutablePointer<CChar>? {
        if let pointer { retained.append(UnsafeMutableRawPointer(pointer)) }
        return pointer
    }

    private func makeMount(at path: String, next: UnsafeMutablePointer<lws_http_mount>?,
                           configure: (inout lws_http_mount) -> Void) -> UnsafeMutablePointer<lws_http_mount> {
        let raw = calloc(1, MemoryLayout<lws_http_mount>.size)!
        retained.append(raw)
        let mount = raw.bindMemory(to: lws_http_mount.self, capacity: 1)
        mount.pointee.mount_next = UnsafePointer(next)
        mount.pointee.mountpoint = UnsafePointer(keep(strdup(path)))
        mount.pointee.mountpoint_len = UInt8(path.utf8.count)
        configure(&mount.pointee)
        return mount
    }

    /// Starts serving on a thread of its own.
    public func start() {
        let sweep = makeTimer { [unowned self] in sweepKeepAlive() }
        sweep.schedule(afterNanoseconds: 1_000_000_000)
        keepAliveTimer = sweep
        closeTimer = makeTimer { [unowned self] in startDueCloses() }
        adoptTimer = makeTimer { [unowned self] in adoptHeldConnections() }
        startThread(name: "pomodoro-service")
    }

    public var connectionCount: Int { connections.count }

    // MARK: Service-thread API

    /// Queues a frame for a connection. Returns false if the connection is gone or closing, or if its queue
    /// overflowed (then the connection is dropped: a slow reader never holds up the others).
    @discardableResult
    public func send(_ frame: OutboundFrame, to id: ConnectionID) -> Bool {
        guard let connection = connections[id], connection.closeCode == nil else { return false }
        // Nothing waiting: written at once, without a turn of the loop. What the socket does not take the
        // library keeps and finishes when it is writable (`lws_partial_buffered`).
        if writesAtOnce(connection) {
            if write(frame, to: connection) { return true }
            return false
        }
        guard connection.queue.push(frame) else {
            droppedSlowClients += 1
            connection.queue.removeAll()
            beginClose(connection, code: 1008, reason: "too slow: outbound queue full")
            return false
        }
        lws_callback_on_writable(connection.wsi)
        return true
    }

    /// Nothing waits to be written to `connection` (no frame queued, no ping due, nothing the library kept of
    /// a write): a frame may go to its socket at once, ahead of nothing.
    func writesAtOnce(_ connection: Connection) -> Bool {
        connection.queue.isEmpty && !connection.pingDue && lws_partial_buffered(connection.wsi) == 0
    }

    /// Writes one frame now; false (and the connection is dropped) when the socket failed.
    func write(_ frame: OutboundFrame, to connection: Connection) -> Bool {
        let length = frame.count
        let written = frame.storage.withUnsafeMutableBufferPointer { buffer in
            lws_write(connection.wsi, buffer.baseAddress! + LWS.pre, length, LWS_WRITE_TEXT)
        }
        if written < 0 {
            hangUp(connection)
            return false
        }
        return true
    }

    /// Closes a connection without a close frame (its socket failed, or its peer went silent), from the
    /// library's timer rather than inside a callback.
    func hangUp(_ connection: Connection) {
        connection.queue.removeAll()
        if connection.closeCode == nil { connection.closeCode = 1006 }
        guard !connection.closeStarted else { return }
        connection.closeStarted = true
        closesDue.append((connection.id, true))
        if closesDue.count == 1 { closeTimer?.schedule(afterNanoseconds: 0) }
    }

    override func willDestroyContext() {
        drainTimer = nil
        keepAliveTimer = nil
        closeTimer = nil
        adoptTimer = nil
        closeHeldConnections()
        fanOutWriter.stop()
    }
}
