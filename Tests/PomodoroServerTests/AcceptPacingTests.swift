import Dispatch
import Foundation
import Glibc
@testable import PomodoroNet
import PomodoroTestSupport
import Testing

/// New connections a turn's share at a time (`AcceptPacer`): the rule alone, then a real server taking a
/// crowd that arrived all at once.
@Suite(.onOwnThreads, .timeLimit(.minutes(TestTime.minutes(1))))
struct AcceptPacingTests {
    @Test func aTurnTakesItsShareAndHoldsTheRest() {
        var pacer = AcceptPacer(perTurn: 2)
        let verdicts = (0..<3).map { _ in pacer.accepted(in: 7) }
        #expect(verdicts == [.takeOn, .takeOn, .hold])
        let asksForATurn = pacer.hold(30)
        #expect(asksForATurn, "the first held asks for a later turn")
        // A new turn does not let a newcomer pass those held before it.
        let newcomer = pacer.accepted(in: 8)
        #expect(newcomer == .hold)
        let asksAgain = pacer.hold(31)
        #expect(!asksAgain, "a later turn is already asked for")
        #expect(pacer.held == [30, 31])
        #expect(pacer.heldInAll == 2)
    }

    @Test func heldConnectionsGoOldestFirstAShareATurn() {
        var pacer = AcceptPacer(perTurn: 2)
        var verdicts: [AcceptPacer.Verdict] = []
        for descriptor: Int32 in [40, 41, 42, 43, 44] {
            verdicts.append(pacer.accepted(in: 1))
            if verdicts.last == .hold { _ = pacer.hold(descriptor) }
        }
        #expect(verdicts == [.takeOn, .takeOn, .hold, .hold, .hold])
        // The release is a later turn, even within the same millisecond of the loop's time.
        let first = pacer.release(in: 1)
        #expect(first.descriptors == [42, 43])
        #expect(first.more)
        // That turn's share is spent: a newcomer waits behind the last one held.
        let newcomer = pacer.accepted(in: 1)
        #expect(newcomer == .hold)
        _ = pacer.hold(45)
        let second = pacer.release(in: 2)
        #expect(second.descriptors == [44, 45])
        #expect(!second.more)
        // Nothing held any more: a new turn takes newcomers on again.
        let later = pacer.accepted(in: 3)
        #expect(later == .takeOn)
        #expect(pacer.heldInAll == 4)
    }

    @Test func aServerThatEndsHandsBackWhatItHeld() {
        var pacer = AcceptPacer(perTurn: 1)
        let verdicts = [pacer.accepted(in: 1), pacer.accepted(in: 1)]
        #expect(verdicts == [.takeOn, .hold])
        _ = pacer.hold(50)
        let newcomer = pacer.accepted(in: 2)
        #expect(newcomer == .hold)
        _ = pacer.hold(51)
        let ending = pacer.releaseAll()
        #expect(ending == [50, 51])
        #expect(pacer.held.isEmpty)
        let afterwards = pacer.release(in: 3)
        #expect(afterwards.descriptors.isEmpty)
    }

    /// A crowd whose requests are all waiting when the loop next looks, more than a turn takes on: every one
    /// is upgraded, and some were held for later turns on the way.
    @Test func aCrowdArrivingAtOnceIsEveryoneUpgraded() throws {
        var options = WebSocketServerOptions(host: "127.0.0.1", port: 0)
        options.acceptsPerTurn = 3
        let server = try WebSocketServer(options: options)
        server.start()
        defer {
            server.post { server.shutdown() }
            server.waitUntilFinished()
        }
        let crowd = 40
        // The service thread waits while the crowd connects and sends its requests, so that they are all there
        // when it next accepts.
        let busy = DispatchSemaphore(value: 0), waiting = DispatchSemaphore(value: 0)
        server.post {
            waiting.signal()
            busy.wait()
        }
        waiting.wait()
        var sockets: [Int32] = []
        defer { for fd in sockets { close(fd) } }
        do {
            defer { busy.signal() }
            for _ in 0..<crowd {
                let fd = try RawWebSocket.connectedSocket(port: server.port, receiveBuffer: nil)
                sockets.append(fd)
                try RawWebSocket.sendHandshake(on: fd, port: server.port)
            }
        }
        for fd in sockets {
            #expect(try RawWebSocket.responseHead(on: fd).hasPrefix("HTTP/1.1 101"))
        }
        let counted = DispatchSemaphore(value: 0)
        let seen = Counts()
        server.post {
            seen.open = server.connectionCount
            seen.held = server.connectionsHeldBack
            counted.signal()
        }
        #expect(counted.wait(timeout: .now() + .seconds(TestTime.seconds(10))) == .success)
        #expect(seen.open == crowd)
        #expect(seen.held > 0, "more than a turn's share arrived at once")
    }
}

/// Figures read on the service thread for the test's (the semaphore orders the accesses).
private final class Counts: @unchecked Sendable {
    var open = 0
    var held = 0
}
