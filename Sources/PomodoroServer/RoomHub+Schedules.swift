import PomodoroCore
import PomodoroNet
import PomodoroProtocol
import PomodoroStore

// A room's schedules in the hub: members' requests, the timer that starts the room at a schedule's time,
// the warnings and misses, the list and the calendar feed over HTTP, and schedules brought back at start-up.
//
// The book (`ScheduleBook`) lives on the wall clock; its next wake-up is turned into a delay on this boot's
// monotonic clock, and a timer that fires a little early finds nothing due and is armed again for the rest.
// Schedules do not keep a room in memory: one that leaves is brought back shortly before its next start
// (`RoomHub+ScheduledReturns.swift`), so that nobody needs to be in it for it to start.

extension RoomHub {
    /// A member's request about the room's schedules. Anyone in the room may list them; changes need the
    /// host in a host-only room.
    func scheduleRequest(_ request: ScheduleRequest, ref: Ref?, entry: RoomEntry, member: MemberID,
                         connection: ConnectionID, at now: ClockReading) {
        if request != .list, entry.room.controlMode == .host && entry.room.hostID != member {
            refuse(.forbidden, ref: ref, to: connection)
            return
        }
        carryOut(request, ref: ref, in: entry, at: now) { [self] answer in reply(answer, to: connection) }
        if request != .list {
            logger.debug("schedules changed", metadata: ["room": "\(entry.room.id)", "member": "\(member)"])
        }
    }

    /// A schedule request that may be carried out (a member allowed to change them, or an API token):
    /// its answer (`schedules`, `ok` or `error`) goes to `answer`, before the change goes out to the room.
    /// The one place that applies the limits (`--max-scheduled-rooms`, `--max-schedules-per-room`).
    func carryOut(_ request: ScheduleRequest, ref: Ref?, in entry: RoomEntry, at now: ClockReading,
                  answer: (ServerMessage) -> Void) {
        let wall = WallTime(milliseconds: now.wallMs)
        let policy = entry.room.policy
        do {
            switch request {
            case .list:
                return answer(.schedules(listing(entry, at: wall), ref: ref))
            case .add(let fields):
                if entry.schedules.schedules.isEmpty, scheduledRoomCount() >= configuration.limits.maxScheduledRooms {
                    return answer(.error(code: .roomLimit, message: "this server keeps schedules for at most "
                                         + "\(configuration.limits.maxScheduledRooms) rooms; ask its admin",
                                         field: "schedules", ref: ref))
                }
                try entry.schedules.add(try fields.draft(), settingsPolicy: policy, now: wall)
            case let .change(id, fields):
                try entry.schedules.change(try Self.scheduleID(id), to: try fields.draft(), settingsPolicy: policy, now: wall)
            case let .setEnabled(id, enabled):
                try entry.schedules.setEnabled(try Self.scheduleID(id), enabled, now: wall)
            case .delete(let id):
                try entry.schedules.remove(try Self.scheduleID(id))
            }
        } catch {
            return answer(.error(ProtocolError(error, ref: ref)))
        }
        answer(.ok(command: request.type, appliesFrom: nil, ref: ref))
        schedulesChanged(entry, at: now)
    }

    /// The rooms holding schedules this server keeps: those in memory and those out of it that wait for their
    /// next start; or those the router counts (`--max-scheduled-rooms`).
    func scheduledRoomCount() -> Int {
        if let count = router.scheduledRoomCount { return count }
        return rooms.values.count { !$0.schedules.schedules.isEmpty } + (rooms.index?.count ?? 0)
    }

    /// A start this late is still on time: the focus runs from the schedule's own second.
    static let onTimeSlackMs: Int64 = 1000

    private static func scheduleID(_ text: String) throws(RoomError) -> ScheduleID {
        guard let id = ScheduleID(parsing: text) else {
            throw .invalidArgument(field: "id", reason: "a schedule id reads s1, s2, ...")
        }
        return id
    }

    /// The room's schedules as listed, each with its next start.
    func listing(_ entry: RoomEntry, at wall: WallTime) -> SchedulesPayload {
        listing(entry.room.id, entry.schedules, at: wall)
    }

    func listing(_ room: RoomID, _ book: ScheduleBook, at wall: WallTime) -> SchedulesPayload {
        SchedulesPayload(room: room.rawValue, schedules: book.schedules.map { s in
            SchedulePayload(s, next: s.enabled ? s.nextOccurrence(onOrAfter: max(wall, s.handledThrough) + 1) : nil)
        })
    }

    /// The next scheduled start, for the snapshot.
    func nextSession(of entry: RoomEntry, at now: ClockReading) -> NextSessionPayload? {
        guard let next = entry.schedules.nextSession(after: WallTime(milliseconds: now.wallMs)) else { return nil }
        return NextSessionPayload(schedule: next.schedule.id.description, name: next.schedule.name,
                                  startsAt: next.at.milliseconds)
    }

