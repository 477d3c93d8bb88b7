import Foundation
import PomodoroClient
import PomodoroTestSupport
import Testing

/// `pomo` behind another address of the same server, as on a cluster behind a proxy: the control commands and
/// `pomo token` find the member `pomo join` keeps under another address and press as it, a token the server
/// does not know presses nothing, and a proxy answering 502 is said as such and retried by `pomo join`.
@Suite(.onOwnThreads, .serialized, .timeLimit(.minutes(TestTime.minutes(2))))
struct LiveOtherAddressTests {
    static func state() -> String { NSTemporaryDirectory() + "pomo-other-\(getpid())-\(UInt32.random(in: 0...UInt32.max))" }

    @Test func throughAnotherAddressAControlAndTokenPressAsTheMemberPomoJoinKeeps() async throws {
        let server = try await ServerProcess.start()
        defer { server.stop() }
        // Another way in to the same server, as another node of a cluster or its proxy would be.
        let proxy = try TCPProxy(to: server.port)
        defer { proxy.stop() }
        let other = "ws://127.0.0.1:\(proxy.port)"
        let state = Self.state()
        defer { try? FileManager.default.removeItem(atPath: state) }
        let env = ["PATH": "/usr/bin:/bin", "XDG_STATE_HOME": state, "LANG": "C.UTF-8"]
        let (join, watch) = try await adaJoinedAndWatched("team", on: server, environment: env)
        defer { join.stop(); watch.stop() }

        let started = try await runPomo(["start", "team", "--server", other], environment: env)
        #expect(started.status == 0 && started.output.hasPrefix("team: Focus 1 of 4, running, "), "\(started)")
        #expect(started.errors.isEmpty, "\(started.errors)")
        var heard = try await lines(of: watch, until: #""kind":"control""#)
        #expect(heard.last?.contains(#""by":"m1""#) == true, "\(heard)")

        let made = try await runPomo(["token", "team", "--create", "ci", "-q", "--server", other], environment: env)
        #expect(made.status == 0 && made.output.hasPrefix("pomo_") && made.errors.isEmpty, "\(made)")
        let listed = try await runPomo(["token", "team", "--server", other], environment: env)
        #expect(listed.status == 0 && listed.output.contains("t1  ci  made"), "\(listed)")
        // A typo makes no room.
        let typo = try await runPomo(["token", "tema", "--create", "ci", "--server", other], environment: env)
        #expect(typo.status == 1 && typo.errors.contains("no room named tema is open"), "\(typo)")

        _ = try await runPomo(["pause", "team", "--server", server.url, "-q"], environment: env)
        heard += try await lines(of: watch, until: #""action":"pause""#)
        #expect(!heard.contains { $0.contains(#""kind":"member"#) }, "a visit came or went: \(heard)")
        let stats = try await onOwnThread { try httpGet(port: server.port, path: "/api/rooms/team/stats") }
        #expect(stats.status == 200 && !stats.body.contains("pomo-cli"), "\(stats)")
        // Nothing was kept for the other address: pomo join's file is the one.
        let files = try FileManager.default.contentsOfDirectory(atPath: state + "/pomo").filter { $0.hasSuffix(".json") }
        #expect(files == ["team@127.0.0.1_\(server.port).json"], "\(files)")
        #expect(join.isRunning)
    }

    @Test func aTokenKeptForAnotherServerPressesNothingAndTheCommandVisits() async throws {
        let server = try await ServerProcess.start()
        defer { server.stop() }
        let state = Self.state()
        defer { try? FileManager.default.removeItem(atPath: state) }
        let env = ["PATH": "/usr/bin:/bin", "XDG_STATE_HOME": state]
        // Ada is m1 here, and a file for another server keeps an m1 whose token this server never gave.
        let ada = try ProcessLauncher.start(ProcessLauncher.pomo, ["join", "team", "--name", "Ada", "--server", server.url]
                                            + joinTimeout, environment: ["PATH": "/usr/bin:/bin", "XDG_STATE_HOME": Self.state()],
                                            errors: .discard)
        defer { ada.stop() }
        #expect(try await ada.line() == "Joined team as Ada (m1)")
        let elsewhere = try #require(StateFile.location(environment: env, server: try ServerAddress(parsing: "ws://127.0.0.1:1"),
                                                        room: "team"))
        try elsewhere.save(StateFile.Contents(server: "ws://127.0.0.1:1", room: "team", name: "Ada", member: "m1",
                                              token: "0123456789abcdef0123456789abcdef"))

        let started = try await runPomo(["start", "team", "--server", server.url], environment: env)
        #expect(started.status == 0 && started.output.hasPrefix("team: Focus 1 of 4, running, "), "\(started)")
        #expect(started.errors == "pomo: no member pomo join keeps in team under another address (ws://127.0.0.1:1) is "
                + "connected there; pressing as a short visit of pomo-cli\n", "\(started.errors)")
        let said = try await lines(of: ada, until: "Focus started")
        #expect(said.contains { $0.contains("pomo-cli") }, "the visit was not seen: \(said)")
    }

    @Test func aProxyAnswering502IsSaidSoAndPomoJoinTriesUntilItsServerIsBack() async throws {
        let server = try await ServerProcess.start()
        defer { server.stop() }
        let proxy = try TCPProxy(to: server.port)
        defer { proxy.stop() }
        proxy.answer(502)
        let url = "ws://127.0.0.1:\(proxy.port)"
        let env = ["PATH": "/usr/bin:/bin", "XDG_STATE_HOME": Self.state(), "LANG": "C.UTF-8"]

        let pressed = try await runPomo(["start", "team", "--server", url], environment: env)
        #expect(pressed.status == 69, "\(pressed)")
        #expect(pressed.errors.contains("the server or its proxy is unavailable just now (502)")
                && !pressed.errors.contains("Not a Pomodoro"), "\(pressed.errors)")

        let join = try ProcessLauncher.start(ProcessLauncher.pomo, ["join", "team", "--name", "Ada", "--server", url]
                                             + joinTimeout, environment: env, errors: .discard)
        defer { join.stop() }
        let retrying = try await lines(of: join, until: "attempt 3")
        #expect(retrying.filter { $0.hasPrefix("The server or its proxy is unavailable just now (502). Trying again") }.count >= 2,
                "\(retrying)")
        proxy.answer(nil)
        _ = try await lines(of: join, until: "Joined team as Ada (m1)")
        #expect(join.isRunning)
    }
}
