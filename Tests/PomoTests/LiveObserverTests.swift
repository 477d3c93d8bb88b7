import Foundation
import PomodoroClient
import PomodoroCore
import PomodoroProtocol
import PomodoroTestSupport
import Testing

/// `pomo watch` and `pomo status` observe: two members complete a focus while a watch runs and status is
/// asked, and nothing the members get (their list, counts, stats, activity) ever mentions either.
@Suite(.onOwnThreads, .serialized, .timeLimit(.minutes(TestTime.minutes(1))))
struct LiveObserverTests {
    /// A member through the client library that keeps every message it gets.
    final class Member: @unchecked Sendable {
        let session: RoomSession
        private let lock = NSLock()
        private var received: [ServerMessage] = []
        private var task: Task<Void, Never>?

        init(url: String, room: String, name: String) throws {
            session = try RoomSession(address: try ServerAddress(parsing: url),
                                      configuration: SessionConfiguration(room: room, name: name, reconnect: nil))
            let session = self.session
            task = Task { [weak self] in
                async let run: Void = session.run()
                for await event in session.events {
                    if case .message(let message, _, _) = event { self?.lock.withLock { self?.received.append(message) } }
                }
                await run
            }
        }

        var messages: [ServerMessage] { lock.withLock { received } }

        /// Waits (polling the messages kept, at most `seconds`) until one satisfies `condition`.
        func waitFor(_ what: String, seconds: Double = 20, _ condition: (ServerMessage) -> Bool) async throws {
            let end = TestTime.deadline(seconds)
            while Date() < end {
                if messages.contains(where: condition) { return }
                try await Task.sleep(for: .milliseconds(20))
            }
            throw LiveTestFailure(description: "no \(what) within \(seconds) s")
        }

        func stop() async {
            session.stop()
            await task?.value
        }
    }

    @Test func aWatchAndAStatusAreInvisibleToTheMembersThroughAWholeFocus() async throws {
        let server = try await ServerProcess.start()
        defer { server.stop() }
        let ada = try Member(url: server.url, room: "quiet", name: "Ada")
        try await ada.waitFor("welcome") { if case .welcome = $0 { true } else { false } }
        let bo = try Member(url: server.url, room: "quiet", name: "Bo")
        try await bo.waitFor("welcome") { if case .welcome = $0 { true } else { false } }

        let watch = try ProcessLauncher.start(ProcessLauncher.pomo, ["watch", "quiet", "--json", "--server", server.url])
        defer { if watch.isRunning { watch.terminate() } }
        func nextLine() async throws -> [String: Any] {
            let line = try await watch.line()
            return try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        }
        let first = try await nextLine()
        #expect(first["type"] as? String == "observing")
        let shown = try #require(first["room"] as? [String: Any])
        #expect((shown["members"] as? [[String: Any]])?.compactMap { $0["name"] as? String } == ["Ada", "Bo"])

        // A focus, shortened to end two seconds from now, completed by both.
        ada.session.send(.start, ref: .string("s"))
        try await ada.waitFor("ok start") { if case .ok("start", _, _) = $0 { true } else { false } }
        let status = try await runPomo(["status", "quiet", "--format", "%p %M", "--server", server.url])
        #expect(status.status == 0 && status.output == "Focus 2\n", "\(status)")
        ada.session.send(.extend(seconds: -(25 * 60 - 2)), ref: .string("e"))
        let completed: (ServerMessage) -> Bool = {
            if case .event(_, .phaseCompleted(.focus, _, _, _), _) = $0 { true } else { false }
        }
        try await ada.waitFor("a completed focus", completed)
        try await bo.waitFor("a completed focus", completed)
        var types: [String] = []
        while true {
            let line = try await nextLine()
            types.append(line["type"] as? String ?? "?")
            if line["kind"] as? String == "phaseCompleted" { break }
        }
        #expect(types.contains("tick"))
        watch.terminate()
        #expect(try await watch.ended().status == 0)
        // Once the watch has gone, a last state: its leaving would have been announced before it.
        ada.session.send(.task(text: "after"), ref: .string("t"))
        try await ada.waitFor("ok task") { if case .ok("task", _, _) = $0 { true } else { false } }

        for member in [ada, bo] {
            let messages = member.messages
            let snapshots = messages.compactMap(\.snapshotShown)
            #expect(!snapshots.isEmpty)
            for room in snapshots {
                #expect(Set(room.members.map(\.name)).isSubset(of: ["Ada", "Bo"]), "\(room.members.map(\.name))")
                #expect(room.memberCount <= 2)
            }
            let last = try #require(snapshots.last)
            #expect(last.members.map(\.name) == ["Ada", "Bo"] && last.memberCount == 2)
            #expect(last.stats.focusCompleted == 1)
            #expect(last.members.allSatisfy { $0.stats.focusCompleted == 1 })
            // Activity: Bo's own arrival is the only one anyone was told of, and nobody left.
            let arrivals = messages.compactMap { message -> String? in
                guard case .event(_, .memberJoined(_, let name), _) = message else { return nil }
                return name
            }
            #expect(Set(arrivals).isSubset(of: ["Ada", "Bo"]), "\(arrivals)")
            #expect(!messages.contains {
                if case .event(_, .memberLeft, _) = $0 { true } else if case .event(_, .memberAway, _) = $0 { true } else { false }
            })
        }
        await ada.stop()
        await bo.stop()
    }

    /// A status bar fed by `watch --format` shows a lost connection at once (not a timer still running) and
    /// counts down again once the server is reachable.
    @Test func aWatchedStatusLineMarksALostConnectionAndComesBack() async throws {
        let server = try await ServerProcess.start()
        defer { server.stop() }
        let proxy = try TCPProxy(to: server.port)
        defer { proxy.stop() }
        let ada = try Member(url: server.url, room: "bar", name: "Ada")
        try await ada.waitFor("welcome") { if case .welcome = $0 { true } else { false } }
        ada.session.send(.start, ref: .string("s"))
        try await ada.waitFor("ok start") { if case .ok("start", _, _) = $0 { true } else { false } }

        let watch = try ProcessLauncher.start(ProcessLauncher.pomo,
                                              ["watch", "bar", "--format", "%i %r %s", "--timeout", "2",
                                               "--server", "ws://127.0.0.1:\(proxy.port)"])
        defer { if watch.isRunning { watch.terminate() } }
        let first = try await watch.line()
        #expect(first.hasPrefix("▶ ") && first.hasSuffix(" running"), "\(first)")
        proxy.cut()
        // The outage shows at once: at most a second already on its way comes before it.
        var line = try await watch.line()
        if line.hasSuffix(" running") { line = try await watch.line() }
        #expect(line == "↻ --:-- offline")
        proxy.heal()
        line = try await watch.line(timeout: Double(TestTime.seconds(15)))
        #expect(line.hasPrefix("▶ ") && line.hasSuffix(" running"), "\(line)")
        watch.terminate()
        #expect(try await watch.ended().status == 0)
        await ada.stop()
    }
}

extension ServerMessage {
    /// The room a `welcome`, `state` or `observing` shows.
    var snapshotShown: SnapshotPayload? {
        switch self {
        case .welcome(_, let room, _, _, _), .state(let room), .observing(let room, _, _): room
        default: nil
        }
    }
}
