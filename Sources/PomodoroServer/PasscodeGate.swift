import PomodoroCore

/// Counts what each address did in its current one-minute window (rooms created, wrong passcodes).
struct PerMinuteCounter {
    private var windows: [String: (start: Instant, count: Int)] = [:]

    /// What `address` did in the minute that is still running at `now`.
    func count(for address: String, at now: Instant) -> Int {
        guard let window = windows[address], now - window.start < .seconds(60) else { return 0 }
        return window.count
    }

    /// Counts one more for `address`, starting a new window when the last one is over; forgets finished
    /// windows once many addresses are held.
    mutating func record(_ address: String, at now: Instant) {
        if let window = windows[address], now - window.start < .seconds(60) {
            windows[address] = (window.start, window.count + 1)
        } else {
            windows[address] = (now, 1)
        }
        if windows.count > 10_000 { windows = windows.filter { now - $0.value.start < .seconds(60) } }
    }
}

/// Decides, per address, when a passcode may be checked: the wrong-passcode limit holds however many
/// checks arrive at once, on however many paths (join, `stats`, HTTP).
///
/// A check counts against the limit from the moment it starts, not from the moment its slow hash says it
/// was wrong: a check starts only while the address's wrong passcodes of the last minute plus its checks
/// still running stay under the limit, so a burst can never get more wrong guesses through than the limit.
/// At most `inFlightPerAddress` checks of one address run at once; others wait their turn in order (a team
/// behind one address joining a locked room together waits a moment instead of being refused), up to
/// `waitingPerAddress`, and beyond that are refused.
struct PasscodeGate {
    /// A check waiting for its turn.
    struct Ticket: Hashable, Sendable {
        fileprivate let raw: UInt64
    }

    enum Admission: Equatable {
        /// Check now; report the result with `finish`.
        case start(Ticket)
        /// Wait: `finish` of an earlier check will say when this one starts or is refused.
        case wait(Ticket)
        /// Refused: too many wrong passcodes, or too many checks waiting.
        case refuse
    }

    let wrongPerMinute: Int
    let inFlightPerAddress: Int
    let waitingPerAddress: Int

    private var failures = PerMinuteCounter()
    private var inFlight: [String: Int] = [:]
    private var waiting: [String: [Ticket]] = [:]
    private var nextTicket: UInt64 = 1

    init(wrongPerMinute: Int, inFlightPerAddress: Int = 2, waitingPerAddress: Int = 32) {
        self.wrongPerMinute = wrongPerMinute
        self.inFlightPerAddress = inFlightPerAddress
        self.waitingPerAddress = waitingPerAddress
    }

    /// Whether `address` has used up its wrong passcodes for now (checks never start then).
    func isLimited(_ address: String, at now: Instant) -> Bool {
        failures.count(for: address, at: now) >= wrongPerMinute
    }

    /// Asks to check a passcode from `address`.
    mutating func request(from address: String, at now: Instant) -> Admission {
        if isLimited(address, at: now) { return .refuse }
        let ticket = Ticket(raw: nextTicket)
        nextTicket += 1
        if waiting[address, default: []].isEmpty && mayStart(address, at: now) {
            inFlight[address, default: 0] += 1
            return .start(ticket)
        }
        guard waiting[address, default: []].count < waitingPerAddress else { return .refuse }
        waiting[address, default: []].append(ticket)
        return .wait(ticket)
    }

    /// A check of `address` is over (`wrong` when the passcode did not match): which waiting checks start
    /// now, and which are refused because the address has reached its limit.
    mutating func finish(from address: String, wrong: Bool,
                         at now: Instant) -> (start: [Ticket], refuse: [Ticket]) {
        let running = (inFlight[address] ?? 1) - 1
        inFlight[address] = running > 0 ? running : nil
        if wrong { failures.record(address, at: now) }
        var queue = waiting.removeValue(forKey: address) ?? []
        if isLimited(address, at: now) { return ([], queue) }
        var started: [Ticket] = []
        while !queue.isEmpty && mayStart(address, at: now) {
            started.append(queue.removeFirst())
            inFlight[address, default: 0] += 1
        }
        if !queue.isEmpty { waiting[address] = queue }
        return (started, [])
    }

    private func mayStart(_ address: String, at now: Instant) -> Bool {
        let running = inFlight[address] ?? 0
        return running < inFlightPerAddress && failures.count(for: address, at: now) + running < wrongPerMinute
    }
}
