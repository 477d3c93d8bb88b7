import PomodoroCore
import PomodoroNet
import PomodoroProtocol
import PomodoroServer

// Members of one room on any node of a cluster (docs/CLUSTER.md). A member whose room another node owns keeps
// its connection here; this node relays: it tells the owner (`opened`), counts each of the member's frames
// against the connection's limits and decodes it once, sends the owner those it would take exactly as sent
// (`frame`), answers the others itself through the owner (`refused`, `closing`: in their turn), and writes
// what the owner sends back (`reply`, `close`) to the connection untouched. The owner's hub sees the
// member's connection as one of its own (numbered by `RemoteConnections`) and answers it by the same code
// as a local member's: admission, passcode, bans, host rights, grace and away on a disconnect. A broadcast reaches each node with members once, with the connections
// it is for: what the owner's hub sends, to whom, is what each member gets.

extension ClusterRooms {
    // MARK: This node's connections, relayed to the owner

    /// Whether a joiner's frames may go to another node: a connection of this node's own whose join came as a
    /// frame (not one already relayed here from another node).
    func relayable(_ connection: ConnectionID) -> Bool {
        !connection.isRemote && joinFrames[connection] != nil && relays[connection] == nil
    }

    /// The room's owner is another live node: the join (or observe) waiting here goes to it, and every later
    /// frame of the connection after it.
    func relayJoin(of connection: ConnectionID, room: RoomID, to owner: String) {
        guard hub.isOpen(connection), let frame = joinFrames.removeValue(forKey: connection) else { return }
        hub.joinLeaves(connection)
        var relay = Relay(room: room, owner: owner, join: frame)
        // This node's own join carrying a member over, gone to another node after all.
        relay.quiet = quietJoins.remove(connection) != nil
        relays[connection] = relay
        relayedByRoom[room, default: []].insert(connection)
        cluster.follow(room, owner: owner)
        open(connection, relay)
        hub.logger.debug("member relayed", metadata: ["room": "\(room)", "connection": "\(connection)", "owner": "\(owner)"])
        // The frames that waited behind the join follow it, in order.
        hub.resume(connection)
    }

    /// Tells the owner of the connection and sends it the connection's join.
    func open(_ connection: ConnectionID, _ relay: Relay) {
        guard let peer = hub.peer(of: connection) else { return }
        let remote = BusMessage.RemoteConnection(node: cluster.node, connection: connection.rawValue)
        relaying.publish(.opened(remote, room: relay.room.rawValue, peer: peer), to: relay.owner)
        relaying.publish(.frame(from: remote, room: relay.room.rawValue, frame: String(decoding: relay.join, as: UTF8.self)),
                         to: relay.owner)
        metrics.forwardedCommands.increment()
    }

    /// One frame of a relayed connection, already counted against its rate (`receive`): decoded once, here.
    /// A frame the server refuses on any node (not JSON, not UTF-8, a bad field; PROTOCOL.md §2) is answered
    /// here with the same error and never reaches Redis; every other frame goes to the owner exactly as the
    /// member sent it.
    func forward(_ text: [UInt8], from connection: ConnectionID, to relay: Relay) {
        let frame: ClientFrame
        do {
            frame = try WireCodec.decodeClientFrame(text)
        } catch {
            return hub.reply(.error(code: error.code, message: error.message, field: error.field, ref: error.ref),
                             to: connection)
        }
        guard let body = String(validating: text, as: UTF8.self) else {
            return hub.reply(.error(code: .badJSON, message: "the message is not valid UTF-8", field: nil, ref: nil),
                             to: connection)
        }
        // Without the bus the owner cannot hear it: the member is told so rather than left waiting (a ping
        // goes on its way: lost, as any frame published meanwhile).
        // (Sent from here: the answers to its earlier frames, which would come through the owner, are lost.)
        if cluster.busIsDown, frame.message != .ping {
            hub.metrics.errorSent(.unavailable)
            let refusal = OutboundFrame(WireCodec.encode(ServerMessage.error(
                code: .unavailable,
                message: "the cluster's Redis cannot be reached: the node running this room cannot be asked just now; try again in a moment",
                field: nil, ref: frame.ref)))
            if hub.transport.send(refusal, to: connection) {
                hub.framesSent += 1
                hub.metrics.sent(frames: 1, bytes: refusal.count)
            }
            return
        }
        // A member leaving is no longer one to carry over to a new owner; once its `ok` is back, the
        // connection's frames are this node's again (it may join another room).
        if case .leave = frame.message {
            relays[connection]?.member = nil
            relays[connection]?.leaving = true
        }
        let remote = BusMessage.RemoteConnection(node: cluster.node, connection: connection.rawValue)
        relaying.publish(.frame(from: remote, room: relay.room.rawValue, frame: body), to: relay.owner)
        metrics.forwardedCommands.increment()
    }

