import CLibWebSockets

/// A dynamic request from its arrival until its answer has been handed to the library. Service thread only.
final class HTTPExchange {
    let id: UInt64
    let wsi: OpaquePointer
    let headersOnly: Bool
    /// The client's address key (`AddressKey`), counted in `httpExchangesPerAddress`.
    let addressKey: String
    /// Set once the application has answered.
    var response: HTTPResponse?
    var headersWritten = false
    var bodyWritten = 0
    /// When the answer must be written by: set as its first byte goes out.
    var deadline: ContinuousClock.Instant?
    /// Set for an answer that goes on (`HTTPResponder.stream`, WebSocketServer+Streams.swift).
    var stream: HTTPStream?
    /// Answers 503 if the application has not answered within the response timeout.
    var unanswered: LoopTimer?
    /// A request whose body is being read: it reaches the delegate once the body is in (`bodyCompleted`).
    var awaitingBody: HTTPRequest?

    init(id: UInt64, wsi: OpaquePointer, headersOnly: Bool, addressKey: String) {
        self.id = id
        self.wsi = wsi
        self.headersOnly = headersOnly
        self.addressKey = addressKey
    }
}

/// Dynamic HTTP: requests handed to the delegate with a responder, answers written when they come.
///
/// The request's headers are copied out in LWS_CALLBACK_HTTP and the callback returns without writing, which
/// leaves the transaction open. An answer, from any thread, reaches the service thread through `post`, which
/// asks for LWS_CALLBACK_HTTP_WRITEABLE; each of those writes one thing: the headers, then the body in pieces
/// of `httpPieceBytes`, the last with LWS_WRITE_HTTP_FINAL, then `lws_http_transaction_completed` readies the
/// connection for its next request. Until the answer comes the connection's input is paused (rx flow control);
/// a timer of the loop bounds the wait for the answer (`httpResponseTimeoutSeconds`): an application that has
/// not answered by then is answered for, 503 with `Retry-After`, so a client is told rather than hung up on.
/// A PENDING_TIMEOUT_HTTP_CONTENT backs that up by a few seconds and then bounds each piece's progress,
/// closing the connection when it runs out.
///
/// What one client can hold: the whole answer is bounded by `httpResponseDeadlineSeconds` from its first
/// byte (a reader that takes a few bytes at a time no longer keeps a large body alive by taking them), and
/// one address has at most `maxHTTPRequestsPerAddress` requests in progress; the application bounds each
/// body's size.
extension WebSocketServer {
    /// One piece of a body per writable callback: what one send() takes (the protocol's tx_packet_size), so the
    /// library never has to copy the rest of a large body into its own buffer.
    static let httpPieceBytes = 16 * 1024

    /// The response timeout for the library: at least a second (0 would mean none, -1 "close now").
    private var httpTimeout: Int32 { Int32(clamping: max(1, options.httpResponseTimeoutSeconds)) }
    /// The library's timeout while the application's answer is awaited: after the loop's own timer, which
    /// answers 503 then, with room to write that answer.
    private var httpWaitBackstop: Int32 { httpTimeout + 5 }

    /// The library's timeout for the next wait of `exchange`: the response timeout, cut to what is left
    /// before its deadline (rounded up to whole seconds, the library's unit); nil once the deadline is past.
    private func timeout(for exchange: HTTPExchange) -> Int32? {
        guard let deadline = exchange.deadline else { return httpTimeout }
        let left = deadline - .now
        guard left > .zero else { return nil }
        let seconds = left.components.seconds + (left.components.attoseconds > 0 ? 1 : 0)
        return min(httpTimeout, Int32(clamping: seconds))
    }

    /// Dynamic requests not yet fully answered. Service thread only.
    public var pendingHTTPCount: Int { httpExchanges.count }

    /// Hands an answer to the service thread. Safe from any thread.
    func deliver(_ response: HTTPResponse, to id: UInt64) {
        if isOnServiceThread {
            answer(id, with: response)
        } else {
            post { [self] in answer(id, with: response) }
        }
    }

    private func answer(_ id: UInt64, with response: HTTPResponse) {
        // Gone: the client left or the timeout closed the connection. The answer has nowhere to go.
        guard let exchange = httpExchanges[id], exchange.response == nil else { return }
        exchange.response = response
        exchange.unanswered?.cancel()
        exchange.unanswered = nil
        // Input back on first: the library skips a flow-controlled connection's writable events too.
        lws_rx_flow_control(exchange.wsi, 1)
        lws_callback_on_writable(exchange.wsi)
    }

