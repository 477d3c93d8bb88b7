import PomodoroCore
import PomodoroNet
import PomodoroProtocol
import PomodoroServer

// After the bus lost Redis (docs/CLUSTER.md, "Failure modes"): whatever nodes published to each other
// meanwhile is lost, both ways, so a member relayed through another node may have missed ticks and states
// and the owner may hold sessions for connections that closed meanwhile. Nobody is closed for it: the
// relaying node joins each of its members again to the owner with the member's token, as when a room moves
// (`rehome`), and the member hears the room as it is now as a `state` (PROTOCOL.md §11: what a resume
// sends). The owner keeps other nodes' connections from before the outage until their node opens them
// again; those still unopened after `resyncLimit` (their member left meanwhile, or could not be joined
// again) are closed as before. A member's connection opened again resumes the member without a presence
// change (`keepAside`): nobody hears that they left or came back.

extension ClusterRooms {
    /// How long after the bus came back an owner waits for other nodes to open their connections again, and
    /// how long a relaying node waits for the owner's answer before sending the join once more (the owner's
    /// bus may come back after this node's, and what was sent before is lost).
    static let resyncLimit: Duration = .seconds(5)
    static let resyncRetry: Duration = .seconds(2)

    /// The bus subscribed again after losing Redis (`ClusterEvent.resubscribed`).
    func resynchronise() {
        let now = hub.clock.now().monotonic
        // The owner's side: its bus delivers nothing from the new subscription before this event, so every
        // other node's connection here is one from before the outage.
        let remotes = Set(relaying.remotes.all)
        if !remotes.isEmpty {
            unconfirmedRemotes = ((unconfirmedRemotes?.connections ?? []).union(remotes), now)
        }
        // The relaying side: the rooms' countdowns go on as while the bus was away until the owner's `state`
        // (`ClusterRooms+RelayedTicks.swift`); each member joined again with its token, each join not yet
        // answered sent again.
        for followed in relayedTimers.values { followed.awaitingOwner = true }
        for connections in relayedByRoom.values {
            for connection in connections.sorted(by: { $0.rawValue < $1.rawValue }) {
                guard var relay = relays[connection] else { continue }
                if relay.closing {
                    // Its close was on its way through the owner, and lost: closed here now.
                    endRelay(of: connection, relay, telling: true)
                    hub.transport.close(connection, code: 1008, reason: "rate limit")
                    continue
                }
                if relay.answered {
                    // A member joins again with its token, an observer observes again; one that cannot (a
                    // member whose welcome was not read, one leaving) resumes by itself.
                    guard let rejoin = rejoinFrame(for: relay) else {
                        endRelay(of: connection, relay, telling: true)
                        hub.transport.close(connection, code: 4005, reason: "room moved")
                        continue
                    }
                    relay.join = rejoin
                    relay.quiet = true
                    relay.answered = false
                    relays[connection] = relay
                    resyncing[connection] = now
                }
                open(connection, relay)
            }
        }
    }

    /// The answer to a member's join sent by `resynchronise`, or what the owner still sent its former session:
    /// returns whether it was dealt with here (nil: as any quiet join's answer).
    func resyncAnswered(_ connection: ConnectionID, _ relay: Relay, welcome: SnapshotPayload?, _ frame: String) -> Bool? {
        if welcome != nil {
            resyncing[connection] = nil
            return nil   // sent to the member as a `state`
        }
        // A refusal of the join (its token no longer known): the member resumes by itself, as before.
        if case .error? = try? WireCodec.decodeServerMessage(Array(frame.utf8)) {
            resyncing[connection] = nil
            return nil
        }
        // A tick or state for the session the owner is letting go: the `state` after the welcome says it all.
        return true
    }

    /// Another node opens again one of its connections from before the outage (`BusMessage.opened`, sent by
    /// its `resynchronise`). A member's session is not disconnected: it is kept aside, no longer reached, for
    /// the join with the member's token that follows on the connection's new number. That join proves it is
    /// the same member and takes the member over as one that joined again from another connection (the hub
    /// lets the older session go without a presence change): the member stays connected, with their place,
    /// task and focus credit. A session kept aside that no such join took over is disconnected at
    /// `resyncLimit`, as a connection not opened again. Returns whether `earlier` was kept aside.
    func keepAside(_ earlier: ConnectionID) -> Bool {
        guard var unconfirmed = unconfirmedRemotes, unconfirmed.connections.contains(earlier),
              hub.holdsMember(earlier) else { return false }
        unconfirmed.connections.remove(earlier)
        unconfirmedRemotes = unconfirmed
        relaying.remotes.forget(earlier)   // what the hub sends it goes nowhere; the remote gets a new number
        keptAside.insert(earlier)
        return true
    }

    /// While this node could not read the registry (Redis away) nobody's silence was seen: the nodes it knew
    /// are counted as heard when it reads it again, so that a node whose first beat on a Redis that came back
    /// empty is not in yet keeps its connections here (`nodesAlive`; a node dead meanwhile is still let go
    /// `silentNodeLimit` later).
    func forgiveUnreadSilence(at now: Instant) {
        defer { nodesReadAt = now }
        guard let last = nodesReadAt, now - last > .seconds(2) else { return }
        for node in nodesLastSeen.keys { nodesLastSeen[node] = now }
    }

    /// On each of the node's beats (`ClusterEvent.nodesAlive`, every second): joins sent by `resynchronise`
    /// still unanswered go again; the owner's connections from before the outage that nobody opened again are
    /// closed.
    func resyncRound() {
        let now = hub.clock.now().monotonic
        for (connection, sent) in resyncing {
            guard let relay = relays[connection], relay.quiet else {
                resyncing[connection] = nil
                continue
            }
            guard now - sent >= Self.resyncRetry, !cluster.busIsDown else { continue }
            resyncing[connection] = now
            open(connection, relay)
        }
        guard let unconfirmed = unconfirmedRemotes, now - unconfirmed.since >= Self.resyncLimit else { return }
        unconfirmedRemotes = nil
        for connection in unconfirmed.connections.sorted(by: { $0.rawValue < $1.rawValue })
        where relaying.remotes.remote(connection) != nil {
            hub.transport.close(connection, code: 4005, reason: "room moved")
            hub.closed(connection, ended: .lost)
        }
        // Taken over by their member's join (a session without a member now), or still the member's: let go.
        for connection in keptAside.sorted(by: { $0.rawValue < $1.rawValue }) { hub.closed(connection, ended: .lost) }
        keptAside = []
    }
}
