import Logging
import PomodoroCore
import PomodoroNet
import PomodoroProtocol
import PomodoroStore

/// Where the rooms of this server run and how its connections reach them: the one seam between the hub and
/// a cluster (docs/ARCHITECTURE.md). `LocalRooms` runs every room in this process; a node of a cluster runs
/// PomodoroCluster's `ClusterRooms`, which takes each room under a lease, relays this node's members of
/// rooms other nodes run, and carries what the hub sends to other nodes' connections over the bus.
///
/// The hub calls it at the same points whichever it is; it has no other path for a cluster. Every call is
/// made on the service thread, and the router calls the hub back there only.
package protocol RoomRouter: AnyObject {
    /// The transport the hub speaks through: `base`, or one that also reaches other nodes' connections.
    /// Called once, before `attach`.
    func transport(over base: any HubTransport) -> any HubTransport
    /// The hub, once it is made (kept unowned: the hub owns its router).
    func attach(to hub: RoomHub)
    /// Whether out-of-memory rooms with schedules are indexed here to come back for their starts (one
    /// server); a cluster keeps every room's schedules itself.
    var indexesScheduledReturns: Bool { get }
    /// Whether a room this router brings back may have been live on another process moments ago (a node of a
    /// cluster takes rooms other nodes ran): it is then brought back as handed off when its stored members
    /// were there (`Room.membersWereHere(at:)`), whatever took it. False by default: a single server's
    /// stored rooms are from its own last run.
    var takesRoomsFromOtherNodes: Bool { get }

    // MARK: Rooms

    /// Looks for `id`, not in memory, for the joins waiting in the hub's look-ups: answers with
    /// `RoomHub.lookedUp` (or takes the waiting joins elsewhere), on the service thread.
    func find(_ id: RoomID)
    /// Whether this server may act for the room (tick, broadcast, write) at `now`.
    func owns(_ id: RoomID, at now: ClockReading) -> Bool
    /// The room is out of memory and nothing here waits for it.
    func letGo(_ id: RoomID)
    /// The room left memory because `owns` said no: another server runs it now.
    func lost(_ id: RoomID)
    /// The room left memory by the one rule (`RoomRegistry`), its schedules as they were.
    func left(_ entry: RoomEntry)
    /// The room's schedules changed (the change is queued for the store).
    func schedulesChanged(_ entry: RoomEntry)
    /// The schedules known of a room not in memory, if any; nil when only the store knows.
    func knownSchedules(of id: RoomID) -> [Schedule]?
    /// How many rooms with schedules the limit counts, when the router counts them (nil: the hub does).
    var scheduledRoomCount: Int? { get }

    // MARK: Connections

    /// Whether `connection`'s frames are no longer taken (it is being closed elsewhere).
    func ignores(_ connection: ConnectionID) -> Bool
    /// A join or observe frame of `connection`, as it came, before the hub takes it.
    func joinSent(_ text: [UInt8], by connection: ConnectionID)
    /// Takes a frame of `connection` in its turn when the connection's room runs elsewhere; false: the
    /// hub takes it.
    func carries(_ text: [UInt8], from connection: ConnectionID) -> Bool
    /// An answer on its way to `connection`: the message to send (maybe another), or nil when the router
    /// sent it its own way.
    func outgoing(_ message: ServerMessage, to connection: ConnectionID) -> ServerMessage?
    /// Closes a flooding connection its own way (after answers still on their way); false: the hub closes it.
    func closesFlooding(_ connection: ConnectionID, code: UInt16, reason: String) -> Bool
    /// The connection closed (`ended`: by its client, or lost).
    func closed(_ connection: ConnectionID, ended: ConnectionEnd)
    /// An `observe` of a room not open here: true when the router looks for it elsewhere (the connection's
    /// frames wait meanwhile); false: the hub refuses it.
    func observesElsewhere(_ id: RoomID, connection: ConnectionID, ref: Ref?) -> Bool

    // MARK: HTTP and state

    /// Answers an `/api/` request that is the router's; false for every other.
    func answers(_ request: HTTPRequest, responder: any HTTPAnswering) -> Bool
    /// Why `/healthz` answers 503 though the database answers, or nil.
    var unhealthy: String? { get }
    /// Asks, from any thread, why `/readyz` answers 503 though the database answers: nil when it need not.
    var readinessCheck: @Sendable (_ answer: @escaping @Sendable (String?) -> Void) -> Void { get }
    /// What `/metrics` counts of the router.
    var levels: RouterLevels { get }

    // MARK: Lifetime

    /// The service thread's first turn: `stored` are the rooms the store kept (when `restoresRooms`),
    /// `schedules` every room's.
    func begin(stored: [StoredRoom], schedules: [RoomID: [Schedule]])
    /// The server stops tracking rooms: timers are cancelled.
    func stopTracking()
}

