import Foundation
import Glibc
import PomodoroNet
import PomodoroProtocol
import PomodoroServer
import PomodoroStore

/// Why a live test gave up waiting.
public struct LiveTestFailure: Error, CustomStringConvertible {
    public let description: String
    public init(description: String) { self.description = description }
}

/// A real server on a free loopback port, stopped (with its connections closed) by `stop()`.
public final class LiveServer: Sendable {
    public let server: PomodoroServer
    public var port: Int { server.port }

    /// - Parameter store: a store of the test's own, instead of the configuration's database.
    public init(store: (any RoomStore)? = nil, _ configure: (inout ServerConfiguration) -> Void = { _ in }) throws {
        var configuration = ServerConfiguration(host: "127.0.0.1", port: 0, webRoot: LiveServer.webRoot)
        // Live tests run focus phases of a few seconds.
        configuration.roomPolicy.minFocusSeconds = 1
        // Passcode hashes at the least work factor a stored hash may have: a sanitizer makes each round
        // three times dearer, and the tests are about the gate and the checks, not the hash's cost.
        configuration.passcodeIterations = ServerConfiguration.leastPasscodeIterations
        configure(&configuration)
        server = try PomodoroServer(configuration: configuration, store: store)
        server.start()
    }

    public func stop() {
        server.shutdown()
        server.waitUntilFinished()
    }

    /// The repository's web/ folder, found from this source file's path.
    public static var webRoot: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("web").path
    }
}

/// Everything one connection received, in order, with a way to wait for the next message.
/// One condition both guards the list and wakes the waiting test.
public final class Inbox: @unchecked Sendable {
    private var items: [(event: ClientEvent, arrived: Date)] = []
    private var read = 0
    private let condition = NSCondition()

    public init() {}

    public func add(_ event: ClientEvent) {
        condition.lock()
        items.append((event, Date()))
        condition.broadcast()
        condition.unlock()
    }

    /// The next event not yet read, waiting for it up to `timeout` seconds.
    public func next(timeout: Double) -> ClientEvent? { nextWithArrival(timeout: timeout)?.event }

    /// The next event with the moment it arrived (not the moment the test got round to reading it).
    public func nextWithArrival(timeout: Double) -> (event: ClientEvent, arrived: Date)? {
        let deadline = TestTime.deadline(timeout)
        condition.lock()
        defer { condition.unlock() }
        while read == items.count {
            if !condition.wait(until: deadline) { return nil }
        }
        read += 1
        return items[read - 1]
    }
}

/// One WebSocket connection to the server, speaking the protocol through the shared codec.
public final class Peer: Sendable {
    public let client: WebSocketClient
    public let id: ClientConnectionID
    public let inbox = Inbox()

    public init(_ client: WebSocketClient, port: Int, path: String = "/ws",
         security: WebSocketClient.Security = .none) throws {
        self.client = client
        let inbox = self.inbox
        id = client.connect(host: "127.0.0.1", port: port, path: path, security: security) { inbox.add($0) }
        guard case .opened = inbox.next(timeout: 5) else { throw LiveTestFailure(description: "connection did not open") }
    }

    public func send(_ message: ClientMessage, ref: Ref? = nil) {
        client.send(WireCodec.encode(ClientFrame(message, ref: ref)), on: id)
    }

    public func sendRaw(_ text: String) { client.send(Array(text.utf8), on: id) }
    public func sendBinary(_ bytes: [UInt8]) { client.send(bytes, on: id, binary: true) }
    public func close() { client.close(id) }

    /// The next message, raw and decoded.
    public func nextRaw(timeout: Double = 5) throws -> (bytes: [UInt8], message: ServerMessage) {
        switch inbox.next(timeout: timeout) {
        case .text(let bytes)?: return (bytes, try WireCodec.decodeServerMessage(bytes))
        case let event?: throw LiveTestFailure(description: "expected a message, got \(event)")
        case nil: throw LiveTestFailure(description: "no message within \(timeout) s")
        }
    }

    public func next(timeout: Double = 5) throws -> ServerMessage { try nextRaw(timeout: timeout).message }

