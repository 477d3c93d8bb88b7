import PomodoroCore
import PomodoroNet
import PomodoroProtocol
import PomodoroServer
import PomodoroTestSupport
import Testing

/// `GET /metrics` on a real server: the levels read at scrape time, and counters that match exactly what
/// the clients received.
@Suite(.onOwnThreads, .timeLimit(.minutes(TestTime.minutes(1))))
struct MetricsTests {
    @Test func theMetricsMatchWhatTheMembersReceived() throws {
        let server = try LiveServer()
        let client = try WebSocketClient()
        client.start()
        defer {
            server.stop()
            client.stop()
            client.waitUntilFinished()
        }
        let idle = try scrape(server)
        #expect(idle["pomodoro_connections"] == 0 && idle["pomodoro_rooms"] == 0 && idle["pomodoro_members"] == 0)
        #expect(idle["pomodoro_frames_sent_total"] == 0 && idle["pomodoro_tick_delay_seconds_count"] == 0)

        let ana = Received(try Peer(client, port: server.port))
        let bo = Received(try Peer(client, port: server.port))
        ana.peer.send(.join(room: "measured", name: "Ana", token: nil))
        try ana.read { if case .welcome = $0 { true } else { false } }
        bo.peer.send(.join(room: "measured", name: "Bo", token: nil))
        try bo.read { if case .welcome = $0 { true } else { false } }
        ana.peer.send(.configure(RoomSettings(focus: 3, shortBreak: 60, longBreak: 60, longBreakEvery: 4,
                                              autoStart: false)))
        ana.peer.sendRaw("{ not json")
        ana.peer.send(.start)
        // The break that follows the focus is the last thing either is sent until someone acts again.
        func theBreakIsReady(_ message: ServerMessage) -> Bool {
            if case .state(let room) = message { room.phase == .shortBreak } else { false }
        }
        try ana.read(until: theBreakIsReady)
        try bo.read(until: theBreakIsReady)
        #expect(ana.errors == [.badJSON] && bo.errors.isEmpty)
        #expect(ana.ticks == 2 && bo.ticks == 2, "a 3 s focus ticks at 2 s and 1 s")

        let busy = try scrape(server)
        #expect(busy.types["pomodoro_connections"] == "gauge")
        #expect(busy.types["pomodoro_frames_sent_total"] == "counter")
        #expect(busy.types["pomodoro_errors_total"] == "counter")
        #expect(busy.types["pomodoro_tick_delay_seconds"] == "histogram")
        #expect(busy["pomodoro_connections"] == 2)
        #expect(busy["pomodoro_rooms"] == 1)
        #expect(busy["pomodoro_members"] == 2)
        #expect(busy["pomodoro_frames_sent_total"] == Double(ana.frames + bo.frames))
        #expect(busy["pomodoro_bytes_sent_total"] == Double(ana.bytes + bo.bytes))
        #expect(busy["pomodoro_slow_clients_dropped_total"] == 0)
        // The resident set, under the name every client library gives it (deploy/prometheus/alerts.yml): more
        // than a megabyte and less than a gigabyte for this test process (a sanitizer's shadow memory aside).
        #expect(busy.types["process_resident_memory_bytes"] == "gauge")
        let resident = try #require(busy["process_resident_memory_bytes"])
        #expect(resident > 1_000_000 && (TestTime.underSanitizer || resident < 1_000_000_000), "\(resident)")

        // Every code is there from the start; only the one bad frame counted.
        for code in ErrorCode.allCases {
            #expect(busy["pomodoro_errors_total{code=\"\(code.rawValue)\"}"] == (code == .badJSON ? 1 : 0),
                    "\(code)")
        }

        // One delay per tick (not per recipient), in buckets that only grow, each under its second.
        let delays = busy.histogram("pomodoro_tick_delay_seconds")
        #expect(delays.count == 2)
        #expect(delays.buckets.map(\.bound) == [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, .infinity])
        #expect(delays.buckets.last?.count == delays.count)
        #expect(zip(delays.buckets, delays.buckets.dropFirst()).allSatisfy { $0.count <= $1.count })
        #expect(delays.sum >= 0 && delays.sum < 2)

        // The same two ticks through their stages, each reached no earlier than the one before it.
        #expect(busy.types["pomodoro_tick_stage_seconds"] == "histogram")
        let stages = ["wakeup", "released", "first_write", "last_write"]
        for stage in stages {
            #expect(busy["pomodoro_tick_stage_seconds_count{stage=\"\(stage)\"}"] == 2, "\(stage)")
        }
        let sums = stages.map { busy["pomodoro_tick_stage_seconds_sum{stage=\"\($0)\"}"] ?? -1 }
        #expect(sums.allSatisfy { $0 >= 0 } && zip(sums, sums.dropFirst()).allSatisfy { $0 <= $1 }, "\(sums)")

