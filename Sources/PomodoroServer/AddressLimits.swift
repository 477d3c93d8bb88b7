import PomodoroCore
import PomodoroNet

/// A place taken in one of an address's per-minute limits (a room being made, a passcode being checked),
/// held until it is settled: kept (the room was made, the passcode was wrong) or handed back.
package struct LimitReservation: Hashable, Sendable {
    package let address: String
    /// Tells this reservation from the address's others where they are counted together (across servers).
    package let serial: UInt64
    /// Counted across servers as well as here; false on a single server, and when the shared count could not
    /// be reached when it was taken (then it is this server's alone).
    package var shared = false
}

/// What a request for one more passcode check is told.
package enum CheckAdmission: Equatable {
    /// Check now; settle the reservation with the result.
    case granted(LimitReservation)
    /// The address's wrong passcodes of the last minute and its checks still running fill the limit: try
    /// again once one of those checks ends.
    case full
    /// The address's wrong passcodes of the last minute reach the limit.
    case limited
}

/// The per-address limits that must hold for the whole service, however many nodes serve it: WebSocket
/// connections held at once, rooms made (or brought back) per minute, wrong passcodes per minute; and one
/// that each server keeps for itself, `/api` requests a second. Each is counted here and nowhere else; the
/// hub and its HTTP API ask and never count themselves.
///
/// `LocalAddressLimits` counts in this process (a single server); a router may count across its servers,
/// so that N of them allow what one allows (docs/SECURITY.md, "Limits and their defaults").
///
/// Service thread only. Each `answer` runs on the service thread, either before the call returns (in this
/// process) or later, through the service loop's queue (a round trip elsewhere): callers handle both.
package protocol AddressLimits: AnyObject {
    /// Counts a new WebSocket connection from `address`; `false`: the address holds as many as it may, and
    /// the connection is to be closed (it is not counted).
    func admitConnection(_ connection: ConnectionID, from address: String, answer: @escaping (Bool) -> Void)
    /// A connection closed (whether or not it was admitted, or answered yet): its place is free.
    func connectionClosed(_ connection: ConnectionID)
    /// Asks to make (or bring back) a room for `address`; nil when it has made as many as it may this minute.
    func reserveRoom(for address: String, answer: @escaping (LimitReservation?) -> Void)
    /// The room was made (`kept`: it counts for a minute) or not (the place is handed back).
    func settleRoom(_ reservation: LimitReservation, kept: Bool)
    /// Asks to check a passcode from `address`: a check counts against the limit from the moment it starts.
    func reservePasscodeCheck(for address: String, answer: @escaping (CheckAdmission) -> Void)
    /// The check is over: a wrong passcode counts for a minute from now, a right one hands its place back.
    func settlePasscodeCheck(_ reservation: LimitReservation, wrong: Bool)
    /// Takes one of `address`'s `/api` requests, at once: false when its bucket is empty. Counted by each
    /// server for itself (a bucket of `apiBurst`, refilled at `apiRequestsPerSecond`), never shared.
    func takeAPIRequest(from address: String) -> Bool
}

/// Counts, per address, what happened in the last `span` and what is reserved and not yet settled: a limit
/// of so many a minute over a sliding minute, not a minute that starts afresh (with fixed minutes, twice the
/// limit fits around a minute's edge). Pure: time comes in as an argument.
package struct SlidingWindowCount {
    package enum Answer: Equatable {
        case granted
        /// What happened and what is reserved fill the limit (something reserved may still be handed back).
        case full
        /// What happened in the last `span` fills the limit.
        case limited
    }

    package let limit: Int
    package let span: Duration
    /// Per address, when each counted event happened, oldest first; never more than `limit` of them.
    private var events: [String: [Instant]] = [:]
    private var reserved: [String: Int] = [:]

    package init(limit: Int, span: Duration = .seconds(60)) {
        self.limit = limit
        self.span = span
    }

    /// Events of `address` in the `span` up to `now`.
    package func count(for address: String, at now: Instant) -> Int {
        events[address, default: []].count { now - $0 < span }
    }

    /// Reserves a place for `address` when the events of the last `span` and the places reserved leave one.
    package mutating func reserve(_ address: String, at now: Instant) -> Answer {
        forgetOld(address, at: now)
        let happened = events[address, default: []].count, open = reserved[address, default: 0]
        if happened >= limit { return .limited }
        if happened + open >= limit { return .full }
        reserved[address] = open + 1
        return .granted
    }

    /// Settles a reserved place: `counts` makes it an event at `now`, else it is handed back.
    package mutating func settle(_ address: String, counts: Bool, at now: Instant) {
        let open = reserved[address, default: 0] - 1
        reserved[address] = open > 0 ? open : nil
        if counts { events[address, default: []].append(now) }
        forgetOld(address, at: now)
        if events.count > 10_000 {
            events = events.filter { _, times in times.last.map { now - $0 < span } ?? false }
        }
    }

    private mutating func forgetOld(_ address: String, at now: Instant) {
        guard var times = events[address] else { return }
        times.removeAll { now - $0 >= span }
        events[address] = times.isEmpty ? nil : times
    }
}

