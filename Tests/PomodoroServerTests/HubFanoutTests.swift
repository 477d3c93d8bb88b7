@testable import PomodoroServer
import PomodoroCore
import PomodoroNet
import PomodoroProtocol
import PomodoroTestSupport
import Testing

/// A live room's broadcasts through the hub with no socket and no sleep: crowds throttled by the state
/// timer, broadcasts held until their commit lands, ticks from deadlines, and rooms expiring, all on a
/// manual clock whose timers fire when the test moves it.
@Suite struct HubFanoutTests {
    static func join(_ name: String) -> ClientMessage { .join(room: "team", name: name, token: nil) }

    static func states(_ messages: [ServerMessage]) -> [SnapshotPayload] {
        messages.compactMap { if case .state(let room) = $0 { room } else { nil } }
    }

    /// A hub whose rooms are crowds above two members.
    static func crowdHub() -> TestHub {
        var configuration = ServerConfiguration(port: 0, webRoot: nil)
        configuration.roomPolicy.memberListLimit = 2
        configuration.limits.membersPerAddressPerRoom = 0
        return TestHub(configuration: configuration)
    }

    @Test func aSmallRoomHearsOfEveryJoinAtOnce() throws {
        let t = Self.crowdHub()
        let first = t.connect()
        t.send(Self.join("M0"), from: first)
        t.transport.clearSent()
        t.send(Self.join("M1"), from: t.connect())
        // Not a crowd yet (two members): the join is announced and the state goes out at once.
        #expect(try t.messages(to: first).map(\.label) == ["event memberJoined", "state"])
    }

    @Test func aCrowdGetsOneMemberOnlyStateWhenTheStateTimerFires() throws {
        let t = Self.crowdHub()
        let first = t.connect()
        t.send(Self.join("M0"), from: first)
        t.send(Self.join("M1"), from: t.connect())
        t.transport.clearSent()

        // Four more join in the same instant: the room is a crowd, and a state went out a moment ago.
        for i in 2...5 { t.send(Self.join("M\(i)"), from: t.connect()) }
        #expect(try t.messages(to: first).isEmpty)
        #expect(t.transport.armedTimers == 1)   // the state timer

        t.pass(.seconds(1))
        let heard = try t.messages(to: first)
        #expect(heard.map(\.label) == ["state"])
        let state = try #require(heard.first?.snapshot)
        #expect(state.memberCount == 6)
        #expect(state.members.count == 2 && state.membersTruncated)
    }

    @Test func aJoinStormCostsAtMostOneStateASecond() throws {
        let t = Self.crowdHub()
        let first = t.connect()
        t.send(Self.join("M0"), from: first)
        for i in 1...2 { t.send(Self.join("M\(i)"), from: t.connect()) }
        t.transport.clearSent()

        // One join every 200 ms for three seconds.
        for i in 3..<18 {
            t.pass(.milliseconds(200))
            t.send(Self.join("M\(i)"), from: t.connect())
        }
        t.pass(.seconds(1))
        let states = Self.states(try t.messages(to: first))
        #expect((3...4).contains(states.count))
        for (earlier, later) in zip(states, states.dropFirst()) {
            #expect(later.serverTime - earlier.serverTime >= 1000)
        }
        #expect(states.last?.memberCount == 18)
    }

    @Test func broadcastsWaitForTheirCommitAndGoOutInOrder() throws {
        let t = TestHub(store: try HeldStore())
        let a = t.connect(peer: "203.0.113.1"), b = t.connect(peer: "203.0.113.2")
        t.send(Self.join("Ada"), ref: "j", from: a)
        t.send(Self.join("Bo"), ref: "j", from: b)
        t.settle()
        t.transport.clearSent()

        t.send(.task(text: "write the report"), ref: "t", from: a)
        t.send(.start, ref: "s", from: a)
        #expect(t.store!.pendingCommits == 2)
        // Replies go at once; what the room broadcasts waits for the store.
        #expect(try t.messages(to: a).map(\.label) == ["ok task", "ok start"])
        #expect(try t.messages(to: b).isEmpty)

        // One commit landing is not enough: the room still has changes in flight.
        t.store!.releaseCommits(1)
        t.transport.runPosted()
        #expect(try t.messages(to: b).isEmpty)

        t.store!.releaseCommits()
        t.transport.runPosted()
        let heard = try t.messages(to: b)
        // In the order the changes were made: the task, then the start and its announcement.
        #expect(heard.map(\.label) == ["state", "event control", "state"])
        let states = Self.states(heard)
        #expect(states.first?.members.first?.task == "write the report" && states.first?.running == false)
        #expect(states.last?.running == true)
    }

