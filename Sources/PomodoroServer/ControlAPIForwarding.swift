import PomodoroCore
import PomodoroNet

/// What a router that runs rooms on several servers (a cluster node) does for the control API
/// (docs/PROTOCOL.md §16, docs/CLUSTER.md "The control API on a cluster"): any node answers.
///
/// The rule stays with the room: a command goes to the node that runs the room, which judges its token at
/// delivery (`RoomHub.carryAPICommand`) and answers; the answer comes back to the HTTP request here.
/// Every method is called on the service thread; every answer is given there.
package protocol ControlAPIForwarding: AnyObject {
    /// A control-API command for `room`, not in memory here: the room is taken here when nobody runs it (as a
    /// first join takes it) and the command carried out here, or the command goes to the node that runs it.
    /// `answer` gets the owner's answer, or `503` when it cannot be asked or does not answer in time.
    func forwardCommand(_ body: [UInt8], room: RoomID, tokenHash: String, answer: @escaping (HTTPResponse) -> Void)
    /// `POST /api/rooms`: takes the room's lease for making it here. `done` says `.free` when this node holds
    /// the room and nothing is stored of it (make it now), `.exists` when it is stored or runs elsewhere.
    func takeForCreation(_ room: RoomID, done: @escaping (CreationTake) -> Void)
}

/// What came of taking a room's lease to make it over HTTP.
package enum CreationTake {
    case free
    case exists
    case failed(Refusal)
}
