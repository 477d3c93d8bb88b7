import PomodoroCore
import PomodoroNet
import PomodoroProtocol
import PomodoroServer

// Ticks of relayed members, computed here (docs/CLUSTER.md, "Ticks"). A tick is a pure function of the room's
// running phase and the time; the owner replicates the phase to every node with members of the room in each
// `state` (and `welcome`, `observing`) it sends, so a node relaying members computes their ticks from it on
// the same kind of timer the owner's room uses, and the owner publishes none (`RelayingTransport.send`). The
// owner still decides every change: this node only counts down to the deadline it was told, stops there,
// and follows the next `state`. While Redis is away the countdown goes on from the deadline already held,
// and past it into the phase that follows where the replicated room determines it (`ReplicatedTimer.following`:
// auto-start on, not aligned, no schedule), until the owner's first `state` after the bus came back (the
// re-sync's, `ClusterRooms+Resync.swift`), which sets it right; otherwise it stops at the end.

/// What a relayed member was last shown of its room's timer, by a `state`, `welcome` or `observing` its owner
/// sent it or by a tick this node sent it: the running phase, its cycle and its end. A tick worked out here
/// goes only to a member shown that same timer, as the owner holds its own members' ticks of a change of the
/// timer until that change's `state` (docs/PROTOCOL.md, "Durability"): the room's countdown here may follow a
/// `welcome` the owner sent another member at once, ahead of the broadcasts it holds for their commit (a phase
/// that began, an end that moved), and the member hears that change from the owner's `state` first.
struct ShownTimer: Equatable {
    var phase: Phase
    var cycle: Int
    var endsAt: Int64

    init?(_ snapshot: SnapshotPayload) {
        guard snapshot.running, let endsAt = snapshot.endsAt else { return nil }
        self.init(phase: snapshot.phase, cycle: snapshot.cycle, endsAt: endsAt)
    }

    init(_ tick: TickPayload) { self.init(phase: tick.phase, cycle: tick.cycle, endsAt: tick.endsAt) }

    init(_ timer: ReplicatedTimer) { self.init(phase: timer.phase, cycle: timer.cycle, endsAt: timer.endsAt) }

    private init(phase: Phase, cycle: Int, endsAt: Int64) {
        self.phase = phase
        self.cycle = cycle
        self.endsAt = endsAt
    }
}

/// A followed room's replicated timer and the timer that wakes this node at its next tick.
final class RelayedRoomTimer {
    var replicated: ReplicatedTimer?
    /// The `seq` of the last snapshot taken: an older one (from a former owner) changes nothing.
    var seq: UInt64 = 0
    /// The bus came back after losing Redis and the owner's `state` has not arrived yet (the re-sync's):
    /// what follows a phase's end is still this node's to tell, as while the bus is away.
    var awaitingOwner = false
    let timer: any HubTimer

    init(timer: any HubTimer) { self.timer = timer }
}

