import Dispatch
import Foundation
@testable import PomodoroCluster
import PomodoroNet
import PomodoroTestSupport
import Testing

/// Redis on the service loop (`RedisLoopClient` over `LoopWatch`), against a real `redis-server` on loopback:
/// what a cluster node's bus, address counts and lease reads go through without leaving the service thread.
@Suite(.onOwnThreads, .timeLimit(.minutes(TestTime.minutes(1))))
final class RedisLoopClientTests {
    let redis: RedisTestServer
    let address: RedisAddress
    let server: WebSocketServer

    init() throws {
        redis = try RedisTestServer()
        address = try RedisAddress(parsing: redis.url)
        server = try WebSocketServer(options: WebSocketServerOptions(host: "127.0.0.1", port: 0))
        server.start()
    }

    deinit {
        server.post { [server] in server.shutdown() }
        server.waitUntilFinished()
        redis.stop()
    }

    func makeClient() -> LoopBound<RedisLoopClient> {
        let server = server
        return LoopBound(RedisLoopClient(address: address, timeout: 2, loop: server, post: { server.post($0) }), loop: server)
    }

    /// Commands sent in one turn, before the connection is even made, are answered in their order, each on
    /// the service thread (enough of them that the queue in flight is compacted on the way); a command Redis
    /// refuses fails alone and the connection goes on.
    @Test func answersComeInOrderOnTheServiceThreadAndARefusalIsItsCommandsAlone() throws {
        let client = makeClient()
        let answers = Locked<[String]>([])
        let offLoop = Locked(0)
        let done = DispatchSemaphore(value: 0)
        let server = server
        server.post {
            for index in 1...3000 {
                let arguments = index == 1000 ? ["NO-SUCH-COMMAND"] : ["INCR", "counter"]
                client.value.send(arguments) { reply in
                    if !server.isOnServiceThread { offLoop.update { $0 += 1 } }
                    switch reply {
                    case .success(.integer(let n)): answers.update { $0.append(String(n)) }
                    case .failure(let error) where error.kind == .reply: answers.update { $0.append("refused") }
                    default: answers.update { $0.append("\(reply)") }
                    }
                    if index == 3000 { done.signal() }
                }
            }
        }
        #expect(waitFor(done, seconds: Double(TestTime.seconds(10))))
        let expected = (1...2999).map(String.init)
        #expect(answers.current == Array(expected[..<999]) + ["refused"] + Array(expected[999...]))
        #expect(offLoop.current == 0)
    }

    /// A subscriber hears what is published on its channel, says once that it lost Redis, and subscribes
    /// again (saying so) once Redis is back, hearing what is published then.
    @Test func aSubscriberHearsItsChannelAndSubscribesAgainAfterRedisCameBack() throws {
        let subscriber = makeClient()
        let events = Locked<[ClusterBus.Event]>([])
        let arrived = DispatchSemaphore(value: 0)
        server.post {
            subscriber.value.subscribe(["pomodoro:node:test"]) { event in
                events.update { $0.append(event) }
                arrived.signal()
            }
        }
        func expectEvent(_ what: String, _ match: (ClusterBus.Event) -> Bool) {
            let deadline = TestTime.deadline(10)
            while !events.current.contains(where: match) {
                guard Date() < deadline else { Issue.record("no \(what): \(events.current)"); return }
                _ = arrived.wait(timeout: .now() + 0.05)
            }
        }
        func publishUntilHeard(_ payload: String) throws {
            let publisher = try RedisConnection(address, timeout: 1)
            let deadline = TestTime.deadline(10)
            while Date() < deadline {
                if case .integer(let heard) = try publisher.command(["PUBLISH", "pomodoro:node:test", payload]), heard > 0 { return }
                usleep(10_000)
            }
            Issue.record("nobody subscribed within 10 s")
        }
        expectEvent("subscription") { $0 == .subscribed(["pomodoro:node:test"]) }
        try publishUntilHeard("first")
        expectEvent("first message") { $0 == .message(channel: "pomodoro:node:test", payload: "first") }
        // Counted before Redis goes: the subscriber may be back before the test looks again.
        let before = events.current.filter { $0 == .subscribed(["pomodoro:node:test"]) }.count
        redis.halt()
        expectEvent("loss") { if case .disconnected = $0 { true } else { false } }
        try redis.start()
        expectEvent("second subscription") { _ in
            events.current.filter { $0 == .subscribed(["pomodoro:node:test"]) }.count > before
        }
        try publishUntilHeard("second")
        expectEvent("second message") { $0 == .message(channel: "pomodoro:node:test", payload: "second") }
        let lost = events.current.filter { if case .disconnected = $0 { true } else { false } }.count
        #expect(lost == 1, "told of the loss once: \(events.current)")
    }
}
