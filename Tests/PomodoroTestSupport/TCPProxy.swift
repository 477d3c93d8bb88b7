import Foundation
import Glibc

/// A TCP proxy on loopback that a test controls, to cut one process's view of an engine (Redis,
/// PostgreSQL) while the others still reach it: `cut()` drops every connection through it and, until
/// `heal()`, accepts new ones but forwards nothing (as a network that lost the route: the peer waits for an
/// answer that never comes). `answer(502)` stands in for a reverse proxy whose server is away: every new
/// connection gets that HTTP status and is closed, until `answer(nil)`. One thread per connection and
/// direction; `stop()` ends them all.
///
/// ```swift
/// let proxy = try TCPProxy(to: redis.port)
/// defer { proxy.stop() }
/// // point one node at 127.0.0.1:\(proxy.port), then proxy.cut(), proxy.heal()
/// ```
public final class TCPProxy: @unchecked Sendable {
    public let port: Int
    private let target: Int
    private let listener: Int32
    private let lock = NSLock()
    private var open: Set<Int32> = []
    private var isCut = false
    private var stopped = false
    private var answering: Int?

    public init(to target: Int) throws {
        self.target = target
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.listener = listener
        var yes: Int32 = 1
        setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = Self.loopback(port: 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, length) == 0 && getsockname(listener, $0, &length) == 0
            }
        }
        port = Int(UInt16(bigEndian: address.sin_port))
        guard bound, listen(listener, 64) == 0 else {
            close(listener)
            throw LaunchFailure("the proxy could not listen on loopback")
        }
        let thread = Thread { [self] in accepting() }
        thread.name = "test.proxy.accept"
        thread.start()
    }

    /// Drops every connection and forwards nothing until `heal()`.
    public func cut() {
        let dropped = lock.withLock { () -> Set<Int32> in
            isCut = true
            defer { open.removeAll() }
            return open
        }
        for fd in dropped { shutdown(fd, Int32(SHUT_RDWR)) }
    }

    /// Forwards new connections again.
    public func heal() { lock.withLock { isCut = false } }

    /// Answers every new connection's request with this HTTP status (a proxy's 502, 503 or 504) and closes it,
    /// forwarding nothing; nil: forwards again.
    public func answer(_ status: Int?) { lock.withLock { answering = status } }

    /// Ends the proxy and every connection through it.
    public func stop() {
        lock.withLock { stopped = true }
        cut()
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }

    private func accepting() {
        while true {
            let client = accept(listener, nil, nil)
            if client < 0 {
                if errno == EINTR { continue }
                return
            }
            let (cut, done, status) = lock.withLock { (isCut, stopped, answering) }
            if done { close(client); return }
            if let status {
                refuse(client, status: status)
                continue
            }
            if cut {
                // Held open, unanswered, until the proxy heals or stops: then closed.
                hold(client)
                continue
            }
            let server = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = Self.loopback(port: target)
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(server, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
                }
            }
            guard connected else { close(server); close(client); continue }
            lock.withLock { open.formUnion([client, server]) }
            pump(from: client, to: server)
            pump(from: server, to: client)
        }
    }

    /// Reads the request's head, answers `status` with an empty body, and closes.
    private func refuse(_ fd: Int32, status: Int) {
        let thread = Thread {
            var head: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 4096)
            while !head.suffix(4).elementsEqual(Array("\r\n\r\n".utf8)) && head.count < 65_536 {
                let count = read(fd, &buffer, buffer.count)
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { break }
                head += buffer[0..<count]
            }
            let answer = Array("HTTP/1.1 \(status) Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".utf8)
            _ = answer.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            shutdown(fd, Int32(SHUT_RDWR))
            close(fd)
        }
        thread.start()
    }

    private func hold(_ fd: Int32) {
        let thread = Thread { [self] in
            while lock.withLock({ isCut && !stopped }) { usleep(50_000) }
            close(fd)
        }
        thread.start()
    }

    /// Copies bytes one way until either end closes, then closes both.
    private func pump(from source: Int32, to destination: Int32) {
        let thread = Thread { [self] in
            var buffer = [UInt8](repeating: 0, count: 16_384)
            while true {
                let count = read(source, &buffer, buffer.count)
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { break }
                var sent = 0
                while sent < count {
                    let wrote = buffer[sent..<count].withUnsafeBytes { write(destination, $0.baseAddress, $0.count) }
                    if wrote < 0 && errno == EINTR { continue }
                    guard wrote > 0 else { break }
                    sent += wrote
                }
                guard sent == count else { break }
            }
            shutdown(source, Int32(SHUT_RDWR))
            shutdown(destination, Int32(SHUT_RDWR))
            // The second pump of the pair closes both.
            let last = lock.withLock { () -> Bool in
                if closing.remove(source) != nil { return true }
                closing.insert(destination)
                return false
            }
            if last {
                lock.withLock { _ = open.remove(source); _ = open.remove(destination) }
                close(source)
                close(destination)
            }
        }
        thread.start()
    }
    private var closing: Set<Int32> = []

    private static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }
}
