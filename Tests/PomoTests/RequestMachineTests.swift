import PomodoroClient
import PomodoroCore
import PomodoroProtocol
import Testing

/// The one-shot request (`pomo stats`) on a manual clock: connect, send, the reply by its ref, close.
@Suite struct RequestMachineTests {
    let frame = ClientFrame(.stats(room: "team-alpha", days: 14, tz: "UTC", passcode: nil), ref: .string("stats"))
    let report = StatsReportPayload(room: "team-alpha", tz: "UTC", today: "2026-01-01", days: 1, totals: .zero,
                                    perDay: [DayTotalsPayload(date: "2026-01-01", focusSessions: 0, focusSeconds: 0,
                                                              interruptions: 0)],
                                    members: [])

    func opened() -> RequestMachine {
        var machine = RequestMachine(frame: frame, timeoutMs: 5_000, closeTimeoutMs: 1_000)
        #expect(machine.start(now: Fixture.local(0)) == [.connect])
        #expect(machine.opened(now: Fixture.local(10)) == [.send(frame)])
        return machine
    }

    @Test func theReplyWithTheRequestsRefEndsItAfterAPoliteClose() {
        var machine = opened()
        // Broadcasts and replies to other refs are not the answer.
        #expect(machine.received(.pong(serverTime: 1, ref: .string("other")), raw: [], now: Fixture.local(20)) == [])
        #expect(machine.received(.stats(report, ref: nil), raw: [], now: Fixture.local(20)) == [])
        #expect(machine.received(.state(Fixture.snapshot()), raw: [], now: Fixture.local(20)) == [])
        let reply = ServerMessage.stats(report, ref: .string("stats"))
        #expect(machine.received(reply, raw: [1], now: Fixture.local(30)) == [.close(code: 1000)])
        #expect(!machine.isDone)
        #expect(machine.closed("closed", now: Fixture.local(40)) == [.finish(.reply(reply, raw: [1]))])
        #expect(machine.isDone && machine.nextDeadline == nil)
    }

    @Test func aCloseThatNeverComesEndsItAfterTheCloseTimeout() {
        var machine = opened()
        let refusal = ServerMessage.error(code: .badPasscode, message: "m", field: "passcode", ref: .string("stats"))
        #expect(machine.received(refusal, raw: [], now: Fixture.local(30)) == [.close(code: 1000)])
        #expect(machine.nextDeadline == 1_030)
        #expect(machine.timer(now: Fixture.local(1_029)) == [])
        #expect(machine.timer(now: Fixture.local(1_030)) == [.finish(.reply(refusal, raw: []))])
    }

    @Test func anErrorWithoutRefAnswersTooBecauseTheServerCouldNotReadTheFrame() {
        var machine = opened()
        let error = ServerMessage.error(code: .shuttingDown, message: "bye", field: nil, ref: nil)
        #expect(machine.received(error, raw: [], now: Fixture.local(30)) == [.close(code: 1000)])
        #expect(machine.closed("closed", now: Fixture.local(31)) == [.finish(.reply(error, raw: []))])
    }

    @Test func failuresBeforeAndAfterOpeningAndTheTimeout() {
        var unreachable = RequestMachine(frame: frame, timeoutMs: 5_000)
        _ = unreachable.start(now: Fixture.local(0))
        #expect(unreachable.closed("nothing answered", now: Fixture.local(5)) == [.finish(.unreachable("nothing answered"))])

        var lost = opened()
        #expect(lost.closed("the connection closed (1001)", now: Fixture.local(50))
                == [.finish(.lost("the connection closed (1001)"))])

        var silent = opened()
        #expect(silent.nextDeadline == 5_000)
        #expect(silent.timer(now: Fixture.local(4_999)) == [])
        #expect(silent.timer(now: Fixture.local(5_000)) == [.close(code: 1000)])
        // A reply now comes too late.
        #expect(silent.received(.stats(report, ref: .string("stats")), raw: [], now: Fixture.local(5_001)) == [])
        #expect(silent.closed("closed", now: Fixture.local(5_002)) == [.finish(.timedOut)])
    }
}