/// What `/metrics` reports of a router: connections of this server whose room another server runs, other
/// servers' connections in this server's rooms, and the messages published to other servers.
package struct RouterLevels: Sendable, Equatable {
    package var relayedMembers = 0
    package var remoteMembers = 0
    package var busPublished = 0
    package init(relayedMembers: Int = 0, remoteMembers: Int = 0, busPublished: Int = 0) {
        self.relayedMembers = relayedMembers
        self.remoteMembers = remoteMembers
        self.busPublished = busPublished
    }
}

/// How the composition root builds a router other than `LocalRooms` (`ServerConfiguration.routing`):
/// PomodoroCluster's `ClusterConfiguration` is one.
public protocol RoomRouting: Sendable {
    /// Builds the router and what goes with it, before the hub exists.
    func makeRouter(_ context: RouterContext) throws -> RouterParts
}

/// What a router is built from.
public struct RouterContext {
    package let configuration: ServerConfiguration
    package let clock: any ServerClock
    package let logger: Logger
    /// The store the server opened (nil: rooms in memory only).
    package let store: (any RoomStore)?
    /// The service thread, for state that belongs to it (`LoopBound`).
    package let loop: any LoopThread
    /// Runs work on the service thread.
    package let post: @Sendable (@escaping @Sendable () -> Void) -> Void

    package init(configuration: ServerConfiguration, clock: any ServerClock, logger: Logger, store: (any RoomStore)?,
                 loop: any LoopThread, post: @escaping @Sendable (@escaping @Sendable () -> Void) -> Void) {
        self.configuration = configuration
        self.clock = clock
        self.logger = logger
        self.store = store
        self.loop = loop
        self.post = post
    }
}

/// A router, with the store the server writes through and the address limits it counts with.
public struct RouterParts {
    package let router: any RoomRouter
    package let store: any RoomStore
    package let addressLimits: (any AddressLimits)?
    /// Whether the rooms the store kept come back at start (a cluster node's return when joined).
    package let restoresRooms: Bool
    /// Starts what runs beside the service thread (renewals, the bus).
    package let start: @Sendable () -> Void
    /// Hands the rooms to other servers at a drain (within the bound) before `completion`; any thread.
    package let handOff: @Sendable (Duration, @escaping @Sendable () -> Void) -> Void
    /// Stops what `start` started, once the store has written what it had.
    package let stop: @Sendable () -> Void

    package init(router: any RoomRouter, store: any RoomStore, addressLimits: (any AddressLimits)?,
                 restoresRooms: Bool, start: @escaping @Sendable () -> Void,
                 handOff: @escaping @Sendable (Duration, @escaping @Sendable () -> Void) -> Void,
                 stop: @escaping @Sendable () -> Void) {
        self.router = router
        self.store = store
        self.addressLimits = addressLimits
        self.restoresRooms = restoresRooms
        self.start = start
        self.handOff = handOff
        self.stop = stop
    }
}

/// What a router found of a room not in memory.
package enum RoomFound: Sendable {
    /// Read (or taken) here: the room as stored (nil: never stored), or why it could not be read.
    case stored(Result<StoredRoom?, StoreError>)
    /// Another node runs it.
    case elsewhere(node: String)
    /// The cluster's coordinator (Redis) cannot be reached: nobody may take the room until it is back.
    case coordinatorAway
}

extension Refusal {
    /// A join whose room must be taken while the cluster's coordinator is away (`RoomFound.coordinatorAway`).
    static let coordinatorAway = Refusal(
        code: .unavailable,
        message: "the cluster's coordinator (Redis) cannot be reached just now, and taking this room waits for it; try again in a moment")

    /// A join of a room another node of the cluster runs, that this node could not relay there.
    static func runsElsewhere(on node: String) -> Refusal {
        Refusal(code: .unavailable,
                message: "this room runs on another node of the cluster (\(node)); connect through the cluster's address with the room in the URL (/ws?room=NAME), or try again")
    }
}

extension ConnectionID {
    /// Connections of other nodes' members, as the owner's hub sees them, are numbered from here; the
    /// transport's own never come near it.
    package static let firstRemote: UInt64 = 1 << 63

    /// Whether this is another node's connection (relayed over the bus): its own node counts its limits.
    package var isRemote: Bool { rawValue >= Self.firstRemote }
}

extension RoomRouter {
    package var takesRoomsFromOtherNodes: Bool { false }

    /// Why the control API does not carry a command for a room that is not in memory here, when rooms may run
    /// on other servers and this router does not forward it (`ControlAPIForwarding`).
    var roomRunsElsewhere: Refusal {
        Refusal(code: .unavailable, message: "the room does not run on this node of the cluster just now; try again")
    }
}

