import PomodoroCore
import PomodoroNet
import PomodoroProtocol

// `GET /api/rooms/{room}/events`: a room's broadcasts as Server-Sent Events, for dashboards and `curl -N`.
// Readers are observers over HTTP: nobody in the room hears of them, and one that does not read is dropped.

extension HTTPAPI {
    /// How often a stream with nothing else to say gets a comment, so proxies and readers see it is alive.
    package static let streamHeartbeat: Duration = .seconds(15)
    /// How long a reader waits before reconnecting, as the stream tells `EventSource`.
    static let streamRetryMs = 3000

    /// The answer's head: `200`, no length, nothing buffered by a proxy on the way.
    package static let eventStreamHead = HTTPResponse(status: 200, contentType: "text/event-stream; charset=utf-8",
                                                      headers: [(name: "X-Accel-Buffering", value: "no")], body: [])

    /// The stream of a room open here; one another node of a cluster runs is streamed from there, judged
    /// there (`ControlAPIForwarding.forwardEventStream`).
    func liveEvents(_ id: RoomID, bearer: String?, address: String, responder: any HTTPAnswering) {
        if hub.openRoom(id, at: clock.now()) == nil, let forwarding = router as? ControlAPIForwarding {
            return forwarding.forwardEventStream(of: id, bearer: bearer, address: address, responder: responder)
        }
        openEventStream(of: id, bearer: bearer, address: address, responder: responder)
    }

    /// Opens the stream of `id`, open on this server, behind the same lock as `observe`: first the room's
    /// whole `state`, then its broadcasts as they go out. The reader keeps its grant: a lock or a removal that
    /// withdraws it ends the stream (`reapplyAccess`).
    package func openEventStream(of id: RoomID, bearer: String?, address: String, responder: any HTTPAnswering) {
        func fail(_ refusal: Refusal) { responder.respond(Self.errorResponse(refusal)) }
        hub.letSee(id, RoomAccess.Visitor(token: bearer, passcode: bearer), address: address,
                   hint: "send Authorization: Bearer <its passcode or a member's resume token>") { [self] result in
            let entry: RoomEntry, grant: RoomAccess.Grant
            switch result {
            case .failure(let refusal): return fail(refusal)
            case .success(let seen): (entry, grant) = seen
            }
            let now = clock.now()
            guard let opened = responder.stream(Self.eventStreamHead) else { return }
            let stream = WatchingStream(opened, grant: grant)
            let state = ServerMessage.state(hub.snapshot(of: entry, at: now))
            let first = FanOut.serverSentEvent(WireCodec.encode(state), type: state.type, id: entry.nextEventID)
            guard stream.send(Array("retry: \(Self.streamRetryMs)\n\n".utf8)), stream.send(first) else { return }
            entry.nextEventID += 1
            entry.streams.append(stream)
            armHeartbeat()
            hub.logger.debug("event stream opened", metadata: ["room": "\(id)", "streams": "\(entry.streams.count)"])
        }
    }

    /// A comment to every stream every `streamHeartbeat` while any is open.
    private func armHeartbeat() {
        if heartbeat == nil {
            heartbeat = transport.timer { [unowned self] in
                let comment = Array(": keep-alive\n\n".utf8)
                for entry in rooms.values where !entry.streams.isEmpty {
                    entry.streams.removeAll { !$0.send(comment) }
                }
                if rooms.values.contains(where: { !$0.streams.isEmpty }), !hub.stopped {
                    heartbeat?.schedule(afterNanoseconds: Self.streamHeartbeat.nanoseconds)
                } else {
                    heartbeatArmed = false
                }
            }
        }
        guard !heartbeatArmed, !hub.stopped else { return }
        heartbeatArmed = true
        heartbeat?.schedule(afterNanoseconds: Self.streamHeartbeat.nanoseconds)
    }
}
