import PomodoroCore
import PomodoroNet
import PomodoroProtocol

/// The fan-out: a message encoded once, and its bytes written to every connection that should hear it (a
/// room's members and observers, through the transport) and to the room's event streams; what went out is
/// counted here and in the metrics. It decides nothing: the hub says what goes to whom, and when.
final class FanOut {
    private let transport: any HubTransport
    private let metrics: ServerMetrics
    private let clock: any ServerClock
    /// Frames queued for connections, by the hub and by its router.
    var framesSent = 0

    init(transport: any HubTransport, metrics: ServerMetrics, clock: any ServerClock) {
        self.transport = transport
        self.metrics = metrics
        self.clock = clock
    }

    /// `message` to the room: its event streams and every member and observer but `skip`, the same bytes for
    /// all (the router's transport sends them once to each other server with any of them). `timing`: the tick
    /// this message carries, whose write pass is measured (`ServerMetrics.TickStage`).
    func broadcast(_ message: ServerMessage, in entry: RoomEntry, except skip: ConnectionID? = nil, timing tick: Tick? = nil) {
        entry.announced(message)
        let toSockets = !entry.connections.isEmpty || !entry.observers.isEmpty
        guard toSockets || !entry.streams.isEmpty else { return }
        let payload = WireCodec.encode(message)
        if !entry.streams.isEmpty { stream(payload, type: message.type, in: entry) }
        guard toSockets else { return }
        let frame = OutboundFrame(payload)
        // One array for both, built in one pass: this runs for every broadcast of every room.
        var recipients = [ConnectionID]()
        recipients.reserveCapacity(entry.connections.count + entry.observers.count)
        for connection in entry.connections.values where connection != skip { recipients.append(connection) }
        for connection in entry.observers where connection != skip { recipients.append(connection) }
        // A tick's write pass is timed: its first frame is written as it begins, its last as it ends.
        if let tick { metrics.tick(tick, reached: .firstWrite, at: clock.now().monotonic) }
        let sent = transport.send(frame, toAll: recipients)
        if let tick, sent > 0 { metrics.tick(tick, reached: .lastWrite, at: clock.now().monotonic) }
        framesSent += sent
        metrics.sent(frames: sent, bytes: sent * frame.count)
    }

    /// One message to one connection; false when the connection is gone (or was just dropped).
    @discardableResult
    func send(_ message: ServerMessage, to connection: ConnectionID) -> Bool {
        if case .error(let code, _, _, _, _) = message { metrics.errorSent(code) }
        return send(encoded: WireCodec.encode(message), to: connection)
    }

    /// A message already encoded (another server's answer), sent as it is.
    @discardableResult
    func send(encoded payload: [UInt8], to connection: ConnectionID) -> Bool {
        let frame = OutboundFrame(payload)
        guard transport.send(frame, to: connection) else { return false }
        framesSent += 1
        metrics.sent(frames: 1, bytes: frame.count)
        return true
    }

    /// One broadcast to the room's streams; readers that have gone or fell behind are dropped.
    private func stream(_ payload: [UInt8], type: String, in entry: RoomEntry) {
        let piece = Self.serverSentEvent(payload, type: type, id: entry.nextEventID)
        entry.nextEventID += 1
        entry.streams.removeAll { !$0.send(piece) }
    }

    /// `event: <type>`, `id: <id>`, `data: <the message's JSON, as on the WebSocket>`. The room's `seq`
    /// stays the same from tick to tick, so the id is the stream's own: one more with each event of the room.
    static func serverSentEvent(_ payload: [UInt8], type: String, id: UInt64) -> [UInt8] {
        Array("event: \(type)\nid: \(id)\ndata: ".utf8) + payload + Array("\n\n".utf8)
    }
}
