import CLibWebSockets
import Foundation
import Glibc

/// Request heads the library cannot take, or that no path answers, still get an HTTP status of ours, never a
/// bare close and never the library's own 403 page; each such answer (`cannedAnswer`) carries the headers of every
/// other answer and closes the connection.
///
/// The library keeps a request's head in one table of `headTableBytes`. A head that does not fit, or that its
/// URI sanitiser rejects (a `%00` in the path, say), makes it close the connection without a word: curl reports
/// status 000. No callback comes between the bytes' arrival and that close, so these measures answer instead:
///
/// - Every piece of the target (the path, each query parameter) is capped at `maxTargetPieceBytes` through the
///   library's per-header limits: past that it cuts the piece short and skips the rest of the request line, the
///   head still completes, and LWS_CALLBACK_FILTER_HTTP_CONNECTION answers 414. This holds for every HTTP/1.1
///   request, over TLS too.
/// - A connection's first head, on plain TCP, is looked at before the library reads it: the listening socket
///   defers accepting until the client has sent something (TCP_DEFER_ACCEPT), and the accepted connection's
///   first bytes are peeked and judged by `RequestHeadScreen`, which answers 400, 414, 431 or 501 and closes.
/// - Every head the library has read is judged again on how its body would be read (`RequestHeadScreen.framing`)
///   in LWS_CALLBACK_FILTER_HTTP_CONNECTION: the library takes a Content-Length with `atoll` and reads a chunked
///   body as plain bytes, so such heads are answered 400 or 411, and one announcing a body past the limit 413,
///   and closed before any of the body is read. CONNECT, which the library reads, is answered 501 there.
/// - A head the library gives up on as HTTP (its method is none it knows, or there is no request line), on any
///   request of a connection, would get the library's 403: with LWS_SERVER_OPTION_FALLBACK_TO_APPLY_LISTEN_
///   ACCEPT_CONFIG it hands the connection to the callback as raw bytes instead (LWS_CALLBACK_RAW_RX), which
///   answers 501 or 400 (`headNotHTTP`).
/// - A later head on a kept-alive connection: the protocol is unbound while the socket is still open. If the
///   peer sent bytes since the connection last became ready for a head (after an answer, since that answer
///   began: a peer that has read it may send its next head before this thread has bound the connection again),
///   no head got through, nothing was written since (the library answers some refusals itself, with a 403),
///   and the last bytes arrived just now (a timeout closes after seconds of silence, and stays silent), the
///   close follows a head the library could not read: a 431 (at least a table's worth of bytes) or a 400 is
///   written straight to the socket.
///
/// Over TLS the rest is the library's to answer (or drop): the connection may speak HTTP/2, and its bytes cannot
/// be looked at or written from outside.
extension WebSocketServer {
    /// The most bytes one piece of a request target may hold once percent-decoded; longer ones are answered 414.
    public static let maxTargetPieceBytes = 2048
    /// The library's table for one request head (its `max_http_header_data` default): a head larger than this
    /// is answered 431.
    public static let headTableBytes = 4096

    /// Per-header limits for the library: the request targets get `maxTargetPieceBytes`, the rest the whole table.
    static func makeTokenLimits() -> UnsafeMutablePointer<lws_token_limits> {
        let limits = UnsafeMutablePointer<lws_token_limits>.allocate(capacity: 1)
        limits.initialize(to: lws_token_limits())
        let targets = [WSI_TOKEN_GET_URI, WSI_TOKEN_POST_URI, WSI_TOKEN_OPTIONS_URI, WSI_TOKEN_PUT_URI,
                       WSI_TOKEN_PATCH_URI, WSI_TOKEN_DELETE_URI, WSI_TOKEN_CONNECT, WSI_TOKEN_HEAD_URI]
            .map { Int($0.rawValue) }
        withUnsafeMutableBytes(of: &limits.pointee.token_limit) { raw in
            let slots = raw.bindMemory(to: UInt16.self)
            for index in slots.indices {
                slots[index] = UInt16(targets.contains(index) ? maxTargetPieceBytes : headTableBytes)
            }
        }
        return limits
    }

