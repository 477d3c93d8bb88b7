import PomodoroCore

/// Running totals of a room's journal, what a stats report is made from: so a report costs the days it
/// covers, not the journal's length, and outlives journal rows that retention deletes.
///
/// Two sets of buckets, each keyed by who (the room, or a member by name) and a span of UTC time:
/// - per UTC day, for all-time totals and streaks. A day also keeps the first and last moment a session
///   ended in it: a UTC day overlaps at most two local days of any zone (offsets move by at most an hour
///   or so within one day), the earlier of them is active when the first session falls in it, the later
///   when the last one does. So streaks come out exactly in any zone from one compact row per day.
/// - per 15 minutes of UTC time (a quarter), for the days of the report's window. Zone offsets and their
///   changes fall on quarter boundaries (every IANA zone since 1972), so a quarter lies within one local
///   day of any zone and the window's per-day numbers are exact too.
///
/// A session counts at the moment it ended, an interruption at its moment, as `FocusReport` counts them.
public struct JournalTotals: Equatable, Sendable {
    /// One bucket's numbers for one person or the room.
    public struct Bucket: Equatable, Sendable {
        /// Nil for the room's own numbers, else a member's name.
        public var name: String?
        /// The UTC day (days since 1970-01-01) or the quarter (15 minutes since 1970), by the set it is in.
        public var index: Int64
        public var sessions: Int
        public var focusMs: Int64
        public var interruptions: Int
        /// When the bucket's first and last sessions ended (nil without sessions).
        public var firstEndMs: Int64?
        public var lastEndMs: Int64?

        public init(name: String?, index: Int64, sessions: Int = 0, focusMs: Int64 = 0, interruptions: Int = 0,
                    firstEndMs: Int64? = nil, lastEndMs: Int64? = nil) {
            self.name = name
            self.index = index
            self.sessions = sessions
            self.focusMs = focusMs
            self.interruptions = interruptions
            self.firstEndMs = firstEndMs
            self.lastEndMs = lastEndMs
        }

        /// Adds `other`, which counts for the same person and bucket.
        mutating func merge(_ other: Bucket) {
            sessions += other.sessions
            focusMs += other.focusMs
            interruptions += other.interruptions
            firstEndMs = [firstEndMs, other.firstEndMs].compactMap { $0 }.min()
            lastEndMs = [lastEndMs, other.lastEndMs].compactMap { $0 }.max()
        }
    }

    /// Every UTC day with anything in it.
    public var days: [Bucket]
    /// The quarters in `quarterRange` with anything in them.
    public var quarters: [Bucket]
    /// The quarters asked for.
    public var quarterRange: Range<Int64>

    public init(days: [Bucket], quarters: [Bucket], quarterRange: Range<Int64>) {
        self.days = days
        self.quarters = quarters
        self.quarterRange = quarterRange
    }

    public static let dayMs: Int64 = 86_400_000
    public static let quarterMs: Int64 = 900_000

    /// What one journal record adds, at the moment it counts (`at`): the room's numbers and each named
    /// member's, as `FocusReport` counts them (a name listed twice in one session completed it once).
    public struct Delta: Equatable, Sendable {
        public var name: String?
        public var atMs: Int64
        public var sessions: Int
        public var focusMs: Int64
        public var interruptions: Int

        /// The delta as a bucket of the given length.
        func bucket(of length: Int64) -> Bucket {
            Bucket(name: name, index: atMs.floorDivided(by: length), sessions: sessions, focusMs: focusMs,
                   interruptions: interruptions, firstEndMs: sessions > 0 ? atMs : nil,
                   lastEndMs: sessions > 0 ? atMs : nil)
        }
    }

    public static func deltas(of session: FocusSessionRecord) -> [Delta] {
        var result = [Delta(name: nil, atMs: session.endedAtMs, sessions: 1,
                            focusMs: Int64(session.lengthSeconds) * 1000, interruptions: 0)]
        var position: [String: Int] = [:]
        for participant in session.participants {
            if let at = position[participant.name] {
                result[at].focusMs += participant.focusMs
            } else {
                position[participant.name] = result.count
                result.append(Delta(name: participant.name, atMs: session.endedAtMs, sessions: 1,
                                    focusMs: participant.focusMs, interruptions: 0))
            }
        }
        return result
    }

    /// Nil for an interruption of a member whose name was not kept: it counts for nobody.
    public static func delta(of interruption: InterruptionRecord) -> Delta? {
        if interruption.member == nil {
            return Delta(name: nil, atMs: interruption.atMs, sessions: 0, focusMs: 0, interruptions: 1)
        }
        guard let name = interruption.name else { return nil }
        return Delta(name: name, atMs: interruption.atMs, sessions: 0, focusMs: 0, interruptions: 1)
    }

    /// The totals of whole journal records (for stores that keep no running totals, and to check those
    /// that do).
    public static func make(sessions: [FocusSessionRecord], interruptions: [InterruptionRecord],
                            quarterRange: Range<Int64>) -> JournalTotals {
        let deltas = sessions.flatMap(Self.deltas(of:)) + interruptions.compactMap(Self.delta(of:))
        func sum(_ buckets: [Bucket]) -> [Bucket] {
            var merged: [BucketKey: Bucket] = [:]
            for bucket in buckets {
                let key = BucketKey(name: bucket.name, index: bucket.index)
                if merged[key] == nil { merged[key] = bucket } else { merged[key]!.merge(bucket) }
            }
            return merged.values.sorted { ($0.index, $0.name ?? "") < ($1.index, $1.name ?? "") }
        }
        return JournalTotals(days: sum(deltas.map { $0.bucket(of: dayMs) }),
                             quarters: sum(deltas.map { $0.bucket(of: quarterMs) }.filter { quarterRange.contains($0.index) }),
                             quarterRange: quarterRange)
    }

    private struct BucketKey: Hashable {
        var name: String?
        var index: Int64
    }
}

extension RoomStore {
    /// The room's running totals: every UTC day, and the quarters in `quarters`. This default reads the
    /// whole journal; a store that keeps totals answers from them.
    public func journalTotals(room: RoomID, quarters: Range<Int64>) throws(StoreError) -> JournalTotals {
        JournalTotals.make(sessions: try sessions(room: room, endedFrom: nil, before: nil, limit: nil),
                           interruptions: try interruptions(room: room, from: nil, before: nil),
                           quarterRange: quarters)
    }
}
