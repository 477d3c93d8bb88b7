import Foundation
import PomodoroTestSupport
import Testing

/// `pomo schedule add` with the session's own lengths, against the real server: sent as the schedule's
/// settings, listed back; breaks without a focus are refused before anything is sent.
@Suite(.onOwnThreads) struct LiveScheduleSettingsTests {
    @Test func aScheduleWithItsOwnLengths() async throws {
        let server = try await ServerProcess.start()
        defer { server.stop() }
        let add = try await runPomo(["schedule", "add", "deep", "Deep work", "08:00", "--days", "mon,thu", "--zone", "UTC",
                                     "--focus", "50m", "--short-break", "10m", "--sessions", "2", "--server", server.url])
        #expect(add.status == 0, "\(add.errors)")
        let list = try await runPomo(["schedule", "deep", "--server", server.url])
        #expect(list.output.contains("Deep work · Mon, Thu at 08:00 UTC · 2 focus sessions · 50/10 min"), "\(list.output)")
        let raw = try await runPomo(["schedule", "deep", "--json", "--server", server.url])
        #expect(raw.output.contains(#""settings":{"focus":3000,"shortBreak":600,"longBreak":900,"longBreakEvery":4,"autoStart":false}"#),
                "\(raw.output)")

        let lonely = try await runPomo(["schedule", "add", "deep", "Breaks", "09:00", "--days", "mon", "--short-break", "10m",
                                        "--server", server.url])
        #expect(lonely.status != 0 && lonely.errors.contains("give --focus with the session's own breaks"), "\(lonely)")
    }
}
