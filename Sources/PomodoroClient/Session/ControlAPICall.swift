import Foundation
import PomodoroProtocol

/// One request to the server's HTTP API beside its WebSocket (docs/PROTOCOL.md §12, §16): the control API's
/// `POST /api/rooms/ROOM/commands` with an API token, or the open room's snapshot, `GET /api/rooms/ROOM`.
/// Plain HTTP/1.1 on a connection of its own, closed after the answer; the building and reading of the bytes
/// are pure (`head`, `Answer.init(parsing:)`), the socket is `send(timeoutMs:)`.
public struct ControlAPICall: Sendable {
    public let method: String
    /// The path on the server: under the WebSocket path's folder (`ws://h/pomo/ws` → `/pomo/api/…`).
    public let path: String
    public let host: String
    public let port: Int
    public let authorization: String?
    public let body: [UInt8]

    /// `POST /api/rooms/ROOM/commands` carrying `frame` with the API token `token`.
    public static func command(_ frame: ClientFrame, room: String, token: String, at address: ServerAddress) -> ControlAPICall {
        ControlAPICall(method: "POST", path: apiBase(of: address) + "/api/rooms/\(room)/commands", host: address.host,
                       port: address.port, authorization: token, body: WireCodec.encode(frame))
    }

    /// `GET /api/rooms/ROOM`: the open room as it is now (a locked one with its passcode as the credential).
    public static func snapshot(room: String, passcode: String?, at address: ServerAddress) -> ControlAPICall {
        ControlAPICall(method: "GET", path: apiBase(of: address) + "/api/rooms/\(room)", host: address.host,
                       port: address.port, authorization: passcode, body: [])
    }

    /// The folder the WebSocket path is in, where the server's HTTP paths are too: `/ws` → ``, `/pomo/ws` → `/pomo`.
    static func apiBase(of address: ServerAddress) -> String {
        let path = address.path.split(separator: "?", maxSplits: 1).first.map(String.init) ?? ""
        guard let slash = path.lastIndex(of: "/") else { return "" }
        return String(path[..<slash])
    }

    /// The request's bytes: head and body.
    public var bytes: [UInt8] {
        let shownHost = host.contains(":") ? "[\(host)]" : host
        var lines = ["\(method) \(path) HTTP/1.1", "Host: \(shownHost):\(port)", "Connection: close",
                     "Accept: application/json"]
        if let authorization { lines.append("Authorization: Bearer \(authorization)") }
        if method == "POST" { lines += ["Content-Type: application/json", "Content-Length: \(body.count)"] }
        return Array((lines.joined(separator: "\r\n") + "\r\n\r\n").utf8) + body
    }

    /// What came back.
    public struct Answer: Equatable, Sendable {
        public var status: Int
        public var body: [UInt8]

        public init(status: Int, body: [UInt8]) {
            self.status = status
            self.body = body
        }

        /// Reads a whole HTTP/1.1 response (the server closes after it): the status and the body, by its
        /// `Content-Length` when given. Nil for anything that is not one.
        public init?(parsing bytes: [UInt8]) {
            let separator: [UInt8] = [13, 10, 13, 10]
            guard let end = bytes.indices.dropLast(3).first(where: { Array(bytes[$0..<$0 + 4]) == separator }) else {
                return nil
            }
            let head = String(decoding: bytes[..<end], as: UTF8.self)
            let lines = head.components(separatedBy: "\r\n")
            let statusLine = lines.first?.split(separator: " ") ?? []
            guard statusLine.count >= 2, statusLine[0].hasPrefix("HTTP/1."), let status = Int(statusLine[1]) else {
                return nil
            }
            var body = Array(bytes[(end + 4)...])
            let length = lines.dropFirst().first { $0.lowercased().hasPrefix("content-length:") }
                .flatMap { Int($0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) }
            if let length, length <= body.count { body = Array(body[..<length]) }
            self.init(status: status, body: body)
        }

        /// The body as the wire's message (`ok`, `error`, `schedules`), when it is one.
        public var message: ServerMessage? { try? WireCodec.decodeServerMessage(body) }
    }

    /// Why the call got no answer.
    public struct Failure: Error, Equatable, Sendable, CustomStringConvertible {
        public let description: String
        /// Whether it connected at all (false: nothing listens there, or the name did not resolve).
        public let connected: Bool
    }

    /// Makes the call on this thread and waits for the whole answer, `timeoutMs` at most for each step.
    public func send(timeoutMs: Int) throws(Failure) -> Answer {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_family = AF_UNSPEC
        var found: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, String(port), &hints, &found) == 0, let first = found else {
            throw Failure(description: "cannot resolve \(host)", connected: false)
        }
        defer { freeaddrinfo(found) }
        var fd: Int32 = -1
        var lastError = "connection refused"
        var candidate: UnsafeMutablePointer<addrinfo>? = first
        while let info = candidate {
            candidate = info.pointee.ai_next
            let s = socket(info.pointee.ai_family, info.pointee.ai_socktype, info.pointee.ai_protocol)
            guard s >= 0 else { continue }
            var timeout = timeval(tv_sec: timeoutMs / 1000, tv_usec: (timeoutMs % 1000) * 1000)
            setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            setsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            if connect(s, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0 {
                fd = s
                break
            }
            lastError = String(cString: strerror(errno))
            close(s)
        }
        guard fd >= 0 else { throw Failure(description: lastError, connected: false) }
        defer { close(fd) }
        let request = bytes
        var written = 0
        while written < request.count {
            let n = request[written...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            guard n > 0 else { throw Failure(description: "the request could not be sent", connected: true) }
            written += n
        }
        var response: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = read(fd, &buffer, buffer.count)
            if n < 0 && response.isEmpty {
                throw Failure(description: errno == EAGAIN ? "no answer in time" : String(cString: strerror(errno)),
                              connected: true)
            }
            if n <= 0 { break }
            response += buffer[..<n]
        }
        guard let answer = Answer(parsing: response) else {
            throw Failure(description: "the answer was not HTTP", connected: true)
        }
        return answer
    }
}
