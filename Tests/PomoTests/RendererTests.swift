import Foundation
import PomodoroClient
import PomodoroCore
import PomodoroProtocol
import Testing

/// The full-screen view as exact frames at fixed sizes (80 and 40 columns, and smaller terminals),
/// with the local time zone at UTC+1. Styles are checked where they carry meaning (dimmed keys).
@Suite struct RendererTests {
    func draw(_ dashboard: Dashboard, _ columns: Int, _ rows: Int, at ms: Int64 = 0) -> Frame {
        DashboardRenderer.render(dashboard, in: .init(columns: columns, rows: rows, now: Fixture.local(ms),
                                                      utcOffsetSeconds: 3600))
    }

    func expectFits(_ frame: Frame, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(frame.lines.count == frame.rows, sourceLocation: sourceLocation)
        for line in frame.lines {
            #expect(line.width <= frame.columns, "\(line.text)", sourceLocation: sourceLocation)
        }
    }

    @Test func aRunningFocusAt80Columns() {
        let frame = draw(RendererScenes.runningFocus, 80, 24)
        expectFits(frame)
        #expect(frame.text == """
         pomo · team-alpha                                 Ada · 127.0.0.1:8080  ● live

          FOCUS  ·  cycle 3 of 4                                            ends 01:13

                                 ██    ██████      ██████  ██████
                               ████        ██  ██      ██  ██  ██
                                 ██    ██████      ██████  ██  ██
                                 ██        ██  ██  ██      ██  ██
                               ██████  ██████      ██████  ██████

          ███████████████████████████████████▍░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░

          MEMBERS  1 here · 1 away · 1 offline                                    done
          ● Ada (you)  Write the codec                                               2
          ◐ Lin        away · Reviewing PRs                                          1
          ○ Bo         offline                                                       0





          01:00  Lin added 1 min
          Focus 25m · Short 5m · Long 15m after 4 · auto-start off
          space pause s skip r reset +/- 1 min 1 3 5 add t task a away m mute q quit
        """)
    }

    @Test func aBigRoomSaysHowManyMoreThereAre() {
        var room = Fixture.runningFocus(startedAt: Fixture.serverEpoch - 700_300, at: Fixture.serverEpoch, cycle: 3,
                                        members: RendererScenes.members)
        room.memberCount = 5000
        room.presentCount = 4870
        room.membersTruncated = true
        let text = draw(Fixture.dashboard(room), 80, 24).text
        #expect(text.contains("MEMBERS  4,870 here of 5,000"))
        #expect(text.contains("… and 4,997 more"))
        #expect(!text.contains("offline ·"), "no per-state counts from a partial list")
    }

    @Test func aBigRoomShowsMeFirstWhenItsListLeavesMeOut() throws {
        var room = Fixture.runningFocus(startedAt: Fixture.serverEpoch - 700_300, at: Fixture.serverEpoch, cycle: 3,
                                        members: RendererScenes.members)
        room.memberCount = 5000
        room.presentCount = 4870
        room.membersTruncated = true
        var d = Fixture.dashboard(room, id: "m150")
        _ = d.handle(.message(.you(room: room.room, member: Fixture.member("m150", "Cy", present: false,
                                                                          task: "Write the report", done: 2)),
                              raw: [], receivedAt: Fixture.local(1)))
        let lines = draw(d, 80, 24).text.split(separator: "\n").map(String.init)
        let header = try #require(lines.firstIndex { $0.contains("MEMBERS") })
        #expect(lines[header + 1].contains("◐ Cy (you)") && lines[header + 1].contains("away · Write the report"))
        #expect(lines[header + 1].hasSuffix("2"))
        // The three listed, me, and the rest: 5,000 − 3 − 1.
        #expect(lines.contains { $0.contains("… and 4,996 more") })
    }

    @Test func aRunningFocusAt40Columns() {
        let frame = draw(RendererScenes.runningFocus, 40, 24)
        expectFits(frame)
        #expect(frame.text == """
         pomo · team-alpha               ● live

         FOCUS  ·  3 of 4            ends 01:13

             ██    ██████      ██████  ██████
           ████        ██  ██      ██  ██  ██
             ██    ██████      ██████  ██  ██
             ██        ██  ██  ██      ██  ██
           ██████  ██████      ██████  ██████

         █████████████████▋░░░░░░░░░░░░░░░░░░░░

         MEMBERS  1 here · 1 away · 1 offline
         ● Ada (you)  Write the codec         2
         ◐ Lin        away · Reviewing P…     1
         ○ Bo         offline                 0





         01:00  Lin added 1 min
         25m/5m/15m ×4 · auto off
         space pause s skip r ± 135 t a m q
        """)
    }

    @Test func aPausedBreakAskingBeforeReset() {
        let frame = draw(RendererScenes.pausedBreakConfirmingReset, 80, 24)
        expectFits(frame)
        #expect(frame.text == """
         pomo · team-alpha                                 Ada · 127.0.0.1:8080  ● live

          SHORT BREAK  ·  cycle 2 of 4                                          PAUSED

                               ██████  ██████      ██████  ██████
                               ██  ██      ██  ██  ██  ██  ██
                               ██  ██  ██████      ██  ██  ██████
                               ██  ██  ██      ██  ██  ██  ██  ██
                               ██████  ██████      ██████  ██████

          ████████████████████████████████████████████▏░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░

          MEMBERS  1 here · 1 away · 1 offline                                    done
          ● Ada (you)  Write the codec                                               2
          ◐ Lin        away · Reviewing PRs                                          1
          ○ Bo         offline                                                       0





          01:00  You joined team-alpha
          25m/5m/15m ×4 · auto off  →  next phase: 50m/10m/30m ×4 · auto on
          Reset to idle, cycle 1?  y reset  any other key keeps it
        """)
    }

    @Test func theTaskEditorAt40Columns() {
        let frame = draw(RendererScenes.editingTask, 40, 24)
        expectFits(frame)
        #expect(frame.text == """
         pomo · team-alpha               ● live

         LONG BREAK  ·  4 of 4            ready

             ██    ██████      ██████  ██████
           ████    ██      ██  ██  ██  ██  ██
             ██    ██████      ██  ██  ██  ██
             ██        ██  ██  ██  ██  ██  ██
           ██████  ██████      ██████  ██████

         ░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░

         MEMBERS  1 here · 1 away · 1 offline
         ● Ada (you)  Write the codec         2
         ◐ Lin        away · Reviewing P…     1
         ○ Bo         offline                 0





         enter saves · esc cancels
         25m/5m/15m ×4 · auto off
         task › Plan the sprint
        """)
    }

    @Test func reconnectingKeepsCounting() {
        let frame = draw(RendererScenes.reconnecting, 80, 24)
        expectFits(frame)
        #expect(frame.text == """
         pomo · team-alpha                     Ada · 127.0.0.1:8080  ◌ reconnecting… 4s

          FOCUS  ·  cycle 3 of 4                                            ends 01:13

                                 ██    ██████      ██████  ██████
                               ████        ██  ██      ██  ██  ██
                                 ██    ██████      ██████  ██  ██
                                 ██        ██  ██  ██      ██  ██
                               ██████  ██████      ██████  ██████

          ███████████████████████████████████▍░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░

          MEMBERS  1 here · 1 away · 1 offline                                    done
          ● Ada (you)  Write the codec                                               2
          ◐ Lin        away · Reviewing PRs                                          1
          ○ Bo         offline                                                       0





          01:00  Lin added 1 min
          Focus 25m · Short 5m · Long 15m after 4 · auto-start off
          space pause s skip r reset +/- 1 min 1 3 5 add t task a away m mute q quit
        """)
    }

    @Test func beforeTheWelcome() {
        let frame = draw(RendererScenes.connecting, 40, 10)
        expectFits(frame)
        #expect(frame.text == """
         pomo · team-alpha        ○ connecting…



             Connecting to 127.0.0.1:8080…




         q quit
        """)
    }

    @Test func aShortTerminalDropsTheLargeDigits() {
        let frame = draw(RendererScenes.runningFocus, 80, 12)
        expectFits(frame)
        #expect(frame.text == """
         pomo · team-alpha                                 Ada · 127.0.0.1:8080  ● live

          13:20  FOCUS  ·  cycle 3 of 4                                     ends 01:13
          ███████████████████████████████████▍░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░

          MEMBERS  1 here · 1 away · 1 offline                                    done
          ● Ada (you)  Write the codec                                               2
          + 2 more

          01:00  Lin added 1 min
          Focus 25m · Short 5m · Long 15m after 4 · auto-start off
          space pause s skip r reset +/- 1 min 1 3 5 add t task a away m mute q quit
        """)
    }

    @Test func aTinyTerminalKeepsTheEssentials() {
        let frame = draw(RendererScenes.runningFocus, 30, 8)
        expectFits(frame)
        #expect(frame.text == """
         pomo · team-alpha     ● live

         13:20  FOCUS  ·  3 of 4
         █████████████░░░░░░░░░░░░░░░

         01:00  Lin added 1 min
         25m/5m/15m ×4 · auto off
         space pause s r ± 135 t a q
        """)
    }

    /// Whether each key on the bottom line is dimmed, read from the style of the key's first character.
    func keyStyles(_ frame: Frame) -> [String: Bool] {
        var styled: [(Character, TextStyle)] = []
        for span in frame.lines.last!.spans { for c in span.text { styled.append((c, span.style)) } }
        let text = String(styled.map(\.0))
        var result: [String: Bool] = [:]
        for key in ["space", "s", "r", "+/-", "1 3 5", "t", "a", "m", "q"] {
            // Each key stands after a space (or at the start), followed by a space and its label.
            guard let range = (" " + text).range(of: " \(key) ") else { continue }
            let offset = (" " + text).distance(from: (" " + text).startIndex, to: range.lowerBound)
            result[key] = styled[offset].1.dim
        }
        return result
    }

    @Test func keysThatDoNothingAreDimmed() {
        // Idle at cycle 1: nothing to skip, reset or extend.
        let idle = draw(Fixture.dashboard(Fixture.snapshot()), 80, 24)
        #expect(keyStyles(idle) == ["space": false, "s": true, "r": true, "+/-": true, "1 3 5": true, "t": false,
                                    "a": false, "m": false, "q": false])
        // Reconnecting: only quitting works.
        let offline = draw(RendererScenes.reconnecting, 80, 24)
        #expect(keyStyles(offline) == ["space": true, "s": true, "r": true, "+/-": true, "1 3 5": true, "t": true,
                                       "a": true, "m": false, "q": false])
        // Running: everything works.
        #expect(keyStyles(draw(RendererScenes.runningFocus, 80, 24)).values.allSatisfy { !$0 })
    }

    @Test func theDigitsFollowTheClockBetweenTicks() {
        let at = { (ms: Int64) in self.draw(RendererScenes.runningFocus, 80, 12, at: ms).lines[2].text }
        #expect(at(0).hasPrefix("  13:20"))
        #expect(at(699).hasPrefix("  13:20"))
        #expect(at(700).hasPrefix("  13:19"))
        #expect(at(60_700).hasPrefix("  12:19"))
    }

    @Test func focusIsRedBreaksAreGreenPausedIsDim() {
        let focus = draw(RendererScenes.runningFocus, 80, 24)
        #expect(focus.lines[4].spans.last?.style == TextStyle(color: .red, bold: true))
        let paused = draw(RendererScenes.pausedBreakConfirmingReset, 80, 24)
        #expect(paused.lines[4].spans.last?.style == TextStyle(color: .green, dim: true))
        // The title bar spans the whole width, in reverse video.
        #expect(focus.lines[0].width == 80)
        #expect(focus.lines[0].spans.allSatisfy { $0.style.reverse })
    }

    @Test func everySizeFits() {
        for (_, dashboard, _, _) in RendererScenes.all {
            for columns in [1, 12, 20, 33, 40, 59, 60, 80, 132] {
                for rows in [1, 3, 5, 8, 10, 12, 17, 18, 24, 50] {
                    expectFits(draw(dashboard, columns, rows))
                }
            }
        }
    }

    @Test func theEncoderRewritesOnlyChangedLines() {
        var encoder = AnsiEncoder(support: .color)
        let first = draw(RendererScenes.runningFocus, 80, 12, at: 0)
        let whole = encoder.encode(first)
        #expect(whole.hasPrefix("\u{1B}[H\u{1B}[2J"))
        // 0.7 s later only the digits' line and the bar changed.
        let next = encoder.encode(draw(RendererScenes.runningFocus, 80, 12, at: 700))
        #expect(next.components(separatedBy: "\u{1B}[").filter { $0.hasSuffix("1H") || $0.contains(";1H") }.count == 2)
        #expect(next.contains("13:19"))
        // Nothing changed: nothing written.
        #expect(encoder.encode(draw(RendererScenes.runningFocus, 80, 12, at: 700)) == "")
    }

    @Test func coloursDegrade() {
        let line = ScreenLine([Span("25:00", TextStyle(color: .red, bold: true)), Span(" idle", .dim)])
        #expect(AnsiEncoder(support: .color).encode(line) == "\u{1B}[1;31m25:00\u{1B}[0m\u{1B}[2m idle\u{1B}[0m")
        #expect(AnsiEncoder(support: .monochrome).encode(line) == "\u{1B}[1m25:00\u{1B}[0m\u{1B}[2m idle\u{1B}[0m")
        #expect(AnsiEncoder(support: .plain).encode(line) == "25:00 idle")
        #expect(ColorSupport.detect(environment: ["TERM": "xterm-256color"]) == .color)
        #expect(ColorSupport.detect(environment: ["TERM": "xterm", "NO_COLOR": "1"]) == .monochrome)
        #expect(ColorSupport.detect(environment: ["TERM": "xterm", "NO_COLOR": ""]) == .color)
        #expect(ColorSupport.detect(environment: ["TERM": "dumb"]) == .plain)
    }

    @Test func wideCharactersKeepColumnsAligned() {
        let members = [Fixture.member("m1", "Ada", task: "Write the codec"),
                       Fixture.member("m2", "李雷", task: "写代码 🍅 today", done: 3)]
        let frame = draw(Fixture.dashboard(Fixture.snapshot(members: members)), 40, 24)
        expectFits(frame)
        let rows = frame.lines.filter { $0.text.contains("李雷") || $0.text.contains("Ada (you)") }
        #expect(rows.count == 2)
        #expect(rows.allSatisfy { $0.width == 38 + 1 })
        #expect(TextWidth.of("李雷") == 4 && TextWidth.of("🍅") == 2 && TextWidth.of("é") == 1)
    }
}
