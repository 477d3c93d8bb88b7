import Dispatch
import PomodoroCore
import PomodoroNet
import PomodoroServer

// Draining (docs/CLUSTER.md, "Draining a node"): the node that takes the rooms a draining node handed it, and
// the draining node's members of rooms other nodes run (relayed), sent back through the proxy without a gap.

extension ClusterRooms {
    /// Another node, draining, gave the leases of `ids` back and asks this one to run the rooms: take them
    /// together (`HubCluster.takeHandedOff`: one lease script, one claim transaction) and bring each back
    /// from the store, with its members as they were (they come back with their tokens) and its timer going
    /// on from its stored end. A join or a follower here that took a room first has it already; another
    /// node that won the race keeps it.
    func takeHandedOff(_ ids: [RoomID], from node: String) {
        guard !hub.stopped, !hub.handingOff else { return }
        var room = hub.rooms.count + handedOffTaking.count
        var taking: [RoomID] = []
        for id in ids where hub.rooms[id] == nil && !handedOffTaking.contains(id) && !taking.contains(id) {
            guard room < hub.configuration.limits.maxRooms else {
                hub.logger.warning("a room handed off was not taken: this node holds as many rooms as it may",
                                   metadata: ["room": "\(id)", "from": "\(node)"])
                continue
            }
            room += 1
            taking.append(id)
        }
        guard !taking.isEmpty else { return }
        handedOffTaking.formUnion(taking)
        let back = back
        cluster.takeHandedOff(taking) { answers in back { $0.tookHandedOff(answers, from: node) } }
    }

    private func tookHandedOff(_ answers: [(RoomID, ClusterTake)], from node: String) {
        for (id, taken) in answers {
            handedOffTaking.remove(id)
            switch taken {
            case .owned(let stored):
                metrics.leasesTaken.increment()
                guard !hub.stopped, hub.rooms[id] == nil, let stored else { hub.letGoIfUnused(id); continue }
                let entry = hub.bringBack(stored, at: hub.clock.now(), handedOff: true)
                hub.logger.info("took a room handed off by a draining node", metadata: [
                    "room": "\(id)", "from": "\(node)", "members": "\(entry.room.memberCount)"])
                // Members of this node relayed to the draining one are in the room here now.
                rehome(id, after: taken)
            case .elsewhere(let owner):
                hub.logger.debug("a room handed off runs elsewhere", metadata: ["room": "\(id)", "owner": "\(owner)"])
                rehome(id, after: taken)
            case .failed(let reason):
                hub.logger.warning("could not take a room handed off", metadata: ["room": "\(id)", "error": "\(reason)"])
                hub.letGoIfUnused(id)
            }
        }
    }

    /// This node is draining and takes no room, and the owner `id`'s members here were relayed to has gone:
    /// they follow the live node that holds it now, if any (their node carries them over, as whenever a room
    /// moves). With none, they are sent back through the proxy (1012) at once, and their joins elsewhere
    /// bring the room back there.
    func followWhileHandingOff(_ id: RoomID) {
        let back = back
        cluster.owner(of: id) { owner in
            back { rooms in
                guard let relayed = rooms.relayedByRoom[id], !relayed.isEmpty else { return }
                if let owner { return rooms.rehome(id, after: .elsewhere(node: owner)) }
                for connection in relayed {
                    guard let relay = rooms.relays[connection] else { continue }
                    rooms.hub.transport.close(connection, code: RoomHub.restartCloseCode, reason: RoomHub.restartCloseReason)
                    rooms.endRelay(of: connection, relay, telling: true, ended: .restart)
                }
            }
        }
    }

    /// How long a draining node waits at most for a relayed member's room to tick before sending it back
    /// all the same (a second, and a margin: its room's next second may be its phase's end, which brings
    /// no tick). Until its close, a member still gets every frame of its room from the owner.
    static let relayedTickWait = Duration.milliseconds(1_100)
    /// How long a draining node waits at most for the owner of a relayed member's room to answer it (its
    /// join, or its carrying over to a room's new owner) before sending it back all the same.
    static let relayedAnswerBound = Duration.seconds(2)
    /// How often a draining node looks again for relayed members whose owner has not answered yet.
    static let relayedAnswerPoll = DispatchTimeInterval.milliseconds(50)

