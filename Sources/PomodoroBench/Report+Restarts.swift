extension BenchReport {
    /// What members saw of the nodes restarting under them (`BenchPlan.followsRestarts`): each close with
    /// 1012 followed, how soon they were back, and per member the longest run of consecutive seconds of
    /// the window that reached it neither as a tick nor as a phase's end.
    public struct Restarts: Codable, Equatable, Sendable {
        /// Closes with 1012 followed, and the members that had at least one; closes with 4005 (the room
        /// moved) followed.
        public var followed: Int
        public var membersRestarted: Int
        public var roomMovedFollowed: Int
        /// Tries to come back that failed (the next node down too) and were made again elsewhere.
        public var failedReturns: Int
        /// From a 1012 or 4005 to the `welcome` that brought the member back, as itself.
        public var returnMs: LatencySummary?
        /// Where the seconds around a 1012 went: from the last tick a member heard to its close, and from
        /// the `welcome` that brought it back to its first tick after it (nil in reports written before).
        public var silenceBeforeCloseMs: LatencySummary?
        public var firstTickAfterReturnMs: LatencySummary?
        /// Members still on their way back when the run ended.
        public var notBack: Int
        /// The longest run of seconds any member missed, how many members missed more than two in a row,
        /// and how many members had each longest run ("0", "1", ...).
        public var longestMissedRunSeconds: Int
        public var membersMissingMoreThanTwoSeconds: Int
        public var membersByLongestMissedRun: [String: Int]

        public init(members: [SimulatedMember], window: TickWindow) {
            followed = members.map(\.restarts).reduce(0, +)
            membersRestarted = members.filter { $0.restarts > 0 }.count
            roomMovedFollowed = members.map(\.roomMoves).reduce(0, +)
            failedReturns = members.map(\.failedReturns).reduce(0, +)
            returnMs = LatencySummary(samples: members.flatMap(\.returnLatenciesMs))?.rounded
            silenceBeforeCloseMs = LatencySummary(samples: members.flatMap(\.silencesBeforeCloseMs))?.rounded
            firstTickAfterReturnMs = LatencySummary(samples: members.flatMap(\.firstTicksAfterReturnMs))?.rounded
            notBack = members.filter { $0.stage == .reconnecting || ($0.stage == .connecting && $0.restarts + $0.roomMoves > 0) }.count
            let runs = members.filter(\.welcomed).map { $0.tally.longestMissedRun(window: window) }
            longestMissedRunSeconds = runs.max() ?? 0
            membersMissingMoreThanTwoSeconds = runs.filter { $0 > 2 }.count
            membersByLongestMissedRun = Dictionary(runs.map { ("\($0)", 1) }, uniquingKeysWith: +)
        }

        func lines() -> [(label: String, value: String)] {
            var back = "\(membersRestarted) members closed with 1012, \(followed) times in all, \(roomMovedFollowed) closes with 4005 (room moved), \(failedReturns) tries refused, \(notBack) not back"
            if let returnMs {
                back += "; back in p50 \(format(returnMs.p50, places: 0)) ms, p99 \(format(returnMs.p99, places: 0)) ms, max \(format(returnMs.max, places: 0)) ms"
            }
            for (label, summary) in [("last tick to the close", silenceBeforeCloseMs), ("welcome to the next tick", firstTickAfterReturnMs)] {
                guard let summary else { continue }
                back += "; \(label) p50 \(format(summary.p50, places: 0)) ms, p99 \(format(summary.p99, places: 0)) ms, max \(format(summary.max, places: 0)) ms"
            }
            let spread = membersByLongestMissedRun.sorted { Int($0.key)! < Int($1.key)! }.map { "\($0.key) s: \($0.value)" }
            return [("restarts", back),
                    ("longest gap", "\(longestMissedRunSeconds) s in a row at worst; \(membersMissingMoreThanTwoSeconds) members missed more than 2 in a row (members by their longest run: \(spread.joined(separator: ", ")))")]
        }
    }
}
