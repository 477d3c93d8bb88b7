import Foundation
import PomodoroClient
import PomodoroNet
import PomodoroProtocol
import PomodoroTestSupport
import Testing

/// The built `pomo stats` over a real WebSocket, against a stand-in server that answers as it is told:
/// a report, a refusal, or `unknown_type` like a server that keeps no stats. (The real server's `stats`
/// is tested with the server.)
@Suite(.onOwnThreads, .serialized, .timeLimit(.minutes(TestTime.minutes(1))))
struct LiveStatsTests {
    /// A WebSocket server on a free loopback port that records every frame and answers each with `answer`.
    final class StandIn: WebSocketServerDelegate, @unchecked Sendable {
        let server: WebSocketServer
        private let lock = NSLock()
        private var frames: [[UInt8]] = []
        private let answer: @Sendable (ClientFrame) -> ServerMessage?

        init(answer: @escaping @Sendable (ClientFrame) -> ServerMessage?) throws {
            self.answer = answer
            server = try WebSocketServer(options: WebSocketServerOptions(host: "127.0.0.1", port: 0))
            server.delegate = self
            server.start()
        }

        var url: String { "ws://127.0.0.1:\(server.port)" }

        /// Every text frame received so far, as sent.
        var received: [String] { lock.withLock { frames.map { String(decoding: $0, as: UTF8.self) } } }

        func stop() {
            server.post { [server] in server.shutdown(graceSeconds: 1) }
            server.waitUntilFinished()
        }

        func server(_ server: WebSocketServer, didOpen connection: ConnectionID, peer: String) {}
        func server(_ server: WebSocketServer, didReceive text: [UInt8], from connection: ConnectionID) {
            lock.withLock { frames.append(text) }
            guard let frame = try? WireCodec.decodeClientFrame(text), let reply = answer(frame) else { return }
            server.send(OutboundFrame(WireCodec.encode(reply)), to: connection)
        }
        func server(_ server: WebSocketServer, didReject problem: ReceiveProblem, from connection: ConnectionID) {}
        func server(_ server: WebSocketServer, didClose connection: ConnectionID, peerCloseCode: UInt16?) {}
        func server(_ server: WebSocketServer, didReceiveHTTP request: HTTPRequest, responder: HTTPResponder) {
            responder.respond(HTTPResponse(status: 404, text: "not found"))
        }
    }

    let environment = ["PATH": "/usr/bin:/bin", "HOME": NSTemporaryDirectory(), "TZ": "Europe/Berlin",
                       "COLUMNS": "60"]

    static let report = StatsReportPayload(
        room: "team-alpha", tz: "Europe/Berlin", today: "2026-11-21", days: 2,
        totals: StatsTotalsPayload(focusSessions: 3, focusSeconds: 4500, interruptions: 1, currentStreak: 2,
                                   longestStreak: 2),
        perDay: [DayTotalsPayload(date: "2026-11-20", focusSessions: 1, focusSeconds: 1500, interruptions: 1),
                 DayTotalsPayload(date: "2026-11-21", focusSessions: 2, focusSeconds: 3000, interruptions: 0)],
        members: [MemberStatsPayload(
            name: "Ada",
            totals: StatsTotalsPayload(focusSessions: 3, focusSeconds: 4500, interruptions: 1, currentStreak: 2,
                                       longestStreak: 2),
            perDay: [DayTotalsPayload(date: "2026-11-20", focusSessions: 1, focusSeconds: 1500, interruptions: 1),
                     DayTotalsPayload(date: "2026-11-21", focusSessions: 2, focusSeconds: 3000, interruptions: 0)])])

