import Foundation
import PomodoroClient
import PomodoroCore
import PomodoroProtocol
import Testing

/// pomo's words in each of its languages: which one the environment picks, every phrase in every table, and
/// the full-screen view drawn in each at 80 and 40 columns, where Chinese and Korean take two columns a
/// character (TextWidth.swift).
@Suite struct LocalizedFrameTests {
    func draw(_ dashboard: Dashboard, _ columns: Int, _ rows: Int, at ms: Int64 = 0) -> Frame {
        DashboardRenderer.render(dashboard, in: .init(columns: columns, rows: rows, now: Fixture.local(ms),
                                                      utcOffsetSeconds: 3600))
    }

    func expectFits(_ frame: Frame, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(frame.lines.count == frame.rows, sourceLocation: sourceLocation)
        for line in frame.lines {
            #expect(line.width <= frame.columns, "\(line.text)", sourceLocation: sourceLocation)
            #expect(TextWidth.of(line.text) == line.width, "\(line.text)", sourceLocation: sourceLocation)
        }
    }

    // MARK: Which language

    @Test func theLocaleChoosesTheLanguage() {
        let cases: [([String: String], Language)] = [
            ([:], .en),
            (["LANG": "C"], .en), (["LANG": "POSIX"], .en), (["LANG": "en_US.UTF-8"], .en), (["LANG": "fr_FR.UTF-8"], .en),
            (["LANG": "zh_CN.UTF-8"], .zhHans), (["LANG": "zh_SG.UTF-8"], .zhHans), (["LANG": "zh"], .zhHans),
            (["LANG": "zh_TW.UTF-8"], .zhHant), (["LANG": "zh_HK.Big5HKSCS"], .zhHant), (["LANG": "zh_MO"], .zhHant),
            (["LANG": "zh-Hant"], .zhHant), (["LANG": "zh_TW.UTF-8@stroke"], .zhHant),
            (["LANG": "ko_KR.UTF-8"], .ko), (["LANG": "ko_KR.EUC-KR"], .ko),
            // LC_ALL over LC_MESSAGES over LANG; an empty one does not count.
            (["LANG": "en_US.UTF-8", "LC_MESSAGES": "ko_KR.UTF-8"], .ko),
            (["LANG": "en_US.UTF-8", "LC_MESSAGES": "ko_KR.UTF-8", "LC_ALL": "zh_TW.UTF-8"], .zhHant),
            (["LANG": "zh_CN.UTF-8", "LC_ALL": ""], .zhHans),
            (["LANG": "ko_KR.UTF-8", "LC_ALL": "C"], .en),
        ]
        for (environment, expected) in cases {
            #expect(Language.from(environment: environment) == expected, "\(environment)")
        }
    }

    @Test func everyTableHasEveryPhraseWithTheSamePlaceholders() {
        func placeholders(_ text: String) -> [String] {
            var names: [String] = []
            var rest = Substring(text)
            while let open = rest.firstIndex(of: "{"), let close = rest[open...].firstIndex(of: "}") {
                names.append(String(rest[rest.index(after: open)..<close]))
                rest = rest[rest.index(after: close)...]
            }
            return names.sorted()
        }
        let english = Words.table(.en)
        for language in Language.allCases {
            let table = Words.table(language)
            for phrase in Phrase.allCases {
                guard let text = table[phrase] else {
                    Issue.record("\(language.rawValue) lacks \(phrase.rawValue)")
                    continue
                }
                #expect(!text.trimmingCharacters(in: .whitespaces).isEmpty, "\(language.rawValue).\(phrase.rawValue)")
                #expect(placeholders(text) == placeholders(english[phrase] ?? ""), "\(language.rawValue).\(phrase.rawValue): \(text)")
            }
        }
    }

