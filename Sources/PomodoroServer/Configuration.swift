import PomodoroCore
import PomodoroNet
import PomodoroStore

/// Bounds that keep one client from hurting the others. Each has a documented default and a server option.
/// Those the network layer enforces start from its defaults (`WebSocketServerOptions.Defaults`).
public struct ServerLimits: Sendable, Equatable {
    /// Largest client message, in bytes (`too_large` beyond).
    public var maxMessageBytes = WebSocketServerOptions.Defaults.maxMessageBytes
    /// Messages a connection may send per second, sustained (`rate_limited` beyond) ...
    public var messagesPerSecond = 20
    /// ... and at once after a quiet spell.
    public var messageBurst = 40
    /// Refused messages in a row after which the connection is closed (1008).
    public var rateLimitStrikes = 40
    /// WebSocket connections one address may hold at once (0: no limit). The network layer's own default
    /// is no limit; a public server wants one.
    public var maxConnectionsPerAddress = 64
    /// Rooms one address may create per minute (`room_limit` beyond; 0: no limit).
    public var roomsCreatedPerAddressPerMinute = 30
    /// Rooms the server holds at most (`room_limit` beyond).
    public var maxRooms = 10_000
    /// Rooms holding schedules the server keeps at most, in memory or waiting for their next start
    /// (`room_limit` for a first schedule beyond): what bounds the schedules one address can leave behind,
    /// since rooms are nobody's, at 20 per room (`--max-schedules-per-room`).
    public var maxScheduledRooms = 10_000
    /// Members of one room that one address may hold, connected or within their grace (`room_full` beyond;
    /// 0: no limit). The same as the connections an address may hold, so join-and-drop cannot fill a room.
    public var membersPerAddressPerRoom = 64
    /// `/api` requests one address may make per second, sustained, and at once (429 beyond; 0: no limit).
    public var apiRequestsPerSecond = 10
    public var apiBurst = 30
    /// Frames queued for one slow reader at most, and their bytes: past either it is dropped (1008).
    public var maxQueuedFrames = WebSocketServerOptions.Defaults.maxQueuedFrames
    public var maxQueuedBytes = WebSocketServerOptions.Defaults.maxQueuedBytes
    /// Seconds to finish an HTTP request or WebSocket handshake (slow-loris).
    public var handshakeTimeoutSeconds = WebSocketServerOptions.Defaults.handshakeTimeoutSeconds
    /// Seconds of silence before a ping, and before a peer that answers no ping is dropped.
    public var pingAfterSeconds = Int(WebSocketServerOptions.Defaults.pingAfterSeconds)
    public var hangUpAfterSeconds = Int(WebSocketServerOptions.Defaults.hangUpAfterSeconds)

    public init() {}
    public static let standard = ServerLimits()

    /// Frames one connection may have waiting behind a request still at work (a `join` looking its room up
    /// or checking its passcode, a `stats` read); beyond, each further frame gets `rate_limited`.
    public static let framesWaitingBehindARequest = 16
}

/// Everything the server needs to start, with defaults that need nothing else.
public struct ServerConfiguration: Sendable {
    /// Address to listen on; nil listens on every interface.
    public var host: String?
    public var port: Int
    /// Folder of the web page's static files; nil serves no page.
    public var webRoot: String?
    /// The web root when none is given: `web` in the working directory, as in a checkout.
    public static let defaultWebRoot = "web"
    /// Settings a new room starts with.
    public var defaultSettings: RoomSettings
    /// Rules every room follows (reconnection grace, empty-room lifetime, members, text lengths).
    public var roomPolicy: RoomPolicy
    /// Bounds on each room's schedules (how many, name length, how late a start may still happen).
    public var schedulePolicy = SchedulePolicy.standard
    /// The PBKDF2 work factor of the passcode hashes this server makes (`PasscodeVerifier.iterations`), and
    /// the one a right passcode's older hash is made again with. Not an option: only the tests lower it,
    /// to the least a stored hash may have (100,000), so that a sanitizer's threefold cost on every round
    /// does not outlast their waits; the hashing, the gate and the checks are the same.
    package var passcodeIterations: Int32 = PasscodeVerifier.iterations {
        didSet { precondition(PasscodeVerifier.readableIterations.contains(passcodeIterations), "a readable work factor") }
    }
    /// The least work factor `passcodeIterations` takes: the least a stored hash may have.
    package static var leastPasscodeIterations: Int32 { PasscodeVerifier.readableIterations.lowerBound }
    /// How many seconds before a scheduled start a room that is not in memory is brought back for it
    /// (`RoomRegistry`); not a server option: tests shorten it.
    public var scheduledReturnLeadSeconds: Int64 = 60
    public var limits: ServerLimits
    /// Origins whose pages may connect besides the server's own.
    public var allowedOrigins: [String]
    /// PEM certificate and key: with both set the server speaks TLS itself (https, wss).
    public var tlsCertificatePath: String?
    public var tlsPrivateKeyPath: String?
    /// Where rooms, members and the focus journal are kept; `.memory` keeps nothing, as tests that need no
    /// restart do.
    public var database: DatabaseLocation
    /// The SQLite file of `database`, if it is one; setting it picks that file (nil: memory).
    public var databasePath: String? {
        get { if case .sqlite(let path) = database { path } else { nil } }
        set { database = newValue.map { .sqlite(path: $0) } ?? .memory }
    }
    /// Whether `GET /metrics` answers, in the Prometheus text format. Off, it is a 404 like any unknown path.
    public var metricsEnabled: Bool
    /// Reverse proxies whose forwarded-address headers are believed: the client address of their connections
    /// (for the per-address limits and the logs) is the one they forward.
    public var trustedProxies: TrustedProxies
    /// What the store deletes from the focus journal (stats keep counting what it deletes).
    public var journalRetention = JournalRetention.standard
    /// Where the server's rooms run when not all in this process: it builds the router they run behind
    /// (`RoomRouting`). Nil: every room here (`LocalRooms`).
    public var routing: (any RoomRouting)?
    /// Webhook delivery's bounds and timings (RoomHub+Webhooks.swift).
    public var webhooks = WebhookSettings()

    public init(host: String? = nil, port: Int = WebSocketServerOptions.Defaults.port,
                webRoot: String? = ServerConfiguration.defaultWebRoot,
                defaultSettings: RoomSettings = .standard, roomPolicy: RoomPolicy = .standard,
                limits: ServerLimits = .standard, allowedOrigins: [String] = [],
                tlsCertificatePath: String? = nil, tlsPrivateKeyPath: String? = nil,
                databasePath: String? = nil, metricsEnabled: Bool = true, trustedProxies: TrustedProxies = .none) {
        self.host = host
        self.port = port
        self.webRoot = webRoot
        self.defaultSettings = defaultSettings
        self.roomPolicy = roomPolicy
        self.limits = limits
        self.allowedOrigins = allowedOrigins
        self.tlsCertificatePath = tlsCertificatePath
        self.tlsPrivateKeyPath = tlsPrivateKeyPath
        self.database = databasePath.map { .sqlite(path: $0) } ?? .memory
        self.metricsEnabled = metricsEnabled
        self.trustedProxies = trustedProxies
    }
}