    /// Makes the listening sockets on `port` accept a connection only once it has sent something, so that its
    /// first head can be looked at when it is accepted. The library has no hook for its listening socket (it is
    /// built without external polling): it is found among the process's descriptors, by its port.
    func deferAccepting(port: Int) {
        guard options.tlsCertificatePath == nil,
              let names = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") else { return }
        for fd in names.compactMap(Int32.init) {
            var listening: Int32 = 0
            var size = socklen_t(MemoryLayout<Int32>.size)
            guard getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &size) == 0, listening != 0 else { continue }
            var address = sockaddr_storage()
            var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let named = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
            }
            let family = Int32(address.ss_family)
            guard named == 0, family == AF_INET || family == AF_INET6 else { continue }
            let bound = withUnsafeBytes(of: &address) { raw -> Int in
                // sin_port and sin6_port sit at the same offset, in network order.
                Int(UInt16(raw[2]) << 8 | UInt16(raw[3]))
            }
            guard bound == port else { continue }
            // Seconds a silent connection waits to be accepted anyway; it then has the handshake timeout to speak.
            var seconds: Int32 = 1
            setsockopt(fd, Int32(IPPROTO_TCP), TCP_DEFER_ACCEPT, &seconds, socklen_t(MemoryLayout<Int32>.size))
        }
    }

    /// LWS_CALLBACK_SERVER_NEW_CLIENT_INSTANTIATED: judges the bytes already there, and answers and shuts
    /// down a head it refuses. The adoption itself is never refused.
    func connectionAccepted(_ wsi: OpaquePointer) {
        guard options.tlsCertificatePath == nil else { return }
        let fd = lws_get_socket_fd(wsi)
        guard fd >= 0 else { return }
        var bytes = [UInt8](repeating: 0, count: 2 * Self.headTableBytes)
        let count = recv(fd, &bytes, bytes.count, Int32(MSG_PEEK | MSG_DONTWAIT))
        guard count > 0 else { return }
        guard case .refuse(let status, let reason) = headScreen.verdict(Array(bytes.prefix(count))) else { return }
        // Taken off the socket first: closing with unread bytes would reset the connection, answer and all.
        _ = recv(fd, &bytes, count, Int32(MSG_DONTWAIT))
        let answer = Self.cannedAnswer(status: status, reason: reason,
                                       path: RequestHeadScreen.path(Array(bytes.prefix(count))))
        _ = answer.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
        // The adoption goes on, and the library's own read of the socket, now at its end, closes it. Refusing
        // the adoption here instead makes the library close the socket twice on the libuv loop (once at once,
        // once from libuv's close callback), which may close a descriptor reused meanwhile.
        Glibc.shutdown(fd, Int32(SHUT_RDWR))
    }

    /// LWS_CALLBACK_HTTP_BIND_PROTOCOL: the connection is ready for a request head; note what its socket has
    /// seen so far.
    func headExpected(on wsi: OpaquePointer, session: UnsafeMutableRawPointer?) {
        let beforeAnswer = receivedBeforeAnswer.removeValue(forKey: wsi)
        guard let session = session?.assumingMemoryBound(to: pomodoro_http_session_t.self),
              let counters = tcpCounters(wsi) else { return }
        // After an answer the next head may already be in: the peer can send it as soon as it has read the
        // answer, before this thread comes back from writing it to bind the connection again.
        session.pointee.received_at_bind = min(beforeAnswer ?? counters.received, counters.received)
        session.pointee.written_at_bind = counters.written
        session.pointee.dispatched = 0
    }

    /// An answer's first byte is about to be written: what the connection has received so far is its request,
    /// and anything after it is the next head.
    func noteAnswerStarting(on wsi: OpaquePointer) {
        guard options.tlsCertificatePath == nil, let counters = tcpCounters(wsi) else { return }
        receivedBeforeAnswer[wsi] = counters.received
    }

    /// A head got through to a callback: whatever closes the connection from here, it is not an unread head.
    func headDispatched(session: UnsafeMutableRawPointer?) {
        session?.assumingMemoryBound(to: pomodoro_http_session_t.self).pointee.dispatched = 1
    }

    /// LWS_CALLBACK_FILTER_HTTP_CONNECTION, for every head the library has read (before any of its body): a
    /// target piece the library cut short is answered 414, a body it would misread or that is too long
    /// (`RequestHeadScreen.framing`) 400, 411 or 413, and the connection closed. Returns what the callback returns.
    func filterHead(_ wsi: OpaquePointer, session: UnsafeMutableRawPointer?) -> Int32 {
        headDispatched(session: session)
        if targetCutShort(wsi) {
            refuseHead(wsi, status: 414, reason: "request line too long")
            return 1
        }
        // CONNECT, the one method the library reads that no path here answers. Over TLS it may be HTTP/2's
        // WebSocket (RFC 8441), the library's to take.
        if requestLine(wsi).method == nil, lws_is_ssl(wsi) == 0 {
            refuseHead(wsi, status: 501, reason: RequestHeadScreen.methodNotImplemented)
            return 1
        }
        let framing = headScreen.framing(contentLengths: headerLines(wsi, WSI_TOKEN_HTTP_CONTENT_LENGTH),
                                         transferEncoding: !headerLines(wsi, WSI_TOKEN_HTTP_TRANSFER_ENCODING).isEmpty)
        guard case .refuse(let status, let reason) = framing else { return 0 }
        refuseHead(wsi, status: status, reason: reason)
        return 1
    }

    /// Answers a head the library has read but that is not served, before the library closes the connection:
    /// the transport's own answer (`cannedAnswer`) with `Connection: close`, nothing of any body read.
    private func refuseHead(_ wsi: OpaquePointer, status: Int, reason: String) {
        guard lws_is_ssl(wsi) == 0 else {
            // Over TLS the bytes are the library's to write: its own page for the status.
            lws_return_http_status(wsi, UInt32(status), nil)
            return
        }
        sendAndClose(lws_get_socket_fd(wsi), Self.cannedAnswer(status: status, reason: reason, path: requestLine(wsi).path))
    }

    /// Writes a whole answer straight to a plain TCP socket and ends the sending side; the caller has the
    /// library close the connection next.
    private func sendAndClose(_ fd: Int32, _ answer: [UInt8]) {
        _ = answer.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
        Glibc.shutdown(fd, Int32(SHUT_WR))
        // What has arrived since (a body, the rest of a head) is taken off the socket: closing over unread bytes
        // would reset the connection, and the answer with it. A client still sending after the close meets the
        // reset then.
        var scratch = [UInt8](repeating: 0, count: 16 * 1024)
        for _ in 0..<Self.drainedPiecesAtMost {
            guard recv(fd, &scratch, scratch.count, Int32(MSG_DONTWAIT)) > 0 else { break }
        }
    }

    /// LWS_CALLBACK_RAW_RX after the library gave up on a head as HTTP (an unknown method, or no request line
    /// at all: LWS_SERVER_OPTION_FALLBACK_TO_APPLY_LISTEN_ACCEPT_CONFIG hands the connection over as raw bytes
    /// instead of answering 403 itself), on any head of a connection: answers 501 or 400 and has the
    /// connection closed. Returns what the callback returns.
    func headNotHTTP(_ wsi: OpaquePointer, _ input: UnsafeMutableRawPointer?, _ length: Int) -> Int32 {
        receivedBeforeAnswer[wsi] = nil
        guard lws_is_ssl(wsi) == 0, let input, length > 0 else { return -1 }
        // What the library read, and what has come since: the whole request line, if it is there.
        let fd = lws_get_socket_fd(wsi)
        var more = [UInt8](repeating: 0, count: Self.headTableBytes)
        let peeked = max(0, recv(fd, &more, more.count, Int32(MSG_PEEK | MSG_DONTWAIT)))
        let bytes = Array(UnsafeRawBufferPointer(start: input, count: length)) + more.prefix(peeked)
        let (status, reason) = headScreen.unreadable(bytes)
        sendAndClose(fd, Self.cannedAnswer(status: status, reason: reason, path: RequestHeadScreen.path(bytes)))
        return -1
    }

    /// Pieces of 16 KiB a refused body is drained of at most, before its connection is closed.
    private static let drainedPiecesAtMost = 8

    /// Each line of a header as the library keeps it: a header sent twice is two lines (the second begins with
    /// the space the library puts between them).
    func headerLines(_ wsi: OpaquePointer, _ token: lws_token_indexes) -> [String] {
        var lines: [String] = []
        // The library's header table holds fewer fragments than this; the bound only keeps the loop finite.
        for index in 0..<256 {
            let length = Int(lws_hdr_fragment_length(wsi, token, Int32(index)))
            var buffer = [CChar](repeating: 0, count: length + 1)
            let copied = lws_hdr_copy_fragment(wsi, &buffer, Int32(buffer.count), token, Int32(index))
            guard copied >= 0 else { break }
            lines.append(String(decoding: buffer.prefix(Int(copied)).map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        return lines
    }

    /// LWS_CALLBACK_HTTP_DROP_PROTOCOL: when the connection is closing over a head the library could not read,
    /// answers it. `reason` is what the library says unbinds the protocol.
    func headDropped(_ wsi: OpaquePointer, session: UnsafeMutableRawPointer?, reason: UnsafeMutableRawPointer?) {
        guard !draining, let session = session?.assumingMemoryBound(to: pomodoro_http_session_t.self),
              session.pointee.dispatched == 0, lws_is_ssl(wsi) == 0 else { return }
        // Rebinding for the next transaction passes its own reason; only a close counts.
        if let reason, String(cString: reason.assumingMemoryBound(to: CChar.self)) != "__lws_close_free_wsi" {
            return
        }
        // "Just now" is half the handshake timeout: a half-sent head the timeout closes has been silent for all
        // of it, while a busy service thread may come to a head the library refused a second or more late.
        let justNow = UInt32(max(1, options.handshakeTimeoutSeconds)) * 500
        guard let now = tcpCounters(wsi), now.received > session.pointee.received_at_bind,
              now.written == session.pointee.written_at_bind, now.ms_since_receive < justNow else { return }
        let tooLarge = now.received - session.pointee.received_at_bind >= UInt64(Self.headTableBytes)
        let answer = tooLarge
            ? Self.cannedAnswer(status: 431, reason: "request head too large", path: nil)
            : Self.cannedAnswer(status: 400, reason: "bad request", path: nil)
        _ = answer.withUnsafeBytes {
            Glibc.send(lws_get_socket_fd(wsi), $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
        }
    }

    /// A refusal the transport gives itself: the reason in the shape of the path's errors, plain text for a
    /// path outside /api, else the API's JSON error (`{"error": {"code": …, "message": …}}`; `too_large` for
    /// 413, `bad_request` with `field` `method` for 501, `bad_request` otherwise), also when the head names no
    /// path at all.
    static func refusal(status: Int, reason: String, path: String?) -> HTTPResponse {
        if let path, !(path == "/api" || path.hasPrefix("/api/")) {
            return HTTPResponse(status: status, text: reason + "\n")
        }
        let code = status == 413 ? "too_large" : "bad_request"
        let field = status == 501 ? #","field":"method""# : ""
        let escaped = reason.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
        return HTTPResponse(status: status, contentType: "application/json",
                            text: #"{"error":{"code":""# + code + #"","message":""# + escaped + "\"" + field + "}}")
    }

    /// Every answer the transport writes itself, in one go where the library's own writing is not at hand (a
    /// head refused before the library reads it, or that it cannot read): `refusal`'s, with the headers every
    /// other answer carries (`securityHeaders`, `Cache-Control: no-store`) and `Connection: close`.
    static func cannedAnswer(status: Int, reason: String, path: String?) -> [UInt8] {
        let phrases = [400: "Bad Request", 411: "Length Required", 413: "Content Too Large", 414: "URI Too Long",
                       431: "Request Header Fields Too Large", 501: "Not Implemented"]
        let answer = refusal(status: status, reason: reason, path: path)
        var head = "HTTP/1.1 \(status) \(phrases[status] ?? "Error")\r\ncontent-type: \(answer.contentType)"
            + "\r\ncontent-length: \(answer.body.count)\r\n"
        for (name, value) in securityHeaders { head += "\(name) \(value)\r\n" }
        return Array((head + "cache-control: no-store\r\nconnection: close\r\n\r\n").utf8) + answer.body
    }

    /// Whether the path or a query parameter reached `maxTargetPieceBytes`, where the library cuts it off.
    private func targetCutShort(_ wsi: OpaquePointer) -> Bool {
        let targets = [WSI_TOKEN_GET_URI, WSI_TOKEN_HEAD_URI, WSI_TOKEN_POST_URI, WSI_TOKEN_PUT_URI,
                       WSI_TOKEN_PATCH_URI, WSI_TOKEN_DELETE_URI, WSI_TOKEN_OPTIONS_URI]
        if targets.contains(where: { lws_hdr_total_length(wsi, $0) >= Int32(Self.maxTargetPieceBytes) }) {
            return true
        }
        // The library's header table holds fewer fragments than this; the bound only keeps the loop finite.
        for index in 0..<256 {
            let length = lws_hdr_fragment_length(wsi, WSI_TOKEN_HTTP_URI_ARGS, Int32(index))
            if length >= Int32(Self.maxTargetPieceBytes) { return true }
        }
        return false
    }

    private func tcpCounters(_ wsi: OpaquePointer) -> pomodoro_tcp_counters_t? {
        let fd = lws_get_socket_fd(wsi)
        var counters = pomodoro_tcp_counters_t()
        guard fd >= 0, pomodoro_tcp_counters(fd, &counters) == 0 else { return nil }
        return counters
    }
}
