/// A room's schedules, and what falls due when: a state machine in wall time.
///
/// `due(at:roomInSession:)` returns what must happen now (warn, start, count a miss); `nextWakeup(after:)` says
/// when to call it again. It reads no clock: the server passes its wall time in.
///
/// The decisions, in one place:
/// - **Late starts.** An occurrence not yet dealt with starts if it is at most `lateStartGrace` old (the
///   server was busy, or down for a restart); older, it is counted as missed. Of several missed while the
///   server was down only the latest may start.
/// - **Busy rooms.** When a schedule falls due while the room's timer is running or paused, the running
///   session is not cut short: the occurrence is skipped, counted as missed, and the room is told.
/// - **One-time schedules** switch themselves off once their occurrence has been dealt with (run or
///   missed); one whose time has passed cannot be made.
/// - **Warnings** go out once per occurrence, `warningMinutes` before it; a warning whose moment passed
///   while the server was down is not sent late.
public struct ScheduleBook: Sendable, Equatable {
    public private(set) var schedules: [Schedule]
    public let policy: SchedulePolicy
    private var nextNumber: Int
    /// The occurrence each schedule last warned about (in memory only: a restart may repeat a warning).
    private var warned: [ScheduleID: WallTime] = [:]

    public init(schedules: [Schedule] = [], policy: SchedulePolicy = .standard) {
        self.schedules = schedules.sorted { $0.id < $1.id }
        self.policy = policy
        nextNumber = (schedules.map(\.id.number).max() ?? 0) + 1
    }

    public subscript(id: ScheduleID) -> Schedule? { schedules.first { $0.id == id } }

    /// What happens at a moment.
    public enum Action: Equatable, Sendable {
        /// "`schedule` starts in N min": its occurrence at `startsAt` is `warningMinutes` away.
        case warn(Schedule, startsAt: WallTime)
        /// Start the room now with the schedule's settings; `late` seconds after its time.
        case start(Schedule, occurrence: WallTime, late: Int64)
        /// The occurrence at `occurrence` did not run: too late, or (`busy`) the room was in a session.
        case missed(Schedule, occurrence: WallTime, busy: Bool)
    }

    // MARK: Changes

    /// Adds a schedule made from `draft` at `now`. Throws when the room has its fill of schedules, a field
    /// is out of bounds, or a one-time schedule's time has passed.
    @discardableResult
    public mutating func add(_ draft: ScheduleDraft, settingsPolicy: RoomPolicy = .standard,
                             now: WallTime) throws(RoomError) -> Schedule {
        guard schedules.count < policy.maxSchedules else {
            throw .invalidArgument(field: "schedules", reason: "a room holds at most \(policy.maxSchedules) schedules")
        }
        let draft = try policy.validated(draft, settingsPolicy: settingsPolicy)
        let schedule = make(ScheduleID(nextNumber), from: draft, now: now)
        try Self.checkNotPast(schedule, now: now)
        nextNumber += 1
        schedules.append(schedule)
        return schedule
    }

    /// Replaces schedule `id` by `draft`: it holds as new from `now` (a change does not fire an occurrence
    /// that was due before it) and keeps its missed count.
    @discardableResult
    public mutating func change(_ id: ScheduleID, to draft: ScheduleDraft, settingsPolicy: RoomPolicy = .standard,
                                now: WallTime) throws(RoomError) -> Schedule {
        guard let index = schedules.firstIndex(where: { $0.id == id }) else { throw Self.unknown(id) }
        let draft = try policy.validated(draft, settingsPolicy: settingsPolicy)
        var schedule = make(id, from: draft, now: now)
        schedule.missed = schedules[index].missed
        if schedule.enabled { try Self.checkNotPast(schedule, now: now) }
        schedules[index] = schedule
        warned[id] = nil
        return schedule
    }

    /// Switches schedule `id` on or off. Switching on counts from `now`: what fell due while it was off is
    /// not caught up. A one-time schedule whose time has passed cannot be switched on.
    @discardableResult
    public mutating func setEnabled(_ id: ScheduleID, _ enabled: Bool, now: WallTime) throws(RoomError) -> Schedule {
        guard let index = schedules.firstIndex(where: { $0.id == id }) else { throw Self.unknown(id) }
        guard schedules[index].enabled != enabled else { return schedules[index] }
        var schedule = schedules[index]
        schedule.enabled = enabled
        if enabled {
            try Self.checkNotPast(schedule, now: now)
            schedule.since = now
            schedule.handledThrough = now
        }
        schedules[index] = schedule
        warned[id] = nil
        return schedule
    }

