/// The server's own account of where a tick's time goes: its `pomodoro_tick_stage_seconds` histograms
/// (and `pomodoro_tick_delay_seconds`) read from `/metrics` at both ends of the window, the difference
/// being the ticks of the window. A server without them (the reference peers) has none.
public struct StageHistogram: Codable, Equatable, Sendable {
    /// Cumulative counts by upper bound in seconds, as the text format gives them (`+Inf` last).
    public var buckets: [Bucket]
    public var count: Int

    public struct Bucket: Codable, Equatable, Sendable {
        /// The bucket's upper bound in seconds; nil for `+Inf`.
        public var le: Double?
        public var count: Int
    }

    /// The bound below which the `fraction` of the samples fall, in ms, read from the buckets by linear
    /// interpolation inside the bucket (as Prometheus' `histogram_quantile`); nil beyond the last bound.
    public func quantileMs(_ fraction: Double) -> Double? {
        guard count > 0 else { return nil }
        let rank = fraction * Double(count)
        var lower = 0.0, below = 0
        for bucket in buckets {
            if Double(bucket.count) >= rank {
                guard let upper = bucket.le else { return nil }
                let inside = bucket.count - below
                let share = inside > 0 ? (rank - Double(below)) / Double(inside) : 1
                return (lower + (upper - lower) * share) * 1000
            }
            if let upper = bucket.le { lower = upper }
            below = bucket.count
        }
        return nil
    }

    /// This histogram less an earlier reading of the same one.
    public func since(_ earlier: StageHistogram?) -> StageHistogram {
        guard let earlier else { return self }
        let before = Dictionary(earlier.buckets.map { ($0.le ?? .infinity, $0.count) }, uniquingKeysWith: { a, _ in a })
        return StageHistogram(buckets: buckets.map { Bucket(le: $0.le, count: $0.count - (before[$0.le ?? .infinity] ?? 0)) },
                              count: count - earlier.count)
    }
}

/// A stage's summary in the report.
public struct StageSummary: Codable, Equatable, Sendable {
    public var count: Int
    /// From the buckets (0.1 ms to 1 s for the stages, 0.5 to 100 ms for `delay`), interpolated; nil past the last.
    public var p50Ms: Double?
    public var p99Ms: Double?
    public var histogram: StageHistogram

    public init(_ histogram: StageHistogram) {
        count = histogram.count
        p50Ms = histogram.quantileMs(0.5).map { ($0 * 1000).rounded() / 1000 }
        p99Ms = histogram.quantileMs(0.99).map { ($0 * 1000).rounded() / 1000 }
        self.histogram = histogram
    }
}

public enum ServerStages {
    /// The histograms of a `/metrics` text: `tick_delay`, each `tick_stage` by its `stage` label, and the
    /// store's commits as seen by the service thread (`commit`: how long a room's broadcasts were held).
    public static func parse(_ text: String) -> [String: StageHistogram] {
        var found: [String: StageHistogram] = [:]
        for line in text.split(separator: "\n") where line.hasPrefix("pomodoro_tick_") || line.hasPrefix("pomodoro_store_commit_") {
            guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else { continue }
            let name = line[..<space]
            let stage: String
            if name.hasPrefix("pomodoro_tick_delay_seconds") {
                stage = "delay"
            } else if name.hasPrefix("pomodoro_tick_stage_seconds"), let label = Self.label("stage", in: name) {
                stage = label
            } else if name.hasPrefix("pomodoro_store_commit_seconds") {
                stage = "commit"
            } else {
                continue
            }
            var histogram = found[stage] ?? StageHistogram(buckets: [], count: 0)
            if name.contains("_bucket{") || name.contains("_bucket {") {
                guard let le = Self.label("le", in: name) else { continue }
                histogram.buckets.append(.init(le: le == "+Inf" ? nil : Double(le), count: Int(value)))
            } else if name.contains("_count") {
                histogram.count = Int(value)
            }
            found[stage] = histogram
        }
        return found.filter { !$0.value.buckets.isEmpty }
    }

    /// The stages' summaries over a window, from readings at its start and end.
    public static func summaries(start: [String: StageHistogram], end: [String: StageHistogram]) -> [String: StageSummary] {
        Dictionary(uniqueKeysWithValues: end.map { ($0.key, StageSummary($0.value.since(start[$0.key]))) })
    }

    private static func label(_ name: String, in series: Substring) -> String? {
        guard let start = series.range(of: name + "=\"") else { return nil }
        let rest = series[start.upperBound...]
        guard let end = rest.firstIndex(of: "\"") else { return nil }
        return String(rest[..<end])
    }
}