    @Test func aTickDueWhileTheRoomsCommitIsHeldGoesOutAtOnce() throws {
        let t = TestHub(store: try HeldStore())
        let a = t.connect(peer: "203.0.113.1"), b = t.connect(peer: "203.0.113.2")
        t.send(Self.join("Ada"), from: a)
        t.send(Self.join("Bo"), from: b)
        t.send(.start, from: a)
        t.settle()
        t.transport.clearSent()

        // A change the members must not hear of before it is durable: its commit is held.
        t.send(.task(text: "write the report"), from: a)
        #expect(t.store!.pendingCommits == 1)
        t.pass(.seconds(1), commits: false)
        // The tick due meanwhile is not a change: it goes out at its moment, the task's state still waits.
        let ticks = try t.messages(to: b).compactMap(\.tick)
        #expect(try t.messages(to: b).map(\.label) == ["tick"])
        #expect(ticks.map(\.remainingMs) == [1_499_000])
        #expect(t.store!.pendingCommits == 1)

        t.store!.releaseCommits()
        t.transport.runPosted()
        #expect(try t.messages(to: b).map(\.label) == ["tick", "state"])
        #expect(Self.states(try t.messages(to: b)).first?.members.first?.task == "write the report")
    }

    @Test func aTickThatWouldAnnounceAHeldChangeOfTheTimerWaitsForItsCommit() throws {
        let t = TestHub(store: try HeldStore())
        let a = t.connect(peer: "203.0.113.1"), b = t.connect(peer: "203.0.113.2")
        t.send(Self.join("Ada"), from: a)
        t.send(Self.join("Bo"), from: b)
        t.send(.start, from: a)
        t.settle()
        t.transport.clearSent()

        // A minute more: the next tick carries the new end, which must be durable before anyone hears of it.
        t.send(.extend(seconds: 60), from: a)
        t.pass(.seconds(1), commits: false)
        #expect(try t.messages(to: b).isEmpty)

        t.store!.releaseCommits()
        t.transport.runPosted()
        let heard = try t.messages(to: b)
        #expect(heard.map(\.label) == ["event control", "state", "tick"])
        #expect(heard.compactMap(\.tick).map(\.remainingMs) == [1_559_000])
        // Once announced, the room's ticks pass what a later commit holds again.
        t.send(.task(text: "write the report"), from: a)
        t.transport.clearSent()
        t.pass(.seconds(1), commits: false)
        #expect(try t.messages(to: b).map(\.label) == ["tick"])
    }

