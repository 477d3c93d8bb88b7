import CLibUV
import CLibWebSockets
import Glibc

// New connections a turn's share at a time (`AcceptPacer` says why): the listening socket is the library's,
// and it asks before taking each connection on (LWS_CALLBACK_FILTER_NETWORK_CONNECTION); one beyond the
// turn's share is kept under a descriptor of ours, refused to the library (which closes its own descriptor
// and leaves its accept loop for this turn), and handed to it again in a later turn.
extension WebSocketServer {
    /// LWS_CALLBACK_FILTER_NETWORK_CONNECTION: the listening socket accepted `descriptor`. Returns what the
    /// callback returns: 0 to let the library take it on now, 1 when it is held for a later turn.
    func connectionArrived(_ descriptor: Int32) -> Int32 {
        guard descriptor >= 0, acceptPacer.accepted(in: uv_now(loop)) == .hold else { return 0 }
        // The library closes its descriptor once refused: the socket stays open under this one.
        let kept = dup(descriptor)
        guard kept >= 0 else { return 0 }   // no descriptor to spare: taken on now after all
        if acceptPacer.hold(kept) { adoptTimer?.schedule(afterNanoseconds: 0) }
        return 1
    }

    /// From `adoptTimer`, in a later turn than the holds: a turn's share of the held connections goes to the
    /// library, as its listening socket would have handed them (each is closed by the library if it fails).
    func adoptHeldConnections() {
        let (descriptors, more) = acceptPacer.release(in: uv_now(loop))
        for descriptor in descriptors {
            guard let listening else {
                Glibc.close(descriptor)
                continue
            }
            _ = lws_adopt_socket_vhost(listening, descriptor)
        }
        if more { adoptTimer?.schedule(afterNanoseconds: 0) }
        libraryTimersChanged()
    }

    /// Connections held for a later turn since the start (a storm of them came at once).
    var connectionsHeldBack: Int { acceptPacer.heldInAll }

    /// Closes the connections still held, as the server ends (they never reached the library).
    func closeHeldConnections() {
        for descriptor in acceptPacer.releaseAll() { Glibc.close(descriptor) }
    }
}
