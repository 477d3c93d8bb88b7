import PomodoroCluster
import PomodoroCore
import PomodoroProtocol
import Testing

/// A node relaying members of a room another node runs computes their ticks from the `state` the owner
/// replicated (`ReplicatedTimer`): the same bytes, at the same boundaries, as the owner's `Room` sends its
/// own members. Both are driven here by one manual clock, as the owner's and the relaying node's clocks
/// agree on wall time; nothing sleeps.
@Suite struct ReplicatedTimerTests {
    static let origin = Instant(nanoseconds: 1_000_000_000_017)
    /// Wall-clock minus monotonic nanoseconds: an odd offset, so no boundary falls on a whole millisecond.
    static let offset: Int64 = 1_767_225_600_000_123_457

    static func reading(_ instant: Instant) -> ClockReading {
        ClockReading(monotonic: instant, wallOffsetNanoseconds: offset)
    }

    static func snapshot(_ room: Room, at now: Instant) -> SnapshotPayload {
        SnapshotPayload(room.snapshot(at: now), clock: reading(now))
    }

    /// The owner's room and the relaying node's copy stepped through the same instants, 37 ms apart:
    /// the tick frames must be equal byte for byte (serverTime included: one clock), and the copy must stop
    /// at the deadline, where the owner's room completes the phase (a `state`, never a tick).
    @Test func theCopyTicksWhatTheOwnersRoomTicksByteForByte() throws {
        let id = try RoomID(validating: "team-alpha")
        var now = Self.origin
        var room = Room(id: id, settings: RoomSettings(focus: 60, shortBreak: 60, longBreak: 60, longBreakEvery: 4,
                                                       autoStart: false),
                        policy: .standard, now: now)
        let ada = try room.join(name: "Ada", token: nil, freshToken: ResumeToken("token-1"), now: now).memberID
        now = now + .milliseconds(250)
        _ = try room.handle(.start, from: ada, now: now)
        // The relaying node hears the state a moment later, 1.3 s into the focus (a boundary already passed).
        now = now + .milliseconds(1_300)
        var owners: [[UInt8]] = []
        let late = room.advance(to: now)
        if let tick = late.tick { owners.append(WireCodec.encode(ServerMessage.tick(TickPayload(tick, room: id, clock: Self.reading(now))))) }
        var copy = try #require(ReplicatedTimer(Self.snapshot(room, at: now - .milliseconds(1_300)),
                                                wallOffsetNanoseconds: Self.offset))
        var copied: [[UInt8]] = []
        if let tick = copy.tick(at: Self.reading(now)) { copied.append(WireCodec.encode(ServerMessage.tick(tick))) }
        var completed = false
        while !completed {
            now = now + .milliseconds(37)
            let outcome = room.advance(to: now)
            if let tick = outcome.tick {
                owners.append(WireCodec.encode(ServerMessage.tick(TickPayload(tick, room: id, clock: Self.reading(now)))))
            }
            if let tick = copy.tick(at: Self.reading(now)) { copied.append(WireCodec.encode(ServerMessage.tick(tick))) }
            completed = outcome.stateChanged
        }
        #expect(owners.count == 59, "one tick for each second from 59 down to 1")
        #expect(copied == owners)
        #expect(copy.nextTick == nil, "the copy waits for the owner's next state")
        let after = copy.tick(at: Self.reading(now + .seconds(5)))
        #expect(after == nil)
    }

    /// The copy's next tick falls on the owner's boundary, on this node's monotonic clock.
    @Test func theNextTickIsTheBoundaryOfTheReplicatedDeadline() throws {
        let endsAtWall: Int64 = 1_767_225_660_000
        let snapshot = SnapshotPayload(room: "r", phase: .focus, status: .running, running: true, remainingMs: 4_200,
                                       phaseLengthMs: 60_000, endsAt: endsAtWall, cycle: 2,
                                       settings: .standard, pendingSettings: nil, members: [],
                                       stats: StatsPayload(focusCompleted: 0, focusSeconds: 0, interruptions: 0),
                                       seq: 7, serverTime: endsAtWall - 4_200)
        var copy = try #require(ReplicatedTimer(snapshot, wallOffsetNanoseconds: Self.offset))
        let deadline = Instant(nanoseconds: endsAtWall * 1_000_000 - Self.offset)
        #expect(copy.nextTick == deadline - .seconds(4))
        let due = copy.tick(at: Self.reading(deadline - .seconds(4)))
        let tick = try #require(due)
        #expect(tick.remainingMs == 4_000 && tick.endsAt == endsAtWall && tick.seq == 7 && tick.cycle == 2)
        let early = copy.tick(at: Self.reading(deadline - .milliseconds(3_500)))
        #expect(early == nil, "one tick per second")
        #expect(copy.nextTick == deadline - .seconds(3))
    }

    static func running(remainingMs: Int64, endsAt: Int64, seq: UInt64) -> SnapshotPayload {
        SnapshotPayload(room: "r", phase: .focus, status: .running, running: true, remainingMs: remainingMs,
                        phaseLengthMs: 60_000, endsAt: endsAt, cycle: 1, settings: .standard, pendingSettings: nil,
                        members: [], stats: StatsPayload(focusCompleted: 0, focusSeconds: 0, interruptions: 0),
                        seq: seq, serverTime: endsAt - remainingMs)
    }

    /// A `state` about something else that the owner sent just before a boundary and that arrives after this
    /// node ticked it: the second is not ticked again (the state's `seq` goes on the next ticks).
    @Test func aStateFromBeforeATickedBoundaryDoesNotTickItAgain() throws {
        let endsAt: Int64 = 1_767_225_660_000
        let deadline = Instant(nanoseconds: endsAt * 1_000_000 - Self.offset)
        var copy = try #require(ReplicatedTimer(Self.running(remainingMs: 10_000, endsAt: endsAt, seq: 4),
                                                wallOffsetNanoseconds: Self.offset))
        let seven = copy.ticksSinceShown(at: Self.reading(deadline - .milliseconds(6_990)))
        #expect(seven.map(\.remainingMs) == [9_000, 8_000, 7_000])
        // Sent at 7.2 s left (showing 8), heard at 6.99 s left.
        var later = try #require(ReplicatedTimer(Self.running(remainingMs: 7_200, endsAt: endsAt, seq: 5),
                                                 wallOffsetNanoseconds: Self.offset))
        later.follows(copy)
        #expect(later.ticksSinceShown(at: Self.reading(deadline - .milliseconds(6_990))).isEmpty)
        let six = later.tick(at: Self.reading(deadline - .seconds(6)))
        #expect(six?.remainingMs == 6_000 && six?.seq == 5)
    }

    /// A `state` the owner took just after a boundary, heard here before this node's timer reached it (woken
    /// late): the owner's members heard that boundary's tick before the state, so it is this node's to send
    /// first; the copy made from the state then ticks nothing more for it. One taken before the boundary
    /// brings none; a change of the timer (a pause) brings the tick due by its `serverTime`.
    @Test func aStateTakenAfterABoundaryNotTickedHereBringsThatTickFirst() throws {
        let endsAt: Int64 = 1_767_225_660_000
        let deadline = Instant(nanoseconds: endsAt * 1_000_000 - Self.offset)
        var copy = try #require(ReplicatedTimer(Self.running(remainingMs: 4_500, endsAt: endsAt, seq: 3),
                                                wallOffsetNanoseconds: Self.offset))
        let heardAt = Self.reading(deadline - .milliseconds(2_995))
        // Taken 3.2 s before the end: nothing passed by then that this copy has not ticked.
        #expect(copy.tick(before: Self.running(remainingMs: 4_200, endsAt: endsAt, seq: 4), at: heardAt) == nil)
        // Taken 2.999 s before the end: the boundary at 3 s had passed.
        let state = Self.running(remainingMs: 2_999, endsAt: endsAt, seq: 5)
        let due = copy.tick(before: state, at: heardAt)
        let first = try #require(due)
        #expect(first.remainingMs == 3_000 && first.seq == 3 && first.endsAt == endsAt)
        #expect(copy.tick(before: state, at: heardAt) == nil, "once")
        var next = try #require(ReplicatedTimer(state, wallOffsetNanoseconds: Self.offset))
        next.follows(copy)
        #expect(next.ticksSinceShown(at: heardAt).isEmpty)
        #expect(next.tick(at: heardAt) == nil)
        #expect(next.tick(at: Self.reading(deadline - .seconds(2)))?.remainingMs == 2_000)

        // Woken more than a second late: only the latest boundary, as the owner's room woken late.
        var late = try #require(ReplicatedTimer(Self.running(remainingMs: 4_500, endsAt: endsAt, seq: 3),
                                                wallOffsetNanoseconds: Self.offset))
        let skipped = late.tick(before: Self.running(remainingMs: 1_990, endsAt: endsAt, seq: 6),
                                at: Self.reading(deadline - .milliseconds(1_985)))
        #expect(skipped?.remainingMs == 2_000)

        // Paused 2.9 s before the end: the owner's members heard the tick at 3 s before the pause.
        var paused = try #require(ReplicatedTimer(Self.running(remainingMs: 4_500, endsAt: endsAt, seq: 3),
                                                  wallOffsetNanoseconds: Self.offset))
        let pause = SnapshotPayload(room: "r", phase: .focus, status: .paused, running: false, remainingMs: 2_900,
                                    phaseLengthMs: 60_000, endsAt: nil, cycle: 1, settings: .standard,
                                    pendingSettings: nil, members: [],
                                    stats: StatsPayload(focusCompleted: 0, focusSeconds: 0, interruptions: 0),
                                    seq: 7, serverTime: endsAt - 2_900)
        let beforePause = paused.tick(before: pause, at: Self.reading(deadline - .milliseconds(2_890)))
        #expect(beforePause?.remainingMs == 3_000)
        #expect(paused.tick(before: pause, at: Self.reading(deadline - .milliseconds(2_890))) == nil)
    }

    /// A snapshot that arrives late (held for the owner's commit): every boundary passed meanwhile is ticked,
    /// in order, as the owner's members heard them when the commit let them out.
    @Test func aLateSnapshotTicksEveryBoundaryItMissed() throws {
        let endsAt: Int64 = 1_767_225_660_000
        let deadline = Instant(nanoseconds: endsAt * 1_000_000 - Self.offset)
        var copy = try #require(ReplicatedTimer(Self.running(remainingMs: 5_000, endsAt: endsAt, seq: 9),
                                                wallOffsetNanoseconds: Self.offset))
        let caught = copy.ticksSinceShown(at: Self.reading(deadline - .milliseconds(2_400)))
        #expect(caught.map(\.remainingMs) == [4_000, 3_000])
        #expect(copy.nextTick == deadline - .seconds(2))
        // One that arrives after its phase ended ticks nothing: what follows is the owner's to say.
        var ended = try #require(ReplicatedTimer(Self.running(remainingMs: 5_000, endsAt: endsAt, seq: 9),
                                                 wallOffsetNanoseconds: Self.offset))
        #expect(ended.ticksSinceShown(at: Self.reading(deadline + .milliseconds(300))).isEmpty)
    }

    /// Nothing runs (paused, idle): no copy, no ticks.
    @Test func aStoppedTimerIsNotCounted() {
        let snapshot = SnapshotPayload(room: "r", phase: .focus, status: .paused, running: false, remainingMs: 30_000,
                                       phaseLengthMs: 60_000, endsAt: nil, cycle: 1, settings: .standard,
                                       pendingSettings: nil, members: [],
                                       stats: StatsPayload(focusCompleted: 0, focusSeconds: 0, interruptions: 0),
                                       seq: 3, serverTime: 0)
        #expect(ReplicatedTimer(snapshot, wallOffsetNanoseconds: Self.offset) == nil)
    }

    /// A relaying node that cannot hear the owner (the bus is away) goes on past the phase's end into the
    /// phase the room's replicated settings say follows (auto-start on, not aligned, no schedule): through
    /// short and long breaks and new sets, it ticks what the owner's room ticks, but the `seq` (the owner's
    /// changes are not known here; a tick's seq only has to be no lower than the member's state's).
    @Test func withoutTheOwnerTheCopyFollowsTheRoomsOwnRuleIntoTheNextPhases() throws {
        let id = try RoomID(validating: "team-beta")
        var now = Self.origin
        var room = Room(id: id, settings: RoomSettings(focus: 3, shortBreak: 2, longBreak: 4, longBreakEvery: 2,
                                                       autoStart: true),
                        policy: .standard, now: now)
        let ada = try room.join(name: "Ada", token: nil, freshToken: ResumeToken("token-1"), now: now).memberID
        _ = try room.handle(.start, from: ada, now: now)
        var copy = try #require(ReplicatedTimer(Self.snapshot(room, at: now), wallOffsetNanoseconds: Self.offset))
        let seq = copy.seq
        func comparable(_ tick: TickPayload) -> TickPayload {
            var tick = tick
            tick.seq = seq
            return tick
        }
        var owners: [TickPayload] = [], copied: [TickPayload] = []
        var phases: [Phase] = []
        let end = now + .seconds(17)   // focus 3, break 2, focus 3, long break 4, focus 3, break 2
        while now < end {
            now = now + .milliseconds(37)
            let outcome = room.advance(to: now)
            if let tick = outcome.tick { owners.append(comparable(TickPayload(tick, room: id, clock: Self.reading(now)))) }
            if let tick = copy.tick(at: Self.reading(now)) { copied.append(comparable(tick)) }
            while copy.nextTick == nil, now >= copy.deadline, let next = copy.following() {
                copy = next
                phases.append(copy.phase)
                copied += copy.ticksSinceShown(at: Self.reading(now)).map(comparable)
            }
        }
        #expect(phases == [.shortBreak, .focus, .longBreak, .focus, .shortBreak, .focus])
        #expect(owners.count == 11, "2, 1, 2, 3, 2 and 1 ticks in the six phases")
        #expect(copied == owners)
    }

    /// Where the owner decides what follows by more than the settings (no auto-start: a `start` is awaited;
    /// a room on the clock's grid; a scheduled session), the copy does not guess: it stops at the end.
    @Test func theCopyDoesNotGuessWhatTheOwnerDecides() throws {
        let id = try RoomID(validating: "team-gamma")
        let now = Self.origin
        func copy(_ settings: RoomSettings) throws -> ReplicatedTimer {
            var room = Room(id: id, settings: settings, policy: .standard, now: now)
            let ada = try room.join(name: "Ada", token: nil, freshToken: ResumeToken("token-1"), now: now).memberID
            _ = try room.handle(.start, from: ada, now: now)
            return try #require(ReplicatedTimer(Self.snapshot(room, at: now), wallOffsetNanoseconds: Self.offset))
        }
        #expect(try copy(RoomSettings(focus: 60, shortBreak: 60, autoStart: false)).following() == nil)
        #expect(try copy(RoomSettings(focus: 60, shortBreak: 60, autoStart: true)).following()?.phase == .shortBreak)
        var scheduled = Self.snapshot(try {
            var room = Room(id: id, settings: RoomSettings(focus: 60, autoStart: true), policy: .standard, now: now)
            let ada = try room.join(name: "Ada", token: nil, freshToken: ResumeToken("token-1"), now: now).memberID
            _ = try room.handle(.start, from: ada, now: now)
            return room
        }(), at: now)
        scheduled.scheduledRun = ScheduledRunPayload(schedule: "s1", name: "Mornings", focusSessions: 2, focusDone: 0)
        #expect(ReplicatedTimer(scheduled, wallOffsetNanoseconds: Self.offset)?.following() == nil)
        var aligned = scheduled
        aligned.scheduledRun = nil
        aligned.settings.aligned = try ZoneName("UTC")
        #expect(ReplicatedTimer(aligned, wallOffsetNanoseconds: Self.offset)?.following() == nil)
        var pending = aligned
        pending.settings.aligned = nil
        pending.pendingSettings = RoomSettings(focus: 60, shortBreak: 7, autoStart: true)
        let next = try #require(ReplicatedTimer(pending, wallOffsetNanoseconds: Self.offset)?.following())
        #expect(next.phase == .shortBreak && next.endsAt == pending.endsAt! + 7_000, "the pending settings apply at the end")
    }

    /// A relaying node reads a `state`'s timer without decoding its member list (`StateTimerReader`): what
    /// it reads is the whole decode's room with an empty list, whatever the members' names and tasks hold,
    /// the very bytes the cut looks for among them; and the copy ticks the same.
    @Test func aStatesTimerIsReadWithoutItsMemberList() throws {
        let (whole, frame) = try Self.trickyState()
        var reader = StateTimerReader()
        let first = reader.room(of: frame)
        let read = try #require(first)
        var expected = whole
        expected.members = []
        #expect(read == expected)
        #expect(ReplicatedTimer(read, wallOffsetNanoseconds: Self.offset) == ReplicatedTimer(whole, wallOffsetNanoseconds: Self.offset))
        // An empty list, and a frame whose list is not where the encoder puts it (decoded whole).
        var empty = whole
        empty.members = []
        let emptyFrame = String(decoding: WireCodec.encode(ServerMessage.state(empty)), as: UTF8.self)
        let readEmpty = reader.room(of: emptyFrame)
        #expect(readEmpty == empty)
        let moved = frame.replacing(#""memberCount":"#, with: #""memberTally":0,"memberCount":"#)
        let readMoved = reader.room(of: moved)
        #expect(readMoved?.members.count == 4)
        let tick = reader.room(of: #"{"type":"tick"}"#)
        let bad = reader.room(of: #"{"type":"state","room":{"id":"x"}}"#)
        #expect(tick == nil && bad == nil)
        #expect(reader.decoded == 4 && reader.reused == 1, "the empty list's frame is the first one's but for the list")
    }

    /// The `state`s of a room that differ from the last one read only in their members, the timer's values,
    /// the counts, the room's stats, `seq` and `serverTime` are read without decoding, and read exactly as a
    /// decode reads them; any other change (the settings, the host, the lock) is decoded; each room keeps its
    /// own.
    @Test func aStatesTimerIsDecodedOnlyWhenMoreThanItsListChanged() throws {
        let (whole, _) = try Self.trickyState()
        var reader = StateTimerReader()
        func frame(_ room: SnapshotPayload) -> String {
            String(decoding: WireCodec.encode(ServerMessage.state(room)), as: UTF8.self)
        }
        func expect(_ room: SnapshotPayload, decoded: Int, reused: Int, sourceLocation: SourceLocation = #_sourceLocation) {
            var listless = room
            listless.members = []
            let read = reader.room(of: frame(room))
            #expect(read == listless, sourceLocation: sourceLocation)
            #expect(reader.decoded == decoded && reader.reused == reused, sourceLocation: sourceLocation)
        }
        expect(whole, decoded: 1, reused: 0)
        var next = whole
        next.members[1].task = "a task"
        next.members.removeLast()
        next.remainingMs -= 1_234
        next.seq += 1
        next.serverTime += 1_234
        expect(next, decoded: 1, reused: 1)
        next.seq = UInt64.max
        next.remainingMs = -5
        next.serverTime = Int64.min
        next.memberCount = 1_000
        next.presentCount = 0
        next.membersTruncated = true
        next.stats = StatsPayload(focusCompleted: 12, focusSeconds: Int64.max, interruptions: 3)
        expect(next, decoded: 1, reused: 2)
        var other = next
        other.room = "team-echo"
        expect(other, decoded: 2, reused: 2)
        expect(next, decoded: 2, reused: 3)
        // The timer's values (a phase that began or ended) are read from their bytes too.
        for change in [{ (r: inout SnapshotPayload) in r.endsAt = r.endsAt.map { $0 + 1 } },
                       { $0.cycle += 1 }, { $0.phaseLengthMs += 1 }, { $0.running = false },
                       { $0.phase = .longBreak; $0.status = .paused; $0.endsAt = nil; $0.remainingMs = 0 },
                       { $0.phase = .idle; $0.status = .idle; $0.running = false; $0.endsAt = nil; $0.cycle = 0 },
                       { $0.phase = .shortBreak; $0.status = .ready; $0.endsAt = Int64.max; $0.phaseLengthMs = Int64.min }] {
            var changed = next
            change(&changed)
            let decoded = reader.decoded
            expect(changed, decoded: decoded, reused: reader.reused + 1)
        }
        // Anything else is decoded, once.
        for change in [{ (r: inout SnapshotPayload) in r.settings.focus += 60 }, { $0.pendingSettings = nil },
                       { $0.host = "m9" }, { $0.locked = true }, { $0.control = .host }] {
            var changed = next
            change(&changed)
            let before = reader.decoded
            expect(changed, decoded: before + 1, reused: reader.reused)
            expect(changed, decoded: before + 1, reused: reader.reused + 1)
        }
        // A phase this build does not know (a later server's): the frame is decoded whole, and refused as the
        // decode refuses it.
        let unknown = frame(next).replacing(#""phase":"focus""#, with: #""phase":"siesta""#)
            .replacing(#""phase":"shortBreak""#, with: #""phase":"siesta""#)
            .replacing(#""phase":"longBreak""#, with: #""phase":"siesta""#)
        let decodedBefore = reader.decoded
        #expect(reader.room(of: unknown) == nil)
        #expect(reader.decoded == decodedBefore + 1)
        reader.forget(next.room)
        let forgottenBefore = reader.decoded
        let again = reader.room(of: frame(next))
        #expect(again?.seq == next.seq)
        #expect(reader.decoded == forgottenBefore + 1, "a room forgotten is decoded again")
    }

    /// At most `limit` rooms are kept: past it, the kept ones are forgotten and read again.
    @Test func theRoomsKeptAreBounded() throws {
        let (whole, _) = try Self.trickyState()
        var reader = StateTimerReader(limit: 2)
        for name in ["a", "b", "c", "a"] {
            var room = whole
            room.room = name
            let read = reader.room(of: String(decoding: WireCodec.encode(ServerMessage.state(room)), as: UTF8.self))
            #expect(read?.room == name)
        }
        #expect(reader.decoded == 4 && reader.reused == 0, "\"c\" made room by forgetting \"a\" and \"b\"")
    }

    /// A room whose members' names and task hold the very bytes the cut looks for, running and reconfigured
    /// (its pending settings set), and its `state` frame.
    static func trickyState() throws -> (SnapshotPayload, String) {
        let id = try RoomID(validating: "team-delta")
        var now = Self.origin
        var room = Room(id: id, settings: RoomSettings(focus: 60, shortBreak: 60, autoStart: true), policy: .standard, now: now)
        let tricky = [#"],"memberCount":9"#, #""members":["#, #"x\"],"memberCount":1,"seq":99"#, #","seq":1,"serverTime":2,"#]
        var members: [MemberID] = []
        for (index, name) in tricky.enumerated() {
            members.append(try room.join(name: name, token: nil, freshToken: ResumeToken("token-\(index)"), now: now).memberID)
        }
        _ = try room.handle(.setTask(#"ends with ],"memberCount":"#), from: members[3], now: now)
        _ = try room.handle(.start, from: members[0], now: now)
        now = now + .milliseconds(4_321)
        var settings = RoomSettings(focus: 90, shortBreak: 30, autoStart: false)
        settings.aligned = nil
        _ = try room.handle(.configure(settings), from: members[0], now: now)
        let whole = Self.snapshot(room, at: now)
        #expect(whole.members.count == 4 && whole.pendingSettings != nil && whole.running)
        return (whole, String(decoding: WireCodec.encode(ServerMessage.state(whole)), as: UTF8.self))
    }
}
