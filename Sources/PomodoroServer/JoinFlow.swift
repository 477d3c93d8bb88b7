import PomodoroCore
import PomodoroProtocol
import PomodoroStore

/// One `join` from the moment its frame is handled until the joiner is admitted or refused.
///
/// A plain value whose steps return what must happen next; the hub carries the actions out and feeds the
/// answers back (`lookedUp`, `hashed`, `checked`), telling each step what it sees of the room at that moment
/// (`Sighting`). Nothing here reads a clock, touches a socket or the store, so every path is tested directly
/// (`JoinFlowTests`).
///
/// The paths: a room in memory is joined at once, or once the joiner's passcode matches its lock; a room
/// not in memory is looked up in the store first and brought back only once the joiner has passed its lock
/// (a wrong guess loads nothing); a room nobody has is created, its passcode hashed first. While any step is
/// off the service thread, other joins may create, bring back or drop the same room: each answer is weighed
/// against the room as it is then.
///
/// ```swift
/// var flow = JoinFlow(request, room: id, hasStore: true)
/// flow.start(.absent(creation: nil))                       // .lookUp
/// flow.lookedUp(.notFound, room: .absent(creation: nil))   // .create(lock: nil), or .hash(passcode)
/// ```
struct JoinFlow: Equatable {
    /// A `join` as the client sent it.
    struct Request: Equatable {
        var room: String
        var name: String
        var token: String?
        var passcode: String?
        var control: ControlMode?
        var ref: Ref?
    }

    /// What the hub sees of the room when a step is taken.
    enum Sighting: Equatable {
        /// In memory. `serial` tells this room from one made anew under the same name meanwhile; `lock` is
        /// its passcode; `resumes` says the request's token is one of its members'.
        case live(serial: UInt64, lock: PasscodeVerifier?, resumes: Bool)
        /// Not in memory. `creation` is why the joiner may not create (or bring back) a room now, if they
        /// may not.
        case absent(creation: Refusal?)
    }

    /// What the store said of the room.
    enum LookUp: Equatable {
        /// Stored, with its lock and whether the request's token is one of its members'.
        case found(StoredRoom, lock: PasscodeVerifier?, resumes: Bool)
        case notFound
        case failed
        /// Another server runs the room, and the join cannot go there (`RoomFound.elsewhere`).
        case elsewhere(node: String)
        /// Taking the room waits for the router's coordinator to answer again (`RoomFound.coordinatorAway`).
        case coordinatorAway
    }

    /// What the hub does next.
    enum Action: Equatable {
        /// Read the room from the store (one read for every join of that room waiting at once), then call
        /// `lookedUp`.
        case lookUp
        /// Hash the new room's passcode off the service thread, in the address's turn at the passcode gate,
        /// then call `hashed` (or `gateRefused`).
        case hash(String)
        /// Check the passcode against a lock off the service thread, in the gate's turn, then call
        /// `checked` (or `gateRefused`).
        case check(String, against: PasscodeVerifier)
        /// Create the room (it counts against the joiner's address) and admit the joiner to it.
        case create(lock: PasscodeVerifier?)
        /// Bring the stored room back into memory (it counts as created) and admit the joiner to it.
        case bringBack(StoredRoom)
        /// Admit the joiner to the room in memory.
        case admit
        /// Answer the join with an error.
        case refuse(Refusal)

        /// Whether the flow is over once this is carried out.
        var ends: Bool {
            switch self {
            case .lookUp, .hash, .check: false
            case .create, .bringBack, .admit, .refuse: true
            }
        }
    }

    private enum State: Equatable {
        case idle
        case lookingUp
        case hashing
        /// A passcode check against `lock`, the lock of the room in memory that had `serial`.
        case checkingLive(serial: UInt64, lock: PasscodeVerifier)
        /// A passcode check against `lock`, the lock of a room only the store has.
        case checkingStored(StoredRoom, lock: PasscodeVerifier)
        case done
    }

    let request: Request
    /// The room the request names, validated.
    let room: RoomID
    /// Whether rooms not in memory are looked up in a store.
    let hasStore: Bool
    private var state = State.idle

    init(_ request: Request, room: RoomID, hasStore: Bool) {
        self.request = request
        self.room = room
        self.hasStore = hasStore
    }

    var isDone: Bool { state == .done }

    // MARK: Steps

    /// The join in its connection's turn (after the hub caught the room up, which may have dropped it).
    mutating func start(_ room: Sighting) -> Action {
        precondition(state == .idle, "a join starts once")
        switch room {
        case .live(let serial, let lock, let resumes):
            return joinLive(serial: serial, lock: lock, resumes: resumes)
        case .absent(let creation?):
            // Bringing a stored room back costs what creating one does: both limits hold before anything is read.
            return finish(.refuse(creation))
        case .absent(nil):
            guard hasStore else { return create() }
            state = .lookingUp
            return .lookUp
        }
    }

