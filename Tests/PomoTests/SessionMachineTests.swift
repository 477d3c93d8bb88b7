import PomodoroClient
import PomodoroProtocol
import Testing

/// Join, resume, keepalive, reconnect with backoff, and the ends of a session, on a manual clock.
@Suite struct SessionMachineTests {
    typealias Action = SessionMachine.Action

    static let noJitter = ReconnectPolicy(initialDelayMs: 500, maxDelayMs: 8000, jitter: 0)

    func joined(token: String? = nil, reconnect: ReconnectPolicy? = noJitter) -> SessionMachine {
        var machine = SessionMachine(configuration: SessionConfiguration(room: "team", name: "Ada", token: token,
                                                                         reconnect: reconnect))
        _ = machine.start(now: Fixture.local(0))
        _ = machine.opened(now: Fixture.local(10))
        _ = machine.received(Fixture.welcome(Fixture.snapshot()), raw: [], now: Fixture.local(20))
        return machine
    }

    @Test func connectsThenJoinsWithTheStoredToken() {
        var machine = SessionMachine(configuration: SessionConfiguration(room: "team", name: "Ada", token: "t0"))
        #expect(machine.start(now: Fixture.local(0)) == [.emit(.connecting(attempt: 1)), .connect])
        #expect(machine.opened(now: Fixture.local(5))
                == [.send(ClientFrame(.join(room: "team", name: "Ada", token: "t0"), ref: .string("join")))])
        // Requests wait for the welcome: before it they are dropped.
        #expect(machine.send(ClientFrame(.start)) == [])
        let welcome = Fixture.welcome(Fixture.snapshot())
        #expect(machine.received(welcome, raw: [1], now: Fixture.local(9))
                == [.emit(.message(welcome, raw: [1], receivedAt: Fixture.local(9)))])
        #expect(machine.isJoined)
        #expect(machine.token == "0123456789abcdef0123456789abcdef")
        #expect(machine.send(ClientFrame(.start, ref: .number(1))) == [.send(ClientFrame(.start, ref: .number(1)))])
    }

    @Test func aDropReconnectsWithBackoffAndResumesWithTheNewToken() {
        var machine = joined(token: "old")
        var actions = machine.closed(code: 1006, reason: "", now: Fixture.local(1000))
        #expect(actions == [.emit(.reconnecting(attempt: 1, retryAt: Fixture.local(1500),
                                                reason: "the connection closed (1006)"))])
        #expect(machine.nextDeadline == 1500)
        #expect(machine.timer(now: Fixture.local(1499)) == [])
        #expect(machine.timer(now: Fixture.local(1500)) == [.emit(.connecting(attempt: 1)), .connect])
        // The server is still down: each failure waits twice as long, up to the cap.
        var delays: [Int64] = []
        var now: Int64 = 1500
        for _ in 0..<6 {
            actions = machine.failed("Unable to connect", now: Fixture.local(now))
            guard case let .emit(.reconnecting(_, retryAt, _))? = actions.first else {
                Issue.record("expected a reconnection, got \(actions)")
                return
            }
            delays.append(retryAt.monotonicMs - now)
            now = retryAt.monotonicMs
            _ = machine.timer(now: Fixture.local(now))
        }
        #expect(delays == [1000, 2000, 4000, 8000, 8000, 8000])
        // Back at last: the join carries the token from the last welcome, not the one we started with.
        #expect(machine.opened(now: Fixture.local(now + 5))
                == [.send(ClientFrame(.join(room: "team", name: "Ada", token: "0123456789abcdef0123456789abcdef"),
                                      ref: .string("join")))])
    }

    @Test func replacedEndsTheSessionWithoutReconnecting() {
        var machine = joined()
        let replaced = ServerMessage.error(code: .replaced, message: "taken over", field: nil, ref: nil)
        _ = machine.received(replaced, raw: [], now: Fixture.local(100))
        #expect(machine.closed(code: 4001, reason: "", now: Fixture.local(101)) == [.emit(.ended(.replaced))])
        #expect(machine.isEnded)
        #expect(machine.nextDeadline == nil)
    }

    /// Issue 27, finding 3: a watch whose access a new lock ended (4003) is not tried again with the same
    /// passcode, which would only count as a wrong one.
    @Test func aWatchTheRoomsNewLockEndedIsNotRetried() {
        var machine = SessionMachine(configuration: {
            var configuration = SessionConfiguration(room: "team", name: "", passcode: "old soup", reconnect: Self.noJitter)
            configuration.observe = true
            return configuration
        }())
        _ = machine.start(now: Fixture.local(0))
        _ = machine.opened(now: Fixture.local(1))
        _ = machine.received(.observing(room: Fixture.snapshot(), serverTime: 0, ref: .string("join")), raw: [],
                             now: Fixture.local(2))
        let why = "the room's lock changed: watch it again with its passcode or a member's token"
        _ = machine.received(.error(code: .badPasscode, message: why, field: "passcode", ref: nil), raw: [],
                             now: Fixture.local(100))
        #expect(machine.closed(code: 4003, reason: "access ended", now: Fixture.local(101))
                == [.emit(.ended(.refused(code: .badPasscode, message: why)))])
        // The close code alone says it too.
        var quiet = SessionMachine(configuration: machine.configuration)
        _ = quiet.start(now: Fixture.local(0))
        _ = quiet.opened(now: Fixture.local(1))
        _ = quiet.received(.observing(room: Fixture.snapshot(), serverTime: 0, ref: nil), raw: [], now: Fixture.local(2))
        #expect(quiet.closed(code: 4003, reason: "", now: Fixture.local(3)).first
                == .emit(.ended(.refused(code: .badPasscode, message: "the room's lock changed: watch it again with its passcode"))))
    }

    @Test func aServerThatIsDownIsReportedNotRetried() {
        var machine = SessionMachine(configuration: SessionConfiguration(room: "team", name: "Ada"))
        _ = machine.start(now: Fixture.local(0))
        #expect(machine.failed("Unable to connect", now: Fixture.local(3))
                == [.emit(.ended(.unreachable("Unable to connect")))])
    }

    @Test func aProxyWhoseServerIsAwayIsRetriedFromTheFirstTryAndAfterAJoinButNotWithoutAPolicy() {
        let why = "the server or its proxy is unavailable just now (502)"
        var first = SessionMachine(configuration: SessionConfiguration(room: "team", name: "Ada", reconnect: Self.noJitter))
        _ = first.start(now: Fixture.local(0))
        #expect(first.failed(why, passing: true, now: Fixture.local(3))
                == [.emit(.reconnecting(attempt: 2, retryAt: Fixture.local(1003), reason: why))])
        #expect(first.timer(now: Fixture.local(1003)) == [.emit(.connecting(attempt: 2)), .connect])
        #expect(first.opened(now: Fixture.local(1010))
                == [.send(ClientFrame(.join(room: "team", name: "Ada", token: nil), ref: .string("join")))])

        var joined = joined()
        _ = joined.closed(code: 1006, reason: "", now: Fixture.local(100))
        _ = joined.timer(now: Fixture.local(600))
        #expect(joined.failed(why, passing: true, now: Fixture.local(610))
                == [.emit(.reconnecting(attempt: 2, retryAt: Fixture.local(1610), reason: why))])

        // A one-shot command (no policy) says so and ends.
        var once = SessionMachine(configuration: SessionConfiguration(room: "team", name: "Ada", reconnect: nil))
        _ = once.start(now: Fixture.local(0))
        #expect(once.failed(why, passing: true, now: Fixture.local(3)) == [.emit(.ended(.unreachable(why)))])
    }

    @Test func aRefusedJoinEndsTheSession() {
        var machine = SessionMachine(configuration: SessionConfiguration(room: "team", name: "Ada"))
        _ = machine.start(now: Fixture.local(0))
        _ = machine.opened(now: Fixture.local(1))
        let refusal = ServerMessage.error(code: .roomFull, message: "the room is full", field: nil, ref: .string("join"))
        let actions = machine.received(refusal, raw: [], now: Fixture.local(2))
        #expect(actions == [.emit(.message(refusal, raw: [], receivedAt: Fixture.local(2))), .close(code: 1000),
                            .emit(.ended(.refused(code: .roomFull, message: "the room is full")))])
    }

    @Test func aRemovalAndABanSayTheWaitFromRetryAfterNotFromTheMessage() {
        var removed = joined()
        _ = removed.received(.error(code: .removed, message: "entfernt", field: nil, ref: nil, retryAfter: 600), raw: [],
                             now: Fixture.local(100))
        let end = SessionEnd.refused(code: .removed, message: "entfernt", retryAfter: 600)
        #expect(removed.closed(code: 4002, reason: "removed by the host", now: Fixture.local(101)) == [.emit(.ended(end))])
        #expect(end.rejoinWait == "you may join again in 10 minutes")

        var banned = SessionMachine(configuration: SessionConfiguration(room: "team", name: "Ada"))
        _ = banned.start(now: Fixture.local(0))
        _ = banned.opened(now: Fixture.local(1))
        let refusal = ServerMessage.error(code: .banned, message: "später", field: nil, ref: .string("join"), retryAfter: 61)
        #expect(banned.received(refusal, raw: [], now: Fixture.local(2)).last
                == .emit(.ended(.refused(code: .banned, message: "später", retryAfter: 61))))
        #expect(SessionEnd.refused(code: .banned, message: "", retryAfter: 61).rejoinWait == "you may join again in 2 minutes")
        #expect(SessionEnd.refused(code: .banned, message: "", retryAfter: 60).rejoinWait == "you may join again in 1 minute")
        // Without the field (an older server), or for another refusal: nothing is guessed.
        #expect(SessionEnd.refused(code: .banned, message: "in 9 minutes").rejoinWait == nil)
        #expect(SessionEnd.refused(code: .roomFull, message: "", retryAfter: 60).rejoinWait == nil)
    }

    @Test func aQuietConnectionIsPingedAndASilentOneIsDropped() {
        var machine = joined()
        // Welcome at 20: a ping is due 15 s later, death 40 s later.
        #expect(machine.nextDeadline == 15_020)
        #expect(machine.timer(now: Fixture.local(15_020)) == [.send(ClientFrame(.ping, ref: .string("keepalive")))])
        #expect(machine.nextDeadline == 40_020)
        // The pong renews it.
        _ = machine.received(.pong(serverTime: 1, ref: .string("keepalive")), raw: [], now: Fixture.local(15_030))
        #expect(machine.nextDeadline == 30_030)
        _ = machine.timer(now: Fixture.local(30_030))
        let actions = machine.timer(now: Fixture.local(55_030))
        #expect(actions == [.close(code: 4000),  // given up for lost, not closed on purpose
                            .emit(.reconnecting(attempt: 1, retryAt: Fixture.local(55_530),
                                                reason: "the server stopped answering"))])
    }

    @Test func aConnectionThatNeverOpensTimesOut() {
        var machine = joined()
        _ = machine.closed(code: nil, reason: "", now: Fixture.local(100))
        _ = machine.timer(now: Fixture.local(600))  // connecting again
        #expect(machine.nextDeadline == 10_600)
        let actions = machine.timer(now: Fixture.local(10_600))
        #expect(actions == [.close(code: 4000),
                            .emit(.reconnecting(attempt: 2, retryAt: Fixture.local(11_600),
                                                reason: "no answer from the server"))])
    }

    @Test func aRestartCloseComesBackAtOnceWithinTheJitteredWindowNotTheBackoff() {
        // A long back-off (8 s from the first retry) that 1012 must not wait for.
        let slow = ReconnectPolicy(initialDelayMs: 8000, maxDelayMs: 30_000, jitter: 0, restartWindowMs: 1000)
        var delays: Set<Int64> = []
        for seed in UInt64(1)...40 {
            var machine = SessionMachine(configuration: SessionConfiguration(room: "team", name: "Ada", reconnect: slow),
                                         seed: seed)
            _ = machine.start(now: Fixture.local(0))
            _ = machine.opened(now: Fixture.local(10))
            _ = machine.received(Fixture.welcome(Fixture.snapshot()), raw: [], now: Fixture.local(20))
            let actions = machine.closed(code: 1012, reason: "service restart", now: Fixture.local(1000))
            guard case let .emit(.reconnecting(attempt, retryAt, reason))? = actions.first, actions.count == 1 else {
                Issue.record("expected a reconnection, got \(actions)")
                return
            }
            #expect(attempt == 1 && reason == "the server is restarting")
            let delay = retryAt.monotonicMs - 1000
            #expect((0..<1000).contains(delay), "within the restart window: \(delay) ms")
            delays.insert(delay)
            // It comes back with the member's token: the same member, wherever the proxy sends it.
            #expect(machine.timer(now: retryAt) == [.emit(.connecting(attempt: 1)), .connect])
            #expect(machine.opened(now: retryAt.advanced(by: 5))
                    == [.send(ClientFrame(.join(room: "team", name: "Ada", token: "0123456789abcdef0123456789abcdef"),
                                          ref: .string("join")))])
        }
        // Spread over the window, not all at one moment.
        #expect(delays.count > 30 && delays.min()! < 250 && delays.max()! > 750, "\(delays.sorted())")
    }

    @Test func aRestartCloseWhileStillJoiningComesBackToo() {
        var machine = SessionMachine(configuration: SessionConfiguration(room: "team", name: "Ada", reconnect: Self.noJitter))
        _ = machine.start(now: Fixture.local(0))
        _ = machine.opened(now: Fixture.local(10))
        // A draining node closes a join it will not serve: that is no unreachable server.
        guard case .emit(.reconnecting(1, _, _))? = machine.closed(code: 1012, reason: "", now: Fixture.local(20)).first else {
            Issue.record("a 1012 before the welcome ended the session: \(machine.state)")
            return
        }
        var ending = joined(reconnect: nil)
        #expect(ending.closed(code: 1012, reason: "", now: Fixture.local(50)) == [.emit(.ended(.lost("the server is restarting")))])
    }

    @Test func withoutAReconnectPolicyADropEndsTheSession() {
        var machine = joined(reconnect: nil)
        #expect(machine.closed(code: 1001, reason: "", now: Fixture.local(50))
                == [.emit(.ended(.lost("the server is shutting down")))])
    }

    @Test func stopClosesPolitelyAndEndsOnTheClose() {
        var machine = joined()
        #expect(machine.stop(now: Fixture.local(100)) == [.close(code: 1000)])
        // Messages still arriving while closing (the leave's ok) are passed on.
        let ok = ServerMessage.ok(command: "leave", appliesFrom: nil, ref: nil)
        #expect(machine.received(ok, raw: [], now: Fixture.local(101)).count == 1)
        #expect(machine.closed(code: 1000, reason: "", now: Fixture.local(102)) == [.emit(.ended(.stopped))])

        // A server that never closes back: the session ends anyway after the close timeout.
        var stubborn = joined()
        _ = stubborn.stop(now: Fixture.local(100))
        #expect(stubborn.timer(now: Fixture.local(1100)) == [.emit(.ended(.stopped))])

        // Stopping while waiting to reconnect ends at once.
        var waiting = joined()
        _ = waiting.failed("gone", now: Fixture.local(100))
        #expect(waiting.stop(now: Fixture.local(101)) == [.emit(.ended(.stopped))])
    }

    @Test func backoffJitterStaysWithinItsSpread() {
        let policy = ReconnectPolicy(initialDelayMs: 1000, maxDelayMs: 30_000, jitter: 0.2)
        #expect(policy.delayMs(attempt: 1, unit: 0) == 800)
        #expect(policy.delayMs(attempt: 1, unit: 0.5) == 1000)
        #expect(policy.delayMs(attempt: 3, unit: 0.999_999) == 4800)
        #expect(policy.delayMs(attempt: 40, unit: 0.5) == 30_000)
    }
}
