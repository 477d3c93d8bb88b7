import Foundation
import PomodoroCore
import PomodoroProtocol
import PomodoroServer

/// A server clock that moves only when a test moves it, so that timers, grace periods and expiry are
/// tested without sleeping.
///
/// ```swift
/// let clock = ManualServerClock()
/// clock.advance(by: .seconds(25 * 60))
/// ```
///
/// `@unchecked Sendable`: the reading is guarded by a lock, because the server reads it on its own thread.
public final class ManualServerClock: ServerClock, @unchecked Sendable {
    private let lock = NSLock()
    private var reading: ClockReading

    /// Starts at `monotonic` (one hour in, so that nothing begins at zero) on 2026-01-01T00:00:00Z.
    public init(monotonic: Instant = Instant(nanoseconds: 3_600_000_000_000),
                wallMs: Int64 = 1_767_225_600_000) {
        reading = ClockReading(monotonic: monotonic,
                               wallOffsetNanoseconds: wallMs * 1_000_000 - monotonic.nanoseconds)
    }

    public func now() -> ClockReading { lock.withLock { reading } }

    /// Moves both readings forward by `duration`.
    public func advance(by duration: Duration) {
        let (seconds, attoseconds) = duration.components
        let nanoseconds = seconds * 1_000_000_000 + attoseconds / 1_000_000_000
        lock.withLock { reading.monotonic = Instant(nanoseconds: reading.monotonic.nanoseconds + nanoseconds) }
    }
}
