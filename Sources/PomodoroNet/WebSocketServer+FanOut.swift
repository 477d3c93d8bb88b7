import CLibWebSockets

/// What the two-thread write passes did (`WebSocketServer.fanOutCounts`).
public struct FanOutCounts: Sendable, Equatable {
    /// Frames written over two threads, one per pass.
    public var passes = 0
    /// Connections whose socket took the whole frame in such a pass.
    public var writtenWhole = 0
    /// Connections whose socket took part of it; the library was handed the rest (`lws_partial_buffered`).
    public var restHandedOn = 0
    /// Connections whose socket took none of it; the frame waits in their queue for their next writable turn.
    public var queued = 0

    public init() {}
}

extension WebSocketServer {
    /// Queues one frame for many connections; returns for how many it was queued or written.
    ///
    /// A frame for many (`parallelWriteMinimum`) is written straight to the sockets of every connection with
    /// nothing waiting, over two threads (`FanOutWriter`), the same bytes (header and payload) to each; what a
    /// socket does not take goes on as a single write would: a part taken, the rest to the library; nothing
    /// taken, the frame to the connection's queue; a failed socket, a hang-up. Connections with something
    /// waiting, and every connection under TLS, take the frame through `send(_:to:)`.
    public func send(_ frame: OutboundFrame, toAll ids: [ConnectionID]) -> Int {
        let minimum = options.parallelWriteMinimum
        let plain = options.tlsCertificatePath == nil || options.tlsPrivateKeyPath == nil
        guard minimum > 0, ids.count >= minimum, plain else {
            var sent = 0
            for id in ids where send(frame, to: id) { sent += 1 }
            return sent
        }
        var direct = [Connection]()
        var sockets = [Int32]()
        direct.reserveCapacity(ids.count)
        sockets.reserveCapacity(ids.count)
        var sent = 0
        for id in ids {
            guard let connection = connections[id], connection.closeCode == nil else { continue }
            let socket = lws_get_socket_fd(connection.wsi)
            if socket >= 0 && writesAtOnce(connection) {
                direct.append(connection)
                sockets.append(socket)
            } else if send(frame, to: id) {
                sent += 1
            }
        }
        guard !direct.isEmpty else { return sent }
        var results = [Int](repeating: 0, count: direct.count)
        let whole = frame.withWireBytes { bytes in
            sockets.withUnsafeBufferPointer { sockets in
                results.withUnsafeMutableBufferPointer { results in
                    fanOutWriter.write(bytes, to: sockets, results: results)
                }
            }
            return bytes.count
        }
        fanOutCounts.passes += 1
        var partly: [(connection: Connection, taken: Int)] = []
        for (index, connection) in direct.enumerated() {
            let taken = results[index]
            if taken == whole {
                fanOutCounts.writtenWhole += 1
                sent += 1
            } else if taken > 0 {
                partly.append((connection, taken))
            } else if taken == 0 {
                fanOutCounts.queued += 1
                // The queue was empty, so this cannot overflow it.
                _ = connection.queue.push(frame)
                lws_callback_on_writable(connection.wsi)
                sent += 1
            } else {
                hangUp(connection)
            }
        }
        guard !partly.isEmpty else { return sent }
        fanOutCounts.restHandedOn += partly.count
        frame.withWireBytes { bytes in
            for (connection, taken) in partly where handOn(UnsafeRawBufferPointer(rebasing: bytes[taken...]), to: connection) {
                sent += 1
            }
        }
        return sent
    }

    /// The rest of a frame a socket took only part of, handed to the library as raw bytes (a ws connection
    /// writes `LWS_WRITE_HTTP` as it is): it sends what it can and keeps the rest, and nothing else is written
    /// to the connection until that is out (`send(_:to:)` queues while `lws_partial_buffered`).
    private func handOn(_ rest: UnsafeRawBufferPointer, to connection: Connection) -> Bool {
        var buffer = [UInt8](repeating: 0, count: LWS.pre + rest.count)
        buffer.withUnsafeMutableBytes { $0.baseAddress!.advanced(by: LWS.pre).copyMemory(from: rest.baseAddress!, byteCount: rest.count) }
        let written = buffer.withUnsafeMutableBufferPointer { buffer in
            lws_write(connection.wsi, buffer.baseAddress! + LWS.pre, rest.count, LWS_WRITE_HTTP)
        }
        if written < 0 {
            hangUp(connection)
            return false
        }
        return true
    }
}
