import Foundation
import Glibc
import PomodoroCluster
import PomodoroCore
import PomodoroNet
import PomodoroProtocol
import PomodoroTestSupport
import Testing

/// `GET /api/rooms/<room>/events` on three `pomodoro-server` nodes of one cluster, with a real Redis and
/// PostgreSQL: read from a node that does not run the room, the stream is the owner's (its first `state`, a
/// tick, a `state` after a member's command, the last `event: error` once the host locks the room); a
/// refusal is the owner's, and a room no node runs is `404`. In one process: `HubClusterEventStreamTests`.
@Suite(.onOwnThreads, .timeLimit(.minutes(TestTime.minutes(2))))
struct ClusterEventStreamTests {
    /// An HTTP request left open, its answer read as it comes.
    final class StreamReader {
        private let fd: Int32
        private(set) var received = ""
        /// The server closed the connection.
        private(set) var closed = false

        init(port: Int, path: String, bearer: String? = nil) throws {
            // Each read waits 1 s at most: `read` loops until its own deadline.
            fd = try loopbackConnection(port: port, readTimeout: 1)
            let head = "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n" + (bearer.map { "Authorization: Bearer \($0)\r\n" } ?? "") + "\r\n"
            _ = Array(head.utf8).withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        }

        deinit { Glibc.close(fd) }

        /// Reads until `condition` holds of all received so far, or the server closes, or `seconds` pass.
        @discardableResult
        func read(_ seconds: Double, until condition: (String) -> Bool) -> Bool {
            let deadline = Date().addingTimeInterval(Double(TestTime.seconds(Int(seconds.rounded(.up)))))
            var buffer = [UInt8](repeating: 0, count: 16_384)
            while !condition(received) {
                guard Date() < deadline else { return false }
                let n = Glibc.read(fd, &buffer, buffer.count)
                if n == 0 {
                    closed = true
                    return condition(received)
                }
                if n > 0 { received += String(decoding: buffer[0..<n], as: UTF8.self) }
            }
            return true
        }

        /// The `event:` names received so far, in order.
        var events: [String] {
            received.components(separatedBy: "\n").filter { $0.hasPrefix("event: ") }.map { String($0.dropFirst(7)) }
        }
    }

    @Test func aNodeThatDoesNotRunTheRoomStreamsItFromTheOwner() async throws {
        let cluster = try await ClusterControlAPITests.Nodes(["a", "b", "c"])
        defer { cluster.stop() }
        let (client, redis) = (cluster.client, cluster.redis)
        let ((_, aPort), (_, bPort), (_, cPort)) = (cluster.nodes[0], cluster.nodes[1], cluster.nodes[2])

        // Ada's join makes a the owner of "wall".
        let ada = try Peer(client, port: aPort)
        _ = try ada.join("wall", name: "Ada")
        #expect(try RedisLeases(address: RedisAddress(parsing: redis.url)).holder(room: "wall")?.node == "a")

        // Read through b: the owner's whole state first.
        let reader = try StreamReader(port: bPort, path: "/api/rooms/wall/events")
        #expect(reader.read(10) { $0.contains("event: state") && $0.contains("\n\n") }, "\(reader.received)")
        #expect(reader.received.hasPrefix("HTTP/1.1 200"), "\(reader.received.prefix(200))")
        #expect(reader.received.lowercased().contains("content-type: text/event-stream"))
        #expect(reader.received.contains("retry: 3000") && reader.received.contains(#""name":"Ada""#))

        // Ada's start: a state that runs, then ticks.
        ada.send(.start, ref: .string("go"))
        _ = try ada.expect("ok start", ClusterProcessTests.answer(to: "go"))
        #expect(reader.read(10) { $0.contains(#""status":"running""#) && $0.contains("event: tick") }, "\(reader.received)")
        let states = reader.events.filter { $0 == "state" }.count
        #expect(states >= 2 && reader.events.first == "state")
        // A command after it: another state.
        ada.send(.pause, ref: .string("hold"))
        _ = try ada.expect("ok pause", ClusterProcessTests.answer(to: "hold"))
        #expect(reader.read(10) { $0.contains(#""status":"paused""#) }, "\(reader.received)")
        #expect(try RedisLeases(address: RedisAddress(parsing: redis.url)).holder(room: "wall")?.node == "a",
                "a stream takes nothing")

        // The host locks the room: the reader, let in without a credential, is withdrawn by the owner; its
        // last event comes through b, and the answer ends.
        ada.send(.passcode("open sesame"), ref: .string("lock"))
        _ = try ada.expect("ok passcode", timeout: 20, ClusterProcessTests.answer(to: "lock"))
        #expect(reader.read(10) { $0.contains("event: error") }, "\(reader.received)")
        #expect(reader.received.contains(#""code":"bad_passcode""#))
        reader.read(10) { _ in false }   // until the server closes it
        #expect(reader.closed, "the answer ends")
        #expect(reader.events.last == "error")

        // A refusal is the owner's, through c; a room no node runs is 404.
        let refused = try httpRequest("GET", port: cPort, path: "/api/rooms/wall/events")
        #expect(refused.status == 401 && refused.body.contains(#""code":"bad_passcode""#), "\(refused.body)")
        let opened = try StreamReader(port: cPort, path: "/api/rooms/wall/events", bearer: "open sesame")
        #expect(opened.read(10) { $0.contains("event: state") && $0.contains(#""locked":true"#) }, "\(opened.received)")
        let nowhere = try httpRequest("GET", port: cPort, path: "/api/rooms/nowhere/events")
        #expect(nowhere.status == 404 && nowhere.body.contains("no room of that name is open"), "\(nowhere.body)")
    }
}