/// The address limits of a single server, counted in this process (and what a server that counts with
/// others falls back to while they cannot be reached).
package final class LocalAddressLimits: AddressLimits {
    package let maxConnections: Int
    package let clock: any ServerClock
    package private(set) var rooms: SlidingWindowCount
    package private(set) var wrongPasscodes: SlidingWindowCount
    /// Connections held per address, and the address each admitted connection was counted under.
    package private(set) var connectionsHeld: [String: Int] = [:]
    private var admitted: [ConnectionID: String] = [:]
    private var nextSerial: UInt64 = 1
    /// `/api` requests a second per address (0: no limit), and the burst one address may make after a quiet spell.
    package let apiRequestsPerSecond: Int
    package let apiBurst: Int
    /// `/api` requests per address: each address's bucket, and when it was last used.
    private var apiBuckets: [String: (bucket: TokenBucket, used: Instant)] = [:]

    /// - Parameters:
    ///   - maxConnections: connections one address may hold at once; 0 for no limit.
    ///   - roomsPerMinute: rooms one address may make per minute; 0 for no limit.
    ///   - wrongPasscodesPerMinute: wrong passcodes per address per minute, checks still running included.
    ///   - apiRequestsPerSecond: `/api` requests per address per second, after a burst of `apiBurst`; 0 for no limit.
    package init(maxConnections: Int, roomsPerMinute: Int, wrongPasscodesPerMinute: Int,
                 apiRequestsPerSecond: Int = 0, apiBurst: Int = 1, clock: any ServerClock) {
        self.maxConnections = maxConnections
        self.apiRequestsPerSecond = apiRequestsPerSecond
        self.apiBurst = apiBurst
        self.clock = clock
        rooms = SlidingWindowCount(limit: roomsPerMinute > 0 ? roomsPerMinute : .max)
        wrongPasscodes = SlidingWindowCount(limit: wrongPasscodesPerMinute)
    }

    package convenience init(_ limits: ServerLimits, clock: any ServerClock) {
        self.init(maxConnections: limits.maxConnectionsPerAddress, roomsPerMinute: limits.roomsCreatedPerAddressPerMinute,
                  wrongPasscodesPerMinute: RoomHub.passcodeFailuresPerMinute,
                  apiRequestsPerSecond: limits.apiRequestsPerSecond, apiBurst: limits.apiBurst, clock: clock)
    }

    private func reservation(_ address: String) -> LimitReservation {
        defer { nextSerial += 1 }
        return LimitReservation(address: address, serial: nextSerial)
    }

    /// Counts the connection unless its address holds as many as it may: whether it was counted.
    @discardableResult
    package func admit(_ connection: ConnectionID, from address: String) -> Bool {
        let held = connectionsHeld[address, default: 0]
        if maxConnections > 0 && held >= maxConnections { return false }
        connectionsHeld[address] = held + 1
        admitted[connection] = address
        return true
    }

    /// Frees an admitted connection's place: its address, or nil when it was not counted.
    @discardableResult
    package func forget(_ connection: ConnectionID) -> String? {
        guard let address = admitted.removeValue(forKey: connection) else { return nil }
        let held = connectionsHeld[address, default: 1] - 1
        connectionsHeld[address] = held > 0 ? held : nil
        return address
    }

    package func admitConnection(_ connection: ConnectionID, from address: String, answer: @escaping (Bool) -> Void) {
        answer(admit(connection, from: address))
    }

    package func connectionClosed(_ connection: ConnectionID) { forget(connection) }

    /// Reserves a room for `address`, or nil: the answer in this process.
    package func takeRoom(for address: String) -> LimitReservation? {
        rooms.reserve(address, at: clock.now().monotonic) == .granted ? reservation(address) : nil
    }

    package func reserveRoom(for address: String, answer: @escaping (LimitReservation?) -> Void) {
        answer(takeRoom(for: address))
    }

    package func settleRoom(_ reservation: LimitReservation, kept: Bool) {
        rooms.settle(reservation.address, counts: kept, at: clock.now().monotonic)
    }

    /// Reserves a passcode check for `address`: the answer in this process.
    package func takePasscodeCheck(for address: String) -> CheckAdmission {
        switch wrongPasscodes.reserve(address, at: clock.now().monotonic) {
        case .granted: .granted(reservation(address))
        case .full: .full
        case .limited: .limited
        }
    }

    package func reservePasscodeCheck(for address: String, answer: @escaping (CheckAdmission) -> Void) {
        answer(takePasscodeCheck(for: address))
    }

    package func settlePasscodeCheck(_ reservation: LimitReservation, wrong: Bool) {
        wrongPasscodes.settle(reservation.address, counts: wrong, at: clock.now().monotonic)
    }

    /// Buckets unused for a minute are full again, and are forgotten once many addresses are held.
    package func takeAPIRequest(from address: String) -> Bool {
        guard apiRequestsPerSecond > 0 else { return true }
        let now = clock.now().monotonic
        var held = apiBuckets[address] ?? (TokenBucket(ratePerSecond: apiRequestsPerSecond, burst: apiBurst), now)
        let allowed = held.bucket.take(at: now)
        held.used = now
        apiBuckets[address] = held
        if apiBuckets.count > 10_000 { apiBuckets = apiBuckets.filter { now - $0.value.used < .seconds(60) } }
        return allowed
    }
}

/// A joining connection's place in its address's rooms-per-minute limit (`RoomHub.roomPlaces`).
enum RoomPlace {
    case reserved(LimitReservation)
    /// The address has made as many rooms as it may this minute: this join may only join a room in memory.
    case refused
}
