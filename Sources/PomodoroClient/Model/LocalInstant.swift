import Glibc

/// A moment on this machine: the monotonic clock (for every duration and countdown) and the wall clock
/// (only for showing times of day, such as when a phase ends).
///
/// The client's model never reads a clock itself: callers pass `LocalInstant`s in, so tests run on a
/// manual clock and never sleep.
public struct LocalInstant: Equatable, Hashable, Sendable, Comparable, CustomStringConvertible {
    /// Milliseconds on a monotonic clock with an arbitrary origin.
    public var monotonicMs: Int64
    /// Wall-clock Unix epoch milliseconds at the same moment.
    public var wallMs: Int64

    public init(monotonicMs: Int64, wallMs: Int64) {
        self.monotonicMs = monotonicMs
        self.wallMs = wallMs
    }

    /// This machine's clocks now: CLOCK_MONOTONIC and CLOCK_REALTIME.
    public static func now() -> LocalInstant {
        var mono = timespec(), wall = timespec()
        clock_gettime(CLOCK_MONOTONIC, &mono)
        clock_gettime(CLOCK_REALTIME, &wall)
        return LocalInstant(monotonicMs: Int64(mono.tv_sec) * 1000 + Int64(mono.tv_nsec) / 1_000_000,
                            wallMs: Int64(wall.tv_sec) * 1000 + Int64(wall.tv_nsec) / 1_000_000)
    }

    /// The same moment plus `ms` milliseconds on both clocks.
    public func advanced(by ms: Int64) -> LocalInstant {
        LocalInstant(monotonicMs: monotonicMs + ms, wallMs: wallMs + ms)
    }

    public static func < (lhs: LocalInstant, rhs: LocalInstant) -> Bool { lhs.monotonicMs < rhs.monotonicMs }

    public var description: String { "LocalInstant(mono: \(monotonicMs) ms)" }
}