    @Test func everyRefusalCodeHasItsWords() {
        for language in [Language.zhHans, .zhHant, .ko] {
            let words = Words(language)
            let said = ErrorCode.allCases.map { words.error($0) }
            #expect(Set(said).count == ErrorCode.allCases.count, "\(language.rawValue): two codes read the same")
            for text in said { #expect(!text.contains(where: { $0.isASCII && $0.isLetter }), "\(language.rawValue): \(text)") }
        }
    }

    // MARK: Frames

    @Test func aRunningFocusInSimplifiedChineseAt80Columns() {
        let frame = draw(RendererScenes.runningFocus(in: .zhHans), 80, 24)
        expectFits(frame)
        #expect(frame.text == """
         pomo · team-alpha                               Ada · 127.0.0.1:8080  ● 已连接

          专注  ·  第 3 / 4 轮                                              01:13 结束

                                 ██    ██████      ██████  ██████
                               ████        ██  ██      ██  ██  ██
                                 ██    ██████      ██████  ██  ██
                                 ██        ██  ██  ██      ██  ██
                               ██████  ██████      ██████  ██████

          ███████████████████████████████████▍░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░

          成员  1 人在线 · 1 人暂离 · 1 人离线                                    完成
          ● Ada（你）  Write the codec                                               2
          ◐ Lin        暂离 · Reviewing PRs                                          1
          ○ Bo         离线                                                          0





          01:00  Lin 延长了 1 分钟
          专注 25m · 短休息 5m · 长休息 15m，每 4 轮 · 自动开始关
          space 暂停 s 跳过 r 重置 +/- 1 分钟 1 3 5 延长 t 任务 a 暂离 m 静音 q 退出
        """)
    }

    @Test func aRunningFocusInSimplifiedChineseAt40Columns() {
        let frame = draw(RendererScenes.runningFocus(in: .zhHans), 40, 24)
        expectFits(frame)
        #expect(frame.text == """
         pomo · team-alpha             ● 已连接

         专注  ·  3/4                01:13 结束

             ██    ██████      ██████  ██████
           ████        ██  ██      ██  ██  ██
             ██    ██████      ██████  ██  ██
             ██        ██  ██  ██      ██  ██
           ██████  ██████      ██████  ██████

         █████████████████▋░░░░░░░░░░░░░░░░░░░░

         成员  1 人在线 · 1 人暂离 · 1 人离线
         ● Ada（你）  Write the codec         2
         ◐ Lin        暂离 · Reviewing P…     1
         ○ Bo         离线                    0





         01:00  Lin 延长了 1 分钟
         25m/5m/15m ×4 · 自动关
         space 暂停 s 跳过 r 重置 ± 135 t a m q
        """)
    }

    @Test func aRunningFocusInTraditionalChineseAt80Columns() {
        let frame = draw(RendererScenes.runningFocus(in: .zhHant), 80, 24)
        expectFits(frame)
        #expect(frame.text == """
         pomo · team-alpha                               Ada · 127.0.0.1:8080  ● 已連線

          專注  ·  第 3 / 4 輪                                              01:13 結束

                                 ██    ██████      ██████  ██████
                               ████        ██  ██      ██  ██  ██
                                 ██    ██████      ██████  ██  ██
                                 ██        ██  ██  ██      ██  ██
                               ██████  ██████      ██████  ██████

          ███████████████████████████████████▍░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░

          成員  1 人在線 · 1 人暫離 · 1 人離線                                    完成
          ● Ada（你）  Write the codec                                               2
          ◐ Lin        暫離 · Reviewing PRs                                          1
          ○ Bo         離線                                                          0





          01:00  Lin 延長了 1 分鐘
          專注 25m · 短休息 5m · 長休息 15m，每 4 輪 · 自動開始關
          space 暫停 s 跳過 r 重設 +/- 1 分鐘 1 3 5 延長 t 任務 a 暫離 m 靜音 q 離開
        """)
    }

    @Test func aRunningFocusInTraditionalChineseAt40Columns() {
        let frame = draw(RendererScenes.runningFocus(in: .zhHant), 40, 24)
        expectFits(frame)
        #expect(frame.text == """
         pomo · team-alpha             ● 已連線

         專注  ·  3/4                01:13 結束

             ██    ██████      ██████  ██████
           ████        ██  ██      ██  ██  ██
             ██    ██████      ██████  ██  ██
             ██        ██  ██  ██      ██  ██
           ██████  ██████      ██████  ██████

         █████████████████▋░░░░░░░░░░░░░░░░░░░░

         成員  1 人在線 · 1 人暫離 · 1 人離線
         ● Ada（你）  Write the codec         2
         ◐ Lin        暫離 · Reviewing P…     1
         ○ Bo         離線                    0





         01:00  Lin 延長了 1 分鐘
         25m/5m/15m ×4 · 自動關
         space 暫停 s 跳過 r 重設 ± 135 t a m q
        """)
    }

    @Test func aRunningFocusInKoreanAt80Columns() {
        let frame = draw(RendererScenes.runningFocus(in: .ko), 80, 24)
        expectFits(frame)
        #expect(frame.text == """
         pomo · team-alpha                               Ada · 127.0.0.1:8080  ● 연결됨

          집중  ·  4회 중 3회                                               01:13 종료

                                 ██    ██████      ██████  ██████
                               ████        ██  ██      ██  ██  ██
                                 ██    ██████      ██████  ██  ██
                                 ██        ██  ██  ██      ██  ██
                               ██████  ██████      ██████  ██████

          ███████████████████████████████████▍░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░

          참여자  1명 참여 중 · 1명 자리 비움 · 1명 오프라인                      완료
          ● Ada (나)  Write the codec                                                2
          ◐ Lin       자리 비움 · Reviewing PRs                                      1
          ○ Bo        오프라인                                                       0





          01:00  Lin: 1분 늘림
          집중 25m · 짧은 휴식 5m · 긴 휴식 15m, 4회마다 · 자동 시작 끔
          space 일시정지 s 건너뛰기 r 초기화 ± 135 t 작업 a 자리 비움 m 음소거 q 종료
        """)
    }

    @Test func aRunningFocusInKoreanAt40Columns() {
        let frame = draw(RendererScenes.runningFocus(in: .ko), 40, 24)
        expectFits(frame)
        #expect(frame.text == """
         pomo · team-alpha             ● 연결됨

         집중  ·  3/4                01:13 종료

             ██    ██████      ██████  ██████
           ████        ██  ██      ██  ██  ██
             ██    ██████      ██████  ██  ██
             ██        ██  ██  ██      ██  ██
           ██████  ██████      ██████  ██████

         █████████████████▋░░░░░░░░░░░░░░░░░░░░

         참여자  1명 참여 중 · 1명 자리 비움 ·…
         ● Ada (나)  Write the codec          2
         ◐ Lin       자리 비움 · Reviewi…     1
         ○ Bo        오프라인                 0





         01:00  Lin: 1분 늘림
         25m/5m/15m ×4 · 자동 끔
         space 일시정지 s r ± 135 t a m q
        """)
    }

    @Test func everySceneFitsInEveryLanguageAtEverySize() {
        for language in Language.allCases {
            let scenes = [RendererScenes.runningFocus(in: language), RendererScenes.pausedBreakConfirmingReset(in: language),
                          RendererScenes.editingTask(in: language), RendererScenes.reconnecting(in: language)]
            for scene in scenes {
                for (columns, rows) in [(80, 24), (40, 24), (30, 8), (80, 12), (24, 6)] {
                    expectFits(draw(scene, columns, rows))
                }
            }
        }
    }

    @Test func theKeysAndTheirWordsInEachLanguage() {
        let expected: [Language: String] = [
            .en: "space pause s skip r reset +/- 1 min 1 3 5 add t task a away m mute q quit",
            .zhHans: "space 暂停 s 跳过 r 重置 +/- 1 分钟 1 3 5 延长 t 任务 a 暂离 m 静音 q 退出",
            .zhHant: "space 暫停 s 跳過 r 重設 +/- 1 分鐘 1 3 5 延長 t 任務 a 暫離 m 靜音 q 離開",
            .ko: "space 일시정지 s 건너뛰기 r 초기화 ± 135 t 작업 a 자리 비움 m 음소거 q 종료",
        ]
        for (language, keys) in expected {
            let frame = draw(RendererScenes.runningFocus(in: language), 80, 24)
            #expect(frame.lines.last?.text.trimmingCharacters(in: .whitespaces) == keys, "\(language.rawValue)")
        }
    }

    /// A member whose client closed (a tab closed, pomo quit) stepped out; one whose connection dropped lost it.
    @Test func aClosedClientAndALostConnectionReadDifferentlyInEachLanguage() {
        let expected: [Language: (closed: String, lost: String)] = [
            .en: ("Lin stepped out", "Lin lost the connection"),
            .zhHans: ("Lin 下线了", "Lin 掉线了"),
            .zhHant: ("Lin 下線了", "Lin 斷線了"),
            .ko: ("Lin: 접속 종료", "Lin: 연결 끊김"),
        ]
        let members = [Fixture.member("m1", "Ada"), Fixture.member("m2", "Lin")]
        for (language, words) in expected {
            var d = Fixture.dashboard(Fixture.runningFocus(at: Fixture.serverEpoch, members: members),
                                      words: Words(language))
            func line(_ connection: ConnectionEnd?) -> String? {
                let event = EventPayload.memberAway(member: "m2", reason: .disconnected, connection: connection)
                _ = d.handle(.message(.event(room: "team-alpha", event, serverTime: Fixture.serverEpoch), raw: [],
                                      receivedAt: Fixture.local(0)))
                return d.lastEvent?.text
            }
            #expect(line(.closed) == words.closed, "\(language.rawValue)")
            #expect(line(.lost) == words.lost, "\(language.rawValue)")
            #expect(line(nil) == words.lost, "\(language.rawValue): a server that does not say")
        }
    }

    @Test func aRefusalIsSaidByItsCodeOutsideEnglish() {
        var d = RendererScenes.runningFocus(in: .zhHans)
        let effects = d.handle(key: .character("s"), at: Fixture.local(0))
        guard case let .send(_, ref)? = effects.first else {
            Issue.record("s sent nothing: \(effects)")
            return
        }
        _ = d.handle(.message(.error(code: .forbidden, message: "only the host may do that", field: nil, ref: ref),
                              raw: [], receivedAt: Fixture.local(10)))
        #expect(d.notice(at: Fixture.local(20))?.text == "跳过被拒绝：在这个房间只有主持人能这样做")
    }

    @Test func theSessionsEnglishReasonsStayOutOfOtherLanguages() {
        for (language, line) in [(Language.en, "The connection closed. Trying again in 4s (attempt 2)…"),
                                 (.zhHans, "连接已断开。4 秒后重试（第 2 次）…"), (.ko, "연결이 끊겼어요. 4초 후 다시 시도 (2번째)…")] {
            var d = Dashboard(roomName: "team-alpha", serverLabel: "127.0.0.1:8080", words: Words(language))
            _ = d.handle(.reconnecting(attempt: 2, retryAt: Fixture.local(3200), reason: "the connection closed"))
            let text = draw(d, 80, 10).text
            #expect(text.contains(line), "\(language.rawValue): \(text)")
        }
    }
}
