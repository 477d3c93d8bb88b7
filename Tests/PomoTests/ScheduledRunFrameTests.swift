import PomodoroClient
import PomodoroCore
import PomodoroProtocol
import Testing

/// During a scheduled run the phase line counts the run's own set ("Writing block · focus 2 of 3"), not the
/// room's long-break cycle, in every language, at 80 and 40 columns; and so do the plain lines.
@Suite struct ScheduledRunFrameTests {
    static func scene(_ language: Language, run: ScheduledRunPayload?, phase: Phase = .focus) -> Dashboard {
        var room = Fixture.runningFocus(startedAt: Fixture.serverEpoch - 700_300, at: Fixture.serverEpoch, cycle: 3,
                                        members: RendererScenes.members)
        room.phase = phase
        room.scheduledRun = run
        return Fixture.dashboard(room, words: Words(language))
    }

    static let writing = ScheduledRunPayload(schedule: "s1", name: "Writing block", focusSessions: 3, focusDone: 1)
    static let open = ScheduledRunPayload(schedule: "s2", name: "Open studio", focusSessions: nil, focusDone: 4)

    func phaseLine(_ d: Dashboard, _ columns: Int) -> String {
        let frame = DashboardRenderer.render(d, in: .init(columns: columns, rows: 24, now: Fixture.local(0),
                                                         utcOffsetSeconds: 3600))
        for line in frame.lines {
            #expect(line.width <= columns, "\(line.text)")
            #expect(TextWidth.of(line.text) == line.width, "\(line.text)")
        }
        return frame.lines[2].text
    }

    @Test(arguments: [
        (Language.en, "Writing block · focus 2 of 3", "Writing block 2/3", "Open studio · focus 5", "Open studio #5"),
        (Language.ko, "Writing block · 집중 3회 중 2회", "Writing block 2/3", "Open studio · 집중 5회", "Open studio #5"),
        (Language.zhHans, "Writing block · 专注 第 2 / 3 轮", "Writing block 2/3", "Open studio · 专注 第 5 轮", "Open studio #5"),
        (Language.zhHant, "Writing block · 專注 第 2 / 3 輪", "Writing block 2/3", "Open studio · 專注 第 5 輪", "Open studio #5"),
    ])
    func thePhaseLineCountsTheScheduledSet(_ language: Language, wide: String, narrow: String,
                                           openWide: String, openNarrow: String) {
        let words = Words(language)
        let cycleWide = words(.cycleLong, ["n": 3, "total": 4])
        let atEighty = phaseLine(Self.scene(language, run: Self.writing), 80)
        #expect(atEighty.contains(wide), "\(atEighty)")
        #expect(!atEighty.contains(cycleWide), "the room's cycle is not shown: \(atEighty)")
        let atForty = phaseLine(Self.scene(language, run: Self.writing), 40)
        #expect(atForty.contains(narrow), "\(atForty)")
        #expect(phaseLine(Self.scene(language, run: Self.open), 80).contains(openWide))
        #expect(phaseLine(Self.scene(language, run: Self.open), 40).contains(openNarrow))
        // Without a run, the cycle as before.
        #expect(phaseLine(Self.scene(language, run: nil), 80).contains(cycleWide))
    }

    @Test func theFramesInEnglish() {
        #expect(phaseLine(Self.scene(.en, run: Self.writing), 80)
                == "  FOCUS  ·  Writing block · focus 2 of 3                            ends 01:13")
        #expect(phaseLine(Self.scene(.en, run: Self.writing), 40) == " FOCUS  ·  Writing block 2/3 ends 01:13")
    }

    @Test func duringABreakTheFocusJustDoneAndNeverPastTheSet() {
        let inBreak = Self.scene(.en, run: Self.writing, phase: .shortBreak).room.snapshot!
        let position = Labels.setPosition(inBreak)
        #expect(position.name == "Writing block" && position.n == 1 && position.total == 3)
        var last = inBreak
        last.scheduledRun?.focusDone = 3
        #expect(Labels.setPosition(last).n == 3)
    }

    @Test func theFeedCountsTheSetWhenABreakEnds() {
        var d = Self.scene(.en, run: Self.writing, phase: .shortBreak)
        _ = d.handle(.message(.event(room: "team-alpha", .phaseCompleted(completed: .shortBreak, next: .focus,
                                                                           autoStarted: true, cycle: 3),
                                     serverTime: Fixture.serverEpoch), raw: [], receivedAt: Fixture.local(0)))
        let lines = DashboardRenderer.render(d, in: .init(columns: 80, rows: 24, now: Fixture.local(0),
                                                          utcOffsetSeconds: 3600)).lines.map(\.text)
        #expect(lines.contains { $0.contains("Short break done · Focus 2 of 3 started") }, "\(lines)")
        #expect(!lines.contains { $0.contains("of 4") }, "\(lines)")
    }

    @Test func thePlainLinesSayTheSet() {
        let room = Self.scene(.en, run: Self.writing).room.snapshot!
        #expect(Labels.phaseAndPosition(room) == "Focus · Writing block · focus 2 of 3")
        var open = room
        open.scheduledRun = Self.open
        #expect(Labels.phaseAndPosition(open) == "Focus · Open studio · focus 5")
        open.scheduledRun = nil
        #expect(Labels.phaseAndPosition(open) == "Focus 3 of 4")
    }
}
