import Foundation
import PomodoroTestSupport
import Testing

/// `pomo configure --aligned` against the real server: a room put on the clock, a zone refused before
/// anything is sent, lengths that do not fit the hour refused by the server, and `off`.
@Suite(.onOwnThreads) struct LiveAlignedTests {
    @Test func configurePutsARoomOnTheClockAndOff() async throws {
        let server = try await ServerProcess.start()
        defer { server.stop() }
        try await openRoom("clocked", on: server)
        let on = try await runPomo(["configure", "clocked", "--aligned", "Europe/Berlin", "--server", server.url])
        #expect(on.status == 0, "\(on.errors)")
        #expect(on.output.contains("on the clock (Europe/Berlin)"), "\(on.output)")
        let status = try await runPomo(["status", "clocked", "--json", "--server", server.url])
        #expect(status.output.contains(#""aligned":"Europe/Berlin""#), "\(status.output)")

        let unknown = try await runPomo(["configure", "clocked", "--aligned", "Mars/Olympus", "--server", server.url])
        #expect(unknown.status != 0 && unknown.errors.contains("--aligned must be an IANA time zone"), "\(unknown)")

        let misfit = try await runPomo(["configure", "clocked", "--short-break", "10m", "--server", server.url])
        #expect(misfit.status != 0 && misfit.errors.contains("aligned"), "25 + 10 does not divide the hour: \(misfit)")

        let off = try await runPomo(["configure", "clocked", "--aligned", "off", "--short-break", "10m",
                                     "--server", server.url])
        #expect(off.status == 0, "\(off.errors)")
        #expect(!off.output.contains("on the clock"), "\(off.output)")
    }
}

/// `pomo start --aligned`: the room put on the clock and started in one visit; `off` takes it off again.
@Suite(.onOwnThreads) struct LiveAlignedStartTests {
    @Test func startAlignedConfiguresThenStarts() async throws {
        let server = try await ServerProcess.start()
        defer { server.stop() }
        try await openRoom("clocked", on: server)
        let started = try await runPomo(["start", "clocked", "--aligned", "America/New_York", "--server", server.url])
        #expect(started.status == 0, "\(started.errors)")
        #expect(started.output.contains("running"), "\(started.output)")
        let status = try await runPomo(["status", "clocked", "--json", "--server", server.url])
        #expect(status.output.contains(#""aligned":"America/New_York""#), "\(status.output)")
        #expect(status.output.contains(#""status":"running""#), "\(status.output)")

        let unknown = try await runPomo(["start", "clocked", "--aligned", "Mars/Olympus", "--server", server.url])
        #expect(unknown.status != 0 && unknown.errors.contains("--aligned must be an IANA time zone"), "\(unknown)")

        _ = try await runPomo(["reset", "clocked", "--server", server.url])
        let off = try await runPomo(["start", "clocked", "--aligned", "off", "--server", server.url])
        #expect(off.status == 0, "\(off.errors)")
        let after = try await runPomo(["status", "clocked", "--json", "--server", server.url])
        #expect(!after.output.contains(#""aligned""#), "\(after.output)")
        #expect(after.output.contains(#""status":"running""#), "\(after.output)")
    }
}
