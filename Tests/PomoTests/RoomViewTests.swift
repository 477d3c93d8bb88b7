import PomodoroClient
import PomodoroCore
import PomodoroProtocol
import Testing

/// The countdown math: seq ordering, the server clock estimate, and remaining time at any local moment.
@Suite struct RoomViewTests {
    @Test func theCountdownFollowsEndsAtCorrectedByTheServerClock() {
        var view = RoomView()
        // The server's clock reads 10 s ahead of where the local wall clock would put it; the message took 0 ms.
        let start = Fixture.serverEpoch + 10_000
        view.apply(Fixture.welcome(Fixture.runningFocus(startedAt: start, at: start)), receivedAt: Fixture.local(0))
        #expect(view.remainingMs(at: Fixture.local(0)) == 1_500_000)
        #expect(view.displaySeconds(at: Fixture.local(0)) == 1500)
        // 24.3 s later the display reads 24:36 (rounded up), and changes exactly on the boundaries.
        #expect(view.remainingMs(at: Fixture.local(24_300)) == 1_475_700)
        #expect(view.displaySeconds(at: Fixture.local(24_300)) == 1476)
        #expect(view.displaySeconds(at: Fixture.local(25_000)) == 1475)
        #expect(view.displaySeconds(at: Fixture.local(24_999)) == 1476)
        #expect(view.msUntilNextSecond(at: Fixture.local(24_300)) == 700)
        #expect(view.progress(at: Fixture.local(750_000)) == 0.5)
        // Past the end it reads zero, never negative.
        #expect(view.remainingMs(at: Fixture.local(2_000_000)) == 0)
        #expect(view.msUntilNextSecond(at: Fixture.local(2_000_000)) == nil)
    }

    @Test func slowMessagesNeverPushTheCountdownBackUp() {
        var view = RoomView()
        let start = Fixture.serverEpoch
        view.apply(Fixture.welcome(Fixture.runningFocus(startedAt: start, at: start)), receivedAt: Fixture.local(0))
        var shown: [Int64] = []
        // Ticks arrive every second, each late by a different amount (0–400 ms) on the network.
        let delays: [Int64] = [0, 400, 30, 250, 0, 399, 120]
        for (i, delay) in delays.enumerated() {
            let boundary = Int64(i + 1) * 1000
            let arrival = Fixture.local(boundary + delay)
            view.apply(Fixture.tick(remainingMs: 1_500_000 - boundary, endsAt: start + 1_500_000, seq: 5),
                       receivedAt: arrival)
            // Sample the display every 50 ms until the next tick.
            for t in stride(from: arrival.monotonicMs, to: boundary + 1000, by: 50) {
                shown.append(view.displaySeconds(at: Fixture.local(t)))
            }
        }
        #expect(shown == shown.sorted(by: >), "the displayed seconds never go up")
        // The fastest message set the offset: the display is exact, not 400 ms behind.
        #expect(view.displaySeconds(at: Fixture.local(3_500)) == 1497)
    }

    @Test func aSteppedServerClockIsFollowed() {
        var clock = ServerClockEstimate()
        clock.sample(serverTime: 10_000, receivedAt: Fixture.local(0))
        clock.sample(serverTime: 10_900, receivedAt: Fixture.local(1000))  // 100 ms slower: keep the estimate
        #expect(clock.offsetMs == 10_000)
        clock.sample(serverTime: 12_050, receivedAt: Fixture.local(2000))  // faster: take it
        #expect(clock.offsetMs == 10_050)
        clock.sample(serverTime: 5_000, receivedAt: Fixture.local(3000))   // 7 s back: the clock was stepped
        #expect(clock.offsetMs == 2_000)
        #expect(clock.serverTime(at: Fixture.local(4000)) == 6_000)
    }

