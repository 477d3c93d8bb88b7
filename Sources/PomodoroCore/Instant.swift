/// A point on a monotonic clock, in nanoseconds from an arbitrary origin.
///
/// The core never reads a clock: every operation takes the current instant as an argument, so tests drive
/// time by hand and the server passes in its monotonic clock.
public struct Instant: Comparable, Hashable, Sendable, CustomStringConvertible {
    public var nanoseconds: Int64

    public init(nanoseconds: Int64) { self.nanoseconds = nanoseconds }

    public static let zero = Instant(nanoseconds: 0)

    public static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.nanoseconds < rhs.nanoseconds }
    public static func + (lhs: Instant, rhs: Duration) -> Instant {
        Instant(nanoseconds: lhs.nanoseconds + rhs.nanoseconds)
    }
    public static func - (lhs: Instant, rhs: Duration) -> Instant {
        Instant(nanoseconds: lhs.nanoseconds - rhs.nanoseconds)
    }
    public static func - (lhs: Instant, rhs: Instant) -> Duration {
        .nanoseconds(lhs.nanoseconds - rhs.nanoseconds)
    }
    public var description: String { "Instant(\(nanoseconds)ns)" }

    /// Wall-clock milliseconds since the epoch (rounded down), given wall-clock minus monotonic nanoseconds.
    public func wallMilliseconds(offsetNanoseconds offset: Int64) -> Int64 {
        let ns = nanoseconds + offset
        return ns >= 0 ? ns / 1_000_000 : (ns - 999_999) / 1_000_000
    }
}

extension Duration {
    /// Whole nanoseconds (the spans the core deals in are far below the Int64 limit of ~292 years).
    public var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }

    /// Whole milliseconds, rounded down.
    public var milliseconds: Int64 {
        let ns = nanoseconds
        return ns >= 0 ? ns / 1_000_000 : -((-ns + 999_999) / 1_000_000)
    }

    /// Whole seconds, rounded up: what a countdown shows (24.3 s left reads "0:25").
    public var secondsRoundedUp: Int64 {
        let ns = nanoseconds
        return ns > 0 ? (ns + 999_999_999) / 1_000_000_000 : 0
    }
}
