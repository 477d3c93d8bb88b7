import PomodoroCore
import PomodoroNet

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
}
