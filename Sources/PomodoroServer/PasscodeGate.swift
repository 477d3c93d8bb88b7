/// Decides, per address, when a passcode check may ask the address limits for its place: at most
/// `inFlightPerAddress` of an address at once (each is a few tenths of a second of CPU), the others waiting
/// their turn in order (a team behind one address joining a locked room together waits a moment instead of
/// being refused), up to `waitingPerAddress`, and beyond that refused.
///
/// The counting is not here: whether a started check may run, wait or must be refused is the wrong-passcode
/// limit's answer (`AddressLimits.reservePasscodeCheck`), which may come from another process. So the
/// gate only orders and bounds an address's checks on this node; a node's CPU is its own.
struct PasscodeGate {
    /// A check waiting for its turn.
    struct Ticket: Hashable, Sendable {
        fileprivate let raw: UInt64
    }

    enum Admission: Equatable {
        /// Ask the limits for this check's place now; then `finish` (refused, or checked) or `requeue` (full).
        case start(Ticket)
        /// Wait: `finish` of an earlier check will say when this one starts.
        case wait(Ticket)
        /// Refused: too many checks waiting.
        case refuse
    }

    let inFlightPerAddress: Int
    let waitingPerAddress: Int

    private var inFlight: [String: Int] = [:]
    private var waiting: [String: [Ticket]] = [:]
    private var nextTicket: UInt64 = 1

    init(inFlightPerAddress: Int = 2, waitingPerAddress: Int = 32) {
        self.inFlightPerAddress = inFlightPerAddress
        self.waitingPerAddress = waitingPerAddress
    }

    /// Asks to check a passcode from `address`.
    mutating func request(from address: String) -> Admission {
        let ticket = Ticket(raw: nextTicket)
        nextTicket += 1
        if waiting[address, default: []].isEmpty && inFlight[address, default: 0] < inFlightPerAddress {
            inFlight[address, default: 0] += 1
            return .start(ticket)
        }
        guard waiting[address, default: []].count < waitingPerAddress else { return .refuse }
        waiting[address, default: []].append(ticket)
        return .wait(ticket)
    }

    /// A started check of `address` is over (checked, or refused by the limits): the waiting checks that
    /// start now.
    mutating func finish(from address: String) -> [Ticket] {
        let running = inFlight[address, default: 1] - 1
        inFlight[address] = running > 0 ? running : nil
        return startWaiting(from: address)
    }

    /// A started check the limits found full goes back to the head of the line, to start again when another
    /// check of the address ends (or, if none of this node's is running, when the hub tries again).
    mutating func requeue(_ ticket: Ticket, from address: String) {
        let running = inFlight[address, default: 1] - 1
        inFlight[address] = running > 0 ? running : nil
        waiting[address, default: []].insert(ticket, at: 0)
    }

    /// The waiting checks of `address` that may start now.
    mutating func startWaiting(from address: String) -> [Ticket] {
        var queue = waiting.removeValue(forKey: address) ?? []
        var started: [Ticket] = []
        while !queue.isEmpty && inFlight[address, default: 0] < inFlightPerAddress {
            started.append(queue.removeFirst())
            inFlight[address, default: 0] += 1
        }
        if !queue.isEmpty { waiting[address] = queue }
        return started
    }

    /// The address has reached its limit: every check of it still waiting is refused.
    mutating func refuseWaiting(from address: String) -> [Ticket] {
        waiting.removeValue(forKey: address) ?? []
    }

    /// Checks of `address` started on this node and not yet over.
    func running(from address: String) -> Int { inFlight[address, default: 0] }

    /// Checks of `address` waiting for their turn.
    func waitingCount(from address: String) -> Int { waiting[address, default: []].count }
}