    /// The store's answer.
    mutating func lookedUp(_ answer: LookUp, room: Sighting) -> Action {
        precondition(state == .lookingUp, "an answer to no look-up")
        // Brought back or created by another join meanwhile.
        if case .live(let serial, let lock, let resumes) = room {
            return joinLive(serial: serial, lock: lock, resumes: resumes)
        }
        switch answer {
        case .found(let stored, let lock, let resumes):
            switch RoomAccess.verdict(lock: lock, isMember: resumes, opened: nil, passcode: request.passcode) {
            case .allowed: return bringIn(stored, room: room, opened: nil)
            case .refused: return finish(.refuse(Self.locked))
            case .check(let passcode, let lock):
                state = .checkingStored(stored, lock: lock)
                return .check(passcode, against: lock)
            }
        case .notFound:
            if case .absent(let creation?) = room { return finish(.refuse(creation)) }
            return create()
        case .failed:
            return finish(.refuse(Refusal(code: .unavailable,
                                          message: "the server could not read its store just now; try again")))
        case .elsewhere(let node):
            return finish(.refuse(.runsElsewhere(on: node)))
        case .coordinatorAway:
            return finish(.refuse(.coordinatorAway))
        }
    }

    /// The new room's passcode, hashed.
    mutating func hashed(_ lock: PasscodeVerifier, room: Sighting) -> Action {
        precondition(state == .hashing, "a hash nobody asked for")
        switch room {
        case .live(let serial, let existing, let resumes):
            // Someone created it meanwhile: this is now a join to their room, behind their lock.
            return joinLive(serial: serial, lock: existing, resumes: resumes)
        case .absent(let creation?):
            return finish(.refuse(creation))
        case .absent(nil):
            return finish(.create(lock: lock))
        }
    }

    /// The passcode check's answer.
    mutating func checked(matched: Bool, room: Sighting) -> Action {
        guard matched else { return finish(.refuse(Refusal(code: .badPasscode, message: "wrong passcode", field: "passcode"))) }
        switch state {
        case .checkingLive(let serial, let checked):
            // The room may have been dropped while the passcode was checked (and even made anew).
            guard case .live(serial, let lock, let resumes) = room else {
                return finish(.refuse(Refusal(code: .invalidState, message: "the room closed meanwhile; join again")))
            }
            // The host changed the lock meanwhile: the passcode must open the lock the room has now (an
            // unlocked room lets anyone in).
            return joinLive(serial: serial, lock: lock, resumes: resumes, opened: checked.encoded)
        case .checkingStored(let stored, let checked):
            return bringIn(stored, room: room, opened: checked.encoded)
        default:
            preconditionFailure("a check nobody asked for")
        }
    }

    /// The passcode gate refused the hash or check: too many wrong passcodes from this address.
    mutating func gateRefused() -> Action {
        precondition(state != .idle && state != .lookingUp && !isDone, "a refusal of no check")
        return finish(.refuse(Refusal(code: .rateLimited, message: "too many wrong passcodes; try again in a minute",
                                      field: "passcode")))
    }

    // MARK: Paths

    /// A room in memory: a member coming back with their token, or anyone to an open room, at once; anyone
    /// else once their passcode opens the lock it has now (`opened`: the lock a check of theirs already
    /// opened), as `RoomAccess` rules.
    private mutating func joinLive(serial: UInt64, lock: PasscodeVerifier?, resumes: Bool,
                                   opened: String? = nil) -> Action {
        switch RoomAccess.verdict(lock: lock, isMember: resumes, opened: opened, passcode: request.passcode) {
        case .allowed: return finish(.admit)
        case .refused: return finish(.refuse(Self.locked))
        case .check(let passcode, let lock):
            state = .checkingLive(serial: serial, lock: lock)
            return .check(passcode, against: lock)
        }
    }

    static let locked = Refusal(code: .badPasscode, message: "this room is locked: join with its passcode",
                                field: "passcode")

    /// A new room; a passcode, if any, is hashed first.
    private mutating func create() -> Action {
        guard let passcode = request.passcode else { return finish(.create(lock: nil)) }
        guard PasscodeVerifier.allowedLength.contains(passcode.count) else {
            return finish(.refuse(Refusal(code: .badRequest, message: "passcode must be 4–64 characters",
                                          field: "passcode")))
        }
        state = .hashing
        return .hash(passcode)
    }

    /// A stored room whose lock the joiner has passed (`opened`: the lock their passcode opened, nil when
    /// none was needed).
    private mutating func bringIn(_ stored: StoredRoom, room: Sighting, opened: String?) -> Action {
        switch room {
        case .live(let serial, let lock, let resumes):
            // Another join brought it back meanwhile, and its host may have locked it anew since: the lock it
            // has now decides.
            return joinLive(serial: serial, lock: lock, resumes: resumes, opened: opened)
        case .absent(let creation?):
            return finish(.refuse(creation))
        case .absent(nil):
            return finish(.bringBack(stored))
        }
    }

    private mutating func finish(_ action: Action) -> Action {
        state = .done
        return action
    }
}

extension PasscodeVerifier: Equatable {
    static func == (lhs: PasscodeVerifier, rhs: PasscodeVerifier) -> Bool { lhs.form == rhs.form }
}
