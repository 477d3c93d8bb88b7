import PomodoroCore

/// Everything the server needs to start, with defaults that need nothing else.
public struct ServerConfiguration: Sendable {
    /// Address to listen on; nil listens on every interface.
    public var host: String?
    public var port: Int
    /// Folder of the web page's static files; nil serves no page.
    public var webRoot: String?
    /// Settings a new room starts with.
    public var defaultSettings: RoomSettings
    /// Rules every room follows (reconnection grace, empty-room lifetime, sizes).
    public var roomPolicy: RoomPolicy
    /// Largest client message accepted, in bytes.
    public var maxMessageBytes: Int
    /// Frames queued for one slow client at most before it is dropped.
    public var maxQueuedFrames: Int
    /// Bytes queued for one slow client at most before it is dropped.
    public var maxQueuedBytes: Int
    /// Seconds of silence before a ping, and before a silent peer is dropped.
    public var pingAfterSeconds: Int
    public var hangUpAfterSeconds: Int

    public init(host: String? = nil, port: Int = 8080, webRoot: String? = "web",
                defaultSettings: RoomSettings = .standard, roomPolicy: RoomPolicy = .standard,
                maxMessageBytes: Int = 16 * 1024, maxQueuedFrames: Int = 256, maxQueuedBytes: Int = 1 << 20,
                pingAfterSeconds: Int = 30, hangUpAfterSeconds: Int = 75) {
        self.host = host
        self.port = port
        self.webRoot = webRoot
        self.defaultSettings = defaultSettings
        self.roomPolicy = roomPolicy
        self.maxMessageBytes = maxMessageBytes
        self.maxQueuedFrames = maxQueuedFrames
        self.maxQueuedBytes = maxQueuedBytes
        self.pingAfterSeconds = pingAfterSeconds
        self.hangUpAfterSeconds = hangUpAfterSeconds
    }
}
