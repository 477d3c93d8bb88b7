import Foundation

/// Identifies one WebSocket connection for the lifetime of the server.
public struct ConnectionID: Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt64
    public init(rawValue: UInt64) { self.rawValue = rawValue }
    public var description: String { "c\(rawValue)" }
}

/// Everything the server can be told to do at start.
public struct WebSocketServerOptions: Sendable {
    /// The defaults that other layers share, by name: the application's limits (`ServerLimits`), the server's
    /// configuration and the clients start from these rather than repeating the numbers.
    public enum Defaults {
        /// The port a server listens on, and its clients look for it on, unless told otherwise.
        public static let port = 8080
        public static let maxMessageBytes = 16 * 1024
        public static let maxQueuedFrames = 256
        public static let maxQueuedBytes = 1 << 20
        public static let pingAfterSeconds: UInt16 = 30
        public static let hangUpAfterSeconds: UInt16 = 75
        public static let handshakeTimeoutSeconds = 5
    }

    /// The address to listen on; nil for every interface.
    public var host: String?
    /// The TCP port; 0 picks a free one (read it back from `port`).
    public var port: Int
    /// The folder of static files served at `/`; nil serves none.
    public var webRoot: String?
    /// The one path that accepts WebSocket upgrades.
    public var webSocketPath = "/ws"
    /// Paths answered by the delegate's `server(_:didReceiveHTTP:responder:)`, each with everything below it
    /// ("/api" takes "/api" and "/api/rooms/x", not "/apix").
    public var dynamicPaths: [String] = []
    /// Seconds a dynamic request may wait for its answer (then it is answered `httpTooLateResponse`), and
    /// then for each piece of it to be taken by the client, before the library closes the connection (at
    /// least 1).
    public var httpResponseTimeoutSeconds = 30
    /// What a dynamic request is answered when the application has not answered it within
    /// `httpResponseTimeoutSeconds` (its own answer, should it come later, is dropped).
    public var httpTooLateResponse = HTTPResponse(status: 503, headers: [(name: "Retry-After", value: "5")],
                                                  text: "the server could not answer in time; try again\n")
    /// Seconds a dynamic answer may take to be written, from its first byte to its last, however steadily
    /// the client reads; then the connection is closed (at least 1).
    public var httpResponseDeadlineSeconds = 30
    /// Dynamic requests one address may have in progress at once (waiting for or being sent their answer);
    /// more are answered 429 at once. 0 for no limit.
    public var maxHTTPRequestsPerAddress = 8
    /// The largest message accepted; larger ones are discarded and reported.
    public var maxMessageBytes = Defaults.maxMessageBytes
    /// Frames waiting for a slow reader at most, and their bytes: past either the connection is dropped.
    public var maxQueuedFrames = Defaults.maxQueuedFrames
    public var maxQueuedBytes = Defaults.maxQueuedBytes
    /// Seconds without traffic before a ping, and before a silent peer is hung up on.
    public var pingAfterSeconds = Defaults.pingAfterSeconds
    public var hangUpAfterSeconds = Defaults.hangUpAfterSeconds
    /// Origins (scheme://host[:port]) whose pages may open WebSockets. Empty: only the server's own, taken
    /// from each request's `Host`; else exactly these (list the server's own public origin too). Requests
    /// without an Origin header (non-browser clients) are not affected.
    public var allowedOrigins: [String] = []
    /// Reverse proxies whose X-Forwarded-For or Forwarded header names the client: the address the delegate
    /// is given (`didOpen`'s peer, `HTTPRequest.peer`) and the per-address limit counts. None by default: the
    /// socket's peer is the client.
    public var trustedProxies = TrustedProxies.none
    /// The most new connections taken on in one turn of the service loop; more wait in the kernel's queue or,
    /// once accepted, under a descriptor of the server's, for the next turns (`AcceptPacer`). Small enough
    /// that the library's list of pending timeouts stays short, large enough that a storm of connections
    /// fills each turn.
    public var acceptsPerTurn = 64
    /// A frame for at least this many connections at once (a big room's second) is written on two threads,
    /// the service thread's and a writer's (`FanOutWriter`); 0 writes every frame on the service thread. The
    /// default: from 256 connections where the machine has more than one processor, else never.
    public var parallelWriteMinimum = ProcessInfo.processInfo.activeProcessorCount > 1 ? 256 : 0
    /// Seconds a connection may take to complete its HTTP request or WebSocket handshake.
    public var handshakeTimeoutSeconds = Defaults.handshakeTimeoutSeconds
    /// PEM certificate (chain) and private key: when both are set the port speaks TLS (https and wss).
    public var tlsCertificatePath: String?
    public var tlsPrivateKeyPath: String?
    /// Lets the library log its own warnings and notices, not only errors.
    public var verboseLibraryLogs = false

    public init(host: String? = nil, port: Int, webRoot: String? = nil) {
        self.host = host
        self.port = port
        self.webRoot = webRoot
    }
}

/// What the server tells the application, always on the service thread.
public protocol WebSocketServerDelegate: AnyObject {
    func server(_ server: WebSocketServer, didOpen connection: ConnectionID, peer: String)
    func server(_ server: WebSocketServer, didReceive text: [UInt8], from connection: ConnectionID)
    func server(_ server: WebSocketServer, didReject problem: ReceiveProblem, from connection: ConnectionID)
    /// The connection ended. `peerCloseCode`: the status of the close frame the peer sent to end it (1005 when
    /// the frame had none); nil when it sent none (it dropped, timed out, or the server closed it).
    func server(_ server: WebSocketServer, didClose connection: ConnectionID, peerCloseCode: UInt16?)
    /// A request to one of `dynamicPaths`. Answer it through `responder`, now or later, from any thread.
    func server(_ server: WebSocketServer, didReceiveHTTP request: HTTPRequest, responder: HTTPResponder)
}
