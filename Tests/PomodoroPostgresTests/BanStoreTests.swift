import Testing
import PomodoroCore
import PomodoroStore
@testable import PomodoroPostgres
import PomodoroTestSupport

/// Bans kept alike by both stores: the real SQLite file and the real PostgreSQL server.
extension StoreConformanceTests {
    static let bans = [
        BanRecord(nameKey: "ivo", tokenHash: ResumeToken("token-2").hash, untilMs: 1_795_000_600_000),
        BanRecord(nameKey: "émile ✓; drop table room_ban; --", tokenHash: ResumeToken("token-3").hash,
                  untilMs: 1_795_000_900_000),
    ]

    @Test func bansRoundTripAlikeAndAreReplacedWhole() throws {
        try withBothStores { sqlite, postgres in
            let other = roomID("team-b")
            try applyToBoth((sqlite, postgres), [
                .saveRoom(Sample.roomRecord(), passcode: nil), .saveRoom(Sample.roomRecord(other), passcode: nil),
                .saveBans(Sample.room, Self.bans), .saveBans(other, [Self.bans[1]]),
            ])
            for store in [sqlite as any RoomStore, postgres] {
                #expect(try store.loadRoom(Sample.room)?.bans == Self.bans)
                let loaded = try store.loadRooms()
                #expect(loaded.map(\.bans) == [Self.bans, [Self.bans[1]]], "rooms in id order: team-a, team-b")
            }
            // Saving a room's bans replaces them; an empty list lifts them all; other rooms keep theirs.
            try applyToBoth((sqlite, postgres), [.saveBans(Sample.room, [Self.bans[1]])])
            for store in [sqlite as any RoomStore, postgres] {
                #expect(try store.loadRoom(Sample.room)?.bans == [Self.bans[1]])
            }
            try applyToBoth((sqlite, postgres), [.saveBans(Sample.room, [])])
            for store in [sqlite as any RoomStore, postgres] {
                #expect(try store.loadRoom(Sample.room)?.bans == [])
                #expect(try store.loadRoom(other)?.bans == [Self.bans[1]])
            }
        }
    }

    @Test func bansAreCopiedFromOneStoreToTheOther() throws {
        try withBothStores { sqlite, postgres in
            try sqlite.apply([.saveRoom(Sample.roomRecord(), passcode: nil), .saveBans(Sample.room, Self.bans)])
            let report = try StoreCopy.copy(from: sqlite, to: postgres)
            #expect(report.verified)
            #expect(try postgres.loadRoom(Sample.room)?.bans == Self.bans)
        }
    }
}
