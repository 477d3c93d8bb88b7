/// How long the focus journal keeps its rows (sessions and interruptions). Deleting rows leaves the running
/// totals (`JournalTotals`) as they are: stats still count what was deleted; only history and CSV lose it.
///
/// The writer deletes in the transactions that write a room's journal, at most `batch` rows of each kind
/// at a time and oldest first, so a lowered limit catches up over a few writes rather than in one long
/// transaction; the SQL stores' `pruneJournal(nowMs:)` sweeps rooms that no longer write.
public struct JournalRetention: Equatable, Sendable {
    /// Rows older than this many days are deleted; nil keeps them for ever.
    public var maxAgeDays: Int?
    /// A room keeps at most this many sessions, and as many interruptions; nil: no cap.
    public var maxRowsPerRoom: Int?

    public init(maxAgeDays: Int? = nil, maxRowsPerRoom: Int? = Self.defaultMaxRowsPerRoom) {
        self.maxAgeDays = maxAgeDays
        self.maxRowsPerRoom = maxRowsPerRoom
    }

    /// 100,000 sessions: at one 25-minute session every half hour, round the clock, over five years.
    public static let defaultMaxRowsPerRoom = 100_000
    /// Keep every row for ever, with no cap.
    public static let keepEverything = JournalRetention(maxAgeDays: nil, maxRowsPerRoom: nil)
    /// The default: no age limit, `defaultMaxRowsPerRoom` per room.
    public static let standard = JournalRetention()
    /// Rows of each kind one transaction deletes at most for one room.
    public static let batch = 200
}
