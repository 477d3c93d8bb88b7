import Foundation
import PomodoroTestSupport
import Testing

/// The control commands against the real server: with the token `pomo join` keeps they press as that member
/// (nobody comes or goes, the room's stats see no visit, the running `pomo join` goes on); a room that is not
/// open is refused and not made; with an API token they press over the control API.
@Suite(.onOwnThreads, .serialized, .timeLimit(.minutes(TestTime.minutes(2))))
struct LiveControlTests {
    static func state() -> String { NSTemporaryDirectory() + "pomo-control-\(getpid())-\(UInt32.random(in: 0...UInt32.max))" }

    @Test func withPomoJoinsTokenAControlPressesAsThatMemberAndLeavesNoTrace() async throws {
        let server = try await ServerProcess.start()
        defer { server.stop() }
        let state = Self.state()
        defer { try? FileManager.default.removeItem(atPath: state) }
        let env = ["PATH": "/usr/bin:/bin", "XDG_STATE_HOME": state, "LANG": "C.UTF-8"]
        let (join, watch) = try await adaJoinedAndWatched("team", on: server, environment: env)
        defer { join.stop(); watch.stop() }

        let started = try await runPomo(["start", "team", "--server", server.url], environment: env)
        #expect(started.status == 0 && started.output.hasPrefix("team: Focus 1 of 4, running, "), "\(started)")
        #expect(started.errors.isEmpty, "\(started.errors)")
        var heard = try await lines(of: watch, until: #""kind":"control""#)
        #expect(heard.last?.contains(#""action":"start""#) == true && heard.last?.contains(#""by":"m1""#) == true,
                "\(heard)")
        // A second press during the focus: still nobody comes or goes, and the focus has no interruption.
        let extended = try await runPomo(["extend", "team", "2m", "--server", server.url, "-q"], environment: env)
        #expect(extended.status == 0 && extended.output.isEmpty, "\(extended)")
        heard += try await lines(of: watch, until: #""action":"extend""#)
        #expect(heard.last?.contains(#""by":"m1""#) == true, "\(heard)")
        #expect(!heard.contains { $0.contains(#""kind":"member"#) }, "a visit came or went: \(heard)")

        let status = try await runPomo(["status", "team", "--json", "--server", server.url], environment: env)
        let json = try #require(try JSONSerialization.jsonObject(with: Data(status.output.utf8)) as? [String: Any])
        #expect((json["members"] as? [[String: Any]])?.map { $0["name"] as? String } == ["Ada"], "\(status.output)")
        #expect((json["stats"] as? [String: Any])?["interruptions"] as? Int == 0, "\(status.output)")
        // pomo join was not taken over, and said nothing of a visitor.
        #expect(join.isRunning)
        let said = try await lines(of: join, until: "Focus started")
        #expect(!said.contains { $0.contains("pomo-cli") }, "\(said)")
    }

    @Test func aRoomThatIsNotOpenIsRefusedAndNotMade() async throws {
        let server = try await ServerProcess.start()
        defer { server.stop() }
        let env = ["PATH": "/usr/bin:/bin", "XDG_STATE_HOME": Self.state()]
        for arguments in [["start", "tema"], ["configure", "tema", "--focus", "50m"], ["extend", "tema", "5m"]] {
            let result = try await runPomo(arguments + ["--server", server.url], environment: env)
            #expect(result.status == 1 && result.output.isEmpty, "\(arguments): \(result)")
            #expect(result.errors == "pomo: no room named tema is open on \(server.url): nothing was pressed or made "
                    + "(check the name; pomo join tema opens it)\n", "\(result.errors)")
        }
        let looked = try await onOwnThread { try httpGet(port: server.port, path: "/api/rooms/tema") }
        #expect(looked.status == 404, "the room was made: \(looked)")
        let stats = try await onOwnThread { try httpGet(port: server.port, path: "/api/rooms/tema/stats") }
        #expect(stats.status == 200 && !stats.body.contains("pomo-cli"), "\(stats)")
    }

    @Test func withAnAPITokenAControlPressesOverTheControlAPI() async throws {
        let server = try await ServerProcess.start()
        defer { server.stop() }
        let token = try await openRoom("team", on: server)
        let env = ["PATH": "/usr/bin:/bin", "XDG_STATE_HOME": Self.state()]
        let watch = try ProcessLauncher.start(ProcessLauncher.pomo, ["watch", "team", "--json", "--server", server.url])
        defer { watch.stop() }
        _ = try await lines(of: watch, until: #""type":"observing""#)

        let started = try await runPomo(["start", "team", "--api-token", token, "--server", server.url], environment: env)
        #expect(started.status == 0 && started.output.hasPrefix("team: Focus 1 of 4, running, "), "\(started)")
        var heard = try await lines(of: watch, until: #""kind":"control""#)
        #expect(heard.last?.contains(#""by":"api:api""#) == true, "\(heard)")

        // $POMO_API_TOKEN does the same; configure starts from the room's settings.
        let tokenEnv = env.merging(["POMO_API_TOKEN": token]) { $1 }
        let configured = try await runPomo(["configure", "team", "--focus", "50m", "--server", server.url],
                                           environment: tokenEnv)
        #expect(configured.status == 0 && configured.output.contains("Focus 50m") && configured.output.contains("from the next phase"),
                "\(configured)")
        heard = try await lines(of: watch, until: #""action":"configure""#)
        #expect(heard.last?.contains(#""by":"api:api""#) == true, "\(heard)")
        #expect(!heard.contains { $0.contains(#""kind":"member"#) }, "\(heard)")

        // What the API answers, as exit statuses: refused 1 (state, token, room), usage 64 (bounds).
        let again = try await runPomo(["start", "team", "--server", server.url], environment: tokenEnv)
        #expect(again.status == 1 && again.errors.contains("[invalid_state]"), "\(again)")
        let wrong = try await runPomo(["pause", "team", "--api-token", "pomo_nothing", "--server", server.url], environment: env)
        #expect(wrong.status == 1 && wrong.errors.contains("[forbidden]") && wrong.errors.contains("--api-token"), "\(wrong)")
        let missing = try await runPomo(["pause", "tema", "--server", server.url], environment: tokenEnv)
        #expect(missing.status == 1 && missing.errors.contains("no room named tema"), "\(missing)")
        let far = try await runPomo(["extend", "team", "5h", "--server", server.url], environment: tokenEnv)
        #expect(far.status == 64 && far.errors.contains("[bad_request]"), "\(far)")
        let down = try await runPomo(["pause", "team", "--server", "ws://127.0.0.1:1"], environment: tokenEnv)
        #expect(down.status == 69 && down.errors.hasPrefix("pomo: cannot reach ws://127.0.0.1:1"), "\(down)")
    }
}
