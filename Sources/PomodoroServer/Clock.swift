import Glibc
import PomodoroCore
import PomodoroProtocol
import Foundation
import Synchronization

/// Where the server reads time: one monotonic reading for deadlines and one wall-clock reading for what
/// clients are told. Tests of the core never come here; they pass instants by hand.
public protocol ServerClock: Sendable {
    func now() -> ClockReading
}

/// The machine's clocks: CLOCK_MONOTONIC for deadlines, CLOCK_REALTIME for what clients are told.
///
/// The offset between the two is kept steady and only re-read when the wall clock has been stepped by
/// more than `resyncThreshold`, so one deadline maps to one `endsAt` in every message.
public final class SystemClock: ServerClock, Sendable {
    private let offset = Mutex<Int64?>(nil)
    private let resyncThreshold: Int64 = 50_000_000

    public init() {}

    public func now() -> ClockReading {
        var mono = timespec(), wall = timespec()
        clock_gettime(CLOCK_MONOTONIC, &mono)
        clock_gettime(CLOCK_REALTIME, &wall)
        let monoNs = Int64(mono.tv_sec) * 1_000_000_000 + Int64(mono.tv_nsec)
        let measured = Int64(wall.tv_sec) * 1_000_000_000 + Int64(wall.tv_nsec) - monoNs
        let steady = offset.withLock { offset -> Int64 in
            if let current = offset, abs(current - measured) <= resyncThreshold { return current }
            offset = measured
            return measured
        }
        return ClockReading(monotonic: Instant(nanoseconds: monoNs), wallOffsetNanoseconds: steady)
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
