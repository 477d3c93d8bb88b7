import Foundation
import PomodoroClient
import PomodoroTestSupport
import Testing

/// `pomo token` against the built server: a token made as the member `pomo join` keeps (printed alone with -q)
/// drives the room over HTTP, as the README's curl does, and once revoked it carries nothing.
@Suite(.onOwnThreads, .serialized, .timeLimit(.minutes(TestTime.minutes(1))))
struct LiveTokenTests {
    @Test func aTokenMadeWithPomoStartsTheRoomOverHTTPUntilItIsRevoked() async throws {
        let server = try await ServerProcess.start()
        defer { server.stop() }
        let url = ["--server", server.url]
        let state = NSTemporaryDirectory() + "pomo-token-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        defer { try? FileManager.default.removeItem(atPath: state) }
        let env = ["PATH": "/usr/bin:/bin", "XDG_STATE_HOME": state]
        let join = try ProcessLauncher.start(ProcessLauncher.pomo, ["join", "team", "--name", "Ada"] + url + joinTimeout,
                                             environment: env, errors: .discard)
        defer { join.stop() }
        #expect(try await join.line() == "Joined team as Ada (m1)")
        let made = try await runPomo(["token", "team", "--create", "ci", "-q"] + url, environment: env)
        #expect(made.status == 0, "\(made.errors)")
        let token = made.output.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(token.hasPrefix("pomo_") && token.count == 69, "\(made.output)")
        let listed = try await runPomo(["token", "team"] + url, environment: env)
        #expect(listed.output.contains("t1  ci  made") && listed.output.contains("never used"), "\(listed.output)")
        #expect(!listed.output.contains(token), "a list never shows the token")

        func post(_ body: String) async throws -> (status: Int, body: String) {
            try await onOwnThread {
                try httpRequest("POST", port: server.port, path: "/api/rooms/team/commands",
                                headers: ["Authorization: Bearer \(token)"], body: Array(body.utf8))
            }
        }
        let started = try await post(#"{"type":"start"}"#)
        #expect(started.status == 200 && started.body == #"{"type":"ok","command":"start"}"#, "\(started)")
        let status = try await runPomo(["status", "team", "--format", "%s"] + url)
        #expect(status.output.trimmingCharacters(in: .whitespacesAndNewlines) == "running", "\(status.output)")

        let revoked = try await runPomo(["token", "team", "--revoke", "t1"] + url, environment: env)
        #expect(revoked.status == 0 && revoked.output.contains("no API tokens"), "\(revoked.output)")
        let refused = try await post(#"{"type":"pause"}"#)
        #expect(refused.status == 401 && refused.body.contains(#""code":"forbidden""#), "\(refused)")
        let unknown = try await runPomo(["token", "team", "--revoke", "t9"] + url, environment: env)
        #expect(unknown.status == 1, "\(unknown.output)")
        // All of it as Ada, in her watch: nobody else ever came into the room.
        let stats = try await onOwnThread { try httpGet(port: server.port, path: "/api/rooms/team/stats") }
        #expect(stats.status == 200 && !stats.body.contains("pomo-cli"), "\(stats)")
    }
}
