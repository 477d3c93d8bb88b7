import Foundation
import PomodoroCore
import PomodoroNet
import PomodoroProtocol
import PomodoroServer
import PomodoroTestSupport
import Testing

/// Broken and hostile clients against a real server. After each attack the server still answers
/// /healthz, a member of a running room still gets every tick within its second, and no connection or room
/// is left behind.
@Suite(.onOwnThreads, .timeLimit(.minutes(TestTime.minutes(2))))
struct HostileClientTests {
    let server: LiveServer
    let client: WebSocketClient
    let steady: Peer

    init() throws {
        try self.init { _ in }
    }

    init(_ configure: (inout ServerConfiguration) -> Void) throws {
        server = try LiveServer(configure)
        client = try WebSocketClient()
        client.start()
        steady = try Peer(client, port: server.port)
        _ = try steady.join("steady", name: "Steady")
        steady.send(.configure(RoomSettings(focus: 3600, shortBreak: 60, longBreak: 60, longBreakEvery: 4,
                                            autoStart: false)))
        steady.send(.start)
        _ = try steady.expect("running") { if case .state(let s) = $0, s.running { return true }; return nil }
    }

    func finish() {
        server.stop()
        client.stop()
        client.waitUntilFinished()
    }

    /// The counts, read on the service thread.
    func counts() -> PomodoroServer.Counts {
        let box = CountsBox()
        server.server.counts { box.put($0) }
        return box.take()
    }