    /// A focus completed in one room holds that room's announcements until their commit; another room's ticks go out at their moments meanwhile, and the hold is measured
    /// (`pomodoro_store_commit_seconds`, from the hand-off to the commit back on the service thread).
    @Test func aCompletedFocusHeldForItsCommitHoldsBackNoOtherRoomsTick() throws {
        var configuration = ServerConfiguration(port: 0, webRoot: nil)
        configuration.metricsEnabled = true
        let t = TestHub(configuration: configuration, store: try HeldStore())
        let a = t.connect(peer: "203.0.113.1"), b = t.connect(peer: "203.0.113.2")
        t.send(Self.join("Ada"), from: a)
        t.send(.start, from: a)
        t.settle()
        // The other room runs 2.5 s behind: its seconds fall half way between the first room's.
        t.pass(.milliseconds(2_500))
        t.send(.join(room: "other", name: "Bo", token: nil), from: b)
        t.send(.start, from: b)
        t.settle()
        t.pass(.milliseconds(1_497_400))   // 0.1 s before the first room's focus ends
        t.transport.clearSent()

        t.pass(.seconds(2), commits: false)
        // The other room's two seconds, at their moments; nothing yet of the completed focus.
        #expect(try t.messages(to: b).compactMap(\.tick).map(\.remainingMs) == [2_000, 1_000])
        #expect(try t.messages(to: a).isEmpty)
        #expect(t.store!.pendingCommits >= 1)

        t.store!.releaseCommits()
        t.transport.runPosted()
        let heard = try t.messages(to: a).map(\.label)
        #expect(heard == ["event phaseCompleted", "state"])

        let response = RecordedResponse()
        t.hub.receivedHTTP(HTTPRequest(method: .get, path: "/metrics", peer: "127.0.0.1"), responder: response)
        let text = String(decoding: try #require(response.response).body, as: UTF8.self)
        let sum = text.split(separator: "\n").first { $0.hasPrefix("pomodoro_store_commit_seconds_sum") }
            .flatMap { $0.split(separator: " ").last }.flatMap { Double($0) }
        // The completed focus's commit was held from its end to the release: 1.9 s of the manual clock.
        #expect((sum ?? 0) >= 1.9, "\(String(describing: sum))")
    }

    @Test func ticksGoOutOncePerSecondFromTheDeadline() throws {
        let t = TestHub()
        let a = t.connect()
        t.send(Self.join("Ada"), from: a)
        t.send(.start, from: a)
        t.transport.clearSent()
        t.pass(.milliseconds(5500))
        let ticks = try t.messages(to: a).compactMap(\.tick)
        #expect(ticks.map(\.remainingMs) == [1_499_000, 1_498_000, 1_497_000, 1_496_000, 1_495_000])
        #expect(ticks.allSatisfy { $0.phase == .focus })
    }

    @Test func aTickThatTakesLongToWriteDoesNotMakeTheNextOneLate() throws {
        let t = TestHub()
        let members = (0..<40).map { t.connect(peer: "203.0.113.\($0 + 1)") }
        for (i, member) in members.enumerated() { t.send(Self.join("M\(i)"), from: member) }
        t.send(.start, from: members[0])
        let started = t.clock.now().monotonic
        t.transport.clearSent()
        // Each frame takes 2 ms to write: every tick's pass over the 40 members ends 80 ms after it began.
        t.transport.sendTakes = .milliseconds(2)
        t.pass(.milliseconds(1500))
        // The room's timer is armed for the next second itself, not for a second after the pass began.
        #expect(t.transport.nextDeadline == started + .seconds(2))
        t.pass(.seconds(3))
        #expect(t.transport.nextDeadline == started + .seconds(5))
        let ticks = try t.messages(to: members[39]).compactMap(\.tick)
        #expect(ticks.map(\.remainingMs) == [1_499_000, 1_498_000, 1_497_000, 1_496_000])
    }

    @Test func anEmptyRoomExpiresAfterItsLifetime() throws {
        var configuration = ServerConfiguration(port: 0, webRoot: nil)
        configuration.roomPolicy.emptyRoomLifetime = .seconds(600)
        let t = TestHub(configuration: configuration)
        let a = t.connect()
        t.send(Self.join("Ada"), from: a)
        t.send(.leave, from: a)
        t.pass(.seconds(599))
        #expect(t.hub.roomCount == 1)
        t.pass(.seconds(1))
        #expect(t.hub.roomCount == 0)
        #expect(t.transport.armedTimers == 0)
        // Joined again, it is a new room.
        t.send(Self.join("Bo"), from: a)
        #expect(try t.messages(to: a).last { $0.snapshot != nil }?.snapshot?.members.map(\.name) == ["Bo"])
    }

    @Test func aRoomNobodyIsConnectedToExpiresThoughItsMembersAreWithinTheirGrace() throws {
        var configuration = ServerConfiguration(port: 0, webRoot: nil)
        configuration.roomPolicy.reconnectGrace = .seconds(900)
        configuration.roomPolicy.silentGrace = .seconds(900)
        configuration.roomPolicy.emptyRoomLifetime = .seconds(600)
        let t = TestHub(configuration: configuration)
        let a = t.connect(), b = t.connect()
        t.send(Self.join("Ada"), from: a)
        t.send(Self.join("Bo"), from: b)
        t.pass(.seconds(30))
        t.disconnect(a)
        t.pass(.seconds(300))
        // Bo is still connected: the room stays, however long.
        #expect(t.hub.roomCount == 1)
        t.disconnect(b)
        t.pass(.seconds(599))
        #expect(t.hub.roomCount == 1)
        t.pass(.seconds(1))
        #expect(t.hub.roomCount == 0)
    }

    @Test func aNewMemberWhoSaysNothingAndDropsGetsTheShortGrace() throws {
        var configuration = ServerConfiguration(port: 0, webRoot: nil)
        configuration.roomPolicy.silentGrace = .seconds(10)
        configuration.roomPolicy.reconnectGrace = .seconds(120)
        let t = TestHub(configuration: configuration)
        let host = t.connect(), silent = t.connect(), talker = t.connect()
        t.send(Self.join("Ada"), from: host)
        t.send(Self.join("Silent"), from: silent)
        t.send(Self.join("Talker"), from: talker)
        t.send(.task(text: "here"), from: talker)
        t.disconnect(silent)
        t.disconnect(talker)
        t.transport.clearSent()

        t.pass(.seconds(11))
        let left = try t.messages(to: host).compactMap { message -> String? in
            if case .event(_, .memberLeft(let member, _), _) = message { member } else { nil }
        }
        #expect(left.count == 1)
        #expect(Self.states(try t.messages(to: host)).last?.members.map(\.name) == ["Ada", "Talker"])

        t.pass(.seconds(110))
        #expect(Self.states(try t.messages(to: host)).last?.members.map(\.name) == ["Ada"])
    }
}
