import PomodoroCore
import PomodoroNet
import PomodoroProtocol
import PomodoroServer
import PomodoroStore

// The control API on a cluster (docs/CLUSTER.md, "The control API on a cluster"): any node answers.
//
// `POST /api/rooms/<room>/commands` reaching a node that does not run the room: the node takes the room as a
// first join would (`HubCluster.take`). Taken here, the command is carried out here; run by another node, it
// goes there on the bus (`ControlAPIBusMessage.command`, the token as its hash), the owner carries it out as
// one of its own (`HTTPAPI.carryCommand`: the token judged by `RoomAccess.commandVerdict` at that moment)
// and sends the HTTP answer back (`.answer`), which this node gives to the request. A request not answered
// within `controlAPIPatience`, or sent while the bus has lost Redis, is answered `503` `unavailable` with
// `Retry-After`. `POST /api/rooms` takes the room's lease here before making it. An event stream is asked of
// the owner as a snapshot read is, and relayed piece by piece (`ClusterRooms+EventStreams.swift`).

/// This node's control-API requests waiting for a room's owner, by number.
struct ControlAPIRequests {
    var next: UInt64 = 0
    var waiting: [UInt64: (answer: (HTTPResponse) -> Void, timer: any HubTimer)] = [:]
}

extension ClusterRooms: ControlAPIForwarding {
    /// How long a request waits for the room to be taken or for its owner's answer.
    static let controlAPIPatience: Duration = .seconds(3)

    package func forwardCommand(_ body: [UInt8], room: RoomID, tokenHash: String,
                                answer: @escaping (HTTPResponse) -> Void) {
        guard let text = String(validating: body, as: UTF8.self) else {
            return answer(HTTPAPI.wireError(Refusal(code: .badJSON, message: "the message is not valid UTF-8")))
        }
        if cluster.busIsDown { return answer(Self.busDown) }
        let number = waitForAnswer(answer)
        // A live owner is asked as it is; otherwise the room is taken only when the store holds it and the
        // token is one of its own: a request leaves no lease, epoch or fence behind for a room nobody made.
        otherOwner(of: room) { [self] owner in
            if let owner { return tookForCommand(room, .elsewhere(node: owner), number: number, body: text, tokenHash: tokenHash) }
            guard let store = hub.store else { return take(forCommand: room, number: number, body: text, tokenHash: tokenHash) }
            let back = back
            store.read({ (store: any RoomStore) throws(StoreError) in try store.loadRoom(room) }) { read in
                back { $0.readForCommand(room, read, number: number, body: text, tokenHash: tokenHash) }
            }
        }
    }

    /// The store's answer for a command waiting as `number` whose room has no live owner: taken when it is
    /// stored and holds the token, refused as the owner would refuse it otherwise.
    private func readForCommand(_ room: RoomID, _ read: Result<StoredRoom?, StoreError>, number: UInt64, body: String,
                                tokenHash: String) {
        guard controlAPI.waiting[number] != nil else { return }   // timed out meanwhile
        // Taken meanwhile by a join here: carried out here.
        if hub.rooms[room] != nil { return carryHere(room, number: number, body: body, tokenHash: tokenHash) }
        switch read {
        case .failure:
            answered(number, HTTPAPI.wireError(Refusal(code: .storeUnavailable, message: "the room could not be read; try again")))
        case .success(nil):
            answered(number, HTTPAPI.wireError(Self.noSuchRoom))
        case .success(let stored?) where stored.apiToken(hash: tokenHash) == nil:
            answered(number, HTTPAPI.notAnAPIToken)
        case .success:
            take(forCommand: room, number: number, body: body, tokenHash: tokenHash)
        }
    }

    private func take(forCommand room: RoomID, number: UInt64, body: String, tokenHash: String) {
        let back = back
        cluster.take(room) { taken in back { $0.tookForCommand(room, taken, number: number, body: body, tokenHash: tokenHash) } }
    }

    private static let noSuchRoom = Refusal(code: .notFound, message: "no room of that name", field: "room")

    /// The take's answer for a command waiting as `number`: carried out here, or sent to the owner.
    private func tookForCommand(_ room: RoomID, _ taken: ClusterTake, number: UInt64, body: String, tokenHash: String) {
        guard controlAPI.waiting[number] != nil else { return hub.letGoIfUnused(room) }   // timed out meanwhile
        switch taken {
        case .owned(let stored):
            metrics.leasesTaken.increment()
            if hub.rooms[room] == nil {
                guard let stored else {
                    hub.letGoIfUnused(room)
                    return answered(number, HTTPAPI.wireError(Self.noSuchRoom))
                }
                guard !hub.rooms.isFull else {
                    hub.letGoIfUnused(room)
                    return answered(number, HTTPAPI.wireError(Refusal(code: .roomLimit,
                                                                      message: "the server holds as many rooms as it may")))
                }
                _ = hub.bringBack(stored, at: hub.clock.now())
            }
            carryHere(room, number: number, body: body, tokenHash: tokenHash)
        case .elsewhere(let node) where node == cluster.node:
            carryHere(room, number: number, body: body, tokenHash: tokenHash)
        case .elsewhere(let node):
            if cluster.busIsDown { return answered(number, Self.busDown) }
            relaying.publish(.controlAPI(.command(from: cluster.node, number: number, room: room.rawValue,
                                                  tokenHash: tokenHash, body: body)), to: node)
            metrics.forwardedCommands.increment()
        case .failed(let reason):
            hub.logger.error("could not take a room for an API command", metadata: ["room": "\(room)", "error": "\(reason)"])
            answered(number, HTTPAPI.unavailable("the cluster could not be asked who runs the room; try again"))
        }
    }

