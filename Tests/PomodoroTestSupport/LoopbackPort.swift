import Foundation
import Glibc

/// Ports for the engines the tests start themselves (Redis, PostgreSQL) on loopback.
public enum LoopbackPort {
    /// A loopback port nobody listens on now: bound to port 0, read back, let go.
    public static func free() throws -> Int { try Held().port }

    /// A loopback port bound and not listening for as long as this lives: a connection to it is refused, and
    /// nothing else (another suite's engine) can start on it meanwhile.
    public final class Held {
        public let port: Int
        private let fd: Int32

        /// A port of the kernel's choosing.
        public convenience init() throws { try self.init(port: 0, reusingAddress: false) }

        /// `port` itself, which an engine of the caller's own just let go (its last connections may still be
        /// in `TIME_WAIT`, which `SO_REUSEADDR` lets the hold bind past): held until the caller starts the
        /// engine there again, so that no other suite is handed the port meanwhile.
        public convenience init(port: Int) throws { try self.init(port: port, reusingAddress: true) }

        private init(port wanted: Int, reusingAddress: Bool) throws {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            if fd >= 0 && reusingAddress {
                var on: Int32 = 1
                setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, socklen_t(MemoryLayout<Int32>.size))
            }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(wanted).bigEndian)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let bound = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
                }
            }
            guard fd >= 0, bound else {
                if fd >= 0 { close(fd) }
                throw LaunchFailure(wanted == 0 ? "no free loopback port" : "loopback port \(wanted) could not be held")
            }
            self.fd = fd
            port = Int(UInt16(bigEndian: address.sin_port))
        }

        deinit { close(fd) }
    }
}
