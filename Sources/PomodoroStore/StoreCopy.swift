import PomodoroCore

/// Copies one store's rooms, members (with their token hashes and locks), schedules and focus journal into another,
/// through `RoomStore` alone, so any store can move to any other (`pomodoro-server migrate`).
///
/// Running it again copies nothing twice: rooms, members and schedules are saved over (the source's rows win), and a
/// journal row the target already has (the same room, start, end and length; the same room, member and
/// moment for an interruption) is skipped. The target's running totals are built by its own `apply`, from
/// the rows copied: rows that retention had already deleted from the source count there no more.
public enum StoreCopy {
    /// What one room, or the whole copy, holds on each side afterwards.
    public struct Counts: Equatable, Sendable {
        public var rooms = 0
        public var members = 0
        public var schedules = 0
        public var sessions = 0
        public var interruptions = 0
        public init() {}
    }

    public struct Report: Equatable, Sendable {
        /// What the source holds.
        public var source = Counts()
        /// What the target holds of the source's rooms after the copy.
        public var target = Counts()
        /// Journal rows written by this run (0 when an earlier run copied everything).
        public var sessionsCopied = 0
        public var interruptionsCopied = 0
        /// Whether the target now holds everything the source does.
        public var verified: Bool { source == target }
    }

    /// Journal rows per `apply`: one transaction each, so a large journal is neither one huge transaction nor
    /// a commit per row.
    static let batchSize = 500

    /// Copies `source` into `target` and counts both sides. `progress` hears each room as it is done.
    public static func copy(from source: any RoomStore, to target: any RoomStore,
                            progress: (RoomID, Counts) -> Void = { _, _ in }) throws(StoreError) -> Report {
        var report = Report()
        for stored in try source.loadRooms() {
            let id = stored.record.id
            let schedules = try source.loadSchedules(room: id)
            try target.apply([.saveRoom(stored.record, passcode: stored.passcode)]
                             + stored.members.map { .saveMember(id, $0) } + [.saveSchedules(id, schedules), .saveBans(id, stored.bans),
                                                                         .saveAPITokens(id, stored.apiTokens)])

            let sessions = try source.sessions(room: id, endedFrom: nil, before: nil, limit: nil)
            let present = Set(try target.sessions(room: id, endedFrom: nil, before: nil, limit: nil).map(SessionKey.init))
            let newSessions = sessions.filter { !present.contains(SessionKey($0)) }
            let interruptions = try source.interruptions(room: id, from: nil, before: nil)
            let had = Set(try target.interruptions(room: id, from: nil, before: nil).map(InterruptionKey.init))
            let newInterruptions = interruptions.filter { !had.contains(InterruptionKey($0)) }
            // In the order they happened, so a target that prunes as it writes sees the oldest first.
            var changes: [(Int64, StoreChange)] = newSessions.map { ($0.endedAtMs, .focusCompleted($0)) }
                + newInterruptions.map { ($0.atMs, .interrupted($0)) }
            changes.sort { $0.0 < $1.0 }
            for start in stride(from: 0, to: changes.count, by: batchSize) {
                try target.apply(changes[start..<min(start + batchSize, changes.count)].map(\.1))
            }
            report.sessionsCopied += newSessions.count
            report.interruptionsCopied += newInterruptions.count

            var room = Counts()
            room.rooms = 1
            room.members = stored.members.count
            room.schedules = schedules.count
            room.sessions = sessions.count
            room.interruptions = interruptions.count
            report.source.add(room)
            report.target.add(try counts(of: id, in: target))
            progress(id, room)
        }
        return report
    }

    /// What `target` holds of one room.
    private static func counts(of id: RoomID, in store: any RoomStore) throws(StoreError) -> Counts {
        var counts = Counts()
        guard let stored = try store.loadRoom(id) else { return counts }
        counts.rooms = 1
        counts.members = stored.members.count
        counts.schedules = try store.loadSchedules(room: id).count
        counts.sessions = try store.sessions(room: id, endedFrom: nil, before: nil, limit: nil).count
        counts.interruptions = try store.interruptions(room: id, from: nil, before: nil).count
        return counts
    }

    private struct SessionKey: Hashable {
        let startedAtMs: Int64, endedAtMs: Int64, lengthSeconds: Int64
        init(_ session: FocusSessionRecord) {
            startedAtMs = session.startedAtMs
            endedAtMs = session.endedAtMs
            lengthSeconds = Int64(session.lengthSeconds)
        }
    }

    private struct InterruptionKey: Hashable {
        let member: MemberID?, atMs: Int64
        init(_ interruption: InterruptionRecord) {
            member = interruption.member
            atMs = interruption.atMs
        }
    }
}

extension StoreCopy.Counts {
    mutating func add(_ other: StoreCopy.Counts) {
        rooms += other.rooms
        members += other.members
        schedules += other.schedules
        sessions += other.sessions
        interruptions += other.interruptions
    }
}