extension ClusterRooms {
    /// The room a frame the owner sent carries, when it is a `state`, `welcome` or `observing` (decoded
    /// only then: `type` comes first). A `state`'s member list is left out, and its room decoded only when
    /// more than the list and the values that change each time changed (`StateTimerReader`).
    func replicatedSnapshot(in frame: String) -> SnapshotPayload? {
        let head = frame.utf8.prefix(24)
        if head.starts(with: #"{"type":"state""#.utf8) { return stateReader.room(of: frame) }
        guard head.starts(with: #"{"type":"welcome""#.utf8) || head.starts(with: #"{"type":"observing""#.utf8) else {
            return nil
        }
        switch try? WireCodec.decodeServerMessage(Array(frame.utf8)) {
        case .welcome(_, let room, _, _, _)?, .observing(let room, _, _)?: return room
        default: return nil
        }
    }

    /// The owner sent `connections` (relayed here, in `room`) the room as `snapshot`, and they have it: they hear
    /// its ticks from now on, and the room's countdown here follows the snapshot's timer.
    func replicated(_ snapshot: SnapshotPayload, room: RoomID, to connections: [ConnectionID]) {
        for connection in connections where relays[connection]?.room == room {
            relays[connection]?.hearsTicks = true
            relays[connection]?.shown = ShownTimer(snapshot)
        }
        guard relayedByRoom[room] != nil, snapshot.room == room.rawValue else { return }
        let followed: RelayedRoomTimer
        if let existing = relayedTimers[room] {
            followed = existing
        } else {
            followed = RelayedRoomTimer(timer: hub.transport.timer { [unowned self] in relayedTickDue(room) })
            relayedTimers[room] = followed
        }
        guard snapshot.seq >= followed.seq else { return }
        followed.seq = snapshot.seq
        followed.awaitingOwner = false
        let now = hub.clock.now()
        var replicated = ReplicatedTimer(snapshot, wallOffsetNanoseconds: now.wallOffsetNanoseconds)
        if let earlier = followed.replicated { replicated?.follows(earlier) }
        // The boundaries passed while the snapshot was on its way: the owner's members heard them.
        for tick in replicated?.ticksSinceShown(at: now) ?? [] { sendRelayedTick(tick, in: room) }
        followed.replicated = replicated
        relayedTickDue(room)
    }

    /// The owner sent `snapshot` of `room` to relayed members here, about to be forwarded: a tick its members
    /// heard ahead of it and this node has not sent (its timer woke later than the snapshot came) goes first,
    /// so that a relayed member hears what the owner's members heard, in the same order.
    func tickBefore(_ snapshot: SnapshotPayload, in room: RoomID) {
        guard !relayedTicksStopped, snapshot.room == room.rawValue, let followed = relayedTimers[room],
              snapshot.seq >= followed.seq, var replicated = followed.replicated else { return }
        let tick = replicated.tick(before: snapshot, at: hub.clock.now())
        followed.replicated = replicated
        // Not the tick a draining node sends a member back after: the snapshot it comes before is theirs too.
        if let tick { sendRelayedTick(tick, in: room, sendingBack: false) }
    }

    /// The room's timer here fired (or its snapshot changed): sends the tick due, if any, to the room's
    /// relayed connections that are in it, and arms the timer for the next one.
    func relayedTickDue(_ room: RoomID) {
        guard let followed = relayedTimers[room], !relayedTicksStopped else { return }
        guard var replicated = followed.replicated else { return followed.timer.cancel() }
        let now = hub.clock.now()
        if let tick = replicated.tick(at: now) { sendRelayedTick(tick, in: room) }
        // The phase ended while the owner cannot be heard (the bus away, or back and the owner's `state` not
        // in yet): the phase that follows, where the room says it.
        while replicated.nextTick == nil, now.monotonic >= replicated.deadline,
              cluster.busIsDown || followed.awaitingOwner,
              let successor = replicated.following() {
            // This node tells the phase that follows: its ticks announce it to those shown the one before.
            shown(in: room, from: ShownTimer(replicated), to: ShownTimer(successor))
            replicated = successor
            for tick in replicated.ticksSinceShown(at: now) { sendRelayedTick(tick, in: room) }
        }
        followed.replicated = replicated
        // Woken at the next tick; after the last one, at the phase's end if what follows is known here.
        if let next = replicated.nextTick ?? (replicated.following() != nil && now.monotonic < replicated.deadline
                                               ? replicated.deadline : nil) {
            followed.timer.schedule(at: next, on: hub.clock)
        } else {
            followed.timer.cancel()
        }
    }

    private func sendRelayedTick(_ tick: TickPayload, in room: RoomID, sendingBack: Bool = true) {
        let timer = ShownTimer(tick)
        // One look-up of each relayed connection of the room (a relay is a struct of strings and arrays).
        var audience: [ConnectionID] = []
        var sendsBack = false
        for connection in relayedByRoom[room] ?? [] {
            guard let relay = relays[connection], relay.hearsTicks, !relay.closing, relay.shown == timer else { continue }
            audience.append(connection)
            sendsBack = sendsBack || relay.sendBackAfterTick
        }
        guard !audience.isEmpty else { return }
        audience.sort { $0.rawValue < $1.rawValue }
        let frame = OutboundFrame(WireCodec.encode(ServerMessage.tick(tick)))
        let sent = hub.transport.send(frame, toAll: audience)
        hub.framesSent += sent
        hub.metrics.sent(frames: sent, bytes: sent * frame.count)
        metrics.relayedTicks.increment()
        if sendsBack && sendingBack { sendBackAfterTick(audience) }
    }

    /// The relayed connections of `room` shown `earlier` are shown `later` from now on.
    private func shown(in room: RoomID, from earlier: ShownTimer, to later: ShownTimer) {
        for connection in relayedByRoom[room] ?? [] where relays[connection]?.shown == earlier {
            relays[connection]?.shown = later
        }
    }

    /// Nobody here is relayed to the room any more: its countdown stops.
    func stopRelayedTicks(of room: RoomID) {
        relayedTimers.removeValue(forKey: room)?.timer.cancel()
        stateReader.forget(room.rawValue)
    }

    /// The server is stopping (its library context is about to be destroyed): no relayed tick from now on.
    func stopRelayedTicks() {
        relayedTicksStopped = true
        for followed in relayedTimers.values { followed.timer.cancel() }
        relayedTimers = [:]
    }
}
