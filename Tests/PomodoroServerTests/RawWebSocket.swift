import Foundation
import Glibc
import PomodoroTestSupport

/// A deliberately crude WebSocket client over a plain socket, for sending what a well-behaved client never
/// would: truncated frames, fragment floods, invalid UTF-8, and reading nothing at all.
final class RawWebSocket {
    let fd: Int32
    /// Set when a read found the connection closed by the server (not merely timed out).
    private(set) var closedByPeer = false

    /// Connects and completes the opening handshake on `path`, sending `headers` (lines ending in CR LF) too.
    init(port: Int, path: String = "/ws", receiveBuffer: Int32? = nil, headers: String = "") throws {
        fd = try Self.connectedSocket(port: port, receiveBuffer: receiveBuffer)
        guard try Self.handshake(on: fd, port: port, path: path, headers: headers).hasPrefix("HTTP/1.1 101") else {
            throw LiveTestFailure(description: "handshake refused")
        }
    }

    /// The status code a WebSocket upgrade gets with these `Host` and `Origin` headers (nil: none sent).
    static func handshakeStatus(port: Int, host: String, origin: String?) throws -> Int {
        let fd = try connectedSocket(port: port, receiveBuffer: nil)
        defer { close(fd) }
        let response = try handshake(on: fd, port: port, path: "/ws", host: host, origin: origin)
        guard let code = response.split(separator: " ").dropFirst().first.flatMap({ Int($0) }) else {
            throw LiveTestFailure(description: "no status in \(response)")
        }
        return code
    }

    static func connectedSocket(port: Int, receiveBuffer: Int32?) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw LiveTestFailure(description: "socket failed") }
        if var size = receiveBuffer {
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        // How long a read may stay quiet before the test gives up: a bound, not a timing. Five PBKDF2 checks of
        // wrong passcodes in a row outlasted 5 s at load 30 on two cores.
        var timeout = timeval(tv_sec: TestTime.seconds(20), tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            close(fd)
            throw LiveTestFailure(description: "connect failed")
        }
        return fd
    }

    /// Sends the opening handshake and reads the response's head.
    private static func handshake(on fd: Int32, port: Int, path: String, host: String? = nil,
                                  origin: String? = nil, headers: String = "") throws -> String {
        try sendHandshake(on: fd, port: port, path: path, host: host, origin: origin, headers: headers)
        return try responseHead(on: fd)
    }

    /// Sends the opening handshake's request.
    static func sendHandshake(on fd: Int32, port: Int, path: String = "/ws", host: String? = nil,
                              origin: String? = nil, headers: String = "") throws {
        let request = """
            GET \(path) HTTP/1.1\r
            Host: \(host ?? "127.0.0.1:\(port)")\r
            \(origin.map { "Origin: \($0)\r\n" } ?? "")Upgrade: websocket\r
            Connection: Upgrade\r
            Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r
            Sec-WebSocket-Version: 13\r
            \(headers)\r\n
            """
        let bytes = Array(request.utf8)
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { throw LiveTestFailure(description: "send failed") }
            sent += n
        }
    }

    /// Reads the head of the server's answer to the opening handshake.
    static func responseHead(on fd: Int32) throws -> String {
        var response = [UInt8]()
        while !response.ends(with: Array("\r\n\r\n".utf8)) {
            var byte: UInt8 = 0
            guard read(fd, &byte, 1) == 1 else { throw LiveTestFailure(description: "no handshake response") }
            response.append(byte)
        }
        return String(decoding: response, as: UTF8.self)
    }

    deinit { close(fd) }

    func write(_ bytes: [UInt8]) throws {
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { throw LiveTestFailure(description: "send failed") }
            sent += n
        }
    }

    /// One client frame (masked, as clients must): `opcode` 1 text, 2 binary, 0 continuation, 8 close.
    static func frame(opcode: UInt8, _ payload: [UInt8], fin: Bool = true) -> [UInt8] {
        var bytes: [UInt8] = [(fin ? 0x80 : 0) | opcode]
        switch payload.count {
        case ..<126: bytes.append(0x80 | UInt8(payload.count))
        case ..<65536: bytes += [0x80 | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xff)]
        default: bytes += [0x80 | 127] + (0..<8).reversed().map { UInt8((payload.count >> ($0 * 8)) & 0xff) }
        }
        let mask: [UInt8] = [0x12, 0x34, 0x56, 0x78]
        bytes += mask
        bytes += payload.enumerated().map { $0.element ^ mask[$0.offset % 4] }
        return bytes
    }

    func send(opcode: UInt8, _ payload: [UInt8], fin: Bool = true) throws {
        try write(Self.frame(opcode: opcode, payload, fin: fin))
    }

    /// Reads one unfragmented server frame: (opcode, payload); nil when the connection ended.
    func readFrame() -> (opcode: UInt8, payload: [UInt8])? {
        func exactly(_ count: Int) -> [UInt8]? {
            var buffer = [UInt8](repeating: 0, count: count), got = 0
            while got < count {
                let n = buffer[got...].withUnsafeMutableBytes { read(fd, $0.baseAddress, count - got) }
                if n == 0 { closedByPeer = true }
                if n <= 0 { return nil }
                got += n
            }
            return buffer
        }
        guard let head = exactly(2) else { return nil }
        // The 7-bit length, or 126 and 16 bits after it, or 127 and 64 bits (a 16-bit length of 127 is a length).
        var length = Int(head[1] & 0x7f)
        if length == 126 {
            guard let ext = exactly(2) else { return nil }
            length = Int(ext[0]) << 8 | Int(ext[1])
        } else if length == 127 {
            guard let ext = exactly(8) else { return nil }
            length = ext.reduce(0) { $0 << 8 | Int($1) }
        }
        guard let payload = exactly(length) else { return nil }
        return (head[0] & 0x0f, payload)
    }

    /// Reads until a close frame or the end; the close code if one came.
    func readUntilClose() -> UInt16? {
        while let (opcode, payload) = readFrame() {
            if opcode == 8 { return payload.count >= 2 ? UInt16(payload[0]) << 8 | UInt16(payload[1]) : nil }
        }
        return nil
    }
}

private extension Array where Element == UInt8 {
    func ends(with suffix: [UInt8]) -> Bool { count >= suffix.count && Array(self[(count - suffix.count)...]) == suffix }
}
