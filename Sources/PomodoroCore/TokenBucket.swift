/// A token bucket: up to `burst` actions at once, refilled at `ratePerSecond`. Time is an argument.
public struct TokenBucket: Sendable, Equatable {
    public let ratePerSecond: Int
    public let burst: Int
    /// Tokens in nanosecond-token units, so refills never lose fractions.
    private var level: Int64
    private var updated: Instant?

    private static let unit: Int64 = 1_000_000_000

    public init(ratePerSecond: Int, burst: Int) {
        self.ratePerSecond = max(1, ratePerSecond)
        self.burst = max(1, burst)
        level = Int64(self.burst) * Self.unit
    }

    /// Takes one token if there is one.
    public mutating func take(at now: Instant) -> Bool {
        if let updated, now > updated {
            let elapsed = min((now - updated).nanoseconds, Int64(burst) * Self.unit)
            level = min(Int64(burst) * Self.unit, level + elapsed * Int64(ratePerSecond))
        }
        if updated == nil || now > updated! { updated = now }
        guard level >= Self.unit else { return false }
        level -= Self.unit
        return true
    }
}
