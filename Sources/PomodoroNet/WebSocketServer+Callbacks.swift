import CLibUV
import CLibWebSockets
import Foundation

// What the library tells the server, on the service thread: one callback for every connection and reason.
extension WebSocketServer {
    // MARK: Callbacks from the library

    func handle(_ wsi: OpaquePointer?, _ reason: lws_callback_reasons, _ user: UnsafeMutableRawPointer?,
                            _ input: UnsafeMutableRawPointer?, _ length: Int) -> Int32 {
        switch reason {

        case LWS_CALLBACK_HTTP_CONFIRM_UPGRADE:
            // A server about to stop takes no new WebSocket: a 503, which a proxy in front may pass on to
            // another server (deploy/nginx-cluster.conf) and a client tries again. Only the WebSocket path
            // upgrades: anything else gets a 403.
            guard let wsi else { return -1 }
            headDispatched(session: user)
            let refusal = upgradesRefused ? HTTP_STATUS_SERVICE_UNAVAILABLE
                : header(wsi, WSI_TOKEN_GET_URI) != options.webSocketPath || !originAllowed(wsi) ? HTTP_STATUS_FORBIDDEN
                : nil
            if let refusal {
                refusedConnections += 1
                lws_return_http_status(wsi, UInt32(refusal.rawValue), nil)
                return 1
            }

        case LWS_CALLBACK_ESTABLISHED:
            guard let wsi else { return -1 }
            let id = ConnectionID(rawValue: nextConnection)
            nextConnection += 1
            let connection = Connection(id: id, wsi: wsi, peer: clientAddress(wsi), options: options, nowMs: uv_now(loop))
            connections[id] = connection
            lws_set_opaque_user_data(wsi, UnsafeMutableRawPointer(bitPattern: UInt(id.rawValue)))
            connection.announced = true
            delegate?.server(self, didOpen: id, peer: connection.peer)

        case LWS_CALLBACK_RECEIVE_PONG:
            if let connection = connection(of: wsi) { heard(connection) }

        case LWS_CALLBACK_RECEIVE:
            guard let connection = connection(of: wsi) else { return 0 }
            heard(connection)
            guard connection.closeCode == nil, connection.announced else { return 0 }
            let chunk = UnsafeRawBufferPointer(start: input, count: input == nil ? 0 : length)
            let result = connection.assembler.append(
                chunk, first: lws_is_first_fragment(wsi) != 0,
                final: lws_is_final_fragment(wsi) != 0 && lws_remaining_packet_payload(wsi) == 0,
                isBinary: lws_frame_is_binary(wsi) != 0)
            switch result {
            case .incomplete: break
            case .text(let bytes): delegate?.server(self, didReceive: bytes, from: connection.id)
            case .problem(let problem): delegate?.server(self, didReject: problem, from: connection.id)
            }

        case LWS_CALLBACK_SERVER_WRITEABLE:
            guard let wsi, let connection = connection(of: wsi) else { return 0 }
            if connection.closeStarted { return 0 }
            if lws_partial_buffered(wsi) != 0 {
                lws_callback_on_writable(wsi)
                return 0
            }
            if connection.pingDue {
                writePing(connection)
                if !connection.queue.isEmpty || connection.closeCode != nil { lws_callback_on_writable(wsi) }
                return 0
            }
            if let frame = connection.queue.pop() {
                guard write(frame, to: connection) else { return 0 }
                if !connection.queue.isEmpty || connection.closeCode != nil { lws_callback_on_writable(wsi) }
                return 0
            }
            if connection.closeCode != nil {
                closeWhenOutside(connection)
                return 0
            }

        case LWS_CALLBACK_WS_PEER_INITIATED_CLOSE:
            // The peer closes first (a close the server began is acknowledged without this): the library
            // echoes the frame and closes. Its status tells a client that closed on purpose from one that
            // reports an error.
            guard let connection = connection(of: wsi), connection.peerCloseCode == nil else { break }
            if let input, length >= 2 {
                let bytes = UnsafeRawBufferPointer(start: input, count: length)
                connection.peerCloseCode = UInt16(bytes[0]) << 8 | UInt16(bytes[1])
            } else {
                connection.peerCloseCode = 1005  // RFC 6455: no status code was present
            }

        case LWS_CALLBACK_CLOSED:
            guard let connection = connection(of: wsi) else { break }
            connections[connection.id] = nil
            if connection.announced {
                delegate?.server(self, didClose: connection.id, peerCloseCode: connection.peerCloseCode)
            }
            if draining && connections.isEmpty { finishDraining() }

        case LWS_CALLBACK_FILTER_NETWORK_CONNECTION:
            // Before the library takes an accepted connection on: a turn's share at a time.
            return connectionArrived(Int32(truncatingIfNeeded: Int(bitPattern: input)))

        case LWS_CALLBACK_SERVER_NEW_CLIENT_INSTANTIATED:
            if let wsi { connectionAccepted(wsi) }

        case LWS_CALLBACK_HTTP_BIND_PROTOCOL:
            if let wsi { headExpected(on: wsi, session: user) }

        case LWS_CALLBACK_FILTER_HTTP_CONNECTION:
            guard let wsi else { return -1 }
            if filterHead(wsi, session: user) != 0 { return 1 }

        case LWS_CALLBACK_HTTP_DROP_PROTOCOL:
            if let wsi { headDropped(wsi, session: user, reason: input) }

        case LWS_CALLBACK_HTTP:
            guard let wsi else { return -1 }
            headDispatched(session: user)
            return beginExchange(wsi)

        case LWS_CALLBACK_HTTP_WRITEABLE:
            guard let wsi else { return -1 }
            return writeExchange(wsi)

        case LWS_CALLBACK_HTTP_BODY:
            // Read for a request that waits for its body (WebSocketServer+HTTP.swift), else swallowed.
            if let wsi, httpExchangeOn[wsi] != nil { return bodyReceived(wsi, input, length) }

        case LWS_CALLBACK_HTTP_BODY_COMPLETION:
            // The library's default would end the transaction unanswered; the answer ends it instead.
            if let wsi, httpExchangeOn[wsi] != nil { return bodyCompleted(wsi) }

        case LWS_CALLBACK_CLOSED_HTTP:
            if let wsi { endExchange(on: wsi, closing: true) }

        case LWS_CALLBACK_RAW_RX:
            // Only a head the library gave up on as HTTP comes here (WebSocketServer+BadRequests.swift).
            guard let wsi else { return -1 }
            return headNotHTTP(wsi, input, length)

        case LWS_CALLBACK_RAW_ADOPT, LWS_CALLBACK_RAW_WRITEABLE, LWS_CALLBACK_RAW_CLOSE:
            return 0

        default:
            break
        }
        return lws_callback_http_dummy(wsi, reason, user, input, length)
    }

