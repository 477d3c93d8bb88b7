import PomodoroCore

/// Copies one store's rooms, members (with their token hashes and locks), schedules, bans, API tokens, webhooks
/// with their outbox, and focus journal into another, through `RoomStore` (and `WebhookStore` for the webhooks)
/// alone, so any store can move to any other (`pomodoro-server migrate`).
///
/// A room's own rows (room, members, schedules, bans, API tokens as their hashes, webhooks with their secrets,
/// and every outbox row, due or finished, with its event id, body, attempts and times) go in one transaction:
/// a room arrives whole or not at all. Outbox rows are written in their order in the source, so each webhook
/// delivers on the target in the order it would have on the source, and a due delivery keeps its attempts and
/// next attempt.
///
/// Running it again copies nothing twice: rooms, members and schedules are saved over (the source's rows win),
/// a room's API tokens and webhooks become the source's (a webhook's outbox with it), and a
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
        public var apiTokens = 0
        public var webhooks = 0
        /// Outbox rows: deliveries due, and the finished ones kept for the webhooks' lists.
        public var deliveries = 0
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
        let sourceHooks = source as? any WebhookStore, targetHooks = target as? any WebhookStore
        for stored in try source.loadRooms() {
            let id = stored.record.id
            let schedules = try source.loadSchedules(room: id)
            var webhooks: [WebhookRecord] = [], outbox: [WebhookDelivery] = []
            if let sourceHooks { (webhooks, outbox) = try Self.webhooks(of: id, in: sourceHooks) }
            var webhookChanges: [StoreChange] = []
            if !webhooks.isEmpty || targetHooks != nil {
                guard let targetHooks else { throw StoreError("room \(id) has webhooks, which the target cannot keep") }
                // The target's webhooks of the room (and their outbox) give way to the source's.
                let stale = Set(try targetHooks.webhooks(room: id).map(\.id)).union(webhooks.map(\.id))
                webhookChanges = stale.sorted().map { .webhook(.remove(id, $0)) } + webhooks.map { .webhook(.save($0)) }
                if !outbox.isEmpty { webhookChanges.append(.webhook(.queue(id, outbox))) }
            }
            try target.apply([.saveRoom(stored.record, passcode: stored.passcode)]
                             + stored.members.map { .saveMember(id, $0) } + [.saveSchedules(id, schedules), .saveBans(id, stored.bans),
                                                                         .saveAPITokens(id, stored.apiTokens)]
                             + webhookChanges)

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
            room.apiTokens = stored.apiTokens.count
            room.webhooks = webhooks.count
            room.deliveries = outbox.count
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
        counts.apiTokens = stored.apiTokens.count
        if let hooks = store as? any WebhookStore {
            let (webhooks, outbox) = try Self.webhooks(of: id, in: hooks)
            counts.webhooks = webhooks.count
            counts.deliveries = outbox.count
        }
        return counts
    }

    /// The room's webhooks in id order, and their whole outbox (every state) in the order it was written.
    static func webhooks(of id: RoomID, in store: any WebhookStore) throws(StoreError)
        -> (webhooks: [WebhookRecord], outbox: [WebhookDelivery]) {
        let webhooks = try store.webhooks(room: id)
        var outbox: [WebhookDelivery] = []
        for webhook in webhooks {
            outbox += try store.recentDeliveries(room: id, webhook: webhook.id, limit: Int(Int32.max))
        }
        outbox.sort { $0.seq < $1.seq }
        return (webhooks, outbox)
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
        apiTokens += other.apiTokens
        webhooks += other.webhooks
        deliveries += other.deliveries
    }
}
