import Foundation
import Testing
import PomodoroCore
import PomodoroStore
import PomodoroSQLite
@testable import PomodoroPostgres
import PomodoroTestSupport

/// A host's new passcode, or its removal, reaches both stores the way the server sends it: with the room's
/// row that the change saves (`takeStoreChanges` after `lockChanged`), replacing the hash kept before.
@Suite(.timeLimit(.minutes(TestTime.minutes(5))), .onOwnThreads)
struct LockChangeStoreTests {
    @Test func aChangedOrRemovedLockReplacesTheStoredOneInBothStores() async throws {
        let url = try await PostgresTestServer.makeDatabase()
        try withTemporaryFolder { folder in
            let stores: [any RoomStore] = [
                try SQLiteRoomStore.open(path: folder.appendingPathComponent("pomodoro.sqlite").path),
                try PostgresRoomStore.open(url: url),
            ]
            let now = Instant(nanoseconds: 5_000_000_000)
            var room = Room(id: Sample.room, now: now)
            let host = try room.join(name: "Hana", token: nil, freshToken: ResumeToken("t1"), now: now).memberID
            func save(_ lock: String?) throws {
                let changes = room.takeStoreChanges(wallOffsetNanoseconds: 1_795_000_000_000_000_000, passcode: lock)
                for store in stores { try store.apply(changes) }
            }
            try save("verifier-old")
            for store in stores { #expect(try store.loadRoom(Sample.room)?.passcode == "verifier-old") }

            _ = try room.lockChanged(locked: true, by: host, now: now + .seconds(1))
            try save("verifier-new")
            for store in stores {
                let stored = try #require(try store.loadRoom(Sample.room))
                #expect(stored.passcode == "verifier-new")
                #expect(stored.members.map(\.name) == ["Hana"], "the members stay")
            }

            _ = try room.lockChanged(locked: false, by: host, now: now + .seconds(2))
            try save(nil)
            for store in stores { #expect(try store.loadRoom(Sample.room)?.passcode == nil) }
        }
    }
}
