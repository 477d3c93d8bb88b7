import Foundation
import Logging
import PomodoroCluster
import PomodoroCore
import PomodoroNet
import PomodoroProtocol
import PomodoroServer

/// A `RoomHub` with nothing real around it: a manual clock, a fake transport, held store access and held
/// passcode work. Nothing happens behind the test's back: frames go in through `send`, and posted work,
/// store answers, hashes and timers run only in `settle()` and `pass(_:)`.
///
/// ```swift
/// let t = try TestHub(store: HeldStore())
/// let a = t.connect()
/// t.send(.join(room: "team", name: "Ada"), ref: "j", from: a)
/// t.settle()
/// let welcome = try t.messages(to: a).first
/// ```
package final class TestHub {
    package let hub: RoomHub
    package let clock: ManualServerClock
    package let transport: FakeTransport
    package let store: HeldStore?
    package let work: HeldWork
    /// The hub's router when it runs as a node of the test's cluster (`cluster:`), for what the node hears.
    package let router: ClusterRooms?
    private var lastConnection: UInt64 = 0

    /// Builds the hub the way the composition root does, on the fakes given (an in-memory hub when `store`
    /// is nil). Passcodes are hashed at the lowest work factor a lock may have (`ServerConfiguration.leastPasscodeIterations`)
    /// unless the configuration asks for another than the default: the hub's logic is the same at a sixth of
    /// the CPU, and these tests hash on Swift concurrency's pool, which every other test waits for.
    package init(configuration: ServerConfiguration = ServerConfiguration(port: 0, webRoot: nil),
                 clock: ManualServerClock = ManualServerClock(), transport: FakeTransport? = nil,
                 store: HeldStore? = nil, work: HeldWork = HeldWork(), cluster: (any HubCluster)? = nil,
                 addressLimits: (any AddressLimits)? = nil,
                 logger: Logger = Logger(label: "pomodoro.test", factory: { _ in SwiftLogNoOpLogHandler() })) {
        var configuration = configuration
        if configuration.passcodeIterations == ServerConfiguration(port: 0, webRoot: nil).passcodeIterations {
            configuration.passcodeIterations = ServerConfiguration.leastPasscodeIterations
        }
        self.clock = clock
        let transport = transport ?? FakeTransport(clock: clock)
        self.transport = transport
        self.store = store
        self.work = work
        router = cluster.map {
            ClusterRooms(cluster: $0, scheduledReturnLeadSeconds: configuration.scheduledReturnLeadSeconds)
        }
        hub = RoomHub(configuration: configuration, clock: clock, logger: logger, store: store,
                      transport: transport, hashing: work, router: router, addressLimits: addressLimits)
    }

    // MARK: Connections and frames

    /// Opens a new connection from `peer`.
    package func connect(peer: String = "203.0.113.7") -> ConnectionID {
        lastConnection += 1
        let connection = ConnectionID(rawValue: lastConnection)
        transport.open.insert(connection)
        hub.opened(connection, peer: peer)
        return connection
    }

    /// The connection goes away (as the transport reports a close): lost, or `.closed` by its client.
    package func disconnect(_ connection: ConnectionID, ended: ConnectionEnd = .lost) {
        transport.open.remove(connection)
        hub.closed(connection, ended: ended)
    }

    /// A text frame from `connection`, handled now.
    package func send(_ message: ClientMessage, ref: String? = nil, from connection: ConnectionID) {
        hub.received(WireCodec.encode(ClientFrame(message, ref: ref.map(Ref.string))), from: connection)
    }

    /// What `connection` has been sent so far, decoded.
    package func messages(to connection: ConnectionID) throws -> [ServerMessage] {
        try transport.messages(to: connection)
    }

    // MARK: Letting things happen

    /// Runs hashes, answers reads, lands commits and runs posted work until nothing is left waiting
    /// (timers aside: see `pass`). `hashes: false` leaves passcode work waiting, `commits: false` commits.
    package func settle(hashes: Bool = true, commits: Bool = true) {
        while true {
            var progress = hashes ? work.runAll() : 0
            progress += store?.releaseReads() ?? 0
            if commits { progress += store?.releaseCommits() ?? 0 }
            progress += transport.runPosted()
            if progress == 0 { return }
        }
    }

    /// Moves the clock on by `duration`, stopping at each timer's deadline on the way to fire it (and
    /// settle what it started), as time passing on the service thread would.
    package func pass(_ duration: Duration, hashes: Bool = true, commits: Bool = true) {
        let end = clock.now().monotonic + duration
        while let next = transport.nextDeadline, next <= end {
            let now = clock.now().monotonic
            if next > now { clock.advance(by: next - now) }
            transport.fireDueTimers()
            settle(hashes: hashes, commits: commits)
        }
        let now = clock.now().monotonic
        if end > now { clock.advance(by: end - now) }
    }
}

/// Records the answer to an HTTP request for a test to read.
package final class RecordedResponse: HTTPAnswering, @unchecked Sendable {
    private let lock = NSLock()
    private var answer: HTTPResponse?

    package init() {}

    package func respond(_ response: HTTPResponse) -> Bool {
        lock.withLock {
            guard answer == nil else { return false }
            answer = response
            return true
        }
    }

    /// The answer, once there is one.
    package var response: HTTPResponse? { lock.withLock { answer } }

    /// The stream the answer went on, if it was one.
    package private(set) var streamed: RecordedStream?

    package func stream(_ head: HTTPResponse) -> (any HubEventStream)? {
        guard respond(head) else { return nil }
        let stream = RecordedStream()
        streamed = stream
        return stream
    }
}

/// An event stream's pieces, as a reader would get them; `capacity` pieces at most wait unread, beyond
/// which the reader is dropped (as `HTTPStream` drops one that does not read).
package final class RecordedStream: HubEventStream {
    package private(set) var pieces: [String] = []
    package private(set) var unread = 0
    package private(set) var closed = false
    package private(set) var finished = false
    /// A reader that stops reading: pieces pile up unread.
    package var reading = true
    package var capacity = 8

    package func send(_ piece: [UInt8]) -> Bool {
        guard !closed else { return false }
        if !reading {
            guard unread < capacity else {
                closed = true
                return false
            }
            unread += 1
        }
        pieces.append(String(decoding: piece, as: UTF8.self))
        return true
    }

    package func finish() { finished = true }

    /// The `event:` names of the pieces so far (comments as `:`).
    package var events: [String] {
        pieces.map { piece in
            piece.hasPrefix(":") ? ":" : piece.split(separator: "\n").first { $0.hasPrefix("event: ") }
                .map { String($0.dropFirst(7)) } ?? "?"
        }
    }
}
