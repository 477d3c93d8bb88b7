import Foundation
import PomodoroClient
import PomodoroTestSupport
import Testing

/// `pomo token` against the built server: a token made in a visit (printed alone with -q) drives the room
/// over HTTP, as the README's curl does, and once revoked it carries nothing.
@Suite(.onOwnThreads, .serialized, .timeLimit(.minutes(TestTime.minutes(1))))
struct LiveTokenTests {
    @Test func aTokenMadeWithPomoStartsTheRoomOverHTTPUntilItIsRevoked() async throws {
        let server = try await ServerProcess.start()
        defer { server.stop() }
        let url = ["--server", server.url]
        let made = try await runPomo(["token", "team", "--create", "ci", "-q"] + url)
        #expect(made.status == 0, "\(made.errors)")
        let token = made.output.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(token.hasPrefix("pomo_") && token.count == 69, "\(made.output)")
        let listed = try await runPomo(["token", "team"] + url)
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

        let revoked = try await runPomo(["token", "team", "--revoke", "t1"] + url)
        #expect(revoked.status == 0 && revoked.output.contains("no API tokens"), "\(revoked.output)")
        let refused = try await post(#"{"type":"pause"}"#)
        #expect(refused.status == 401 && refused.body.contains(#""code":"forbidden""#), "\(refused)")
        let unknown = try await runPomo(["token", "team", "--revoke", "t9"] + url)
        #expect(unknown.status == 1, "\(unknown.output)")
    }
}
