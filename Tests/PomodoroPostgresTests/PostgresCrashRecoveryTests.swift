import PomodoroTestSupport
import Testing

/// The real `pomodoro-server` on PostgreSQL, killed mid-session and started again on the same database:
/// the scenario CrashRecoveryTests runs on SQLite (CrashScenario).
@Suite(.serialized, .timeLimit(.minutes(1))) struct PostgresCrashRecoveryTests {
    @Test(arguments: ["SIGKILL", "SIGTERM"])
    func aRestartLosesNothing(signal: String) throws {
        let url = try PostgresTestServer.shared.get().makeDatabase()
        try CrashScenario.aRestartLosesNothing(database: url, signal: signal)
    }
}