    /// This node's answer to a frame of a relayed connection it did not forward (refused, or too fast): sent to
    /// the owner, which sends it back in the frame's turn (`BusMessage.refused`), so that the member hears its
    /// answers in the order of its frames, as on one server.
    func answerThroughOwner(_ frame: OutboundFrame, to connection: ConnectionID, _ relay: Relay) {
        let remote = BusMessage.RemoteConnection(node: cluster.node, connection: connection.rawValue)
        relaying.publish(.refused(from: remote, room: relay.room.rawValue,
                                  answer: String(decoding: frame.payload, as: UTF8.self)), to: relay.owner)
    }

    /// This node closes a relayed connection (it kept flooding) once the answers to its earlier frames, still on
    /// their way through the owner, are out: the owner sends the close back in its turn (`BusMessage.closing`),
    /// as `close`. Nothing more of the connection is relayed meanwhile.
    func closeThroughOwner(_ connection: ConnectionID, _ relay: Relay, code: UInt16, reason: String) {
        relays[connection]?.closing = true
        let remote = BusMessage.RemoteConnection(node: cluster.node, connection: connection.rawValue)
        relaying.publish(.closing(from: remote, room: relay.room.rawValue, code: code, reason: reason), to: relay.owner)
    }

    /// The connection's frames no longer go to `relay.owner` (it closed, or the room moved): the owner is told
    /// (`closed`, treated there as a disconnect, `ended` as it was) when `telling`.
    func endRelay(of connection: ConnectionID, _ relay: Relay, telling: Bool, ended: ConnectionEnd = .lost) {
        relays[connection] = nil
        relayedByRoom[relay.room]?.remove(connection)
        if relayedByRoom[relay.room]?.isEmpty ?? false {
            relayedByRoom[relay.room] = nil
            refollow(relay.room)
            stopRelayedTicks(of: relay.room)
        }
        guard telling else { return }
        relaying.publish(.closed(BusMessage.RemoteConnection(node: cluster.node, connection: connection.rawValue),
                                 room: relay.room.rawValue, ended: ended),
                         to: relay.owner)
    }

    /// A message for this node from the bus (`ClusterEvent.heard`).
    package func heard(_ event: ClusterEvent) {
        guard !hub.stopped || hub.handingOff && event.feedsRelayedMembers else { return }
        switch event {
        case .heard(let message):
            metrics.busReceived.increment()
            heard(message, node: cluster.node)
        case .ownerMoved(let room):
            ownerMoved(room)
        case .ownerRetook(let room, let owner):
            hub.logger.notice("the node running a room took it again (restarted?); its relayed members join it anew",
                              metadata: ["room": "\(room)", "owner": "\(owner)"])
            eventStreamsOwnerMoved(room)
            rehome(room, after: .elsewhere(node: owner), anew: true)
        case .resubscribed:
            hub.logger.notice("the bus is back after losing Redis; relayed members are brought up to date")
            metrics.busReconnects.increment()
            resubscribed()
            eventStreamsAfterResubscribing()
        case .nodesAlive(let alive):
            nodesAlive(alive)
            eventStreamsAfterNodesAlive(at: hub.clock.now().monotonic)
            resyncRound()
        }
    }