    /// LWS_CALLBACK_HTTP: opens an exchange and asks the delegate, or answers at once what never reaches it.
    func beginExchange(_ wsi: OpaquePointer) -> Int32 {
        // A keep-alive connection's earlier request ended with its transaction; drop any leftover all the same.
        endExchange(on: wsi)
        let (method, path) = requestLine(wsi)
        let id = nextHTTPExchange
        nextHTTPExchange += 1
        let peer = clientAddress(wsi)
        let key = AddressKey.of(peer)
        let exchange = HTTPExchange(id: id, wsi: wsi, headersOnly: method == .head, addressKey: key)
        httpExchanges[id] = exchange
        httpExchangeOn[wsi] = id
        let inProgress = httpExchangesPerAddress[key, default: 0] + 1
        httpExchangesPerAddress[key] = inProgress
        exchange.unanswered = makeTimer { [unowned self] in answer(id, with: options.httpTooLateResponse) }
        exchange.unanswered?.schedule(afterNanoseconds: Int64(httpTimeout) * 1_000_000_000)
        lws_set_timeout(wsi, PENDING_TIMEOUT_HTTP_CONTENT, httpWaitBackstop)
        // While a request waits, the library reads nothing more from its connection, yet a readable socket (the
        // client hung up, or sent its next request early) would wake the loop again and again: stop polling
        // it for input until the answer comes. A client that leaves meanwhile is noticed then, or by the
        // timeout.
        lws_rx_flow_control(wsi, 0)

        if options.maxHTTPRequestsPerAddress > 0 && inProgress > options.maxHTTPRequestsPerAddress {
            answer(id, with: HTTPResponse(status: 429, headers: [(name: "Retry-After", value: "1")],
                                          text: "too many requests in progress from this address\n"))
            return 0
        }
        guard let method else {
            // CONNECT over TLS (on plain TCP LWS_CALLBACK_FILTER_HTTP_CONNECTION has answered it).
            answer(id, with: Self.refusal(status: 501, reason: RequestHeadScreen.methodNotImplemented, path: nil))
            return 0
        }
        guard let path, isDynamic(path), let delegate else {
            answer(id, with: HTTPResponse(status: 404, text: "not found\n"))
            return 0
        }
        guard let query = HTTPRequest.query(fromPieces: queryPieces(wsi)) else {
            answer(id, with: HTTPResponse(status: 400, text: "query too large\n"))
            return 0
        }
        let request = HTTPRequest(method: method, path: path, query: query,
                                  authorization: header(wsi, WSI_TOKEN_HTTP_AUTHORIZATION),
                                  accept: header(wsi, WSI_TOKEN_HTTP_ACCEPT), peer: peer)
        // Read as the head was screened (LWS_CALLBACK_FILTER_HTTP_CONNECTION refused any other Content-Length).
        // A length past HTTPRequest.maxBodyBytes was answered 413 there too, before any of the body was read.
        let length = headScreen.contentLength(headerLines(wsi, WSI_TOKEN_HTTP_CONTENT_LENGTH)) ?? 0
        if length > 0, method == .post || method == .put || method == .patch {
            // The body comes in LWS_CALLBACK_HTTP_BODY pieces; the request goes on once it is in.
            httpExchanges[id]?.awaitingBody = request
            lws_rx_flow_control(wsi, 1)
            return 0
        }
        delegate.server(self, didReceiveHTTP: request, responder: HTTPResponder(server: self, exchange: id))
        return 0
    }

    /// LWS_CALLBACK_HTTP_BODY: one piece of a body being read (others, and what comes after an answer, are
    /// swallowed). A body that grows past the limit without having said its length (HTTP/2 may send none) is
    /// answered 413.
    func bodyReceived(_ wsi: OpaquePointer, _ input: UnsafeMutableRawPointer?, _ length: Int) -> Int32 {
        // The body is counted, not copied: a copy of the request held here would copy the body at each append.
        guard let id = httpExchangeOn[wsi], let exchange = httpExchanges[id], let read = exchange.awaitingBody?.body.count,
              let input, length > 0 else { return 0 }
        guard read + length <= headScreen.maxBodyBytes else {
            let path = exchange.awaitingBody?.path
            exchange.awaitingBody = nil
            answer(id, with: Self.refusal(status: 413, reason: headScreen.bodyTooLong, path: path))
            return 0
        }
        exchange.awaitingBody!.body.append(contentsOf: UnsafeRawBufferPointer(start: input, count: length))
        return 0
    }

