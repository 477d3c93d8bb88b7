import PomodoroCore
import PomodoroNet
import PomodoroProtocol
import PomodoroServer

// `GET /api/rooms/<room>/events` on any node of a cluster (docs/CLUSTER.md, "The control API on a cluster").
//
// The node the request reached asks the room's live owner (`apiwatch`: the client's address and its Bearer
// credential as sent), as a snapshot read is asked. The owner opens the stream as one of its own
// (`HTTPAPI.openEventStream`): the lock, the passcode gate, a member's token are judged there, at delivery
// and again at every change of the lock or removal. Its HTTP refusal comes back as a read's does
// (`apianswer`); once let in, what it writes on the stream (`retry`, the first `state`, every broadcast with
// its own `id`, the heartbeat, the last `event: error`) comes back piece by piece (`apistream`) and is written
// here as it is; when it ends the stream, so does this node (`apistreamend`).
//
// A stream never goes silently dead here: it ends, and the reader's `EventSource` reconnects after `retry`
// (to whichever node now runs the room) and starts again from the room's whole `state`, when the room
// leaves the owner (drained, closed: it ends its streams), when the room's lease is no longer the owner's
// (it is followed as relayed members' is: a failover), when the owner is unheard of for `silentNodeLimit`
// (it died, or stalled), when the stream itself has been silent for longer than two of its keep-alives (a
// node restarted under the same name that took the room back knows nothing of it), and when the bus comes
// back after losing Redis (pieces were lost). A reader this node drops (gone, or too slow: its HTTP stream's
// bound) is `apiunwatch`ed; the owner also forgets a reader whose node is unheard of.

/// The event streams relayed between this node and others, each side's by its request number.
struct RelayedEventStreams {
    /// A reader on this node of a room another node runs: waiting for its first piece, then open.
    struct Reader {
        var room: RoomID
        var owner: String
        var responder: any HTTPAnswering
        var stream: (any HubEventStream)?
        /// When the owner last sent it a piece.
        var heardAt: Instant
    }

    /// Another node's reader of a room run here.
    struct Watcher: Hashable {
        var node: String
        var number: UInt64
    }

    var readers: [UInt64: Reader] = [:]
    var watchers: [Watcher: BusEventStream] = [:]
}

/// A stream of a room run here whose reader is on another node: what the hub writes to it goes over the bus.
/// It does not fall behind here (the reader's node drops a slow reader); once ended or unwatched it refuses
/// every piece, and the room drops it at its next broadcast or heartbeat.
final class BusEventStream: HubEventStream {
    let watcher: RelayedEventStreams.Watcher
    private weak var rooms: ClusterRooms?
    private(set) var ended = false

    init(_ watcher: RelayedEventStreams.Watcher, rooms: ClusterRooms) {
        self.watcher = watcher
        self.rooms = rooms
    }

    func send(_ piece: [UInt8]) -> Bool {
        guard !ended, let rooms else { return false }
        rooms.relaying.publish(.controlAPI(.streamed(to: watcher.node, number: watcher.number,
                                                     piece: String(decoding: piece, as: UTF8.self),
                                                     from: rooms.cluster.node)), to: watcher.node)
        return true
    }

    func finish() {
        guard !ended else { return }
        drop()
        rooms?.relaying.publish(.controlAPI(.streamEnded(to: watcher.node, number: watcher.number,
                                                         from: rooms?.cluster.node ?? "")), to: watcher.node)
    }

    /// Ends it without a word to the reader's node (which asked, or is gone).
    func drop() {
        ended = true
        if rooms?.eventStreams.watchers[watcher] === self { rooms?.eventStreams.watchers[watcher] = nil }
    }
}

/// The owner's answer to another node's watch: a refusal goes back as a read's answer does, a stream as pieces.
/// Used on the service thread only, where the hub answers.
private final class BusStreamAnswer: HTTPAnswering, @unchecked Sendable {
    let watcher: RelayedEventStreams.Watcher
    weak var rooms: ClusterRooms?
    let answer: (HTTPResponse) -> Void

    init(_ watcher: RelayedEventStreams.Watcher, rooms: ClusterRooms, answer: @escaping (HTTPResponse) -> Void) {
        self.watcher = watcher
        self.rooms = rooms
        self.answer = answer
    }

    func respond(_ response: HTTPResponse) -> Bool {
        answer(response)
        return true
    }

    func stream(_ head: HTTPResponse) -> (any HubEventStream)? {
        guard let rooms, rooms.eventStreams.watchers[watcher] == nil else { return nil }
        let stream = BusEventStream(watcher, rooms: rooms)
        rooms.eventStreams.watchers[watcher] = stream
        return stream
    }
}

extension ClusterRooms {
    // MARK: This node's readers of rooms other nodes run

    package func forwardEventStream(of room: RoomID, bearer: String?, address: String, responder: any HTTPAnswering) {
        if cluster.busIsDown { return _ = responder.respond(Self.busDown) }
        let number = waitForAnswer { responder.respond($0) }
        otherOwner(of: room) { [self] owner in
            guard controlAPI.waiting[number] != nil else { return }
            guard let owner else { return answered(number, HTTPAPI.errorResponse(RoomHub.noOpenRoom)) }
            eventStreams.readers[number] = RelayedEventStreams.Reader(room: room, owner: owner, responder: responder,
                                                                      heardAt: hub.clock.now().monotonic)
            // Its lease is watched, as for relayed members (who follow the same owner when there are any).
            if relayedByRoom[room] == nil { cluster.follow(room, owner: owner) }
            relaying.publish(.controlAPI(.watch(from: cluster.node, number: number, room: room.rawValue,
                                                address: address, bearer: bearer ?? "")), to: owner)
        }
    }

