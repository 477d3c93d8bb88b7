import Glibc
import PomodoroCore
import PomodoroProtocol

/// Where the server reads time: one monotonic reading for deadlines and one wall-clock reading for what
/// clients are told. Tests of the core never come here; they pass instants by hand.
public protocol ServerClock: Sendable {
    func now() -> ClockReading
}

/// The machine's clocks: CLOCK_MONOTONIC for deadlines, CLOCK_REALTIME for epoch milliseconds.
public struct SystemClock: ServerClock {
    public init() {}
    public func now() -> ClockReading {
        var mono = timespec(), wall = timespec()
        clock_gettime(CLOCK_MONOTONIC, &mono)
        clock_gettime(CLOCK_REALTIME, &wall)
        return ClockReading(monotonic: Instant(nanoseconds: Int64(mono.tv_sec) * 1_000_000_000 + Int64(mono.tv_nsec)),
                            wallMs: Int64(wall.tv_sec) * 1000 + Int64(wall.tv_nsec) / 1_000_000)
    }
}

/// Resume tokens: 128 bits from the system's secure random source, as 32 hex digits.
public struct TokenSource: Sendable {
    public init() {}
    public func make() -> ResumeToken {
        var generator = SystemRandomNumberGenerator()
        let high = generator.next() as UInt64, low = generator.next() as UInt64
        return ResumeToken(hex(high) + hex(low))
    }

    private func hex(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}
