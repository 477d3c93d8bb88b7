import Foundation
import Glibc
import PomodoroBench

/// The few things the generator asks of the operating system: clocks, the open-file limit, `/proc`.
enum System {
    /// The wall clock in epoch milliseconds, to the microsecond. The server stamps `endsAt` with the same
    /// clock (CLOCK_REALTIME) on the same machine, so arrival minus boundary is a true delay.
    static func wallNowMs() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Double(now.tv_sec) * 1000 + Double(now.tv_nsec) / 1_000_000
    }

    /// Sleeps until the wall clock reads `ms` (returns at once if it is past).
    static func sleep(untilMs ms: Double) {
        let left = ms - wallNowMs()
        if left > 0 { usleep(useconds_t(min(left * 1000, 3_600_000_000))) }
    }

    /// Raises the soft open-file limit to the hard one: each connection is a file descriptor. libwebsockets
    /// sizes its table of descriptors from this limit when a context is created, so call this first.
    /// Returns the limit now in force.
    @discardableResult
    static func raiseOpenFileLimit() -> UInt64 {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 0 }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { return UInt64(raised.rlim_cur) }
        }
        return UInt64(limit.rlim_cur)
    }

    /// The whole text of a small file such as `/proc/PID/stat` (whose size `stat` reports as 0).
    static func readSmallFile(_ path: String) -> String? {
        guard let file = fopen(path, "r") else { return nil }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = fread(&buffer, 1, buffer.count, file)
            if count == 0 { break }
            bytes += buffer[..<count]
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    static func cpuTime(of pid: Int32) -> ProcFiles.CPUTime? {
        readSmallFile("/proc/\(pid)/stat").flatMap(ProcFiles.cpuTime(fromStat:))
    }

    static func residentKiB(of pid: Int32) -> Int64? {
        readSmallFile("/proc/\(pid)/status").flatMap(ProcFiles.residentKiB(fromStatus:))
    }

    static func machineCPU() -> ProcFiles.MachineCPU? {
        readSmallFile("/proc/stat").flatMap(ProcFiles.machineCPU(fromStat:))
    }

    static var clockTicksPerSecond: Int { sysconf(Int32(_SC_CLK_TCK)) }

    /// CPU time this process has used, user and system, in seconds.
    static func ownCPUSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        func seconds(_ t: timeval) -> Double { Double(t.tv_sec) + Double(t.tv_usec) / 1_000_000 }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }

    /// The body of `GET path` from a server on this machine (HTTP/1.0, bounded to 2 s and 4 MiB), or nil
    /// when it does not answer 200. For the server's `/metrics`; the generator talks to loopback only.
    static func httpGet(host: String, port: Int, path: String) -> String? {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var found: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, String(port), &hints, &found) == 0, let address = found else { return nil }
        defer { freeaddrinfo(found) }
        let socket = Glibc.socket(address.pointee.ai_family, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { return nil }
        defer { close(socket) }
        var bound = timeval(tv_sec: 2, tv_usec: 0)
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &bound, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(socket, SOL_SOCKET, SO_SNDTIMEO, &bound, socklen_t(MemoryLayout<timeval>.size))
        guard connect(socket, address.pointee.ai_addr, address.pointee.ai_addrlen) == 0 else { return nil }
        let request = Array("GET \(path) HTTP/1.0\r\nHost: \(host):\(port)\r\n\r\n".utf8)
        guard send(socket, request, request.count, Int32(MSG_NOSIGNAL)) == request.count else { return nil }
        var answer: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while answer.count < 4 << 20 {
            let count = recv(socket, &buffer, buffer.count, 0)
            if count <= 0 { break }
            answer += buffer[..<count]
        }
        let text = String(decoding: answer, as: UTF8.self)
        guard text.hasPrefix("HTTP/1.1 200") || text.hasPrefix("HTTP/1.0 200"),
              let end = text.range(of: "\r\n\r\n") else { return nil }
        return String(text[end.upperBound...])
    }

    /// A line on standard error: progress, so that standard output holds only the report.
    static func progress(_ line: String) {
        FileHandle.standardError.write(Data("pomo-bench: \(line)\n".utf8))
    }
}
