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

        public init() throws {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let bound = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
                }
            }
            guard fd >= 0, bound else {
                if fd >= 0 { close(fd) }
                throw LaunchFailure("no free loopback port")
            }
            self.fd = fd
            port = Int(UInt16(bigEndian: address.sin_port))
        }

        deinit { close(fd) }
    }
}