/// What a router that runs rooms on several servers (a cluster node) does for the control API
/// (docs/PROTOCOL.md §16, docs/CLUSTER.md "The control API on a cluster"): any node answers.
///
/// The rule stays with the room: a command goes to the node that runs the room, which judges its token at
/// delivery (`HTTPAPI.carryCommand`) and answers; the answer comes back to the HTTP request here.
/// Every method is called on the service thread; every answer is given there.
package protocol ControlAPIForwarding: AnyObject {
    /// A control-API command for `room`, not in memory here: the room is taken here when nobody runs it (as a
    /// first join takes it) and the command carried out here, or the command goes to the node that runs it.
    /// `answer` gets the owner's answer, or `503` when it cannot be asked or does not answer in time.
    func forwardCommand(_ body: [UInt8], room: RoomID, tokenHash: String, answer: @escaping (HTTPResponse) -> Void)
    /// `GET /api/rooms/<room>` for `room`, not in memory here: asked of the node that runs it, which judges
    /// `bearer` (from the client at `address`) as it judges an observer's (`HTTPAPI.answerSnapshot`); 404 when
    /// no live node runs it, `503` when it cannot be asked or does not answer in time. Nothing is taken.
    func forwardSnapshotRead(of room: RoomID, bearer: String?, address: String, answer: @escaping (HTTPResponse) -> Void)
    /// `GET /api/rooms/<room>/events` for `room`, not in memory here: streamed from the node that runs it, which
    /// judges `bearer` as for a stream of its own (`HTTPAPI.openEventStream`), refusals and the withdrawal
    /// included; `responder` gets its answer or the stream it writes through this node. 404 when no live node
    /// runs it, `503` when it cannot be asked or does not answer in time. Nothing is taken.
    func forwardEventStream(of room: RoomID, bearer: String?, address: String, responder: any HTTPAnswering)
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

/// Every room in this process: a room not in memory is read from the store, and the server may always act
/// for the rooms it holds.
package final class LocalRooms: RoomRouter {
    private weak var hub: RoomHub?

    package init() {}

    package func transport(over base: any HubTransport) -> any HubTransport { base }
    package func attach(to hub: RoomHub) { self.hub = hub }
    package var indexesScheduledReturns: Bool { true }

    package func find(_ id: RoomID) {
        guard let hub, let store = hub.store else { preconditionFailure("a look-up without a store") }
        let transport = hub.transport
        let logger = hub.logger
        let hubBack = LoopBound(hub, loop: transport.loop)
        store.read({ (store: any RoomStore) throws(StoreError) in try store.loadRoom(id) }) { result in
            if case .failure(let error) = result {
                logger.error("could not read a room from the store", metadata: ["room": "\(id)", "error": "\(error)"])
            }
            transport.post { hubBack.value.lookedUp(id, .stored(result)) }
        }
    }

    package func owns(_ id: RoomID, at now: ClockReading) -> Bool { true }
    package func letGo(_ id: RoomID) {}
    package func lost(_ id: RoomID) {}
    package func left(_ entry: RoomEntry) {}
    package func schedulesChanged(_ entry: RoomEntry) {}
    package func knownSchedules(of id: RoomID) -> [Schedule]? { nil }
    package var scheduledRoomCount: Int? { nil }

    package func ignores(_ connection: ConnectionID) -> Bool { false }
    package func joinSent(_ text: [UInt8], by connection: ConnectionID) {}
    package func carries(_ text: [UInt8], from connection: ConnectionID) -> Bool { false }
    package func outgoing(_ message: ServerMessage, to connection: ConnectionID) -> ServerMessage? { message }
    package func closesFlooding(_ connection: ConnectionID, code: UInt16, reason: String) -> Bool { false }
    package func closed(_ connection: ConnectionID, ended: ConnectionEnd) {}
    package func observesElsewhere(_ id: RoomID, connection: ConnectionID, ref: Ref?) -> Bool { false }

    /// `/api/cluster` on a single server: not found.
    package func answers(_ request: HTTPRequest, responder: any HTTPAnswering) -> Bool {
        guard request.path == "/api/cluster" || request.path.hasPrefix("/api/cluster/") else { return false }
        responder.respond(HTTPAPI.errorResponse(Refusal(code: .notFound, message: "this server is not a node of a cluster")))
        return true
    }

    package var unhealthy: String? { nil }
    package var readinessCheck: @Sendable (_ answer: @escaping @Sendable (String?) -> Void) -> Void { { $0(nil) } }
    package var levels: RouterLevels { RouterLevels() }

    package func begin(stored: [StoredRoom], schedules: [RoomID: [Schedule]]) {
        hub?.restore(stored, schedules: schedules)
    }

    package func stopTracking() {}
}
