import Foundation
import Testing
import PomodoroCore
import PomodoroStore
import PomodoroSQLite
@testable import PomodoroPostgres
import PomodoroTestSupport

/// A room's API tokens in both stores (table `api_token`, migration `api_tokens`): written whole, read back
/// with the room by `loadRoom` and `loadRooms`, alike; gone with the room; copied by `StoreCopy`.
@Suite(.onOwnThreads, .timeLimit(.minutes(TestTime.minutes(5))))
struct APITokenStoreTests {
    let server: PostgresTestServer

    init() async throws { server = try await PostgresTestServer.shared }

    static let tokens = [
        APITokenRecord(id: "t1", name: "deploy bot", tokenHash: String(repeating: "a", count: 64),
                       createdAtMs: 1_795_000_000_000, lastUsedAtMs: nil, createdBy: MemberID("m1")),
        APITokenRecord(id: "t2", name: "Émile's ✓", tokenHash: String(repeating: "b", count: 64),
                       createdAtMs: 1_795_000_060_000, lastUsedAtMs: 1_795_000_120_000, createdBy: nil),
    ]

    @Test func tokensRoundTripAlikeAndGoWithTheirRoom() throws {
        let url = try server.makeDatabase()
        try withTemporaryFolder { (folder) throws in
            let sqlite = try SQLiteRoomStore.open(path: folder.appendingPathComponent("pomodoro.sqlite").path)
            let postgres = try PostgresRoomStore.open(url: url)
            let other = try RoomID(validating: "team-b")
            let changes: [StoreChange] = [
                .saveRoom(Sample.roomRecord(), passcode: nil), .saveRoom(Sample.roomRecord(other), passcode: nil),
                .saveAPITokens(Sample.room, [Self.tokens[0]]),
                // Written whole: the second list replaces the first.
                .saveAPITokens(Sample.room, Self.tokens),
                .saveAPITokens(other, [Self.tokens[0]]), .saveAPITokens(other, []),
            ]
            for store in [sqlite as any RoomStore, postgres] {
                try store.apply(changes)
                #expect(try store.loadRoom(Sample.room)?.apiTokens == Self.tokens)
                #expect(try store.loadRoom(other)?.apiTokens == [])
                let all = try store.loadRooms()
                #expect(all.first { $0.record.id == Sample.room }?.apiTokens == Self.tokens)
            }
            #expect(try postgres.appliedMigrations().contains("api_tokens"))
            // A cluster node that takes the room (its claim) has the tokens with it.
            #expect(try postgres.claim(room: Sample.room, epoch: 1)?.apiTokens == Self.tokens)

            // Copied from one store to another with their room.
            let copyURL = try server.makeDatabase()
            let copy = try PostgresRoomStore.open(url: copyURL)
            _ = try StoreCopy.copy(from: sqlite, to: copy)
            #expect(try copy.loadRoom(Sample.room)?.apiTokens == Self.tokens)
        }
    }
}
