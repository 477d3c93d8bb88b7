import PomodoroClient
import PomodoroCore
import PomodoroProtocol
import Testing

/// `pomo join --plain`'s sentences (SpokenLines): one per change of the timer, with the time left and the end
/// in words, the last minute said once, the countdown never repeated, in the reader's language.
@Suite struct SpokenLinesTests {
    /// Ten hours east of UTC, so the focus that starts at the fixtures' midnight UTC ends at 10:25 here.
    static let offset = 10 * 3600
    static let members = [Fixture.member("m1", "Ada"), Fixture.member("m2", "Lin")]

    static func message(_ message: ServerMessage, at ms: Int64) -> SessionEvent {
        .message(message, raw: [], receivedAt: Fixture.local(ms))
    }

    static func paused(leftMs: Int64, seq: UInt64) -> SnapshotPayload {
        Fixture.snapshot(phase: .focus, status: .paused, remainingMs: leftMs, phaseLengthMs: 1_500_000,
                         members: members, seq: seq)
    }

    @Test func aFocusIsSaidWhenItStartsPausesResumesAndAtItsLastMinute() {
        var lines = SpokenLines(roomName: "team-alpha", serverLabel: "ws://h:1", utcOffsetSeconds: Self.offset)
        #expect(lines.lines(for: Self.message(Fixture.welcome(Fixture.snapshot(members: Self.members)), at: 0))
                == ["Joined team-alpha as Ada (m1)", "The timer has not started, 2 people here"])
        // Lin starts: the event and the state say it once, with the length and the end.
        #expect(lines.lines(for: Self.message(.event(room: "team-alpha", .control(action: .start, by: "m2", seconds: nil),
                                                     serverTime: Fixture.serverEpoch), at: 0)) == [])
        #expect(lines.lines(for: Self.message(.state(Fixture.runningFocus(at: Fixture.serverEpoch, members: Self.members)),
                                              at: 0)) == ["Focus started, 25 minutes, ends 10:25"])
        // The countdown is not repeated ...
        #expect(lines.lines(for: Self.message(Fixture.tick(remainingMs: 1_499_000, endsAt: Fixture.serverEpoch + 1_500_000,
                                                           seq: 5), at: 1000)) == [])
        // ... except for its last minute, once.
        #expect(lines.lines(for: Self.message(Fixture.tick(remainingMs: 60000, endsAt: Fixture.serverEpoch + 1_500_000,
                                                           seq: 5), at: 1_440_000)) == ["Focus: 1 minute left"])
        #expect(lines.lines(for: Self.message(Fixture.tick(remainingMs: 59000, endsAt: Fixture.serverEpoch + 1_500_000,
                                                           seq: 5), at: 1_441_000)) == [])
        // Paused with 12 minutes left, and resumed: the new end.
        #expect(lines.lines(for: Self.message(.state(Self.paused(leftMs: 720_000, seq: 6)), at: 1_442_000))
                == ["Focus paused, 12 minutes left"])
        let resumed = Fixture.snapshot(phase: .focus, status: .running, remainingMs: 720_000, phaseLengthMs: 1_500_000,
                                       endsAt: Fixture.serverEpoch + 1_800_000 + 720_000, members: Self.members, seq: 7,
                                       serverTime: Fixture.serverEpoch + 1_800_000)
        #expect(lines.lines(for: Self.message(.state(resumed), at: 1_800_000)) == ["Focus resumed, 12 minutes left, ends 10:42"])
        // Someone else's doings are their own line.
        #expect(lines.lines(for: Self.message(.event(room: "team-alpha", .memberJoined(member: "m3", name: "Ivo"),
                                                     serverTime: Fixture.serverEpoch + 1_801_000), at: 1_801_000))
                == ["Ivo joined"])
    }

    @Test func theSentencesSpeakTheReadersLanguage() {
        var lines = SpokenLines(roomName: "team-alpha", serverLabel: "ws://h:1", utcOffsetSeconds: Self.offset,
                                words: Words(.ko))
        #expect(lines.lines(for: Self.message(Fixture.welcome(Fixture.snapshot(members: Self.members)), at: 0))
                == ["Ada(m1) 이름으로 team-alpha에 참여했어요", "타이머가 아직 시작되지 않았어요, 2명 참여 중"])
        #expect(lines.lines(for: Self.message(.state(Fixture.runningFocus(at: Fixture.serverEpoch, members: Self.members)),
                                              at: 0)) == ["집중 시작, 25분, 10:25에 끝나요"])
        var chinese = SpokenLines(roomName: "team-alpha", serverLabel: "ws://h:1", utcOffsetSeconds: Self.offset,
                                  words: Words(.zhHans))
        _ = chinese.lines(for: Self.message(Fixture.welcome(Fixture.runningFocus(at: Fixture.serverEpoch, members: Self.members)), at: 0))
        #expect(chinese.lines(for: Self.message(.state(Self.paused(leftMs: 30000, seq: 6)), at: 1000)) == ["专注暂停，还剩 30 秒"])
    }

    @Test func aRunningRoomJoinedIsSummedUpInOneSentence() {
        var lines = SpokenLines(roomName: "team-alpha", serverLabel: "ws://h:1", utcOffsetSeconds: Self.offset)
        let room = Fixture.runningFocus(startedAt: Fixture.serverEpoch - 7 * 60000, at: Fixture.serverEpoch, members: Self.members)
        #expect(lines.lines(for: Self.message(Fixture.welcome(room, resumed: true), at: 0))
                == ["Joined team-alpha as Ada (m1), place resumed", "Focus, 18 minutes left, ends 10:18, 2 people here"])
    }

    @Test func minutesAreSaidAsAPersonWould() {
        let lines = SpokenLines(roomName: "r", serverLabel: "s", utcOffsetSeconds: 0)
        #expect(lines.minutes(1500) == "25 minutes")
        #expect(lines.minutes(90) == "2 minutes")
        #expect(lines.minutes(89) == "1 minute")
        #expect(lines.minutes(59) == "59 seconds")
        #expect(lines.minutes(1) == "1 second")
    }
}
