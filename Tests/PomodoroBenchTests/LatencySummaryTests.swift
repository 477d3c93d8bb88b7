import PomodoroBench
import Testing

/// Percentiles are nearest-rank over every sample: always a measured value, never an interpolation.
@Suite struct LatencySummaryTests {
    @Test func noSamplesGiveNoSummary() {
        #expect(LatencySummary(samples: []) == nil)
    }

    @Test func oneSampleIsEveryPercentile() throws {
        let summary = try #require(LatencySummary(samples: [4.5]))
        #expect(summary.count == 1)
        #expect([summary.min, summary.p50, summary.p99, summary.p999, summary.max, summary.mean] == [4.5, 4.5, 4.5, 4.5, 4.5, 4.5])
    }

    @Test func aThousandSamplesGiveTheirRanks() throws {
        // 1 ... 1000 in a scrambled order: the p-th percentile is the sample of rank ceil(p * n).
        let samples = (1...1000).map { Double(($0 * 7919) % 1000 + 1) }
        #expect(Set(samples).count == 1000)
        let summary = try #require(LatencySummary(samples: samples))
        #expect(summary.count == 1000)
        #expect(summary.min == 1)
        #expect(summary.p50 == 500)
        #expect(summary.p99 == 990)
        #expect(summary.p999 == 999)
        #expect(summary.max == 1000)
        #expect(summary.mean == 500.5)
    }

    @Test func aHundredSamplesPutP99OnTheNinetyNinthAndP999OnTheLast() throws {
        let summary = try #require(LatencySummary(samples: (1...100).map(Double.init).reversed()))
        #expect(summary.p50 == 50)
        #expect(summary.p99 == 99)
        #expect(summary.p999 == 100)
    }

    @Test func aSingleOutlierShowsInTheMaximumNotTheMedian() throws {
        let summary = try #require(LatencySummary(samples: Array(repeating: 1, count: 999) + [250]))
        #expect(summary.p50 == 1)
        #expect(summary.p99 == 1)
        #expect(summary.p999 == 1)
        #expect(summary.max == 250)
        // With ten outliers in a thousand, p99.9 sees them and p99 does not.
        let ten = try #require(LatencySummary(samples: Array(repeating: 1, count: 990) + Array(repeating: 80, count: 10)))
        #expect(ten.p99 == 1)
        #expect(ten.p999 == 80)
    }

    @Test func percentileOfSortedRoundsRanksUp() {
        let sorted: [Double] = [10, 20, 30]
        #expect(LatencySummary.percentile(0.01, ofSorted: sorted) == 10)
        #expect(LatencySummary.percentile(0.34, ofSorted: sorted) == 20)
        #expect(LatencySummary.percentile(0.5, ofSorted: sorted) == 20)
        #expect(LatencySummary.percentile(0.67, ofSorted: sorted) == 30)
        #expect(LatencySummary.percentile(1, ofSorted: sorted) == 30)
    }
}
