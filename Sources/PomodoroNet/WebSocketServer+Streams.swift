import CLibWebSockets
import Glibc

/// An HTTP answer that goes on: its head once, then pieces as the application hands them (Server-Sent
/// Events), until either side ends it. Service thread only.
///
/// What one reader can hold: at most `maxQueuedPieces` pieces or `maxQueuedBytes` bytes waiting to be
/// written, beyond which the reader is dropped, never waited for (as a slow WebSocket client is). The socket's
/// send buffer is kept small (`sendBufferBytes`), so a reader that stops reading fills it, and then this
/// queue, within seconds of traffic rather than megabytes.
public final class HTTPStream {
    public static let maxQueuedPieces = 64
    public static let maxQueuedBytes = 256 * 1024
    static let sendBufferBytes: Int32 = 16 * 1024

    private weak var server: WebSocketServer?
    let exchange: UInt64
    var queue: [[UInt8]] = []
    var queuedBytes = 0
    /// Set when the connection has gone, or the reader was dropped, or the stream was finished.
    public internal(set) var isClosed = false
    var finishing = false

    init(server: WebSocketServer, exchange: UInt64) {
        self.server = server
        self.exchange = exchange
    }

    /// Queues a piece; false (and nothing is queued) once the stream is closed, or when this piece would
    /// overflow the queue: the reader is then dropped.
    @discardableResult
    public func send(_ piece: [UInt8]) -> Bool {
        guard !isClosed, let server, let exchange = server.httpExchanges[exchange] else {
            isClosed = true
            return false
        }
        if queue.count >= Self.maxQueuedPieces || queuedBytes + piece.count > Self.maxQueuedBytes {
            isClosed = true
            lws_set_timeout(exchange.wsi, PENDING_TIMEOUT_HTTP_CONTENT, LWS_TO_KILL_ASYNC)
            server.libraryTimersChanged()
            return false
        }
        queue.append(piece)
        queuedBytes += piece.count
        lws_callback_on_writable(exchange.wsi)
        return true
    }

    /// Ends the stream once what is queued has been written (the connection closes: the answer had no length).
    public func finish() {
        guard !isClosed, let server, let exchange = server.httpExchanges[exchange] else { return }
        finishing = true
        lws_callback_on_writable(exchange.wsi)
    }
}

extension HTTPResponder {
    /// Answers with `head` (status, type, headers; its body is ignored) and no length, and returns the stream
    /// its body goes on in; nil if the request was already answered or is gone. Service thread only.
    public func stream(_ head: HTTPResponse) -> HTTPStream? {
        precondition(server.isOnServiceThread, "a stream is opened on the service thread")
        guard claim(), let exchange = server.httpExchanges[self.exchange], exchange.response == nil else { return nil }
        let stream = HTTPStream(server: server, exchange: self.exchange)
        exchange.stream = stream
        exchange.response = head
        lws_rx_flow_control(exchange.wsi, 1)
        lws_callback_on_writable(exchange.wsi)
        return stream
    }
}

extension WebSocketServer {
    /// LWS_CALLBACK_HTTP_WRITEABLE for a streaming exchange: the head, then one queued piece per callback.
    /// No deadline bounds a stream's life; the queue bounds what a reader can hold.
    func writeStream(_ exchange: HTTPExchange, _ stream: HTTPStream, head: HTTPResponse) -> Int32 {
        let wsi = exchange.wsi
        if !exchange.headersWritten {
            var small = HTTPStream.sendBufferBytes
            setsockopt(lws_get_socket_fd(wsi), SOL_SOCKET, SO_SNDBUF, &small, socklen_t(MemoryLayout<Int32>.size))
            guard writeHeaders(wsi, head, endingTheStream: exchange.headersOnly, length: lws_filepos_t.max) else {
                return -1
            }
            exchange.headersWritten = true
            // HEAD: the head alone, then the end (of the connection: the answer has no length).
            if exchange.headersOnly {
                stream.isClosed = true
                return -1
            }
            lws_set_timeout(wsi, NO_PENDING_TIMEOUT, 0)
            if !stream.queue.isEmpty || stream.finishing { lws_callback_on_writable(wsi) }
            return 0
        }
        guard !stream.queue.isEmpty else {
            // Finished and written: close (the answer had no length, so its end is the connection's).
            return stream.finishing ? -1 : 0
        }
        var piece = stream.queue.removeFirst()
        stream.queuedBytes -= piece.count
        var buffer = [UInt8](repeating: 0, count: LWS.pre + piece.count)
        let written = buffer.withUnsafeMutableBufferPointer { buffer in
            piece.withUnsafeMutableBufferPointer { body in
                let payload = buffer.baseAddress! + LWS.pre
                payload.update(from: body.baseAddress!, count: body.count)
                return lws_write(wsi, payload, body.count, LWS_WRITE_HTTP)
            }
        }
        if written < 0 { return -1 }
        piece.removeAll()
        if !stream.queue.isEmpty || stream.finishing { lws_callback_on_writable(wsi) }
        return 0
    }
}
