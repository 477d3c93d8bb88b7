import PomodoroCore
import PomodoroNet
import PomodoroProtocol

/// A live room and what the hub keeps beside it: the connection that speaks for each connected member, its
/// timers, its lock, the broadcasts held for a commit, and its members counted per address.
package final class RoomEntry {
    package var room: Room
    /// Tells this room from one made anew under the same name, for a join that waited off the service thread.
    package let serial: UInt64
    var connections: [MemberID: ConnectionID] = [:]
    /// Connections watching the room without being members: they hear every broadcast, and nobody hears of them.
    var observers: Set<ConnectionID> = []
    /// Server-Sent Events readers of `GET /api/rooms/{room}/events`: observers over HTTP.
    var streams: [any HubEventStream] = []
    /// The `id:` of the next event on the room's streams: one more for each event sent.
    var nextEventID: UInt64 = 1
    /// Wakes the room at its next deadline (a phase's end, the next tick, its expiry).
    let timer: any HubTimer
    /// Fires the `state` a crowd's member changes were waiting for (see `RoomHub.crowdStateInterval`).
    let stateTimer: any HubTimer
    /// When the last `state` was broadcast, and whether one is waiting for `stateTimer`.
    var lastStateAt: Instant?
    var statePending = false
    /// Set for a locked room (replaced once by a hash with the current work factor; see `adopt`).
    var passcode: PasscodeVerifier?
    /// While the room's changes are being committed, its broadcasts wait here, so members hear of
    /// nothing the store does not have yet, and hear everything in order.
    var held: [() -> Void]?
    /// Batches of changes handed to the store and not yet committed.
    var uncommitted = 0
    /// The running timer the members were last told of, by the last `state` or tick broadcast (nil when that
    /// state was not running). A tick that tells them nothing more is not a change: it passes what is held.
    var timerAnnounced: AnnouncedTimer?
    /// Where each member who joined over this server's life came from, and how many members of the
    /// room each address holds (connected or within their grace), for `membersPerAddressPerRoom`.
    var addressOf: [MemberID: String] = [:]
    var membersFrom: [String: Int] = [:]
    /// The room's schedules (`RoomHub+Schedules.swift`), and the timer for their next warning or start.
    package var schedules: ScheduleBook
    var scheduleTimer: (any HubTimer)?

    init(room: Room, serial: UInt64, timer: any HubTimer, stateTimer: any HubTimer, passcode: PasscodeVerifier?,
         schedulePolicy: SchedulePolicy) {
        self.room = room
        self.schedules = ScheduleBook(policy: schedulePolicy)
        self.serial = serial
        self.timer = timer
        self.stateTimer = stateTimer
        self.passcode = passcode
    }

    func cancelTimers() {
        timer.cancel()
        stateTimer.cancel()
        scheduleTimer?.cancel()
    }

    func counted(_ member: MemberID, from address: String) {
        guard addressOf[member] == nil else { return }
        addressOf[member] = address
        membersFrom[address, default: 0] += 1
    }

    func forget(_ member: MemberID) {
        guard let address = addressOf.removeValue(forKey: member) else { return }
        let held = membersFrom[address, default: 1] - 1
        membersFrom[address] = held > 0 ? held : nil
    }

    /// Sends at once, or after the commit in flight when there is one.
    package func announce(_ send: @escaping () -> Void) {
        if held != nil { held!.append(send) } else { send() }
    }

    /// Whether `tick` may go out ahead of the broadcasts held for a commit: its phase, cycle and end are
    /// those the members were last told of (a tick carrying a held change of the timer, a phase that began
    /// or an end that moved, would announce it before it is durable, and waits with it).
    func tickMayPass(_ tick: TickPayload) -> Bool {
        held != nil && timerAnnounced == AnnouncedTimer(tick)
    }

    /// Notes what a broadcast tells the members of the room's timer.
    func announced(_ message: ServerMessage) {
        switch message {
        case .state(let room): timerAnnounced = AnnouncedTimer(room)
        case .tick(let tick): timerAnnounced = AnnouncedTimer(tick)
        default: break
        }
    }
}

/// What a client takes from a tick (PROTOCOL.md §7): the running phase, its cycle and its end.
struct AnnouncedTimer: Equatable {
    var phase: Phase
    var cycle: Int
    var endsAt: Int64

    init(_ tick: TickPayload) {
        (phase, cycle, endsAt) = (tick.phase, tick.cycle, tick.endsAt)
    }

    init?(_ room: SnapshotPayload) {
        guard room.running, let endsAt = room.endsAt else { return nil }
        (phase, cycle, self.endsAt) = (room.phase, room.cycle, endsAt)
    }
}
