import PomodoroCore
import PomodoroProtocol

/// Reads the room of the `state`s an owner sends a relaying node, for its timer (docs/CLUSTER.md, "Ticks"),
/// decoding a room's frame only when more than what changes from one `state` to the next changed since the
/// last one read of that room.
///
/// Every `task`, presence change or join of a split room sends a `state` to each node with members of it,
/// and the relaying node reads the running phase from it. The member list is cut out as bytes (it is most of
/// the frame); what was left was still parsed by json-c for each `state` (a tokenizer, a tree, a string per
/// key), the largest cost a relaying node had of its own (docs/PERFORMANCE.md §7). Between two `state`s of a
/// room about a task, only the list and a few numbers differ: `remainingMs`, the counts, the room's stats
/// (its focus seconds grow while it runs), `seq` and `serverTime`; a phase that begins or ends changes the
/// timer's values as well (`phase`, `status`, `running`, `remainingMs`, `phaseLengthMs`, `endsAt`, `cycle`).
/// The reader keeps, per room, the frame's other bytes and their decode, and for a frame whose other bytes
/// are the same it sets those values, read from their bytes, on the decode it keeps. What it returns is
/// exactly what decoding the frame with an empty member list returns.
///
/// The cut follows the order `WireCodec` writes a room in: the name, then `"phase":"…","status":"…",
/// "running":B,"remainingMs":N,"phaseLengthMs":N,"endsAt":N|null,"cycle":N,` exactly, then `"members":[` and
/// the list, then `],"memberCount":N,"presentCount":N,"membersTruncated":B,"stats":{…three numbers…},
/// "seq":N,"serverTime":N,` exactly. None of these keys can occur inside a JSON string (its quotes are
/// escaped), so each is found where it is the key; a frame that does not follow the template (a phase or
/// status this build does not know among them) is decoded whole each time.
package struct StateTimerReader {
    /// A room's last frame as read: its bytes but the list and the numbers (`Cut.rest`), and its decode.
    private struct Kept {
        var rest: [UInt8]
        var room: SnapshotPayload
    }

    private var kept: [String: Kept] = [:]
    /// Rooms kept at most: past it, the kept ones are forgotten (a node follows far fewer).
    package let limit: Int
    /// How many frames were decoded by json-c (for the tests).
    package private(set) var decoded = 0
    /// How many were read from the bytes kept.
    package private(set) var reused = 0

    package init(limit: Int = 20_000) { self.limit = limit }

    /// The room a `state` frame carries, its member list left out (`members` empty; the counts stay); nil
    /// for a frame that is not a `state`.
    package mutating func room(of frame: String) -> SnapshotPayload? {
        var frame = frame
        return frame.withUTF8 { room(of: $0) }
    }

    package mutating func room(of bytes: UnsafeBufferPointer<UInt8>) -> SnapshotPayload? {
        guard let cut = Cut(bytes) else {
            // Not as `WireCodec` writes a `state`: decoded whole (the list too, where it was not found).
            decoded += 1
            guard case .state(let room)? = try? WireCodec.decodeServerMessage(Self.withoutList(bytes)) else { return nil }
            return room
        }
        let rest = cut.rest(of: bytes)
        let last = kept[cut.room]
        if let last, last.rest == rest {
            reused += 1
            var room = last.room
            cut.set(on: &room)
            return room
        }
        decoded += 1
        var listless = Array(bytes[..<cut.listStart])
        listless.append(contentsOf: bytes[cut.listEnd...])
        guard case .state(var room)? = try? WireCodec.decodeServerMessage(listless), room.room == cut.room else {
            kept[cut.room] = nil
            return nil
        }
        room.members = []
        if kept.count >= limit, last == nil { kept = [:] }
        kept[cut.room] = Kept(rest: rest, room: room)
        return room
    }

    /// The room is no longer followed here.
    package mutating func forget(_ room: String) {
        kept[room] = nil
    }

    /// The frame with its member list cut out when it is where `WireCodec` writes it.
    private static func withoutList(_ bytes: UnsafeBufferPointer<UInt8>) -> [UInt8] {
        var copy = Array(bytes)
        if let open = firstIndex(of: membersOpen, in: bytes, from: 0),
           let close = firstIndex(of: membersClose, in: bytes, from: open + membersOpen.count) {
            copy.removeSubrange(open + membersOpen.count..<close)
        }
        return copy
    }

    /// Where the parts of a `state` frame are: the room's name, the member list's bytes, and the numbers
    /// that change from one `state` to the next.
    private struct Cut {
        let room: String
        let listStart: Int
        let listEnd: Int
        /// Where the timer's values are (from `phase`'s to `cycle`'s), and where the part from the list's end
        /// to `serverTime`'s value ends.
        let timerRange: Range<Int>
        let templateEnd: Int
        let phase: Phase
        let status: TimerStatus
        let running: Bool
        let remainingMs: Int64
        let phaseLengthMs: Int64
        let endsAt: Int64?
        let cycle: Int
        let memberCount: Int
        let presentCount: Int
        let membersTruncated: Bool
        let stats: StatsPayload
        let seq: UInt64
        let serverTime: Int64

        init?(_ bytes: UnsafeBufferPointer<UInt8>) {
            guard bytes.starts(with: StateTimerReader.statePrefix) else { return nil }
            let nameStart = StateTimerReader.statePrefix.count
            guard let nameEnd = bytes[nameStart...].firstIndex(of: UInt8(ascii: "\"")),
                  !bytes[nameStart..<nameEnd].contains(UInt8(ascii: "\\")) else { return nil }
            var head = Scanner(bytes, at: nameEnd)
            guard head.literal(StateTimerReader.phaseKey), let phase = head.word().flatMap(Phase.init(rawValue:)),
                  head.literal(StateTimerReader.statusKey), let status = head.word().flatMap(TimerStatus.init(rawValue:)),
                  head.literal(StateTimerReader.runningKey), let running = head.boolean(),
                  head.literal(StateTimerReader.remainingKey), let remainingMs = head.integer(Int64.self),
                  head.literal(StateTimerReader.phaseLengthKey), let phaseLengthMs = head.integer(Int64.self),
                  head.literal(StateTimerReader.endsAtKey) else { return nil }
            let endsAt: Int64?
            if head.literal(StateTimerReader.nullLiteral) {
                endsAt = nil
            } else {
                guard let value = head.integer(Int64.self) else { return nil }
                endsAt = value
            }
            guard head.literal(StateTimerReader.cycleKey), let cycle = head.integer(Int.self), head.at(UInt8(ascii: ",")),
                  let open = StateTimerReader.firstIndex(of: StateTimerReader.membersOpen, in: bytes, from: head.index),
                  let close = StateTimerReader.firstIndex(of: StateTimerReader.membersClose, in: bytes,
                                                          from: open + StateTimerReader.membersOpen.count) else { return nil }
            var tail = Scanner(bytes, at: close)
            guard tail.literal(StateTimerReader.membersClose), let memberCount = tail.integer(Int.self),
                  tail.literal(StateTimerReader.presentKey), let presentCount = tail.integer(Int.self),
                  tail.literal(StateTimerReader.truncatedKey), let membersTruncated = tail.boolean(),
                  tail.literal(StateTimerReader.statsKey), let focusCompleted = tail.integer(Int.self),
                  tail.literal(StateTimerReader.focusSecondsKey), let focusSeconds = tail.integer(Int64.self),
                  tail.literal(StateTimerReader.interruptionsKey), let interruptions = tail.integer(Int.self),
                  tail.literal(StateTimerReader.seqKey), let seq = tail.integer(UInt64.self),
                  tail.literal(StateTimerReader.serverTimeKey), let serverTime = tail.integer(Int64.self),
                  tail.at(UInt8(ascii: ",")) || tail.at(UInt8(ascii: "}")) else { return nil }
            room = String(decoding: bytes[nameStart..<nameEnd], as: UTF8.self)
            listStart = open + StateTimerReader.membersOpen.count
            listEnd = close
            timerRange = nameEnd..<head.index
            templateEnd = tail.index
            self.phase = phase
            self.status = status
            self.running = running
            self.remainingMs = remainingMs
            self.phaseLengthMs = phaseLengthMs
            self.endsAt = endsAt
            self.cycle = cycle
            self.memberCount = memberCount
            self.presentCount = presentCount
            self.membersTruncated = membersTruncated
            stats = StatsPayload(focusCompleted: focusCompleted, focusSeconds: focusSeconds, interruptions: interruptions)
            self.seq = seq
            self.serverTime = serverTime
        }

        /// The frame's bytes but the timer, the list and the numbers.
        func rest(of bytes: UnsafeBufferPointer<UInt8>) -> [UInt8] {
            var rest: [UInt8] = []
            rest.reserveCapacity(bytes.count - (templateEnd - listStart) - timerRange.count)
            rest.append(contentsOf: bytes[..<timerRange.lowerBound])
            rest.append(contentsOf: bytes[timerRange.upperBound..<listStart])
            rest.append(contentsOf: bytes[templateEnd...])
            return rest
        }

        /// Sets this frame's timer and numbers on the decode of a frame with the same other bytes.
        func set(on room: inout SnapshotPayload) {
            room.phase = phase
            room.status = status
            room.running = running
            room.remainingMs = remainingMs
            room.phaseLengthMs = phaseLengthMs
            room.endsAt = endsAt
            room.cycle = cycle
            room.memberCount = memberCount
            room.presentCount = presentCount
            room.membersTruncated = membersTruncated
            room.stats = stats
            room.seq = seq
            room.serverTime = serverTime
        }
    }

    /// Reads a frame's bytes from a position on: the literal bytes expected, numbers, booleans.
    private struct Scanner {
        let bytes: UnsafeBufferPointer<UInt8>
        private(set) var index: Int

        init(_ bytes: UnsafeBufferPointer<UInt8>, at index: Int) {
            self.bytes = bytes
            self.index = index
        }

        /// Whether the byte at the position is `byte` (the position stays).
        func at(_ byte: UInt8) -> Bool { index < bytes.count && bytes[index] == byte }

        mutating func literal(_ expected: [UInt8]) -> Bool {
            guard bytes.count - index >= expected.count,
                  bytes[index..<index + expected.count].elementsEqual(expected) else { return false }
            index += expected.count
            return true
        }

        /// An integer in ASCII digits, with a leading `-` for a signed type; nil when there is none or it
        /// does not fit.
        mutating func integer<T: FixedWidthInteger>(_: T.Type) -> T? {
            var position = index
            let negative = T.isSigned && at(UInt8(ascii: "-"))
            if negative { position += 1 }
            let first = position
            var value: T = 0
            while position < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[position]) {
                let digit = T(bytes[position] - UInt8(ascii: "0"))
                let (times, overflowTimes) = value.multipliedReportingOverflow(by: 10)
                let (next, overflowPlus) = negative ? times.subtractingReportingOverflow(digit)
                                                    : times.addingReportingOverflow(digit)
                guard !overflowTimes, !overflowPlus else { return nil }
                value = next
                position += 1
            }
            guard position > first else { return nil }
            index = position
            return value
        }

        /// The letters of a string value up to its closing quote (which it passes), for a phase or a status:
        /// nil at anything but ASCII letters.
        mutating func word() -> String? {
            var position = index
            while position < bytes.count, bytes[position] != UInt8(ascii: "\"") {
                guard (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(bytes[position] | 0x20) else { return nil }
                position += 1
            }
            guard position < bytes.count, position > index else { return nil }
            let word = String(decoding: bytes[index..<position], as: UTF8.self)
            index = position + 1
            return word
        }

        mutating func boolean() -> Bool? {
            if literal(StateTimerReader.trueLiteral) { return true }
            if literal(StateTimerReader.falseLiteral) { return false }
            return nil
        }
    }

    private static let statePrefix = Array(#"{"type":"state","room":{"id":""#.utf8)
    private static let phaseKey = Array(#"","phase":""#.utf8)
    private static let statusKey = Array(#","status":""#.utf8)
    private static let runningKey = Array(#","running":"#.utf8)
    private static let remainingKey = Array(#","remainingMs":"#.utf8)
    private static let phaseLengthKey = Array(#","phaseLengthMs":"#.utf8)
    private static let endsAtKey = Array(#","endsAt":"#.utf8)
    private static let cycleKey = Array(#","cycle":"#.utf8)
    private static let nullLiteral = Array("null".utf8)
    private static let membersOpen = Array(#""members":["#.utf8)
    private static let membersClose = Array(#"],"memberCount":"#.utf8)
    private static let presentKey = Array(#","presentCount":"#.utf8)
    private static let truncatedKey = Array(#","membersTruncated":"#.utf8)
    private static let statsKey = Array(#","stats":{"focusCompleted":"#.utf8)
    private static let focusSecondsKey = Array(#","focusSeconds":"#.utf8)
    private static let interruptionsKey = Array(#","interruptions":"#.utf8)
    private static let seqKey = Array(#"},"seq":"#.utf8)
    private static let serverTimeKey = Array(#","serverTime":"#.utf8)
    private static let trueLiteral = Array("true".utf8)
    private static let falseLiteral = Array("false".utf8)

    /// Where `pattern` first occurs in `bytes` at or after `start`.
    static func firstIndex(of pattern: [UInt8], in bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int? {
        guard let first = pattern.first, start >= 0, bytes.count - start >= pattern.count else { return nil }
        var index = start
        let last = bytes.count - pattern.count
        while index <= last {
            if bytes[index] == first, bytes[index..<index + pattern.count].elementsEqual(pattern) { return index }
            index += 1
        }
        return nil
    }
}