    /// A piece of the stream `number` from its owner: the first opens the HTTP answer.
    private func streamed(_ piece: String, number: UInt64, from owner: String) {
        guard var reader = eventStreams.readers[number], reader.owner == owner else { return unwatch(number, at: owner) }
        if reader.stream == nil {
            // Answered meanwhile (the wait ran out): the reader has its 503.
            guard let waiting = controlAPI.waiting.removeValue(forKey: number) else { return endReader(number) }
            waiting.timer.cancel()
            reader.stream = reader.responder.stream(HTTPAPI.eventStreamHead)
        }
        reader.heardAt = hub.clock.now().monotonic
        eventStreams.readers[number] = reader
        guard let stream = reader.stream, stream.send(Array(piece.utf8)) else { return endReader(number) }
    }

    /// Ends this node's reader `number`, telling its owner when `telling`.
    private func endReader(_ number: UInt64, telling: Bool = true) {
        guard let reader = eventStreams.readers.removeValue(forKey: number) else { return }
        reader.stream?.finish()
        refollow(reader.room)
        if telling { unwatch(number, at: reader.owner) }
        hub.logger.debug("relayed event stream ended", metadata: ["owner": "\(reader.owner)", "number": "\(number)"])
    }

    private func unwatch(_ number: UInt64, at owner: String) {
        relaying.publish(.controlAPI(.unwatch(from: cluster.node, number: number)), to: owner)
    }

    /// A watch answered before its stream opened (refused, or not in time) needs no reader any more.
    func forgetUnopenedReader(_ number: UInt64) {
        guard let reader = eventStreams.readers[number], reader.stream == nil else { return }
        eventStreams.readers[number] = nil
        refollow(reader.room)
    }

    /// The owner this node's readers of `room` (open or waiting) are streamed from, if any.
    func streamOwner(of room: RoomID) -> String? {
        eventStreams.readers.values.first { $0.room == room }?.owner
    }

    /// Who `room`'s lease watch follows now that a reader of it, or its last relayed member, is gone: the owner
    /// of the relayed members left, else of its readers left, else nobody.
    func refollow(_ room: RoomID) {
        if relayedByRoom[room] == nil { cluster.follow(room, owner: streamOwner(of: room)) }
    }

    // MARK: Both sides, when nodes go, rooms move or the bus comes back

    /// The node `room`'s readers here are streamed from no longer holds its lease (it failed over, or was
    /// drained): their streams end, and they reconnect to whichever node runs it now. One still waiting for
    /// its owner's answer stays followed: the watch reports the move again on its next turn.
    func eventStreamsOwnerMoved(_ room: RoomID) {
        for (number, reader) in eventStreams.readers where reader.room == room && reader.stream != nil {
            endReader(number)
        }
    }

    /// How long an open stream may go without a piece from its owner, which sends a keep-alive at least every
    /// `HTTPAPI.streamHeartbeat`: two of them, and time for a busy bus.
    static let relayedStreamSilence: Duration = HTTPAPI.streamHeartbeat * 2 + .seconds(5)

    /// On each of the node's beats (`ClusterEvent.nodesAlive`): streams to or from a node unheard of for
    /// `silentNodeLimit` end, and this node's readers whose owner sent nothing for `relayedStreamSilence`; an
    /// owner that was only slow is told, to let its side go.
    func eventStreamsAfterNodesAlive(at now: Instant) {
        for (number, reader) in eventStreams.readers where reader.stream != nil
            && (unheardOf(reader.owner, at: now) || now - reader.heardAt > Self.relayedStreamSilence) {
            endReader(number)
        }
        for (watcher, stream) in eventStreams.watchers where unheardOf(watcher.node, at: now) { stream.drop() }
    }

    /// What either side published while the bus had lost Redis is lost: every relayed stream ends, and its
    /// reader starts again from the room's whole state.
    func eventStreamsAfterResubscribing() {
        for number in eventStreams.readers.keys where eventStreams.readers[number]?.stream != nil { endReader(number) }
        for stream in eventStreams.watchers.values { stream.finish() }
    }

    // MARK: On the bus

    /// An event-stream message of the control API (`ClusterRooms+ControlAPI.swift` hands it here).
    func heardEventStream(_ message: ControlAPIBusMessage) {
        switch message {
        case let .watch(from, number, room, address, bearer):
            guard let id = try? RoomID(validating: room) else { return }
            let watcher = RelayedEventStreams.Watcher(node: from, number: number)
            hub.api.openEventStream(of: id, bearer: bearer.isEmpty ? nil : bearer, address: address,
                                    responder: BusStreamAnswer(watcher, rooms: self, answer: answering(from, number)))
        case let .streamed(to, number, piece, from) where to == cluster.node:
            streamed(piece, number: number, from: from)
        case let .streamEnded(to, number, from) where to == cluster.node:
            guard eventStreams.readers[number]?.owner == from else { return }
            endReader(number, telling: false)
        case let .unwatch(from, number):
            eventStreams.watchers[RelayedEventStreams.Watcher(node: from, number: number)]?.drop()
        case .command, .read, .answer, .streamed, .streamEnded:
            break
        }
    }
}
