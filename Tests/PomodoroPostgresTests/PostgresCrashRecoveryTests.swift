import PomodoroTestSupport
import Testing

/// The real `pomodoro-server` on PostgreSQL, killed mid-session and started again on the same database:
/// the scenario CrashRecoveryTests runs on SQLite (CrashScenario).
@Suite(.onOwnThreads, .serialized, .timeLimit(.minutes(TestTime.minutes(1)))) struct PostgresCrashRecoveryTests {
    @Test(arguments: ["SIGKILL", "SIGTERM"])
    func aRestartLosesNothing(signal: String) async throws {
        let url = try await PostgresTestServer.makeDatabase()
        try await CrashScenario.aRestartLosesNothing(database: url, signal: signal)
    }
}
