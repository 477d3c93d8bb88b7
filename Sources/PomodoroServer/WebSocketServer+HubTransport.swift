import PomodoroCore
import PomodoroNet

// The socket side of the hub: the libwebsockets server as its transport, and its delegate calls turned into
// the hub's events. The hub itself never names `WebSocketServer`.

extension WebSocketServer: HubTransport {
    package func timer(firing fire: @escaping () -> Void) -> any HubTimer { makeTimer(fire) }
    package var loop: any LoopThread { self }
}

extension LoopTimer: HubTimer {}

extension HTTPResponder: HTTPAnswering {
    package func stream(_ head: HTTPResponse) -> (any HubEventStream)? { stream(head) as HTTPStream? }
}

extension HTTPStream: HubEventStream {}

extension ConnectionEnd {
    /// How a WebSocket connection ended, from the close frame its peer sent (nil: none). A client closed it
    /// on purpose when it said so: 1000 (normal), 1001 (going away: a browser tab closed) or no status (1005).
    /// Any other status reports an error of the client's, and no frame is a connection lost.
    init(peerCloseCode: UInt16?) {
        switch peerCloseCode {
        case 1000?, 1001?, 1005?: self = .closed
        default: self = .lost
        }
    }
}

/// Hands what the server reports to the hub. The server holds its delegate weakly: the composition root
/// keeps this alive, and calls it on the service thread.
final class HubDelegate: WebSocketServerDelegate, Sendable {
    private let bound: LoopBound<RoomHub>
    private var hub: RoomHub { bound.value }

    init(hub: LoopBound<RoomHub>) { bound = hub }

    func server(_ server: WebSocketServer, didOpen connection: ConnectionID, peer: String) {
        hub.opened(connection, peer: peer)
    }

    func server(_ server: WebSocketServer, didReceive text: [UInt8], from connection: ConnectionID) {
        hub.received(text, from: connection)
    }

    func server(_ server: WebSocketServer, didReject problem: ReceiveProblem, from connection: ConnectionID) {
        hub.rejected(problem, from: connection)
    }

    func server(_ server: WebSocketServer, didClose connection: ConnectionID, peerCloseCode: UInt16?) {
        hub.closed(connection, ended: ConnectionEnd(peerCloseCode: peerCloseCode))
    }

    func server(_ server: WebSocketServer, didReceiveHTTP request: HTTPRequest, responder: HTTPResponder) {
        hub.receivedHTTP(request, responder: responder)
    }
}
