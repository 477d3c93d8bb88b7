/// Percentiles of a set of durations in milliseconds, exact: computed from every sample, sorted.
///
/// A run records at most a few hundred thousand ticks, so keeping them all costs a few megabytes and
/// avoids the rounding of a histogram. The nearest-rank definition is used: the p-th percentile is the
/// smallest sample with at least p of all samples at or below it, so it is always a value that was measured.
public struct LatencySummary: Codable, Equatable, Sendable {
    public var count: Int
    public var min: Double
    public var p50: Double
    public var p99: Double
    public var p999: Double
    public var max: Double
    public var mean: Double

    public init(count: Int, min: Double, p50: Double, p99: Double, p999: Double, max: Double, mean: Double) {
        self.count = count
        self.min = min
        self.p50 = p50
        self.p99 = p99
        self.p999 = p999
        self.max = max
        self.mean = mean
    }

    /// The summary of `samples` (in any order); nil when there are none.
    public init?(samples: [Double]) {
        guard !samples.isEmpty else { return nil }
        let sorted = samples.sorted()
        self.init(count: sorted.count, min: sorted[0], p50: Self.percentile(0.50, ofSorted: sorted),
                  p99: Self.percentile(0.99, ofSorted: sorted), p999: Self.percentile(0.999, ofSorted: sorted),
                  max: sorted[sorted.count - 1], mean: sorted.reduce(0, +) / Double(sorted.count))
    }

    /// The nearest-rank percentile `fraction` (0 < fraction ≤ 1) of ascending `sorted`, which is not empty.
    public static func percentile(_ fraction: Double, ofSorted sorted: [Double]) -> Double {
        precondition(!sorted.isEmpty && fraction > 0 && fraction <= 1)
        // Rounding guards against 0.99 * 100 landing a hair above 99 and skipping a rank.
        let rank = (fraction * Double(sorted.count) * 1e9).rounded() / 1e9
        let index = Int(rank.rounded(.up)) - 1
        return sorted[Swift.min(Swift.max(index, 0), sorted.count - 1)]
    }
}
