import Testing
@testable import PomodoroBench

@Suite struct ServerStagesTests {
    static func metrics(wakeup: [Int], count: Int, delayCount: Int = 0) -> String {
        let bounds = ["0.0005", "0.001", "0.0025", "+Inf"]
        var lines = ["# HELP pomodoro_tick_stage_seconds When each stage of a tick was reached.",
                     "# TYPE pomodoro_tick_stage_seconds histogram"]
        for (bound, value) in zip(bounds, wakeup) {
            lines.append("pomodoro_tick_stage_seconds_bucket{stage=\"wakeup\",le=\"\(bound)\"} \(value)")
        }
        lines.append("pomodoro_tick_stage_seconds_count{stage=\"wakeup\"} \(count)")
        lines.append("pomodoro_tick_stage_seconds_sum{stage=\"wakeup\"} 0.5")
        lines.append("pomodoro_tick_delay_seconds_bucket{le=\"0.001\"} \(delayCount)")
        lines.append("pomodoro_tick_delay_seconds_bucket{le=\"+Inf\"} \(delayCount)")
        lines.append("pomodoro_tick_delay_seconds_count \(delayCount)")
        lines.append("pomodoro_store_commit_seconds_bucket{le=\"0.001\"} 3")
        lines.append("pomodoro_store_commit_seconds_bucket{le=\"+Inf\"} 5")
        lines.append("pomodoro_store_commit_seconds_count 5")
        lines.append("pomodoro_frames_sent_total 12")
        return lines.joined(separator: "\n") + "\n"
    }

    @Test func readsEachStageAndTheDelayFromTheTextFormat() {
        let parsed = ServerStages.parse(Self.metrics(wakeup: [10, 30, 40, 40], count: 40, delayCount: 7))
        #expect(Set(parsed.keys) == ["wakeup", "delay", "commit"])
        #expect(parsed["commit"]?.buckets.map(\.count) == [3, 5])
        #expect(parsed["commit"]?.count == 5)
        #expect(parsed["wakeup"]?.count == 40)
        #expect(parsed["wakeup"]?.buckets.map(\.count) == [10, 30, 40, 40])
        #expect(parsed["wakeup"]?.buckets.last?.le == nil)
        #expect(parsed["delay"]?.count == 7)
    }

    @Test func theWindowIsTheDifferenceOfTwoReadings() {
        let start = ServerStages.parse(Self.metrics(wakeup: [10, 30, 40, 40], count: 40))
        let end = ServerStages.parse(Self.metrics(wakeup: [10, 130, 140, 140], count: 140))
        let window = ServerStages.summaries(start: start, end: end)["wakeup"]
        #expect(window?.count == 100)
        #expect(window?.histogram.buckets.map(\.count) == [0, 100, 100, 100])
        // Every tick of the window in the (0.5 ms, 1 ms] bucket: the median is half way through it.
        #expect(window?.p50Ms == 0.75)
        #expect(window?.p99Ms == 0.995)
    }

    @Test func aQuantileBeyondTheLastBoundIsUnknown() {
        let histogram = StageHistogram(buckets: [.init(le: 0.001, count: 1), .init(le: nil, count: 10)], count: 10)
        #expect(histogram.quantileMs(0.05) == 0.5)
        #expect(histogram.quantileMs(0.5) == nil)
        #expect(StageHistogram(buckets: [], count: 0).quantileMs(0.5) == nil)
    }
}
