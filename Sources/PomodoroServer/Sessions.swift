import PomodoroCore
import PomodoroNet
import PomodoroProtocol

// The connections: one session per open connection, what it may still send and where it sits. The hub
// alone reads and writes them, on the service thread.

extension RoomHub {
    /// A connection and, once it has joined, where it sits.
    struct Session {
        let peer: String
        /// What its per-address limits count it under (`AddressKey`).
        let address: String
        var room: RoomID?
        var member: MemberID?
        /// The room this connection watches without being a member (`RoomHub+Observers.swift`).
        var observing: RoomID?
        /// Why it may watch that room (`RoomAccess`): weighed again when the room's lock changes or a member
        /// is removed.
        var watchGrant: RoomAccess.Grant?
        var bucket: TokenBucket
        /// The time zone named on `join`, for stats requests that name none.
        var timeZone: String?
        /// Messages refused in a row for going too fast.
        var strikes = 0
        /// Requests of this connection still at work off the service thread (a join's store look-up or
        /// passcode check, a `stats` read). While any is, its later frames wait in `pending`: frames of one
        /// connection take effect in the order they were sent.
        var suspended = 0
        var pending: [Inbound] = []
        /// A new member who has sent nothing since joining: lost, they get the room's short grace.
        var silentNewMember = false
    }

    /// What reaches the hub for a connection, taken in the order it came: a client's frame, or, for another
    /// node's connection, the answer that node already gave a frame it refused (`RoomHub.Inbound.answered`), sent
    /// back in that frame's turn.
    package enum Inbound {
        case frame([UInt8])
        case answered([UInt8])
        /// That node closes the connection (it kept flooding), once the answers before this are out.
        case close(code: UInt16, reason: String)
    }
}

/// Every open connection's session, by connection: the one table of the hub's connections.
final class SessionTable {
    private var sessions: [ConnectionID: RoomHub.Session] = [:]

    subscript(connection: ConnectionID) -> RoomHub.Session? {
        get { sessions[connection] }
        _modify { yield &sessions[connection] }
        set { sessions[connection] = newValue }
    }

    @discardableResult
    func removeValue(forKey connection: ConnectionID) -> RoomHub.Session? {
        sessions.removeValue(forKey: connection)
    }

    var count: Int { sessions.count }
}