    /// Removes schedule `id`; its number is not given out again while the room lives.
    @discardableResult
    public mutating func remove(_ id: ScheduleID) throws(RoomError) -> Schedule {
        guard let index = schedules.firstIndex(where: { $0.id == id }) else { throw Self.unknown(id) }
        warned[id] = nil
        return schedules.remove(at: index)
    }

    private func make(_ id: ScheduleID, from draft: ScheduleDraft, now: WallTime) -> Schedule {
        Schedule(id: id, name: draft.name, time: draft.time, zone: draft.zone, recurrence: draft.recurrence,
                 settings: draft.settings, length: draft.length, warningMinutes: draft.warningMinutes,
                 enabled: draft.enabled, since: now)
    }

    private static func checkNotPast(_ schedule: Schedule, now: WallTime) throws(RoomError) {
        if schedule.isOneTime, schedule.nextOccurrence(onOrAfter: now + 1) == nil {
            throw .invalidArgument(field: "date", reason: "the date and time have passed")
        }
    }

    private static func unknown(_ id: ScheduleID) -> RoomError {
        .invalidArgument(field: "id", reason: "no schedule \(id) in this room")
    }

    // MARK: Time

    /// The next occurrence of any schedule that is on, strictly after `now`, and whose it is.
    public func nextSession(after now: WallTime) -> (schedule: Schedule, at: WallTime)? {
        schedules.filter(\.enabled)
            .compactMap { s in s.nextOccurrence(onOrAfter: max(now, s.handledThrough) + 1).map { (schedule: s, at: $0) } }
            .min { ($0.at, $0.schedule.id) < ($1.at, $1.schedule.id) }
    }

    /// The upcoming sessions in `(now, through]`, in order: what a Schedule panel lists.
    public func upcoming(after now: WallTime, through end: WallTime) -> [(schedule: Schedule, at: WallTime)] {
        schedules.filter(\.enabled)
            .flatMap { s in s.occurrences(from: max(now, s.handledThrough) + 1, through: end).map { (schedule: s, at: $0) } }
            .sorted { ($0.at, $0.schedule.id) < ($1.at, $1.schedule.id) }
    }

    /// When `due(at:roomInSession:)` next has something to do, strictly after `now`; nil when nothing is on.
    public func nextWakeup(after now: WallTime) -> WallTime? {
        schedules.filter(\.enabled).compactMap { s -> WallTime? in
            guard let next = s.nextOccurrence(onOrAfter: max(now, s.handledThrough) + 1) else { return nil }
            if let warn = s.warningInstant(for: next), warn > now, warned[s.id] != next { return warn }
            return next
        }.min()
    }

    /// What falls due at `now`, and the book brought up to it. `roomInSession`: the room's timer is running or
    /// paused (see the type's notes). Of the actions at most one is a `start`: when two schedules fall due
    /// at once, the one with the lower id starts and the other is missed as busy.
    public mutating func due(at now: WallTime, roomInSession: Bool) -> [Action] {
        var actions: [Action] = []
        var busy = roomInSession
        for index in schedules.indices where schedules[index].enabled {
            var schedule = schedules[index]
            if let (occurrence, earlier) = schedule.latestOccurrence(after: schedule.handledThrough, through: now) {
                schedule.handledThrough = occurrence
                schedule.missed += earlier
                let late = now - occurrence
                if schedule.isOneTime { schedule.enabled = false }
                if late > policy.lateStartGrace {
                    schedule.missed += 1
                    actions.append(.missed(schedule, occurrence: occurrence, busy: false))
                } else if busy {
                    schedule.missed += 1
                    actions.append(.missed(schedule, occurrence: occurrence, busy: true))
                } else {
                    busy = true
                    actions.append(.start(schedule, occurrence: occurrence, late: late))
                }
                schedules[index] = schedule
                warned[schedule.id] = nil
            } else if let next = schedule.nextOccurrence(onOrAfter: now + 1),
                      let warn = schedule.warningInstant(for: next), warn <= now, warned[schedule.id] != next {
                warned[schedule.id] = next
                // Sent only at its moment, or a little after (the server was busy): not minutes late.
                if now - warn <= 60 { actions.append(.warn(schedule, startsAt: next)) }
            }
        }
        return actions
    }

    public static func == (lhs: ScheduleBook, rhs: ScheduleBook) -> Bool {
        lhs.schedules == rhs.schedules && lhs.policy == rhs.policy && lhs.nextNumber == rhs.nextNumber
    }
}
