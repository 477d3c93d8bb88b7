import Foundation
import PomodoroCore
import PomodoroProtocol
import PomodoroStore
import PomodoroSQLite
import PomodoroTestSupport
import Testing

/// History answers end at about `HistoryPage.maxBytes` and say where to go on; stats come from the running
/// totals. Through the real server, with a store of the test's own.
@Suite(.onOwnThreads, .timeLimit(.minutes(TestTime.minutes(1))))
struct JournalHTTPTests {
    /// 300 sessions of 20 members with 200-character tasks: about 9 KB each, 2.7 MB in all.
    static func sessions(_ room: RoomID) -> [FocusSessionRecord] {
        (0..<300).map { number in
            let end = Int64(1_795_000_000_000) + Int64(number) * 60_000
            return FocusSessionRecord(room: room, startedAtMs: end - 60_000, endedAtMs: end, lengthSeconds: 60,
                                      participants: (0..<20).map { member in
                                          .init(member: MemberID("m\(member)"), name: "member \(member)",
                                                task: String(repeating: "t", count: 200), focusMs: 60_000)
                                      })
        }
    }

    @Test func largeHistoryComesInPagesOfBoundedSize() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("journal-http-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try SQLiteRoomStore.open(path: folder.appendingPathComponent("pomodoro.sqlite").path)
        let room = try RoomID(validating: "big")
        let sessions = Self.sessions(room)
        try store.apply(sessions.map(StoreChange.focusCompleted))
        let server = try LiveServer(store: store)
        defer { server.stop() }

        var before: Int64?
        var seen: [Int64] = []
        var pages = 0
        repeat {
            let reply = try httpGet(port: server.port,
                                    path: "/api/rooms/big/history?limit=1000" + (before.map { "&before=\($0)" } ?? ""))
            #expect(reply.status == 200)
            #expect(reply.body.utf8.count < HistoryPage.maxBytes + 16 * 1024, "\(reply.body.utf8.count) bytes")
            let page = try WireCodec.decodeHistory(Array(reply.body.utf8))
            #expect(!page.sessions.isEmpty)
            seen += page.sessions.map(\.endedAt)
            before = page.nextBefore
            #expect(before == nil || before == page.sessions.last?.endedAt)
            pages += 1
        } while before != nil && pages < 10
        #expect(pages > 1)
        #expect(seen == sessions.reversed().map(\.endedAtMs), "every session once, newest first")

        let csv = try RawHTTP.get("/api/rooms/big/history?limit=1000&format=csv", port: server.port)
        #expect(csv.status == 200 && csv.body.count < HistoryPage.maxBytes + 16 * 1024)
        let next = try #require(csv.headers["next-before"].flatMap { Int64($0) })
        let lines = csv.text.split(separator: "\r\n")
        #expect(lines.last?.contains(",\(Self.utcStamp(next)),") == true, "the oldest line ended then")

        let stats = try httpGet(port: server.port, path: "/api/rooms/big/stats?days=1")
        #expect(try WireCodec.decodeStatsBody(Array(stats.body.utf8)).totals.focusSessions == 300)
    }

    static func utcStamp(_ ms: Int64) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.timeZone = TimeZone(identifier: "UTC")
        return formatter.string(from: Date(timeIntervalSince1970: Double(ms) / 1000)).replacingOccurrences(of: "Z", with: "+00:00")
    }
}
