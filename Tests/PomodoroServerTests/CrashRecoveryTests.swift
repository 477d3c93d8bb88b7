import Foundation
import Glibc
import PomodoroTestSupport
import Testing

/// The real `pomodoro-server` killed mid-session and started again on the same SQLite file: nothing a member
/// was told is lost, and the running phase goes on (CrashScenario; PostgresCrashRecoveryTests runs it on
/// PostgreSQL).
@Suite(.onOwnThreads, .serialized, .timeLimit(.minutes(TestTime.minutes(1)))) struct CrashRecoveryTests {
    @Test(arguments: ["SIGKILL", "SIGTERM"])
    func aRestartLosesNothing(signal: String) async throws {
        let folder = NSTemporaryDirectory() + "pomodoro-crash-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try await CrashScenario.aRestartLosesNothing(database: folder + "/data/pomodoro.sqlite", signal: signal)
    }
}
