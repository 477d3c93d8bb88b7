import Foundation
import Glibc
import PomodoroTestSupport
import Testing

/// The real `pomodoro-server` killed in the middle of a scheduled set and started again on the same SQLite
/// file: the set carries on and ends after its last focus (CrashScenario; PostgreSQL runs it too).
@Suite(.onOwnThreads, .timeLimit(.minutes(TestTime.minutes(3)))) struct ScheduledSetRestartTests {
    @Test func aScheduledSetCarriesOnAcrossARestart() async throws {
        let folder = NSTemporaryDirectory() + "pomodoro-set-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try await CrashScenario.aScheduledSetCarriesOnAcrossARestart(database: folder + "/data/pomodoro.sqlite")
    }
}
