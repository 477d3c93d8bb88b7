import Testing
import PomodoroCore

// Shared helpers for the core tests: a clock moved by hand and a room wired to it.
// Nothing here sleeps or reads a real clock.

/// A monotonic clock that only moves when the test says so.
struct ManualClock {
    /// An arbitrary, odd origin, so nothing can quietly rely on time starting at zero.
    static let origin = Instant(nanoseconds: 1_000_000_000_017)

    private(set) var now: Instant

    init(now: Instant = ManualClock.origin) { self.now = now }

    mutating func advance(by duration: Duration) {
        precondition(duration >= .zero, "a monotonic clock never goes back")
        now = now + duration
    }

    mutating func advance(to instant: Instant) {
        precondition(instant >= now, "a monotonic clock never goes back")
        now = instant
    }
}

/// A room plus the manual clock that drives it; every call passes the clock's `now`.
struct TestRoom {
    var clock: ManualClock
    var room: Room
    private var tokensIssued = 0

    init(settings: RoomSettings = .standard, policy: RoomPolicy = .standard) {
        clock = ManualClock()
        room = Room(id: try! RoomID(validating: "test-room"), settings: settings, policy: policy, now: clock.now)
        // The wall clock reads a whole millisecond at the odd origin, as a server's clock may: a phase started
        // then ends exactly its length later (`Room.onWholeWallMillisecond`; PhaseTests covers the other case).
        room.wallOffsetNanoseconds = -(ManualClock.origin.nanoseconds % 1_000_000)
    }

    var now: Instant { clock.now }
    var snapshot: RoomSnapshot { room.snapshot(at: clock.now) }
    var remaining: Duration { room.remaining(at: clock.now) }

    /// The running phase's deadline, or nil when nothing runs.
    var deadline: Instant? {
        if case .running(let deadline) = room.timer { return deadline }
        return nil
    }

    func member(_ id: MemberID) -> MemberSnapshot? { snapshot.members.first { $0.id == id } }

    /// Joins with a fresh token "token-N" (N counts the joins of this test room).
    @discardableResult
    mutating func join(_ name: String, token: ResumeToken? = nil) throws(RoomError) -> JoinResult {
        tokensIssued += 1
        return try room.join(name: name, token: token, freshToken: ResumeToken("token-\(tokensIssued)"),
                             now: clock.now)
    }

    /// Joins and returns just the new member's id.
    @discardableResult
    mutating func add(_ name: String) throws(RoomError) -> MemberID { try join(name).memberID }

    @discardableResult
    mutating func send(_ command: Room.Command, by id: MemberID) throws(RoomError) -> Outcome {
        try room.handle(command, from: id, now: clock.now)
    }

    @discardableResult
    mutating func disconnect(_ id: MemberID, ended: ConnectionEnd = .lost) -> Outcome {
        room.disconnect(id, now: clock.now, ended: ended)
    }

    @discardableResult
    mutating func leave(_ id: MemberID) -> Outcome { room.leave(id, now: clock.now) }

    /// Moves the clock forward and lets the room catch up.
    @discardableResult
    mutating func advance(by duration: Duration) -> Outcome {
        clock.advance(by: duration)
        return room.advance(to: clock.now)
    }

    @discardableResult
    mutating func advance(to instant: Instant) -> Outcome {
        clock.advance(to: instant)
        return room.advance(to: clock.now)
    }

    /// Moves the clock to the room's next wake-up (plus `late`, a simulated scheduling delay) and advances.
    @discardableResult
    mutating func wake(late: Duration = .zero) throws -> Outcome {
        let wakeup = try #require(room.nextWakeup(), "the room has nothing scheduled")
        try #require(wakeup >= clock.now, "a wake-up in the past")
        return advance(to: wakeup + late)
    }
}

/// One `phaseCompleted` event, as a value that is easy to compare.
struct Completion: Equatable, CustomStringConvertible {
    var completed: Phase
    var next: Phase
    var autoStarted: Bool
    var cycle: Int

    init(_ completed: Phase, _ next: Phase, autoStarted: Bool = false, cycle: Int) {
        self.completed = completed
        self.next = next
        self.autoStarted = autoStarted
        self.cycle = cycle
    }

    var description: String { "\(completed)→\(next)(auto: \(autoStarted), cycle \(cycle))" }
}

extension Outcome {
    /// The `phaseCompleted` events, in order.
    var completions: [Completion] {
        events.compactMap {
            if case .phaseCompleted(let completed, let next, let autoStarted, let cycle, _, _) = $0 {
                return Completion(completed, next, autoStarted: autoStarted, cycle: cycle)
            }
            return nil
        }
    }
}

/// The `RoomError` that `body` throws, or nil when it succeeds.
func caught<T>(_ body: () throws -> T, sourceLocation: SourceLocation = #_sourceLocation) -> RoomError? {
    do {
        _ = try body()
        return nil
    } catch let error as RoomError {
        return error
    } catch {
        Issue.record("expected a RoomError, got \(error)", sourceLocation: sourceLocation)
        return nil
    }
}

extension RoomError {
    var isInvalidState: Bool {
        if case .invalidState = self { return true }
        return false
    }

    /// The field named by an `invalidArgument`, nil for any other error.
    var invalidField: String? {
        if case .invalidArgument(let field, _) = self { return field }
        return nil
    }
}