    @Test func staleStatesAndTicksAreIgnored() {
        var view = RoomView()
        let start = Fixture.serverEpoch
        view.apply(Fixture.welcome(Fixture.runningFocus(startedAt: start, at: start, seq: 7)), receivedAt: Fixture.local(0))
        // An older state (seq 6) arriving late changes nothing.
        let old = Fixture.snapshot(phase: .focus, status: .paused, remainingMs: 100_000, phaseLengthMs: 1_500_000, seq: 6)
        #expect(view.apply(.state(old), receivedAt: Fixture.local(10)) == .stale)
        #expect(view.status == .running)
        // A paused state at seq 8 applies; a tick of the old run (seq 7) is then stale.
        let paused = Fixture.snapshot(phase: .focus, status: .paused, remainingMs: 1_495_000, phaseLengthMs: 1_500_000,
                                      seq: 8, serverTime: start + 5000)
        #expect(view.apply(.state(paused), receivedAt: Fixture.local(5000)) == .applied)
        #expect(view.apply(Fixture.tick(remainingMs: 1_494_000, endsAt: start + 1_500_000, seq: 7),
                           receivedAt: Fixture.local(6000)) == .stale)
        #expect(view.status == .paused)
        // Paused: the snapshot's remaining time stands still, whatever the clock says.
        #expect(view.remainingMs(at: Fixture.local(60_000)) == 1_495_000)
        #expect(view.displaySeconds(at: Fixture.local(60_000)) == 1495)
        #expect(view.msUntilNextSecond(at: Fixture.local(60_000)) == nil)
    }

    @Test func aTickMovesTheEndWhenTheStateIsLate() {
        var view = RoomView()
        let start = Fixture.serverEpoch
        view.apply(Fixture.welcome(Fixture.runningFocus(startedAt: start, at: start, seq: 5)), receivedAt: Fixture.local(0))
        // Someone extended by a minute (seq 6); the tick of seq 6 came before its state.
        view.apply(Fixture.tick(remainingMs: 1_559_000, endsAt: start + 1_560_000, seq: 6), receivedAt: Fixture.local(1000))
        #expect(view.remainingMs(at: Fixture.local(1000)) == 1_559_000)
        #expect(view.seq == 5)
        // A tick for another room is never applied.
        #expect(view.apply(Fixture.tick(remainingMs: 1000, endsAt: start + 2000, seq: 9, room: "other"),
                           receivedAt: Fixture.local(1000)) == .stale)
    }

    @Test func idleAndReadyShowTheSnapshot() {
        var view = RoomView()
        view.apply(Fixture.welcome(Fixture.snapshot()), receivedAt: Fixture.local(0))
        #expect(view.remainingMs(at: Fixture.local(99_000)) == 0)
        #expect(view.progress(at: Fixture.local(99_000)) == 0)
        let ready = Fixture.snapshot(phase: .shortBreak, status: .ready, remainingMs: 300_000, phaseLengthMs: 300_000, seq: 3)
        view.apply(.state(ready), receivedAt: Fixture.local(1000))
        #expect(view.displaySeconds(at: Fixture.local(50_000)) == 300)
        #expect(view.me?.name == "Ada")
        #expect(view.iAmAway == false)
    }

    @Test func aNewWelcomeStartsOverEvenWithALowerSeq() {
        // After a server restart the room is new and seq starts again: the welcome is always taken.
        var view = RoomView()
        view.apply(Fixture.welcome(Fixture.snapshot(seq: 90)), receivedAt: Fixture.local(0))
        view.apply(Fixture.welcome(Fixture.snapshot(cycle: 1, seq: 2), id: "m4"), receivedAt: Fixture.local(10))
        #expect(view.seq == 2)
        #expect(view.myID == "m4")
    }
}

/// A big room lists its first members only: the member it leaves out knows themselves from `you`.
@Suite struct UnlistedMeTests {
    static let bigRoom = Fixture.snapshot(members: [Fixture.member("m1", "Ada"), Fixture.member("m2", "Bo")])

    @Test func aMemberTheListLeavesOutIsWhatTheirYouSays() {
        var view = RoomView()
        view.apply(Fixture.welcome(Self.bigRoom, id: "m150"), receivedAt: Fixture.local(0))
        #expect(view.me == nil)
        let me = Fixture.member("m150", "Cy", present: false, task: "write the report", done: 2)
        #expect(view.apply(.you(room: "team-alpha", member: me), receivedAt: Fixture.local(10)) == .applied)
        #expect(view.me == me && view.iAmAway)
        #expect(view.others.map(\.id) == ["m1", "m2"])
        // A later state that still leaves me out keeps me; one that lists me is taken.
        view.apply(.state(Fixture.snapshot(members: Self.bigRoom.members, seq: 3)), receivedAt: Fixture.local(20))
        #expect(view.me?.task == "write the report")
        let listed = Fixture.member("m150", "Cy", task: "review")
        view.apply(.state(Fixture.snapshot(members: [Fixture.member("m1", "Ada"), listed], seq: 4)),
                   receivedAt: Fixture.local(30))
        #expect(view.me == listed && !view.iAmAway)
    }

    @Test func aYouForSomeoneElseOrAnotherRoomIsIgnored() {
        var view = RoomView()
        view.apply(Fixture.welcome(Self.bigRoom, id: "m150"), receivedAt: Fixture.local(0))
        #expect(view.apply(.you(room: "team-alpha", member: Fixture.member("m151", "Dee")), receivedAt: Fixture.local(1)) == .stale)
        #expect(view.apply(.you(room: "other", member: Fixture.member("m150", "Cy")), receivedAt: Fixture.local(2)) == .stale)
        #expect(view.me == nil)
        // A new welcome (a reconnection) forgets what the last `you` said until the next one.
        view.apply(.you(room: "team-alpha", member: Fixture.member("m150", "Cy", task: "x")), receivedAt: Fixture.local(3))
        view.apply(Fixture.welcome(Self.bigRoom, id: "m150", resumed: true), receivedAt: Fixture.local(4))
        #expect(view.me == nil)
    }

    @Test func theDashboardShowsTheTaskOfAnUnlistedMe() {
        var d = Fixture.dashboard(Self.bigRoom, id: "m150")
        _ = d.handle(.message(.you(room: "team-alpha", member: Fixture.member("m150", "Cy", present: false, task: "write")),
                              raw: [], receivedAt: Fixture.local(5)))
        #expect(d.room.me?.task == "write")
        #expect(d.awayRequestedOrShown)
    }
}
