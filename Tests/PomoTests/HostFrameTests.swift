import Foundation
import PomodoroClient
import PomodoroCore
import PomodoroProtocol
import Testing

/// The host's tools on screen, in every language at 80 and 40 columns: the key line shows them to the host
/// alone, `k` and `h` number the members to pick from, `p` opens a prompt, `?` lists every key.
@Suite struct HostFrameTests {
    func draw(_ dashboard: Dashboard, _ columns: Int, _ rows: Int = 24) -> Frame {
        DashboardRenderer.render(dashboard, in: .init(columns: columns, rows: rows, now: Fixture.local(0),
                                                      utcOffsetSeconds: 3600))
    }

    func expectFits(_ frame: Frame, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(frame.lines.count == frame.rows, sourceLocation: sourceLocation)
        for line in frame.lines {
            #expect(line.width <= frame.columns, "\(line.text)", sourceLocation: sourceLocation)
            #expect(TextWidth.of(line.text) == line.width, "\(line.text)", sourceLocation: sourceLocation)
        }
    }

    static let sizes = [80, 40]

    @Test(arguments: Language.allCases)
    func everyHostSceneFitsInEveryLanguage(language: Language) {
        let words = Words(language)
        for columns in Self.sizes {
            let plain = draw(RendererScenes.runningFocus(in: language), columns)
            let hosting = draw(RendererScenes.hosting(in: language), columns)
            for frame in [plain, hosting] { expectFits(frame) }
            // Only the host sees the host's keys.
            #expect(!plain.lines.last!.text.contains("p k c h") && !plain.lines.last!.text.contains("pkch"))
            let keys = hosting.lines.last!.text
            #expect(keys.contains("p k c h") || (columns < 80 && keys.contains("pkch")), "\(keys)")

            let picking = draw(RendererScenes.pickingToRemove(in: language), columns)
            expectFits(picking)
            let text = picking.lines.map(\.text)
            #expect(text.contains { $0.contains("1 ◐ Lin") }, "\(picking.text)")
            #expect(text.contains { $0.contains("2 ○ Bo") }, "\(picking.text)")
            #expect(picking.lines.last!.text.trimmingCharacters(in: .whitespaces).hasPrefix(words(.removePrompt) + "2"),
                    "\(picking.lines.last!.text)")

            let passcode = draw(RendererScenes.typingPasscode(in: language), columns)
            expectFits(passcode)
            // The passcode being typed is shown as one asterisk a character, never in clear.
            #expect(passcode.lines.last!.text.trimmingCharacters(in: .whitespaces).hasPrefix(words(.passcodePrompt) + "********"))
            #expect(!passcode.lines.contains { $0.text.contains("new soup") })

            let help = draw(RendererScenes.hostHelp(in: language), columns)
            expectFits(help)
            for phrase in [Phrase.helpToggle, .helpQuit, .helpHostTitle] {
                #expect(help.text.contains(words(phrase)), "\(language.rawValue) \(columns): \(phrase)")
            }
            for key in ["p", "k", "c", "h"] {
                #expect(help.lines.contains { $0.text.hasPrefix("  \(key) ") || $0.text.hasPrefix(" \(key) ") },
                        "\(language.rawValue) \(columns): \(key)\n\(help.text)")
            }
            #expect(help.lines.last!.text.contains(words(.helpClose)))
            #expect(!help.text.contains("…"), "\(language.rawValue) \(columns): a line of the list is cut\n\(help.text)")
        }
    }

    @Test func someoneWhoIsNotTheHostGetsTheListWithoutTheHostsKeys() {
        var d = RendererScenes.runningFocus(in: .en)
        _ = d.handle(key: .character("?"), at: Fixture.local(0))
        let help = draw(d, 80)
        expectFits(help)
        #expect(help.text.contains("start, pause or resume"))
        #expect(!help.text.contains("HOST ONLY") && !help.text.contains("remove a member"))
    }

    @Test func aShortWindowSaysTheListGoesOn() {
        var d = RendererScenes.runningFocus(in: .en)
        _ = d.handle(key: .character("?"), at: Fixture.local(0))
        let small = draw(d, 40, 12)
        expectFits(small)
        #expect(small.text.contains("space start, pause or resume"), "\(small.text)")
        #expect(small.text.contains("+8 more keys: pomo join --help"), "\(small.text)")
        // Whatever the height, the list is whole (down to q) or says that more keys follow; the host's too.
        for scene in [d, RendererScenes.hostHelp(in: .en)] {
            for rows in 10...24 {
                let frame = draw(scene, 40, rows)
                let keys = frame.lines.map { $0.text.trimmingCharacters(in: .whitespaces) }
                let whole = keys.contains { $0.hasPrefix("q ") } && (!scene.isHost || keys.contains { $0.hasPrefix("h ") })
                #expect(whole != frame.text.contains("more keys"), "\(rows) rows:\n\(frame.text)")
            }
        }
    }

    @Test func pickingAMemberToRemoveInEnglishAt80Columns() {
        let frame = draw(RendererScenes.pickingToRemove(in: .en), 80)
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
            ● Ada (you)  Write the codec                                             2
          1 ◐ Lin        away · Reviewing PRs                                        1
          2 ○ Bo         offline                                                     0





          a number from the list, or a name · enter · esc cancels
          Focus 25m · Short 5m · Long 15m after 4 · auto-start off
          remove who? › 2
        """)
    }

    @Test func theHostsListOfKeysInSimplifiedChineseAt40Columns() {
        let frame = draw(RendererScenes.hostHelp(in: .zhHans), 40)
        expectFits(frame)
        #expect(frame.text == """
         pomo · team-alpha             ● 已连接

         13:20  专注  ·  3/4         01:13 结束
         █████████████████▋░░░░░░░░░░░░░░░░░░░░

         按键
         space 开始、暂停或继续
         s     跳到下一阶段
         r     重置为空闲（先确认）
         + -   多一分钟 / 少一分钟
         1 3 5 加上这么多分钟
         t     我的任务（回车保存）
         a     暂离 / 回来
         m     铃声和通知 关 / 开
         q     退出
         仅主持人
         p     更改或取消密码
         k     移除成员（一段时间内不能再加入）
         c     控制：所有人，或仅主持人
         h     把主持人交给一位成员

         01:00  你加入了 team-alpha
         25m/5m/15m ×4 · 自动关
         按任意键关闭
        """)
    }
}
