import PomodoroTestSupport
import Testing

/// The scheduled set killed mid-way and carried on after the restart (CrashScenario), on PostgreSQL.
@Suite(.onOwnThreads, .timeLimit(.minutes(TestTime.minutes(3)))) struct PostgresScheduledSetRestartTests {
    @Test func aScheduledSetCarriesOnAcrossARestart() async throws {
        let url = try await PostgresTestServer.makeDatabase()
        try await CrashScenario.aScheduledSetCarriesOnAcrossARestart(database: url)
    }
}
