/// When rooms that are not in memory must come back for their schedules: each room's next scheduled start,
/// in wall time.
///
/// Schedules do not keep a room in memory: a room leaves when it is empty and its lifetime has passed,
/// whatever schedules it holds. The server keeps the next start of every room out of memory here and brings
/// the room back `lead` seconds before it (its own schedule timer then starts it on the second). A plain
/// value that reads no clock: the server passes its wall time in, tests a manual one.
///
/// ```swift
/// var index = ScheduleIndex(lead: 60)
/// index.set(room, schedules: book.schedules)     // the room left memory
/// index.due(at: now)                              // rooms to bring back now, soonest first
/// index.nextWakeup                                // when to ask again
/// ```
public struct ScheduleIndex: Sendable, Equatable {
    /// What the index keeps of one room.
    public struct Entry: Sendable, Equatable {
        /// The schedules that are on: what the next start is computed from.
        public var enabled: [Schedule]
        /// The earliest start not yet dealt with (run or counted as missed); it may have passed (the server
        /// was down): the room then comes back at once and its book deals with it. Nil: no start ahead.
        public var next: WallTime?
        /// Until when a set started by one of its schedules may still run, planned with the schedule's own
        /// settings or the standard ones and an hour's slack (a cluster node takes a room whose owner died
        /// while this holds: its set may be running with nobody in it).
        public var mayRunUntil: WallTime?
        /// The latest occurrence any of its schedules has dealt with.
        public var lastHandled: WallTime?
    }

    /// How many seconds before a start its room is brought back.
    public let lead: Int64
    public private(set) var entries: [RoomID: Entry] = [:]

    /// A set may run this much longer than planned (pauses, extensions, other settings) and still be taken
    /// over by a cluster node.
    public static let setSlack: Int64 = 3600

    /// Whether the index also keeps, for a room with no schedule on, until when its last set may run (a
    /// cluster node's sweep asks `mayBeRunning`; one server keeps a running set's room in memory anyway).
    public let watchesSets: Bool

    public init(lead: Int64 = 60, watchesSets: Bool = false) {
        self.lead = lead
        self.watchesSets = watchesSets
    }

    public var count: Int { entries.count }
    public subscript(room: RoomID) -> Entry? { entries[room] }

    /// The room's schedules as they are at `now` (after a change, or as it leaves memory). A room with no
    /// schedule on and no set that may still be running is forgotten.
    public mutating func set(_ room: RoomID, schedules: [Schedule], now: WallTime) {
        let enabled = schedules.filter(\.enabled)
        let lastHandled = schedules.map(\.handledThrough).max()
        // Only an occurrence dealt with may have started a set (not the moment a schedule was made or changed).
        let mayRunUntil = schedules.compactMap { s -> WallTime? in
            guard s.nextOccurrence(onOrAfter: s.handledThrough) == s.handledThrough else { return nil }
            return s.handledThrough + s.plannedLength(room: .standard) + Self.setSlack
        }.max()
        guard !enabled.isEmpty || (watchesSets && mayRunUntil.map({ now < $0 }) == true) else {
            entries[room] = nil
            return
        }
        entries[room] = Entry(enabled: enabled, next: Self.nextStart(of: enabled, after: nil),
                              mayRunUntil: mayRunUntil, lastHandled: lastHandled)
    }

    public mutating func remove(_ room: RoomID) {
        entries[room] = nil
    }

    /// Forgets the rooms with no schedule on whose sets cannot be running any more.
    public mutating func prune(at now: WallTime) {
        entries = entries.filter { _, entry in
            !entry.enabled.isEmpty || (watchesSets && entry.mayRunUntil.map { now < $0 } == true)
        }
    }

    /// The room could not come back for the starts through `now` (the server holds all the rooms it may):
    /// they are left to its book to count as missed when it does come back, and the index waits for the next.
    public mutating func passOver(_ room: RoomID, through now: WallTime) {
        guard var entry = entries[room] else { return }
        entry.next = Self.nextStart(of: entry.enabled, after: now)
        entries[room] = entry
    }

    /// The rooms whose next start is at most `lead` seconds after `now` (or has passed), soonest first.
    public func due(at now: WallTime) -> [RoomID] {
        entries.compactMap { room, entry in entry.next.flatMap { $0 - now <= lead ? (room, $0) : nil } }
            .sorted { ($0.1, $0.0) < ($1.1, $1.0) }
            .map(\.0)
    }

    /// When `due(at:)` next names a room (it may have passed); nil when no room has a start ahead.
    public var nextWakeup: WallTime? {
        entries.values.compactMap(\.next).min().map { $0 - lead }
    }

    /// Whether a set one of the room's schedules started may still be running at `now`.
    public func mayBeRunning(_ room: RoomID, at now: WallTime) -> Bool {
        guard let until = entries[room]?.mayRunUntil else { return false }
        return now < until
    }

    /// The earliest start of `schedules` (those that are on) not dealt with yet, and after `after` if given.
    public static func nextStart(of schedules: [Schedule], after: WallTime?) -> WallTime? {
        schedules.filter(\.enabled).compactMap { s -> WallTime? in
            let from = after.map { max($0, s.handledThrough) } ?? s.handledThrough
            return s.nextOccurrence(onOrAfter: from + 1)
        }.min()
    }
}
