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
            #expect(hosting.lines.last!.text.contains(columns >= 80 ? "p k c h" : "pkch"), "\(hosting.lines.last!.text)")

            let picking = draw(RendererScenes.pickingToRemove(in: language), columns)
            expectFits(picking)
            let text = picking.lines.map(\.text)
            #expect(text.contains { $0.contains("1 ◐ Lin") }, "\(picking.text)")
            #expect(text.contains { $0.contains("2 ○ Bo") }, "\(picking.text)")
            #expect(picking.lines.last!.text.hasPrefix(words(.removePrompt) + "2"), "\(picking.lines.last!.text)")

            let passcode = draw(RendererScenes.typingPasscode(in: language), columns)
            expectFits(passcode)
            #expect(passcode.lines.last!.text.hasPrefix(words(.passcodePrompt) + "new soup"))

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

    @Test func printed() {
        for language in Language.allCases {
            for columns in Self.sizes {
                for scene in [RendererScenes.hosting(in: language), RendererScenes.pickingToRemove(in: language),
                              RendererScenes.typingPasscode(in: language), RendererScenes.hostHelp(in: language)] {
                    print("=== \(language.rawValue) \(columns)\n" + draw(scene, columns).text)
                }
            }
        }
    }
}
