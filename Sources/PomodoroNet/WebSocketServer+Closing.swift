import CLibUV
import CLibWebSockets
import Foundation

/// Closing connections: a close with a code and reason (now, or once the library returns), the keep-alive
/// pings and their sweep, and the whole server's shutdown and drain. Service thread only.
extension WebSocketServer {
    /// Closes a connection with a close frame once what is queued for it has been written.
    public func close(_ id: ConnectionID, code: UInt16, reason: String) {
        guard let connection = connections[id], connection.closeCode == nil else { return }
        beginClose(connection, code: code, reason: reason)
    }

    func beginClose(_ connection: Connection, code: UInt16, reason: String) {
        connection.closeCode = code
        connection.closeReason = String(reason.utf8.prefix(100)) ?? ""
        if connection.queue.isEmpty && lws_partial_buffered(connection.wsi) == 0 {
            closeWhenOutside(connection)
        } else {
            lws_callback_on_writable(connection.wsi)
        }
        // A peer that never reads never makes us writable: hang up on it after a short while regardless.
        lws_set_timeout(connection.wsi, PENDING_TIMEOUT_USER_OK, 3)
        libraryTimersChanged()
    }

    /// Queues the close frame of a connection whose frames are all written, to be started from a timer rather
    /// than by returning -1 from a callback: with the libuv loop this build of the library then closes the
    /// connection twice, and the close frame is lost.
    func closeWhenOutside(_ connection: Connection) {
        guard !connection.closeStarted else { return }
        connection.closeStarted = true
        closesDue.append((connection.id, false))
        if closesDue.count == 1 { closeTimer?.schedule(afterNanoseconds: 0) }
    }

    /// Starts the close handshake of each connection due: the library writes the close frame with our code
    /// and reason, waits for the peer's, then hangs up.
    func startDueCloses() {
        let due = closesDue
        closesDue.removeAll()
        for (id, hangUp) in due {
            guard let connection = connections[id], let code = connection.closeCode else { continue }
            // Without a close reason the library closes without a close frame: a hang-up.
            if !hangUp {
                var reason = Array(connection.closeReason.utf8)
                lws_close_reason(connection.wsi, lws_close_status(rawValue: UInt32(code)), &reason, reason.count)
            }
            lws_set_timeout(connection.wsi, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_SYNC)
        }
    }

    /// Once a second: pings each connection silent for `pingAfterSeconds` (once), and hangs up on each silent
    /// for `hangUpAfterSeconds`. One pass over the connections costs far less than the library's keep-alive,
    /// which re-sorts a list of every connection's timer at each frame received.
    func sweepKeepAlive() {
        keepAliveTimer?.schedule(afterNanoseconds: 1_000_000_000)
        let now = uv_now(loop)
        let pingAfter = UInt64(options.pingAfterSeconds) * 1000
        let hangUpAfter = UInt64(options.hangUpAfterSeconds) * 1000
        for connection in connections.values where connection.closeCode == nil {
            let silent = now &- connection.lastHeardMs
            // Hung up on only once pinged (a sweep that came late must not skip the ping).
            if hangUpAfter > 0 && silent >= hangUpAfter && (connection.pinged || pingAfter == 0) {
                hangUp(connection)
            } else if pingAfter > 0 && silent >= pingAfter && !connection.pinged {
                connection.pinged = true
                connection.pingDue = true
                if connection.queue.isEmpty && lws_partial_buffered(connection.wsi) == 0 {
                    writePing(connection)
                } else {
                    lws_callback_on_writable(connection.wsi)
                }
            }
        }
    }

    /// The keep-alive ping. Its payload is ASCII: this build of the library checks a pong's payload as UTF-8
    /// and closes with 1007 on anything else.
    func writePing(_ connection: Connection) {
        connection.pingDue = false
        var ping = [UInt8](repeating: 0, count: LWS.pre) + Array("keepalive".utf8)
        let count = ping.count - LWS.pre
        _ = ping.withUnsafeMutableBufferPointer { buffer in
            lws_write(connection.wsi, buffer.baseAddress! + LWS.pre, count, LWS_WRITE_PING)
        }
    }

    /// The peer was heard from.
    func heard(_ connection: Connection) {
        connection.lastHeardMs = uv_now(loop)
        connection.pinged = false
    }

    /// From now on a WebSocket upgrade is answered `503 Service Unavailable`, and everything else as before:
    /// a server that has begun to stop sends no client into a connection it will close in seconds. A proxy
    /// that retries on a 503 (deploy/nginx-cluster.conf) sends the client to another server at once.
    public func refuseUpgrades() {
        upgradesRefused = true
    }

    /// Closes every connection with `code` (1001: going away), then ends the service loop once they are all
    /// gone or `graceSeconds` have passed. New connections are refused meanwhile.
    public func shutdown(code: UInt16 = 1001, reason: String = "server shutting down", graceSeconds: Int64 = 2) {
        guard !draining else { return }
        draining = true
        refuseUpgrades()
        for connection in connections.values { beginClose(connection, code: code, reason: reason) }
        let timer = makeTimer { [unowned self] in self.finishDraining() }
        timer.schedule(afterNanoseconds: graceSeconds * 1_000_000_000)
        drainTimer = timer
        if connections.isEmpty { finishDraining() }
    }

    func finishDraining() {
        requestExit()
    }
}
