import PomodoroCore
import PomodoroStore

// Generated journals, shared by the store tests of every backend (PomodoroStoreTests, PomodoroPostgresTests),
// so each store is checked against the same data.

public enum JournalFixtures {
    /// A generated journal: days with 0–6 sessions at any millisecond (some days none, so streaks break),
    /// names repeated within a session, interruptions of the room, of named members and of unnamed ones.
    public static func journal(seed: UInt64, room: RoomID = Sample.room) -> ([FocusSessionRecord], [InterruptionRecord]) {
        var random = SplitMix(seed: seed)
        let names = ["Ada", "Bob", "Cy", "Dee", "Émile"]
        var sessions: [FocusSessionRecord] = []
        var interruptions: [InterruptionRecord] = []
        // Both hemispheres' spring and autumn changes of 2026.
        for start in [utcMs(2026, 2, 25, 0), utcMs(2026, 9, 20, 0)] {
            for day in 0..<50 {
                let dayStart = start + Int64(day) * JournalTotals.dayMs
                let count = random.next(9) < 3 ? 0 : random.next(7)
                for _ in 0..<count {
                    let end = dayStart + Int64(random.next(86_400_000))
                    let length = 60 + random.next(3000)
                    var participants: [FocusSessionRecord.Participant] = []
                    for number in 0..<random.next(4) {
                        participants.append(Sample.participant("m\(number)", names[random.next(names.count)],
                                                               focusMs: Int64(random.next(length * 1000 + 1))))
                    }
                    sessions.append(Sample.session(room, endedAtMs: end, lengthSeconds: length,
                                                   participants: participants))
                }
                for _ in 0..<random.next(3) {
                    let at = dayStart + Int64(random.next(86_400_000))
                    switch random.next(3) {
                    case 0: interruptions.append(InterruptionRecord(room: room, member: nil, name: nil, atMs: at))
                    case 1: interruptions.append(InterruptionRecord(room: room, member: MemberID("m1"),
                                                                    name: names[random.next(names.count)], atMs: at))
                    default: interruptions.append(InterruptionRecord(room: room, member: MemberID("m9"), name: nil,
                                                                     atMs: at))
                    }
                }
            }
        }
        sessions.sort { $0.endedAtMs < $1.endedAtMs }
        interruptions.sort { $0.atMs < $1.atMs }
        return (sessions, interruptions)
    }
}

/// A small seeded generator, so a failing journal can be made again.
public struct SplitMix {
    public var state: UInt64
    public init(seed: UInt64) { state = seed }
    public mutating func next(_ bound: Int) -> Int {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return Int((z ^ (z >> 31)) % UInt64(bound))
    }
}
