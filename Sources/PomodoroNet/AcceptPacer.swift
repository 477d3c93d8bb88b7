/// How many connections the server takes on in one turn of its loop, and which wait for the next.
///
/// libwebsockets 4.1 keeps every connection's pending timeout in one sorted list per thread, and each new
/// connection inserts two (the handshake's, then the header table's) after walking the list from its head:
/// with every connection in handshake on it, taking on `n` connections in one turn costs `n²` steps. Its
/// listening socket takes every connection the kernel holds in one turn (up to the backlog, 4,096 here), so a
/// storm of joins spent most of its time walking that list (`lws_dll2_add_sorted`, about 70% of the server's CPU
/// under 10,000 connections at once). Taking on at most `perTurn` a turn keeps the list short: the connections
/// of one turn finish their handshake in the next (their first bytes are already there: the listening socket
/// defers accepting until they arrive), which takes them off it.
///
/// A connection accepted beyond the turn's share is held (its descriptor kept) and taken on, in the order
/// accepted, in a later turn; while any are held, newcomers queue behind them. A plain value: the server feeds
/// it the loop's turn and carries out what it says (`WebSocketServer+Accepting.swift`).
struct AcceptPacer: Equatable {
    /// The most connections taken on in one turn.
    let perTurn: Int
    /// The turn the count below is of (the loop's time, which changes only between turns).
    private var turn: UInt64?
    private var takenThisTurn = 0
    /// Connections accepted and held for a later turn, oldest first.
    private(set) var held: [Int32] = []
    /// Connections held for a later turn since the start.
    private(set) var heldInAll = 0

    init(perTurn: Int) {
        precondition(perTurn > 0, "at least one connection a turn")
        self.perTurn = perTurn
    }

    enum Verdict: Equatable {
        /// The library takes it on now.
        case takeOn
        /// Held for a later turn (the caller keeps the socket open under `held`'s descriptor).
        case hold
    }

    /// A connection the listening socket accepted in `turn`.
    mutating func accepted(in turn: UInt64) -> Verdict {
        enter(turn)
        guard held.isEmpty, takenThisTurn < perTurn else { return .hold }
        takenThisTurn += 1
        return .takeOn
    }

    /// Keeps `descriptor` (a connection `accepted` said to hold) until a later turn; true when it is the
    /// first held, so that a later turn is to be asked for.
    mutating func hold(_ descriptor: Int32) -> Bool {
        held.append(descriptor)
        heldInAll += 1
        return held.count == 1
    }

    /// The held connections to take on now, oldest first, a turn's share; whether some are still held
    /// afterwards (then a later turn is to be asked for). Asked in a later turn than the holds (from a timer),
    /// it starts a new share, whatever the loop's time says: turns shorter than its millisecond share one.
    mutating func release(in turn: UInt64) -> (descriptors: [Int32], more: Bool) {
        self.turn = turn
        takenThisTurn = 0
        let count = min(held.count, perTurn)
        let released = Array(held.prefix(count))
        held.removeFirst(count)
        takenThisTurn += count
        return (released, !held.isEmpty)
    }

    /// Everything held, for a server that ends: the caller closes them.
    mutating func releaseAll() -> [Int32] {
        defer { held.removeAll() }
        return held
    }

    private mutating func enter(_ turn: UInt64) {
        if self.turn != turn {
            self.turn = turn
            takenThisTurn = 0
        }
    }
}