    /// LWS_CALLBACK_HTTP_WRITEABLE: writes the next part of the answer, if there is one yet.
    func writeExchange(_ wsi: OpaquePointer) -> Int32 {
        // Writable callbacks also come unasked (static files, the library's own flushing): nothing to do then.
        guard let id = httpExchangeOn[wsi], let exchange = httpExchanges[id], let response = exchange.response else {
            return 0
        }
        if let stream = exchange.stream { return writeStream(exchange, stream, head: response) }
        // Each piece's progress is bounded by the response timeout, the whole answer by its deadline.
        if exchange.deadline == nil {
            exchange.deadline = .now + .seconds(max(1, options.httpResponseDeadlineSeconds))
        }
        guard let timeout = timeout(for: exchange) else { return -1 }
        lws_set_timeout(wsi, PENDING_TIMEOUT_HTTP_CONTENT, timeout)
        if !exchange.headersWritten {
            noteAnswerStarting(on: wsi)
            let headersOnly = exchange.headersOnly || response.body.isEmpty
            guard writeHeaders(wsi, response, endingTheStream: headersOnly) else { return -1 }
            exchange.headersWritten = true
            if headersOnly { return finishExchange(exchange) }
            lws_callback_on_writable(wsi)
            return 0
        }
        let count = min(Self.httpPieceBytes, response.body.count - exchange.bodyWritten)
        let last = exchange.bodyWritten + count == response.body.count
        if httpScratch.count < LWS.pre + count {
            httpScratch = [UInt8](repeating: 0, count: LWS.pre + Self.httpPieceBytes)
        }
        let written = httpScratch.withUnsafeMutableBufferPointer { scratch in
            response.body.withUnsafeBufferPointer { body in
                let payload = scratch.baseAddress! + LWS.pre
                payload.update(from: body.baseAddress! + exchange.bodyWritten, count: count)
                return lws_write(wsi, payload, count, last ? LWS_WRITE_HTTP_FINAL : LWS_WRITE_HTTP)
            }
        }
        if written < 0 { return -1 }
        exchange.bodyWritten += count
        if last { return finishExchange(exchange) }
        lws_callback_on_writable(wsi)
        return 0
    }

    /// LWS_CALLBACK_HTTP_BODY_COMPLETION for an open exchange. The library cleared the timeout when the body
    /// was in: a request still waiting for its answer gets it back.
    func bodyCompleted(_ wsi: OpaquePointer) -> Int32 {
        lws_set_timeout(wsi, PENDING_TIMEOUT_HTTP_CONTENT, httpWaitBackstop)
        if let id = httpExchangeOn[wsi], let exchange = httpExchanges[id], let request = exchange.awaitingBody {
            exchange.awaitingBody = nil
            if exchange.response == nil, let delegate {
                lws_rx_flow_control(wsi, 0)
                delegate.server(self, didReceiveHTTP: request, responder: HTTPResponder(server: self, exchange: id))
            }
        }
        return 0
    }

    /// Forgets the exchange a connection carries (LWS_CALLBACK_CLOSED_HTTP, or a new request on it).
    func endExchange(on wsi: OpaquePointer, closing: Bool = false) {
        if closing { receivedBeforeAnswer[wsi] = nil }
        guard let id = httpExchangeOn.removeValue(forKey: wsi) else { return }
        if let exchange = httpExchanges.removeValue(forKey: id) {
            exchange.unanswered?.cancel()
            exchange.unanswered = nil
            exchange.stream?.isClosed = true
            let key = exchange.addressKey
            let left = httpExchangesPerAddress[key, default: 1] - 1
            httpExchangesPerAddress[key] = left > 0 ? left : nil
        }
    }

    private func finishExchange(_ exchange: HTTPExchange) -> Int32 {
        endExchange(on: exchange.wsi)
        // With part of the answer still in the library's buffer, it defers this until that is sent.
        return lws_http_transaction_completed(exchange.wsi) != 0 ? -1 : 0
    }

