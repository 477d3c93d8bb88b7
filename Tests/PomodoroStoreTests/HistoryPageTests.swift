import Foundation
import Testing
import PomodoroCore
@testable import PomodoroStore
import PomodoroTestSupport

/// History pages bounded by count and by bytes, read no further than the page.
@Suite struct HistoryPageTests {
    /// 300 sessions of 20 members with 200-character tasks: about 9 KB each, 2.7 MB in all.
    static let sessions: [FocusSessionRecord] = (0..<300).map { number in
        Sample.session(endedAtMs: utcMs(2026, 11, 1) + Int64(number) * 60_000, lengthSeconds: 60,
                       participants: (0..<20).map { member in
                           Sample.participant("m\(member)", "member \(member)",
                                              task: String(repeating: "t", count: 200), focusMs: 60_000)
                       })
    }

    @Test func pagesEndAtTheByteCapAndTogetherHoldTheWholeJournal() throws {
        try withStore { (store, _) throws in
            try store.apply(Self.sessions.map(StoreChange.focusCompleted))
            let cap = HistoryPage.maxBytes
            let largest = Self.sessions.map(HistoryPage.estimatedBytes(of:)).max() ?? 0
            var before: Int64?
            var pages: [HistoryPage] = []
            repeat {
                let page = try store.historyPage(room: Sample.room, before: before, limit: 1000, maxBytes: cap)
                #expect(page.sessions.reduce(0) { $0 + HistoryPage.estimatedBytes(of: $1) } < cap + largest)
                #expect(page == HistoryPage.cut(Self.sessions.filter { $0.endedAtMs < before ?? .max }.reversed(),
                                                limit: 1000, maxBytes: cap), "as the default reading gives it")
                pages.append(page)
                before = page.nextBefore
            } while before != nil && pages.count < 10
            #expect(pages.count == 3)
            #expect(pages.flatMap(\.sessions) == Self.sessions.reversed())
            let encoded = FocusReport.csv(pages[0].sessions, timeZone: TimeZone(identifier: "UTC")!).utf8.count
            #expect(encoded <= cap, "the estimate is generous: \(encoded) bytes of CSV")
        }
    }

    @Test func theCountBoundsAPageAndSaysWhetherMoreRemain() throws {
        try withStore { (store, _) throws in
            try store.apply(Self.sessions.prefix(5).map(StoreChange.focusCompleted))
            let two = try store.historyPage(room: Sample.room, before: nil, limit: 2, maxBytes: HistoryPage.maxBytes)
            #expect(two.sessions == Array(Self.sessions.prefix(5).reversed().prefix(2)))
            #expect(two.nextBefore == Self.sessions[3].endedAtMs)
            let rest = try store.historyPage(room: Sample.room, before: two.nextBefore, limit: 3, maxBytes: HistoryPage.maxBytes)
            #expect(rest.sessions == Array(Self.sessions.prefix(3).reversed()))
            #expect(rest.more == false && rest.nextBefore == nil)
            let none = try store.historyPage(room: roomID("empty"), before: nil, limit: 3, maxBytes: 10)
            #expect(none == HistoryPage(sessions: [], more: false))
        }
    }
}