    /// At the end of a drain (every room of this node handed off, or the bound passed): this node's members
    /// of rooms other nodes run are sent back through the proxy as its own members were (close 1012, which
    /// the page and `pomo` follow at once with their token), each right after its room's next tick, which it
    /// hears first (`relayedTickWait` at most), so that its way back starts from a second it heard; the
    /// rooms' ticks spread the closes over a second. Each goes only once its room's owner is known and has
    /// answered it: a relayed
    /// member whose join, or carrying over to a new owner, is still on its way waits for the answer,
    /// `relayedAnswerBound` at most. `done` runs on the service thread once every one was closed.
    /// The drain goes on as soon as the last of them is closed: a node with none relayed waits for nothing.
    package func sendRelayedMembersBack(done: @escaping @Sendable () -> Void) {
        let started = hub.clock.now().monotonic
        let logger = hub.logger
        sendBack(RelayedSendBack(giveUpAt: started + Self.relayedAnswerBound, done: { [clock = hub.clock] sent in
            let ms = (clock.now().monotonic - started).milliseconds
            logger.info("draining: members of rooms other nodes run sent back", metadata: ["members": "\(sent)", "ms": "\(ms)"])
            done()
        }))
    }

    /// One round of `sendRelayedMembersBack`, on the service thread.
    private func sendBack(_ state: RelayedSendBack) {
        var state = state
        let now = hub.clock.now().monotonic
        var waiting = false
        let back = back
        for (connection, relay) in relays where !state.closing.contains(connection) && !relay.closing {
            guard (relay.answered && !relay.quiet) || now >= state.giveUpAt else {
                waiting = true
                continue
            }
            state.closing.insert(connection)
            relays[connection]?.sendBackAfterTick = true
            let wait = Double(Self.relayedTickWait.milliseconds) / 1_000
            DispatchQueue.global().asyncAfter(deadline: .now() + wait) { back { $0.sendRelayedBack(connection) } }
        }
        if waiting {
            let next = state
            DispatchQueue.global().asyncAfter(deadline: .now() + Self.relayedAnswerPoll) { back { $0.sendBack(next) } }
        } else {
            let done = state.done
            let closing = state.closing
            awaitRelayedSendBacks(closing, until: now + Self.relayedTickWait + .milliseconds(100)) {
                done(closing.count)
            }
        }
    }

    /// Once none of `closing` is open any more (each closed right after its room's tick, or at
    /// `relayedTickWait`), or at `bound`: the members of this node's own rooms are waited for, then `done`.
    private func awaitRelayedSendBacks(_ closing: Set<ConnectionID>, until bound: Instant,
                                       then done: @escaping @Sendable () -> Void) {
        guard closing.contains(where: { hub.isOpen($0) && relays[$0] != nil }), hub.clock.now().monotonic < bound else {
            return awaitOwnSendBacks(done)
        }
        let back = back
        DispatchQueue.global().asyncAfter(deadline: .now() + Self.relayedAnswerPoll) {
            back { $0.awaitRelayedSendBacks(closing, until: bound, then: done) }
        }
    }

    /// The relayed connections among `heard`, which were just sent their room's tick, that a drain sends back
    /// (`sendRelayedMembersBack`): closed now, right after it.
    func sendBackAfterTick(_ heard: some Sequence<ConnectionID>) {
        for connection in heard where relays[connection]?.sendBackAfterTick == true { sendRelayedBack(connection) }
    }

    /// Closes relayed `connection` with 1012, if still open, and tells its room's owner.
    private func sendRelayedBack(_ connection: ConnectionID) {
        guard let relay = relays[connection], hub.isOpen(connection) else { return }
        hub.transport.close(connection, code: RoomHub.restartCloseCode, reason: RoomHub.restartCloseReason)
        // The hub, stopped, tells the router of no close: the owner hears of it here, a restart's.
        endRelay(of: connection, relay, telling: true, ended: .restart)
    }

    /// The members of this node's own rooms, sent back each at its room's next second once another node
    /// took the room (`RoomHub.sendBackAfterNextSecond`, within a second), are closed before the drain's
    /// end closes every connection left: `done` runs once none waits.
    private func awaitOwnSendBacks(_ done: @escaping @Sendable () -> Void) {
        guard !hub.sendingBack.isEmpty else { return done() }
        let back = back
        DispatchQueue.global().asyncAfter(deadline: .now() + Self.relayedAnswerPoll) { back { $0.awaitOwnSendBacks(done) } }
    }
}

extension ClusterEvent {
    /// What a draining node still acts on, its own rooms stopped: what the owners send its relayed members
    /// (they hear their rooms until they are sent back, at the drain's end), and their rooms' owners moving.
    var feedsRelayedMembers: Bool {
        switch self {
        case .heard(.reply), .heard(.close), .ownerMoved, .ownerRetook: true
        default: false
        }
    }
}

/// What a drain's `sendRelayedMembersBack` carries from one round to the next (each round runs on the
/// service thread, posted by `ClusterRooms.back`, and hands its copy on).
private struct RelayedSendBack: Sendable {
    let giveUpAt: Instant
    /// Runs once every one was closed, with how many were sent back.
    let done: @Sendable (Int) -> Void
    /// The relayed connections whose close is on its way.
    var closing: Set<ConnectionID> = []
}
