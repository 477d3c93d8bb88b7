import Foundation
import PomodoroCore
import PomodoroStore
import PomodoroSQLite

// Shared by the store tests of every backend (PomodoroStoreTests, PomodoroPostgresTests): a temporary folder
// that is removed afterwards, sample records, a lock-guarded box, and bounded waits. Nothing here sleeps.

/// Runs `body` with a new, empty folder under the system's temporary directory, and removes the folder
/// (with the database and its -wal and -shm files) when `body` returns or throws.
public func withTemporaryFolder<T>(_ body: (URL) throws -> T) throws -> T {
    let folder = FileManager.default.temporaryDirectory
        .appendingPathComponent("pomodoro-store-tests-\(UUID().uuidString)", isDirectory: true)
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    return try body(folder)
}

/// `withTemporaryFolder`, with a freshly opened store in it.
public func withStore<T>(_ body: (SQLiteRoomStore, String) throws -> T) throws -> T {
    try withTemporaryFolder { (folder) throws in
        let path = folder.appendingPathComponent("pomodoro.sqlite").path
        return try body(try SQLiteRoomStore.open(path: path), path)
    }
}

public func roomID(_ raw: String) -> RoomID { try! RoomID(validating: raw) }

public enum Sample {
    public static let room = roomID("team-a")

    public static func roomRecord(_ id: RoomID = room, timer: StoredTimer = .idle, phase: Phase = .idle,
                           pending: RoomSettings? = nil, host: MemberID? = MemberID("m1"),
                           seq: UInt64 = 7) -> RoomRecord {
        RoomRecord(id: id, settings: RoomSettings(focus: 1500, shortBreak: 300, longBreak: 900, longBreakEvery: 4,
                                                  autoStart: true),
                   pendingSettings: pending, phase: phase, timer: timer, phaseLengthMs: 1_500_000, cycle: 3,
                   stats: FocusStats(focusSessions: 12, focusTime: .nanoseconds(18_000_123_456_789), interruptions: 4),
                   controlMode: .host, host: host, nextMemberNumber: 5, focusStartedAtMs: 1_795_000_000_000,
                   focusCreditedUntilMs: 1_795_000_600_000, seq: seq)
    }

    public static func member(_ number: Int, name: String, joinOrder: Int? = nil, away: Bool = false,
                       connected: Bool = true) -> MemberRecord {
        MemberRecord(id: MemberID("m\(number)"), joinOrder: joinOrder ?? number, name: name,
                     tokenHash: ResumeToken("0123456789abcdef0123456789abcd\(number)\(number)").hash, task: "task of \(name)", away: away,
                     connected: connected,
                     stats: FocusStats(focusSessions: number, focusTime: .nanoseconds(Int64(number) * 1_000_000_007),
                                       interruptions: number + 1),
                     sessionFocusMs: Int64(number) * 1000 + 1)
    }

    public static func session(_ room: RoomID = room, endedAtMs: Int64, lengthSeconds: Int = 1500,
                        participants: [FocusSessionRecord.Participant] = []) -> FocusSessionRecord {
        FocusSessionRecord(room: room, startedAtMs: endedAtMs - Int64(lengthSeconds) * 1000, endedAtMs: endedAtMs,
                           lengthSeconds: lengthSeconds, participants: participants)
    }

    public static func participant(_ id: String, _ name: String, task: String = "", focusMs: Int64 = 1_500_000)
        -> FocusSessionRecord.Participant {
        .init(member: MemberID(id), name: name, task: task, focusMs: focusMs)
    }
}

/// A value shared with callbacks on other threads.
public final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value
    public init(_ value: Value) { self.value = value }
    public var current: Value { lock.withLock { value } }
    public func update<T>(_ change: (inout Value) -> T) -> T { lock.withLock { change(&value) } }
}

/// Waits for a signal, at most `seconds`: true if it came.
public func waitFor(_ semaphore: DispatchSemaphore, seconds: Double = 10) -> Bool {
    semaphore.wait(timeout: .now() + seconds) == .success
}

/// Wall-clock milliseconds of a UTC date and time.
public func utcMs(_ year: Int, _ month: Int, _ day: Int, _ hour: Int = 12, _ minute: Int = 0, _ second: Int = 0) -> Int64 {
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone = TimeZone(identifier: "UTC")!
    let date = calendar.date(from: DateComponents(year: year, month: month, day: day, hour: hour, minute: minute,
                                                  second: second))!
    return Int64(date.timeIntervalSince1970) * 1000
}