        // A member who drops off keeps their place through the grace period: still a member, not a connection.
        bo.peer.close()
        try ana.read { if case .event(_, .memberAway(_, .disconnected, _), _) = $0 { true } else { false } }
        let after = try scrape(server)
        #expect(after["pomodoro_connections"] == 1)
        #expect(after["pomodoro_members"] == 2)
        #expect(after["pomodoro_rooms"] == 1)
    }

    @Test func onlyTheExactPathAnswers() throws {
        let server = try LiveServer()
        defer { server.stop() }
        let response = try httpGet(port: server.port, path: "/metrics")
        #expect(response.status == 200)
        #expect(response.body.contains("# TYPE pomodoro_tick_delay_seconds histogram\n"))
        #expect(try httpGet(port: server.port, path: "/metrics/more").status == 404)
    }

    @Test(arguments: [true, false])
    func metricsCanBeTurnedOff(withWebRoot: Bool) throws {
        let server = try LiveServer {
            $0.metricsEnabled = false
            if !withWebRoot { $0.webRoot = nil }
        }
        defer { server.stop() }
        let response = try httpGet(port: server.port, path: "/metrics")
        #expect(response.status == 404)
        #expect(!response.body.contains("pomodoro_"))
        #expect(try httpGet(port: server.port, path: "/healthz").status == 200)
    }
}

/// Reads a peer's messages in order and keeps count of every one: frames, bytes, ticks and error codes.
final class Received {
    let peer: Peer
    private(set) var frames = 0
    private(set) var bytes = 0
    private(set) var ticks = 0
    private(set) var errors: [ErrorCode] = []

    init(_ peer: Peer) { self.peer = peer }

    /// Reads (and counts) messages up to and including the first that `done` accepts.
    func read(until done: (ServerMessage) -> Bool) throws {
        while true {
            let (raw, message) = try peer.nextRaw()
            frames += 1
            bytes += raw.count
            switch message {
            case .tick: ticks += 1
            case .error(let code, _, _, _, _): errors.append(code)
            default: break
            }
            if done(message) { return }
        }
    }
}

/// `GET /metrics`, parsed.
func scrape(_ server: LiveServer) throws -> Exposition {
    let response = try httpGet(port: server.port, path: "/metrics")
    guard response.status == 200 else { throw LiveTestFailure(description: "/metrics answered \(response.status)") }
    return try Exposition(response.body)
}

/// A Prometheus text exposition: each sample's value by its series (`name` or `name{labels}`), and each
/// family's `# TYPE`. A line that is not a comment, a type or a `series value` sample is an error, and so is
/// a series given twice.
struct Exposition {
    private(set) var samples: [String: Double] = [:]
    private(set) var types: [String: String] = [:]

    init(_ text: String) throws {
        for line in text.split(separator: "\n") {
            if line.hasPrefix("# TYPE ") {
                let words = line.split(separator: " ")
                guard words.count == 4 else { throw LiveTestFailure(description: "bad TYPE line: \(line)") }
                types[String(words[2])] = String(words[3])
            } else if line.hasPrefix("#") {
                continue
            } else {
                guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else {
                    throw LiveTestFailure(description: "bad sample line: \(line)")
                }
                let series = String(line[..<space])
                guard samples.updateValue(value, forKey: series) == nil else {
                    throw LiveTestFailure(description: "\(series) given twice")
                }
            }
        }
    }

    subscript(series: String) -> Double? { samples[series] }

    /// An unlabelled histogram's cumulative buckets (upper bound, count) in order, its sum and its count.
    func histogram(_ name: String) -> (buckets: [(bound: Double, count: Double)], sum: Double, count: Double) {
        let prefix = name + "_bucket{le=\""
        let buckets = samples.compactMap { series, count -> (bound: Double, count: Double)? in
            guard series.hasPrefix(prefix), series.hasSuffix("\"}") else { return nil }
            let bound = series.dropFirst(prefix.count).dropLast(2)
            return (bound == "+Inf" ? .infinity : Double(bound) ?? .nan, count)
        }.sorted { $0.bound < $1.bound }
        return (buckets, samples[name + "_sum"] ?? -1, samples[name + "_count"] ?? -1)
    }
}