    private func carryHere(_ room: RoomID, number: UInt64, body: String, tokenHash: String) {
        hub.api.carryCommand(Array(body.utf8), room: room, tokenHash: tokenHash) { [self] response in
            answered(number, response)
        }
    }

    package func forwardSnapshotRead(of room: RoomID, bearer: String?, address: String,
                                     answer: @escaping (HTTPResponse) -> Void) {
        if cluster.busIsDown { return answer(Self.busDown) }
        let number = waitForAnswer(answer)
        otherOwner(of: room) { [self] owner in
            guard controlAPI.waiting[number] != nil else { return }
            guard let owner else { return answered(number, HTTPAPI.errorResponse(RoomHub.noOpenRoom)) }
            relaying.publish(.controlAPI(.read(from: cluster.node, number: number, room: room.rawValue,
                                               address: address, bearer: bearer ?? "")), to: owner)
        }
    }

    package func takeForCreation(_ room: RoomID, done: @escaping (CreationTake) -> Void) {
        if cluster.busIsDown {
            return done(.failed(Refusal(code: .unavailable, message: "the cluster's Redis cannot be reached just now; try again")))
        }
        let back = back
        let bound = LoopBound(done, loop: hub.transport.loop)
        cluster.take(room) { taken in
            back { rooms in
                switch taken {
                case .owned(nil) where rooms.hub.rooms[room] == nil:
                    rooms.metrics.leasesTaken.increment()
                    bound.value(.free)
                case .owned, .elsewhere:
                    bound.value(.exists)
                case .failed(let reason):
                    rooms.hub.logger.error("could not take a room to make it", metadata: ["room": "\(room)", "error": "\(reason)"])
                    bound.value(.failed(Refusal(code: .unavailable, message: "the cluster could not be asked; try again")))
                }
            }
        }
    }

    // MARK: Waiting for an answer

    func waitForAnswer(_ answer: @escaping (HTTPResponse) -> Void) -> UInt64 {
        controlAPI.next += 1
        let number = controlAPI.next
        let timer = hub.transport.timer { [unowned self] in
            answered(number, HTTPAPI.unavailable(
                "the node running the room did not answer in time; try again"))
        }
        timer.schedule(afterNanoseconds: Self.controlAPIPatience.nanoseconds)
        controlAPI.waiting[number] = (answer, timer)
        return number
    }

    /// Gives request `number` its answer, once.
    func answered(_ number: UInt64, _ response: HTTPResponse) {
        guard let waiting = controlAPI.waiting.removeValue(forKey: number) else { return }
        waiting.timer.cancel()
        forgetUnopenedReader(number)
        waiting.answer(response)
    }

    static var busDown: HTTPResponse {
        HTTPAPI.unavailable("the cluster's Redis cannot be reached: the node running this room cannot be asked just now; try again in a moment")
    }

    // MARK: On the bus

    /// Sends the HTTP answer to request `number` of `node` back to it, headers and all.
    func answering(_ node: String, _ number: UInt64) -> (HTTPResponse) -> Void {
        let here = cluster.node
        return { [relaying] response in
            let headers = response.headers.map { ControlAPIBusMessage.Header(name: $0.name, value: $0.value) }
            relaying?.publish(.controlAPI(.answer(to: node, number: number, status: response.status,
                                                  contentType: response.contentType, headers: headers,
                                                  body: String(decoding: response.body, as: UTF8.self), from: here)),
                              to: node)
        }
    }

    /// A control-API message for this node (`ClusterRooms+Relay.swift` hands it here).
    func heard(_ message: ControlAPIBusMessage) {
        switch message {
        case let .command(from, number, room, tokenHash, body):
            guard let id = try? RoomID(validating: room) else { return }
            hub.api.carryCommand(Array(body.utf8), room: id, tokenHash: tokenHash, answer: answering(from, number))
        case let .read(from, number, room, address, bearer):
            guard let id = try? RoomID(validating: room) else { return }
            hub.api.answerSnapshot(of: id, bearer: bearer.isEmpty ? nil : bearer, address: address,
                                   answer: answering(from, number))
        case let .answer(to, number, status, contentType, headers, body, _) where to == cluster.node:
            answered(number, HTTPResponse(status: status, contentType: contentType,
                                          headers: headers.map { (name: $0.name, value: $0.value) }, body: Array(body.utf8)))
        case .answer:
            break
        case .watch, .streamed, .streamEnded, .unwatch:
            heardEventStream(message)
        }
    }
}