    @Test func statsAsksWithoutJoiningAndPrintsTheTable() async throws {
        let standIn = try StandIn { frame in
            guard case .stats = frame.message else { return nil }
            return .stats(Self.report, ref: frame.ref)
        }
        defer { standIn.stop() }
        let result = try await runPomo(["stats", "team-alpha", "--days", "2", "--passcode", "tomato soup",
                                                 "--server", standIn.url], environment: environment)
        #expect(result.status == 0, "\(result)")
        #expect(result.output == StatsRenderer.render(Self.report, columns: 60) + "\n")
        #expect(result.output.contains("Ada") && result.output.contains("Whole room") && result.output.contains("██"))
        // One frame, and no join among them: nobody in the room sees the request.
        let sent = standIn.received
        #expect(sent.count == 1, "\(sent)")
        let frame = try WireCodec.decodeClientFrame([UInt8](sent[0].utf8))
        #expect(frame == ClientFrame(.stats(room: "team-alpha", days: 2, tz: "Europe/Berlin", passcode: "tomato soup"),
                                     ref: .string("stats")))

        // --json: the report object as sent, without type and ref; --tz goes out as given.
        let json = try await runPomo(["stats", "team-alpha", "--json", "--tz", "UTC", "--server", standIn.url],
                                  environment: environment)
        #expect(json.status == 0, "\(json)")
        #expect(json.output.split(separator: "\n").count == 1)
        #expect(try WireCodec.decodeStatsBody([UInt8](json.output.utf8)) == Self.report)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [String: Any])
        #expect(object["type"] == nil && object["ref"] == nil)
        let second = try WireCodec.decodeClientFrame([UInt8](standIn.received[1].utf8))
        #expect(second == ClientFrame(.stats(room: "team-alpha", days: 14, tz: "UTC", passcode: nil),
                                      ref: .string("stats")))
    }

    @Test func aServerWithoutStatsAndARefusalExitWithOne() async throws {
        // What a server from before stats answers: its decoder does not know the type.
        let old = try StandIn { frame in
            .error(code: .unknownType, message: "unknown message type 'stats'", field: "type", ref: frame.ref)
        }
        defer { old.stop() }
        var result = try await runPomo(["stats", "team-alpha", "--server", old.url], environment: environment)
        #expect(result.status == 1, "\(result)")
        #expect(result.output.isEmpty)
        #expect(result.errors.hasPrefix("pomo: this server does not keep stats"), "\(result.errors)")
        #expect(result.errors.split(separator: "\n").count == 1)

        let locked = try StandIn { frame in
            .error(code: .badPasscode, message: "this room needs its passcode", field: "passcode", ref: frame.ref)
        }
        defer { locked.stop() }
        result = try await runPomo(["stats", "vault", "--server", locked.url], environment: environment)
        #expect(result.status == 1, "\(result)")
        #expect(result.errors == "pomo: the server refused the stats of vault: this room needs its passcode [bad_passcode]\n")
    }

    @Test func aSilentServerTimesOutAndNoServerIsUnreachable() async throws {
        let silent = try StandIn { _ in nil }
        defer { silent.stop() }
        var result = try await runPomo(["stats", "team-alpha", "--timeout", "0.5", "--server", silent.url],
                                    environment: environment)
        #expect(result.status == 69, "\(result)")
        #expect(result.errors.hasPrefix("pomo: no answer from \(silent.url)"), "\(result.errors)")

        result = try await runPomo(["stats", "team-alpha", "--server", "ws://127.0.0.1:1"],
                                environment: environment)
        #expect(result.status == 69, "\(result)")
        #expect(result.errors.hasPrefix("pomo: cannot reach ws://127.0.0.1:1"), "\(result.errors)")
    }

    @Test func badUsageIsSixtyFourBeforeAnyConnection() async throws {
        for arguments in [["stats", "no spaces"], ["stats", "r", "--days", "0"], ["stats", "r", "--days", "367"],
                          ["stats", "r", "--tz", "Nowhere/Special"], ["stats", "r", "--server", "wss://h"]] {
            let server = arguments.contains("--server") ? [] : ["--server", "ws://127.0.0.1:1"]
            let result = try await runPomo(arguments + server, environment: environment)
            #expect(result.status == 64, "\(arguments): \(result)")
        }
        let help = try await runPomo(["stats", "--help"])
        for words in ["--days", "--tz", "--json", "--passcode", "--server", "STREAK", "COLUMNS"] {
            #expect(help.output.contains(words), "pomo stats --help mentions \(words)")
        }
    }
}