    /// After a change: stored (the list goes out once it is committed, like every broadcast), listed to
    /// every member, the snapshot's next session sent, the timer armed.
    func schedulesChanged(_ entry: RoomEntry, at now: ClockReading) {
        commit([.saveSchedules(entry.room.id, entry.schedules.schedules)], of: entry)
        router.schedulesChanged(entry)
        let list = ServerMessage.schedules(listing(entry, at: WallTime(milliseconds: now.wallMs)), ref: nil)
        entry.announce { [self] in fanOut.broadcast(list, in: entry) }
        var outcome = Outcome()
        outcome.stateChanged = true
        publish(outcome, in: entry, at: now)
        armSchedules(entry, at: now)
    }

    /// Arms the room's schedule timer for the book's next wake-up, on this boot's monotonic clock.
    ///
    /// The delay is the deadline minus the clock read here, at arming, not the `now` the caller's work began
    /// at: the time that work took is not added to the wait. A wake-up before the deadline (timers may fire
    /// a little early) finds nothing due in `scheduleTimerFired`, which arms again for what is left.
    func armSchedules(_ entry: RoomEntry, at _: ClockReading) {
        let now = clock.now()
        guard !stopped, let next = entry.schedules.nextWakeup(after: WallTime(milliseconds: now.wallMs)) else {
            entry.scheduleTimer?.cancel()
            return
        }
        if entry.scheduleTimer == nil {
            let id = entry.room.id
            entry.scheduleTimer = transport.timer { [unowned self] in scheduleTimerFired(id) }
        }
        entry.scheduleTimer?.schedule(afterNanoseconds: Self.nanoseconds(until: next, from: now))
    }

    /// From `now` to the start of `wall`'s second, in nanoseconds (zero when it has come).
    static func nanoseconds(until wall: WallTime, from now: ClockReading) -> Int64 {
        let wallNow = now.monotonic.nanoseconds + now.wallOffsetNanoseconds
        return max(0, wall.seconds * 1_000_000_000 - wallNow)
    }

    /// What the book says is due now: warnings, a start, misses; each said as an event.
    func scheduleTimerFired(_ id: RoomID) {
        guard let entry = rooms[id] else { return }
        let now = clock.now()
        catchUp(entry, at: now)
        let actions = entry.schedules.due(at: WallTime(milliseconds: now.wallMs), roomInSession: entry.room.inSession)
        var events: [ScheduleEventPayload] = []
        var outcome = Outcome()
        var handled = false
        for action in actions {
            switch action {
            case let .warn(s, startsAt):
                events.append(.warning(schedule: s.id.description, name: s.name, startsAt: startsAt.milliseconds,
                                       minutes: s.warningMinutes))
            case let .start(s, occurrence, _):
                handled = true
                // On the deadline discipline: woken a moment late, the focus still runs from the schedule's
                // second, so its end does not drift by the wake-up latency. A start after a restart (seconds
                // or minutes late) runs from now, whole.
                let lateMs = now.wallMs - occurrence.milliseconds
                let due = Instant(nanoseconds: occurrence.seconds * 1_000_000_000 - now.wallOffsetNanoseconds)
                let startAt = lateMs <= Self.onTimeSlackMs ? min(due, now.monotonic) : now.monotonic
                do {
                    entry.room.wallOffsetNanoseconds = now.wallOffsetNanoseconds
                    outcome = try entry.room.startScheduled(s, now: startAt)
                    events.append(.started(schedule: s.id.description, name: s.name,
                                           lateMs: max(0, now.wallMs - occurrence.milliseconds)))
                    // In microseconds, for the 10 ms target (the event says whole milliseconds).
                    let wallNs = now.monotonic.nanoseconds + now.wallOffsetNanoseconds
                    logger.info("scheduled session started", metadata: [
                        "room": "\(id)", "schedule": "\(s.id)",
                        "late_us": "\((wallNs - occurrence.seconds * 1_000_000_000) / 1000)"])
                } catch {
                    events.append(.missed(s, at: occurrence, inSession: true))
                }
            case let .missed(s, occurrence, inSession):
                handled = true
                events.append(.missed(s, at: occurrence, inSession: inSession))
            }
        }
        webhookScheduleEvents(events, in: entry, at: now)
        let messages = events.map { ServerMessage.event(room: id.rawValue, .schedule($0), serverTime: now.wallMs) }
        entry.announce { [self] in for message in messages { fanOut.broadcast(message, in: entry) } }
        if handled {
            schedulesChanged(entry, at: now)
            if outcome.stateChanged { publish(outcome, in: entry, at: now) }
        } else {
            armSchedules(entry, at: now)
        }
    }

    /// A room brought back with its schedules (a router's take reads them after its claim): they are
    /// its book, and what fell due meanwhile is dealt with now, as after a restart.
    func adoptSchedules(_ schedules: [Schedule], into entry: RoomEntry) {
        guard !schedules.isEmpty else { return }
        entry.schedules = ScheduleBook(schedules: schedules, policy: configuration.schedulePolicy)
        scheduleTimerFired(entry.room.id)
    }
}
