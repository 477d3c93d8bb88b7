import Dispatch
import Foundation
import Glibc
@testable import PomodoroNet
import PomodoroTestSupport
import Testing

/// A frame for many connections written straight to their sockets over two threads
/// (WebSocketServer+FanOut.swift): every member gets every frame whole and in order, whatever its length,
/// and one whose socket is full gets the rest later, in order, as a single write would have left it.
@Suite(.onOwnThreads, .timeLimit(.minutes(TestTime.minutes(2))))
struct FanOutWriteTests {
    @Test func everyMemberGetsEveryFrameWholeAndInOrder() throws {
        let fixture = try Fixture(members: 24) { $0.parallelWriteMinimum = 2 }
        defer { fixture.finish() }
        // Lengths in each of the header's three forms: 7 bits, 16 bits, 64 bits.
        let lengths = [0, 1, 125, 126, 127, 4000, 65535, 65536, 70_001]
        let frames = lengths.enumerated().map { Fixture.payload(number: $0.offset, length: $0.element) }
        let counts = try fixture.onServiceThread { server, ids in
            for payload in frames { #expect(server.send(OutboundFrame(payload), toAll: ids) == ids.count) }
            return server.fanOutCounts
        }
        #expect(counts.passes == frames.count, "each frame was one two-thread pass")
        for (index, client) in fixture.clients.enumerated() {
            for (number, payload) in frames.enumerated() {
                let frame = client.readFrame()
                #expect(frame?.opcode == 1, "member \(index), frame \(number): a text frame")
                let whole = frame?.payload == payload  // compared here: a failure names the frame, not its bytes
                #expect(whole, "member \(index), frame \(number): the whole payload")
            }
        }
    }

    /// A member that reads nothing while frames are sent it until its socket is full: a big frame is taken in
    /// part by a socket with some room left, and the library is handed the rest; a small one is taken whole or
    /// not at all, and then waits in the connection's queue; the frames after either wait in the queue. When
    /// the member reads again, every frame comes out whole and in order. Frames are sent only until the socket
    /// fills (and a few more), thirteen made once and sent in turn (each of its own length and bytes): the
    /// test allocates little while it runs, since others in this process measure their memory, and under
    /// AddressSanitizer what is freed stays resident for a while.
    @Test(arguments: [(frameBytes: 20_000, limit: 600), (frameBytes: 1000, limit: 12_000)])
    func aMemberWhoseSocketFillsGetsTheRestInOrder(frameBytes: Int, limit: Int) throws {
        let fixture = try Fixture(members: 2, slowReaders: 1) {
            $0.parallelWriteMinimum = 2
            $0.maxQueuedFrames = limit
            $0.maxQueuedBytes = 64 << 20
        }
        defer { fixture.finish() }
        let payloads = (0..<13).map { Fixture.payload(number: $0, length: frameBytes + $0) }
        let frames = payloads.map { OutboundFrame($0) }
        let (sent, counts) = try fixture.onServiceThread { server, ids in
            var sent = 0, after = 0
            while sent < limit && after < 5 {
                #expect(server.send(frames[sent % frames.count], toAll: ids) == ids.count)
                sent += 1
                if server.fanOutCounts.restHandedOn + server.fanOutCounts.queued > 0 { after += 1 }
            }
            return (sent, server.fanOutCounts)
        }
        // Which of the two happens depends on where the socket's buffer runs out; a big frame runs it out in
        // the middle.
        #expect(counts.restHandedOn + counts.queued >= 1, "the socket filled within \(limit) frames")
        if frameBytes > 10_000 { #expect(counts.restHandedOn >= 1, "a full socket took part of a big frame") }
        for (index, client) in fixture.clients.enumerated() {
            for number in 0..<sent {
                let whole = client.readFrame()?.payload == payloads[number % payloads.count]  // a failure names the frame, not its bytes
                #expect(whole, "member \(index), frame \(number) of \(sent): whole and in order")
                if !whole { break }
            }
        }
        let after = try fixture.onServiceThread { server, _ in server.connectionCount }
        #expect(after == fixture.clients.count, "nobody was dropped")
    }

    /// Each way a socket can answer, on demand: four members whose sockets take every frame whole, half of each
    /// frame (the rest goes to the library), none of it (the frame waits in the queue, and so do those after
    /// it until the queue is written), or fail (the member is hung up on). The first three read every frame
    /// whole and in order; the fourth's connection ends, and the others go on.
    @Test func eachAnswerOfASocketGoesOnAsASingleWriteWould() throws {
        let outcomes = SocketOutcomes()
        let fixture = try Fixture(members: 4, sendInstead: outcomes.send) { $0.parallelWriteMinimum = 2 }
        defer { fixture.finish() }
        let frames = (0..<20).map { Fixture.payload(number: $0, length: 200 + $0) }
        let counts = try fixture.onServiceThread { server, ids in
            for payload in frames { _ = server.send(OutboundFrame(payload), toAll: ids) }
            return server.fanOutCounts
        }
        #expect(counts.passes == frames.count)
        #expect(counts.writtenWhole == frames.count, "the whole member took every frame directly")
        #expect(counts.restHandedOn == frames.count, "the half member took every frame directly, in two writes")
        #expect(counts.queued == 1, "the none member's first frame was queued, the others joined it")
        var whole = 0, ended = 0
        for client in fixture.clients {
            let first = client.readFrame()
            if first == nil {
                ended += 1
                continue
            }
            var inOrder = first?.payload == frames[0]
            for payload in frames.dropFirst() where inOrder { inOrder = client.readFrame()?.payload == payload }
            if inOrder { whole += 1 }
        }
        #expect(whole == 3, "three members read every frame whole and in order")
        #expect(ended == 1, "the member whose socket failed was hung up on")
    }

    /// Below the minimum, or with the two-thread pass off, frames take the single writes' path.
    @Test func aSmallAudienceIsWrittenOneByOne() throws {
        let fixture = try Fixture(members: 3) { $0.parallelWriteMinimum = 4 }
        defer { fixture.finish() }
        let payload = Fixture.payload(number: 7, length: 300)
        let counts = try fixture.onServiceThread { server, ids in
            #expect(server.send(OutboundFrame(payload), toAll: ids) == ids.count)
            return server.fanOutCounts
        }
        #expect(counts == FanOutCounts())
        for client in fixture.clients {
            let whole = client.readFrame()?.payload == payload
            #expect(whole)
        }
    }
}

/// A server and its raw members; the members' connection ids as the server knows them.
private final class Fixture: WebSocketServerDelegate, @unchecked Sendable {  // safe: `opened` under `lock`
    let server: WebSocketServer
    private(set) var clients: [RawWebSocket] = []
    private let lock = NSCondition()
    private var opened: [ConnectionID] = []

    /// `slowReaders` of the members have a small receive buffer (they are the first ones).
    init(members: Int, slowReaders: Int = 0, sendInstead: (@Sendable (Int32, UnsafeRawBufferPointer) -> Int)? = nil,
         configure: (inout WebSocketServerOptions) -> Void) throws {
        var options = WebSocketServerOptions(host: "127.0.0.1", port: 0)
        configure(&options)
        server = try WebSocketServer(options: options)
        server.fanOutWriter.sendInstead = sendInstead
        server.delegate = self
        server.start()
        for index in 0..<members {
            clients.append(try RawWebSocket(port: server.port, receiveBuffer: index < slowReaders ? 2048 : nil))
        }
        lock.lock()
        let deadline = TestTime.deadline(10)
        while opened.count < members && lock.wait(until: deadline) {}
        lock.unlock()
    }

    func finish() {
        server.post { [server] in server.shutdown() }
        server.waitUntilFinished()
    }

    /// Runs `work` on the service thread with the members' ids in the order they connected, and waits for
    /// what it returns (a bound, stretched under a sanitizer).
    func onServiceThread<T: Sendable>(_ work: @escaping @Sendable (WebSocketServer, [ConnectionID]) -> T) throws -> T {
        let ids = lock.withLock { opened }
        #expect(ids.count == clients.count, "every member connected")
        let result = Locked<T?>(nil)
        let done = DispatchSemaphore(value: 0)
        server.post { [server] in
            let value = work(server, ids)
            result.update { $0 = value }
            done.signal()
        }
        #expect(waitFor(done, seconds: 60 * TestTime.scale), "the service thread ran the work")
        return try #require(result.current)
    }

    static func payload(number: Int, length: Int) -> [UInt8] {
        (0..<length).map { UInt8(0x61 + ($0 + number) % 26) }
    }

    func server(_ server: WebSocketServer, didOpen connection: ConnectionID, peer: String) {
        lock.withLock {
            opened.append(connection)
            lock.broadcast()
        }
    }
    func server(_ server: WebSocketServer, didReceive text: [UInt8], from connection: ConnectionID) {}
    func server(_ server: WebSocketServer, didReject problem: ReceiveProblem, from connection: ConnectionID) {}
    func server(_ server: WebSocketServer, didClose connection: ConnectionID, peerCloseCode: UInt16?) {}
    func server(_ server: WebSocketServer, didReceiveHTTP request: HTTPRequest, responder: HTTPResponder) {
        responder.respond(HTTPResponse(status: 404, text: "none\n"))
    }
}

/// A socket's answers by the order in which the sockets are first met: the first takes each frame whole, the
/// second half of it, the third none, the fourth fails. Called on both writing threads.
private final class SocketOutcomes: @unchecked Sendable {  // safe: `order` under `lock`
    private let lock = NSLock()
    private var order: [Int32: Int] = [:]

    var send: @Sendable (Int32, UnsafeRawBufferPointer) -> Int {
        { [self] socket, bytes in
            let place = lock.withLock { () -> Int in
                if let known = order[socket] { return known }
                order[socket] = order.count
                return order.count - 1
            }
            switch place {
            case 0: return FanOutWriter.sendAll(bytes, to: socket)
            case 1: return FanOutWriter.sendAll(UnsafeRawBufferPointer(rebasing: bytes[..<(bytes.count / 2)]), to: socket)
            case 2: return 0
            default: return -1
            }
        }
    }
}