    /// Health after an attack: /healthz, two ticks in a row each within its second, and (once the attacker's
    /// sockets are gone) only the steady member's connection and room left.
    func expectHealthy(rooms: Int = 1, sourceLocation: SourceLocation = #_sourceLocation) throws {
        #expect(try httpGet(port: server.port, path: "/healthz").status == 200, sourceLocation: sourceLocation)
        var last: Int64?
        let checkedFrom = Date()
        var fresh = 0
        while fresh < 2 {
            let (tick, arrivedAt) = try steady.nextTick()
            // Ticks from before the check began were judged by the attack's own test, if at all.
            guard arrivedAt >= checkedFrom.addingTimeInterval(-1) else { continue }
            fresh += 1
            let arrived = Int64(arrivedAt.timeIntervalSince1970 * 1000)
            let boundary = tick.endsAt - tick.remainingMs
            #expect(arrived - boundary < 1000, "a tick arrived after its second was over", sourceLocation: sourceLocation)
            if let last { #expect(last - tick.remainingMs == 1000, "a second was skipped", sourceLocation: sourceLocation) }
            last = tick.remainingMs
        }
        let deadline = TestTime.deadline(10)
        var now = counts()
        while (now.connections != 1 || now.rooms != rooms) && Date() < deadline {
            Thread.sleep(forTimeInterval: 0.05)  // polling the server's own counts, bounded
            now = counts()
        }
        #expect(now.connections == 1 && now.rooms == rooms, "left behind: \(now)", sourceLocation: sourceLocation)
    }

    @Test func invalidUTF8ClosesWith1007() throws {
        defer { finish() }
        let raw = try RawWebSocket(port: server.port)
        try raw.send(opcode: 1, [0x7b, 0xc3, 0x28, 0x7d])
        #expect(raw.readUntilClose() == 1007)
        try expectHealthy()
    }

    @Test func truncatedFramesAndAbruptHangUps() throws {
        defer { finish() }
        for cut in [1, 2, 5, 9] {
            let raw = try RawWebSocket(port: server.port)
            let frame = RawWebSocket.frame(opcode: 1, Array(#"{"type":"ping"}"#.utf8))
            try raw.write(Array(frame.prefix(cut)))
        }
        do {
            // A frame that claims to be 2^63 bytes long, then silence.
            let liar = try RawWebSocket(port: server.port)
            try liar.write([0x81, 0x80 | 127, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 1, 2, 3, 4])
        }
        try expectHealthy()
    }

    @Test func aFragmentFloodIsCutAtTheSizeLimit() throws {
        defer { finish() }
        try floodFragments()
        try expectHealthy()
    }

    private func floodFragments() throws {
        let raw = try RawWebSocket(port: server.port)
        try raw.send(opcode: 1, Array(#"{"type":"task","text":""#.utf8), fin: false)
        for _ in 0..<5000 { try raw.send(opcode: 0, Array("xxxxxxxxxx".utf8), fin: false) }
        try raw.send(opcode: 0, Array(#""}"#.utf8), fin: true)
        try raw.send(opcode: 1, Array(#"{"type":"ping","ref":1}"#.utf8))
        var codes: [String] = []
        while codes.count < 2, let (_, payload) = raw.readFrame() {
            let message = try WireCodec.decodeServerMessage(payload)
            switch message {
            case .error(let code, _, _, _, _): codes.append(code.rawValue)
            case .pong: codes.append("pong")
            default: break
            }
        }
        #expect(codes == ["too_large", "pong"], "the flood is refused and the connection still works")
    }

    @Test func oneHugeFrameIsRefused() throws {
        defer { finish() }
        do {
            let raw = try RawWebSocket(port: server.port)
            try raw.send(opcode: 1, [UInt8](repeating: UInt8(ascii: "a"), count: 1 << 20))
            let (_, payload) = try #require(raw.readFrame())
            guard case .error(.tooLarge, _, _, _, _) = try WireCodec.decodeServerMessage(payload) else {
                Issue.record("no too_large")
                return
            }
        }
        try expectHealthy()
    }

    @Test func wrongTypesHugeNumbersAndNonsense() throws {
        defer { finish() }
        let rude = try Peer(client, port: server.port)
        _ = try rude.join("steady", name: "Rude")
        let frames: [(String, ErrorCode)] = [
            (#"{"type":"extend","seconds":1e309}"#, .badRequest),
            (#"{"type":"extend","seconds":99999999999999999999999}"#, .badRequest),
            (#"{"type":"extend","seconds":-9223372036854775808}"#, .badRequest),
            (#"{"type":"extend","seconds":null}"#, .badRequest),
            (#"{"type":"configure","focus":"25","shortBreak":5,"longBreak":15,"longBreakEvery":4,"autoStart":true}"#, .badRequest),
            (#"{"type":"configure","focus":0,"shortBreak":5,"longBreak":15,"longBreakEvery":4,"autoStart":true}"#, .badRequest),
            (#"{"type":"task","text":["a"]}"#, .badRequest),
            (#"{"type":"presence","away":"yes"}"#, .badRequest),
            (#"{"type":["join"]}"#, .badRequest),
            (#"{"type":"JOIN"}"#, .unknownType),
            (#"[1,2,3]"#, .badJSON),
            (#"{"type":"ping"} trailing"#, .badJSON),
            ("\u{0}", .badJSON),
            (String(repeating: #"{"a":"#, count: 100) + "1" + String(repeating: "}", count: 100), .badJSON),
        ]
        for (text, expected) in frames {
            rude.sendRaw(text)
            let code = try rude.expect("error") { if case let .error(code, _, _, _, _) = $0 { return code }; return nil }
            #expect(code == expected, "\(text.prefix(40))")
        }
        rude.close()
        _ = try rude.expectClose()
        try expectHealthy()
    }

    @Test func tenThousandRoomJoinsCreateOnlyWhatTheLimitsAllow() throws {
        defer { finish() }
        let attacker = try Peer(client, port: server.port)
        var created = 0, refused = 0, limited = 0
        for i in 0..<10_000 {
            attacker.send(.join(room: "r\(i)", name: "x", token: nil), ref: .number(Int64(i)))
            let answer = try attacker.expect("answer to join \(i)") { message -> ErrorCode?? in
                switch message {
                case .welcome: .some(nil)
                case let .error(code, _, _, _, _): .some(code)
                default: nil
                }
            }
            switch answer {
            case nil:
                created += 1
                attacker.send(.leave, ref: .string("leave"))
                let left = try attacker.expect("answer to leave") { message -> Bool? in
                    if case .ok(_, _, .string("leave")?) = message { return true }
                    if case .error(.rateLimited, _, _, _, _) = message { return false }
                    return nil
                }
                if !left { limited += 1 }
            case .roomLimit?: refused += 1
            case .rateLimited?: limited += 1
            case let code?: Issue.record("unexpected \(code)")
            }
            if limited > 0 { break }  // the connection's own rate limit stops it before long
        }
        #expect(created <= ServerLimits.standard.roomsCreatedPerAddressPerMinute)
        #expect(refused + limited > 0)
        attacker.close()
        _ = try attacker.expectClose()
        // Left rooms linger only until their empty lifetime; none beyond the per-address allowance exists.
        #expect(counts().rooms <= 1 + ServerLimits.standard.roomsCreatedPerAddressPerMinute)
        #expect(try httpGet(port: server.port, path: "/healthz").status == 200)
    }
}

/// A client that never reads is dropped once its queue is full; the room goes on.
@Suite(.onOwnThreads, .timeLimit(.minutes(TestTime.minutes(2))))
struct NeverReadingClientTests {
    @Test func aClientThatNeverReadsIsDropped() throws {
        let suite = try HostileClientTests {
            $0.limits.maxQueuedBytes = 64 * 1024
            $0.limits.messagesPerSecond = 10_000
            $0.limits.messageBurst = 10_000
            $0.roomPolicy.maxTaskLength = 5000
        }
        defer { suite.finish() }
        var sleeper: RawWebSocket? = try RawWebSocket(port: suite.server.port, receiveBuffer: 4096)
        try sleeper?.send(opcode: 1, Array(#"{"type":"join","room":"steady","name":"Sleeper"}"#.utf8))
        let chatty = try Peer(suite.client, port: suite.server.port)
        _ = try chatty.join("steady", name: "Chatty")
        // Each task change broadcasts a ~4 KB state to everyone, the sleeper included.
        for i in 0..<1500 {
            chatty.send(.task(text: String(repeating: i % 2 == 0 ? "a" : "b", count: 4000)))
        }
        let deadline = TestTime.deadline(30)
        while suite.counts().droppedSlowClients == 0 && Date() < deadline {
            Thread.sleep(forTimeInterval: 0.05)  // polling the server's own counter, bounded
        }
        #expect(suite.counts().droppedSlowClients == 1)
        #expect(try scrape(suite.server)["pomodoro_slow_clients_dropped_total"] == 1)
        sleeper = nil
        chatty.close()
        // A close handshake: the server's answer comes after the thousands of states queued for chatty before
        // it, which chatty reads first (a bound, not a timing).
        _ = try chatty.expectClose(timeout: 30)
        try suite.expectHealthy()
    }
}

/// Hands the counts read on the service thread to the waiting test.
private final class CountsBox: @unchecked Sendable {
    private let condition = NSCondition()
    private var counts: PomodoroServer.Counts?

    func put(_ value: PomodoroServer.Counts) {
        condition.lock()
        counts = value
        condition.signal()
        condition.unlock()
    }

    func take() -> PomodoroServer.Counts {
        condition.lock()
        defer { condition.unlock() }
        while counts == nil { condition.wait() }
        return counts!
    }
}