    private func heard(_ message: BusMessage, node: String) {
        hub.logger.trace("bus message heard", metadata: ["header": "\(message.encoded.prefix { $0 != "\n" })"])
        switch message {
        case .reply(let to, let connections, let frame, let from) where to == node:
            // What a former owner still sends (it stalled, and the room moved meanwhile) is dropped.
            func current(_ connection: ConnectionID) -> Bool {
                guard let relay = relays[connection] else { return false }
                return from.isEmpty || relay.owner == from
            }
            // A room's state replicated here: its relayed members' ticks are counted down from it, once the
            // frame is out (those of the seconds it missed on its way come after it, as the owner's do).
            let snapshot = replicatedSnapshot(in: frame)
            let shownTo = snapshot == nil ? [] : connections.map(ConnectionID.init(rawValue:)).filter(current)
            let room = shownTo.first.flatMap { relays[$0]?.room }
            defer { if let snapshot, let room { replicated(snapshot, room: room, to: shownTo) } }
            // A tick the owner's members heard ahead of it goes first (this node's timer woke later).
            if let snapshot, let room { tickBefore(snapshot, in: room) }
            if connections.count == 1, current(ConnectionID(rawValue: connections[0])),
               answeredQuietly(ConnectionID(rawValue: connections[0]), frame) { return }
            let outbound = OutboundFrame(frame)
            var sent = 0
            for number in connections {
                let connection = ConnectionID(rawValue: number)
                guard current(connection) else { continue }
                relays[connection]?.answered = true
                if hub.transport.send(outbound, to: connection) { sent += 1 }
                if let relay = relays[connection], relay.leaving, connections.count == 1,
                   case .ok("leave", _, _)? = try? WireCodec.decodeServerMessage(Array(frame.utf8)) {
                    endRelay(of: connection, relay, telling: true)
                }
            }
            hub.framesSent += sent
            hub.metrics.sent(frames: sent, bytes: sent * outbound.count)
        case .close(let to, let code, let reason, let from) where to.node == node:
            let connection = ConnectionID(rawValue: to.connection)
            guard let relay = relays[connection], from.isEmpty || relay.owner == from else { return }
            // Sent back for a restart (the owner drains): its owner, or the room's next one, hears so at its close.
            if code == RoomHub.restartCloseCode { relays[connection]?.sentBackForRestart = true }
            hub.transport.close(connection, code: code, reason: reason)
        case .opened(let from, _, let peer):
            // Opened again (its node's bus lost our answers and sends its join anew): a fresh start, the old
            // session disconnected as a dropped connection is; but a member's from before the bus lost Redis
            // is kept aside for its join with the member's token (`keepAside`).
            if let earlier = relaying.remotes.existing(from), !keepAside(earlier) { hub.closed(earlier, ended: .lost) }
            let (connection, _) = relaying.remotes.id(for: from)
            hub.opened(connection, peer: peer.isEmpty ? from.node : peer)
        case .frame(let from, _, let frame):
            // An `opened` lost on the bus: the connection is opened by its first frame.
            let (connection, isNew) = relaying.remotes.id(for: from)
            if isNew { hub.opened(connection, peer: from.node) }
            hub.received(Array(frame.utf8), from: connection)
        case .refused(let from, _, let answer):
            let (connection, isNew) = relaying.remotes.id(for: from)
            if isNew { hub.opened(connection, peer: from.node) }
            hub.receive(.answered(Array(answer.utf8)), from: connection)
        case .closing(let from, _, let code, let reason):
            guard let connection = relaying.remotes.existing(from) else { return }
            hub.receive(.close(code: code, reason: reason), from: connection)
        case .closed(let from, _, let ended):
            guard let connection = relaying.remotes.existing(from) else { return }
            hub.closed(connection, ended: ended)
        case .handOff(let names, let from):
            takeHandedOff(names.compactMap { try? RoomID(validating: $0) }, from: from)
        case .controlAPI(let message):
            heard(message)
        case .reply, .close, .schedulesChanged:
            break   // for another node, or heard by `ScheduleWatch` on its own channel
        }
    }