    /// The next tick and when it arrived, skipping other messages.
    public func nextTick(timeout: Double = 5) throws -> (tick: TickPayload, arrived: Date) {
        let deadline = TestTime.deadline(timeout)
        while let (event, arrived) = inbox.nextWithArrival(timeout: max(0, deadline.timeIntervalSinceNow)) {
            if case .text(let bytes) = event, case .tick(let tick) = try WireCodec.decodeServerMessage(bytes) {
                return (tick, arrived)
            }
        }
        throw LiveTestFailure(description: "no tick within \(timeout) s")
    }

    /// Reads messages until `match` accepts one, returning what it extracted.
    public func expect<T>(_ what: String, timeout: Double = 5, _ match: (ServerMessage) -> T?) throws -> T {
        let deadline = TestTime.deadline(timeout)
        while true {
            let left = deadline.timeIntervalSinceNow
            guard left > 0 else { throw LiveTestFailure(description: "no \(what) within \(timeout) s") }
            let message: ServerMessage
            do {
                message = try next(timeout: left)
            } catch {
                throw LiveTestFailure(description: "waiting for \(what): \(error)")
            }
            if let found = match(message) { return found }
        }
    }

    /// Reads until the connection closes, returning the close code the server sent.
    public func expectClose(timeout: Double = 5) throws -> UInt16? {
        let deadline = TestTime.deadline(timeout)
        while true {
            let left = deadline.timeIntervalSinceNow
            guard left > 0, let event = inbox.next(timeout: left) else {
                throw LiveTestFailure(description: "connection did not close within \(timeout) s")
            }
            if case .closed(let code, _) = event { return code }
        }
    }

    /// Joins a room and returns the welcome's parts.
    public func join(_ room: String, name: String, token: String? = nil) throws -> (you: YouPayload, room: SnapshotPayload) {
        send(.join(room: room, name: name, token: token))
        return try expect("welcome") {
            if case let .welcome(you, snapshot, _, _, _) = $0 { return (you, snapshot) }
            return nil
        }
    }
}

/// A minimal HTTP/1.1 GET over a loopback socket, with any extra header lines (a proxy's
/// `X-Forwarded-For`): status line and body.
public func httpGet(port: Int, path: String, headers: [String] = []) throws -> (status: Int, body: String) {
    try httpRequest("GET", port: port, path: path, headers: headers)
}

/// A socket connected to `port` on loopback whose reads give up after `readTimeout` seconds (a bound for a
/// silent server, not a timing); the caller closes it.
public func loopbackConnection(port: Int, readTimeout: Int) throws -> Int32 {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw LiveTestFailure(description: "socket failed") }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var timeout = timeval(tv_sec: readTimeout, tv_usec: 0)
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
        }
    }
    guard connected == 0 else {
        Glibc.close(fd)
        throw LiveTestFailure(description: "connect failed")
    }
    return fd
}

/// A minimal HTTP/1.1 request (GET, POST, …) over a loopback socket, with any extra header lines and a body
/// (sent with its Content-Length): status line and body.
public func httpRequest(_ method: String, port: Int, path: String,
                        headers: [String] = [], body: [UInt8] = []) throws -> (status: Int, body: String) {
    let fd = try loopbackConnection(port: port, readTimeout: TestTime.seconds(5))
    defer { Glibc.close(fd) }
    let length = method == "POST" || !body.isEmpty ? ["Content-Length: \(body.count)"] : []
    let head = (["\(method) \(path) HTTP/1.1", "Host: 127.0.0.1", "Connection: close"] + length + headers)
        .joined(separator: "\r\n")
    let request = Array((head + "\r\n\r\n").utf8) + body
    _ = request.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    var response = [UInt8]()
    var buffer = [UInt8](repeating: 0, count: 4096)
    while true {
        let n = read(fd, &buffer, buffer.count)
        if n <= 0 { break }
        response.append(contentsOf: buffer[0..<n])
    }
    let text = String(decoding: response, as: UTF8.self)
    guard let headerEnd = text.range(of: "\r\n\r\n"),
          let status = Int(text.split(separator: " ").dropFirst().first ?? "") else {
        throw LiveTestFailure(description: "no HTTP response")
    }
    return (status, String(text[headerEnd.upperBound...]))
}