    /// The method and the (decoded, normalised) path: each method's URI arrives in a header slot of its own.
    /// Neither for a method the library reads into no slot of these (CONNECT).
    func requestLine(_ wsi: OpaquePointer) -> (method: HTTPMethod?, path: String?) {
        let slots: [(lws_token_indexes, HTTPMethod)] = [
            (WSI_TOKEN_GET_URI, .get), (WSI_TOKEN_HEAD_URI, .head), (WSI_TOKEN_POST_URI, .post),
            (WSI_TOKEN_PUT_URI, .put), (WSI_TOKEN_PATCH_URI, .patch), (WSI_TOKEN_DELETE_URI, .delete),
            (WSI_TOKEN_OPTIONS_URI, .options),
        ]
        for (slot, method) in slots {
            if let path = header(wsi, slot) { return (method, path) }
        }
        return (nil, nil)
    }

    /// Whether `path` lies under one of the dynamic mounts, by the rule the library uses to pick a mount.
    /// Without a web root, paths under no mount reach LWS_CALLBACK_HTTP too; they are not the delegate's.
    private func isDynamic(_ path: String) -> Bool {
        options.dynamicPaths.contains { mount in
            mount == "/" || path == mount || path.hasPrefix(mount.hasSuffix("/") ? mount : mount + "/")
        }
    }

    /// The query's `name=value` pieces: the library has already split them at `&` and `;` and decoded them.
    private func queryPieces(_ wsi: OpaquePointer) -> [[UInt8]] {
        var pieces: [[UInt8]] = []
        // The library's header table holds fewer fragments than this; the bound only keeps the loop finite.
        for index in 0..<256 {
            let length = Int(lws_hdr_fragment_length(wsi, WSI_TOKEN_HTTP_URI_ARGS, Int32(index)))
            var buffer = [CChar](repeating: 0, count: length + 1)
            let copied = lws_hdr_copy_fragment(wsi, &buffer, Int32(buffer.count), WSI_TOKEN_HTTP_URI_ARGS,
                                               Int32(index))
            guard copied >= 0 else { break }
            pieces.append(buffer.prefix(Int(copied)).map { UInt8(bitPattern: $0) })
        }
        return pieces
    }

    /// Status, type, length, `Cache-Control: no-store` unless the answer names its own, the answer's headers.
    /// With nothing to follow (HEAD, an empty body) they end the stream: HTTP/2 needs that said, HTTP/1 ignores it.
    func writeHeaders(_ wsi: OpaquePointer, _ response: HTTPResponse, endingTheStream: Bool,
                      length: lws_filepos_t? = nil) -> Bool {
        let extra = response.sendableHeaders
        // Room for the library's own lines (status, security headers) and ours.
        let size = LWS.pre + 2048 + extra.reduce(0) { $0 + $1.name.utf8.count + $1.value.utf8.count + 8 }
        var buffer = [UInt8](repeating: 0, count: size)
        let status = (100...599).contains(response.status) ? UInt32(response.status) : 500
        return buffer.withUnsafeMutableBufferPointer { buffer in
            let start = buffer.baseAddress! + LWS.pre
            var cursor: UnsafeMutablePointer<UInt8>? = start
            let end = buffer.baseAddress! + buffer.count - 1
            if lws_add_http_common_headers(wsi, status, response.contentType, length ?? lws_filepos_t(response.body.count),
                                           &cursor, end) != 0 {
                return false
            }
            if !extra.contains(where: { $0.name == "cache-control" }) {
                let noStore = "no-store"
                if lws_add_http_header_by_token(wsi, WSI_TOKEN_HTTP_CACHE_CONTROL, noStore,
                                                Int32(noStore.utf8.count), &cursor, end) != 0 {
                    return false
                }
            }
            for (name, value) in extra {
                if lws_add_http_header_by_name(wsi, name + ":", value, Int32(value.utf8.count), &cursor, end) != 0 {
                    return false
                }
            }
            guard lws_finalize_http_header(wsi, &cursor, end) == 0, let cursor else { return false }
            let length = cursor - start
            let mode = LWS_WRITE_HTTP_HEADERS.rawValue | (endingTheStream ? LWS_WRITE_H2_STREAM_END.rawValue : 0)
            return lws_write(wsi, start, length, lws_write_protocol(rawValue: mode)) == length
        }
    }
}