    /// A reply for one relayed connection: a welcome is read for the member's name and token (to carry the
    /// member over to a new owner later); the answer to this node's own join for it is turned into what the
    /// member needs (a `state`), or ends in 4005 when refused. Returns whether the frame was dealt with.
    private func answeredQuietly(_ connection: ConnectionID, _ frame: String) -> Bool {
        guard let relay = relays[connection] else { return false }
        let welcome: (you: YouPayload, room: SnapshotPayload)?
        if frame.utf8.count < 4096 ? frame.contains("\"welcome\"") : frame.prefix(40).contains("\"welcome\""),
           case .welcome(let you, let room, _, _, _)? = try? WireCodec.decodeServerMessage(Array(frame.utf8)) {
            welcome = (you, room)
            if let name = room.members.first(where: { $0.id == you.id })?.name {
                relays[connection]?.member = (name, you.token)
            }
        } else {
            welcome = nil
        }
        guard relay.quiet else { return false }
        // An observer's `observe` sent again is answered `observing`: the room, as a welcome's.
        var room = welcome?.room
        if room == nil, frame.utf8.starts(with: #"{"type":"observing""#.utf8),
           case .observing(let observed, _, _)? = try? WireCodec.decodeServerMessage(Array(frame.utf8)) {
            room = observed
        }
        if resyncing[connection] != nil, let done = resyncAnswered(connection, relay, welcome: room, frame) { return done }
        relays[connection]?.quiet = false
        relays[connection]?.answered = true
        guard let room else {
            endRelay(of: connection, relay, telling: true)
            hub.transport.close(connection, code: 4005, reason: "room moved")
            return true
        }
        hub.reply(.state(room), to: connection)
        return true
    }

    /// The frame that puts a relayed connection back in its room quietly (its answer goes to it as a
    /// `state`): a member's `join` with its token, an observer's own `observe` again; nil for one that cannot
    /// be (a member whose welcome was not read, one leaving), which resumes by itself after a 4005.
    func rejoinFrame(for relay: Relay) -> [UInt8]? {
        guard !relay.leaving else { return nil }
        if let member = relay.member {
            return WireCodec.encode(ClientFrame(.join(room: relay.room.rawValue, name: member.name, token: member.token),
                                                ref: nil))
        }
        if case .observe? = try? WireCodec.decodeClientFrame(relay.join).message { return relay.join }
        return nil
    }

    /// How long a node with connections here may go unheard before they are taken for gone: longer than a
    /// node's beats can be missing from the registry after Redis restarted (they come back within a second).
    static let silentNodeLimit: Duration = .seconds(4)

    /// Connections of a node unheard of for `silentNodeLimit` (it died without sending `closed`): their
    /// members are disconnected, as local members whose connection dropped. The node is still told to close
    /// them with 4005: one that was only slow (a saturated machine misses beats) would otherwise keep its
    /// members connected to a room that no longer sends them anything; closed, they resume with their tokens.
    private func nodesAlive(_ alive: Set<String>) {
        let now = hub.clock.now().monotonic
        forgiveUnreadSilence(at: now)
        for node in alive { nodesLastSeen[node] = now }
        for connection in relaying.remotes.all {
            guard let node = relaying.remotes.remote(connection)?.node else { continue }
            if unheardOf(node, at: now) {
                hub.transport.close(connection, code: 4005, reason: "room moved")
                hub.closed(connection, ended: .lost)
            }
        }
    }

    /// Whether `node` has been missing from the registry of live nodes for `silentNodeLimit`; a node first
    /// asked of is counted from now.
    func unheardOf(_ node: String, at now: Instant) -> Bool {
        let seen = nodesLastSeen[node] ?? now
        nodesLastSeen[node] = seen
        return now - seen >= Self.silentNodeLimit
    }

    /// The node this node's members of `room` (or its event streams' readers) are relayed to no longer holds
    /// its lease: the room is taken here if nobody holds it, or followed to the node that does.
    private func ownerMoved(_ room: RoomID) {
        eventStreamsOwnerMoved(room)
        guard relayedByRoom[room] != nil else { return refollow(room) }
        if hub.rooms[room] != nil { return rehome(room, after: .owned(nil)) }
        // A take already under way (a join's) re-homes them when it answers.
        guard hub.awaitLookUp(room) else { return }
        take(room)
    }

    /// After a take of `room`: this node's connections relayed to a node that no longer runs it go on with
    /// the room's new owner, without reconnecting. One whose join was not answered yet sends it again, here
    /// or to the new owner. A member already in the room is joined again by this node with its token (its
    /// name and token were read from its welcome), and hears the room as it is now as a `state` in place
    /// of the welcome; what it sent to the old owner and had no answer to is lost with it. A member whose
    /// welcome this node could not read is closed with 4005 (room moved) and resumes by itself
    /// (PROTOCOL.md §11).
    /// `anew`: the owner is the same node, under a new epoch (`ClusterEvent.ownerRetook`): the connections
    /// relayed to it are opened and joined again there, as for a new owner.
    func rehome(_ room: RoomID, after taken: ClusterTake, anew: Bool = false) {
        guard let relayed = relayedByRoom[room], !relayed.isEmpty else { return }
        let owner: String?
        switch taken {
        case .owned: owner = nil
        case .elsewhere(let node) where node == cluster.node: owner = nil   // taken here meanwhile
        case .elsewhere(let node): owner = node
        case .failed: return   // tried again on the watch's next turn
        }
        let now = hub.clock.now()
        for connection in relayed.sorted(by: { $0.rawValue < $1.rawValue }) {
            guard var relay = relays[connection], relay.owner != owner || anew else { continue }
            endRelay(of: connection, relay, telling: true)
            // Its close was on its way through the old owner: closed here now.
            if relay.closing {
                hub.transport.close(connection, code: 1008, reason: "rate limit")
                continue
            }
            if relay.answered {
                guard let rejoin = rejoinFrame(for: relay) else {
                    hub.transport.close(connection, code: 4005, reason: "room moved")
                    continue
                }
                relay.join = rejoin
                relay.quiet = true
                relay.answered = false
            }
            if let owner {
                var moved = relay
                moved.owner = owner
                relays[connection] = moved
                relayedByRoom[room, default: []].insert(connection)
                cluster.follow(room, owner: owner)
                open(connection, moved)
            } else {
                if relay.quiet { quietJoins.insert(connection) } else { quietJoins.remove(connection) }
                hub.handle(relay.join, from: connection, at: now)
            }
        }
    }

    /// The bus came back after losing Redis: whatever was published meanwhile is lost, both ways. The members
    /// are brought up to date without a close (`ClusterRooms+Resync.swift`).
    private func resubscribed() { resynchronise() }
}