    func connection(of wsi: OpaquePointer?) -> Connection? {
        guard let wsi, let raw = lws_get_opaque_user_data(wsi) else { return nil }
        return connections[ConnectionID(rawValue: UInt64(UInt(bitPattern: raw)))]
    }

    func header(_ wsi: OpaquePointer, _ token: lws_token_indexes) -> String? {
        let length = Int(lws_hdr_total_length(wsi, token))
        guard length > 0, length < 4096 else { return nil }
        var buffer = [CChar](repeating: 0, count: length + 1)
        guard lws_hdr_copy(wsi, &buffer, Int32(buffer.count), token) >= 0 else { return nil }
        return String(decoding: buffer.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Browsers name the page's origin on every WebSocket upgrade. Clients that send no Origin are not
    /// browsers. With origins configured, the Origin must be one of them (scheme, host and port), and
    /// nothing else: a page on a name that resolves to this server (DNS rebinding) sends a `Host` that
    /// matches its own Origin, so `Host` proves nothing. Without, the Origin's host and port must be the
    /// `Host` the request was sent to: that keeps out pages of other sites, not a rebound name.
    private func originAllowed(_ wsi: OpaquePointer) -> Bool {
        guard let origin = header(wsi, WSI_TOKEN_ORIGIN) else { return true }
        if !options.allowedOrigins.isEmpty {
            return options.allowedOrigins.contains { $0.lowercased() == origin.lowercased() }
        }
        guard let host = header(wsi, WSI_TOKEN_HOST) else { return false }
        let originHost = origin.split(separator: "/", omittingEmptySubsequences: true).dropFirst().first
        return originHost.map(String.init)?.lowercased() == host.lowercased()
    }

    /// The client's address: the socket's peer, or what a trusted proxy in front says it is.
    func clientAddress(_ wsi: OpaquePointer) -> String {
        let peer = peerAddress(wsi)
        guard !options.trustedProxies.ranges.isEmpty else { return peer }
        return options.trustedProxies.clientAddress(peer: peer, forwardedFor: header(wsi, WSI_TOKEN_X_FORWARDED_FOR),
                                                    forwarded: customHeader(wsi, "forwarded:"))
    }

    /// A header the library has no token for, by its lower-case name with the colon. Only its first line.
    func customHeader(_ wsi: OpaquePointer, _ name: String) -> String? {
        let length = Int(lws_hdr_custom_length(wsi, name, Int32(name.utf8.count)))
        guard length > 0, length < 4096 else { return nil }
        var buffer = [CChar](repeating: 0, count: length + 1)
        guard lws_hdr_custom_copy(wsi, &buffer, Int32(buffer.count), name, Int32(name.utf8.count)) >= 0 else { return nil }
        return String(decoding: buffer.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    func peerAddress(_ wsi: OpaquePointer) -> String {
        var buffer = [CChar](repeating: 0, count: 64)
        guard lws_get_peer_simple(wsi, &buffer, buffer.count) != nil else { return "?" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

func serverCallback(_ wsi: OpaquePointer?, _ reason: lws_callback_reasons, _ user: UnsafeMutableRawPointer?,
                            _ input: UnsafeMutableRawPointer?, _ length: Int) -> Int32 {
    guard let server = serviceLoop(of: wsi, as: WebSocketServer.self) else {
        return lws_callback_http_dummy(wsi, reason, user, input, length)
    }
    return server.handle(wsi, reason, user, input, length)
}
