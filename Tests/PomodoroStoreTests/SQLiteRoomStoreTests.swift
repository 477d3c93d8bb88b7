import Foundation
import Testing
import PomodoroCore
@testable import PomodoroStore
@testable import PomodoroSQLite
import PomodoroTestSupport

/// Every record kind written to a real SQLite file and read back; atomic batches; the file's settings.
@Suite struct SQLiteRoomStoreTests {
    @Test func roomsInEveryTimerStateRoundTrip() throws {
        try withStore { (store, _) throws in
            let pending = RoomSettings(focus: 3000, shortBreak: 600, longBreak: 1200, longBreakEvery: 2, autoStart: false)
            let rooms: [(RoomRecord, String?)] = [
                (Sample.roomRecord(roomID("a-idle"), timer: .idle, host: nil, seq: 0), nil),
                (Sample.roomRecord(roomID("b-ready"), timer: .ready(remainingMs: 1_500_000), phase: .focus,
                                   pending: pending), "verifier$1$salt$hash"),
                (Sample.roomRecord(roomID("c-running"), timer: .running(endsAtMs: 1_795_001_234_567), phase: .shortBreak,
                                   seq: .max), nil),
                (Sample.roomRecord(roomID("d_paused"), timer: .paused(remainingMs: 42_001), phase: .longBreak,
                                   pending: pending, host: nil, seq: UInt64(Int64.max) + 1), "p"),
            ]
            try store.apply(rooms.map { .saveRoom($0.0, passcode: $0.1) })
            let loaded = try store.loadRooms()
            #expect(loaded == rooms.map { StoredRoom(record: $0.0, members: [], passcode: $0.1) })
        }
    }

    @Test func roomsWithoutFocusTimesRoundTrip() throws {
        try withStore { (store, _) throws in
            var record = Sample.roomRecord()
            record.focusStartedAtMs = nil
            record.focusCreditedUntilMs = nil
            record.controlMode = .anyone
            record.stats = FocusStats()
            try store.apply([.saveRoom(record, passcode: nil)])
            #expect(try store.loadRooms() == [StoredRoom(record: record, members: [], passcode: nil)])
        }
    }

    @Test func membersWithEveryFieldComeBackInJoinOrder() throws {
        try withStore { (store, _) throws in
            var ada = Sample.member(1, name: "Ada", joinOrder: 2)
            ada.creditedSinceMs = 1_795_000_600_123
            let zoe = Sample.member(2, name: "Zoë 🍅, \"the\" tester", joinOrder: 0, away: true, connected: false)
            let bob = Sample.member(3, name: "Bob", joinOrder: 1, away: false, connected: false)
            let other = roomID("team-b")
            try store.apply([
                .saveRoom(Sample.roomRecord(), passcode: nil), .saveRoom(Sample.roomRecord(other), passcode: nil),
                .saveMember(Sample.room, ada), .saveMember(Sample.room, zoe), .saveMember(Sample.room, bob),
                .saveMember(other, Sample.member(1, name: "Eve")),
            ])
            let loaded = try store.loadRooms()
            #expect(loaded.map(\.record.id) == [Sample.room, other])
            #expect(loaded.first?.members == [zoe, bob, ada])
            #expect(loaded.last?.members == [Sample.member(1, name: "Eve")])
        }
    }

    @Test func savingAgainUpdatesInPlaceAndKeepsTheMembers() throws {
        try withStore { (store, _) throws in
            var ada = Sample.member(1, name: "Ada")
            let bob = Sample.member(2, name: "Bob")
            try store.apply([.saveRoom(Sample.roomRecord(seq: 1), passcode: "old"), .saveMember(Sample.room, ada),
                             .saveMember(Sample.room, bob)])
            // The room alone, as after a control: its members must not go with the old row.
            let later = Sample.roomRecord(timer: .running(endsAtMs: 1_795_000_000_000), phase: .focus, seq: 2)
            try store.apply([.saveRoom(later, passcode: nil)])
            #expect(try store.loadRooms() == [StoredRoom(record: later, members: [ada, bob], passcode: nil)])
            ada.task = "write the store"
            ada.away = true
            try store.apply([.saveMember(Sample.room, ada)])
            #expect(try store.loadRooms() == [StoredRoom(record: later, members: [ada, bob], passcode: nil)])
        }
    }

    @Test func removeMemberRemovesOnlyThatMember() throws {
        try withStore { (store, _) throws in
            let ada = Sample.member(1, name: "Ada"), bob = Sample.member(2, name: "Bob")
            try store.apply([.saveRoom(Sample.roomRecord(), passcode: nil), .saveMember(Sample.room, ada),
                             .saveMember(Sample.room, bob), .removeMember(Sample.room, ada.id)])
            #expect(try store.loadRooms().first?.members == [bob])
        }
    }

    @Test func sessionsWithNoneOneAndManyParticipantsRoundTrip() throws {
        try withStore { (store, _) throws in
            let sessions = [
                Sample.session(endedAtMs: 1_795_000_000_000),
                Sample.session(endedAtMs: 1_795_000_100_000, lengthSeconds: 1620,
                               participants: [Sample.participant("m1", "Ada", task: "proofs", focusMs: 1_620_000)]),
                Sample.session(endedAtMs: 1_795_000_200_000, participants: [
                    Sample.participant("m3", "Zoë", task: "=1+1, \"quoted\"\nnext line", focusMs: 900_123),
                    Sample.participant("m1", "Ada", task: "", focusMs: 1_500_000),
                    Sample.participant("m2", "Bob", task: "review", focusMs: 0),
                ]),
            ]
            try store.apply(sessions.map(StoreChange.focusCompleted))
            #expect(try store.sessions(room: Sample.room, endedFrom: nil, before: nil, limit: nil) == sessions)
        }
    }

    @Test func sessionQueriesTakeAHalfOpenRangeAndTheNewestLimit() throws {
        try withStore { (store, _) throws in
            let other = roomID("team-b")
            let sessions = (0..<6).map { Sample.session(endedAtMs: 1_000_000 + Int64($0) * 1000,
                                                        participants: [Sample.participant("m1", "Ada")]) }
            // Written out of order, and interleaved with another room's.
            let written = sessions.reversed() + [Sample.session(other, endedAtMs: 1_002_500)]
            try store.apply(written.map(StoreChange.focusCompleted))
            #expect(try store.sessions(room: Sample.room, endedFrom: nil, before: nil, limit: nil) == sessions)
            #expect(try store.sessions(room: Sample.room, endedFrom: 1_002_000, before: 1_004_000, limit: nil)
                    == Array(sessions[2..<4]))
            #expect(try store.sessions(room: Sample.room, endedFrom: nil, before: nil, limit: 2) == Array(sessions[4...]))
            #expect(try store.sessions(room: Sample.room, endedFrom: nil, before: 1_003_000, limit: 2)
                    == Array(sessions[1..<3]))
            #expect(try store.sessions(room: Sample.room, endedFrom: nil, before: nil, limit: 0) == [])
            #expect(try store.sessions(room: other, endedFrom: nil, before: nil, limit: nil).count == 1)
            #expect(try store.sessions(room: roomID("nobody"), endedFrom: nil, before: nil, limit: nil) == [])
        }
    }

    @Test func interruptionsOfTheRoomAndOfMembersRoundTripInARange() throws {
        try withStore { (store, _) throws in
            let records = [
                InterruptionRecord(room: Sample.room, member: nil, name: nil, atMs: 1000),
                InterruptionRecord(room: Sample.room, member: MemberID("m1"), name: "Ada", atMs: 2000),
                InterruptionRecord(room: Sample.room, member: MemberID("m2"), name: "Bob", atMs: 2000),
                InterruptionRecord(room: Sample.room, member: nil, name: nil, atMs: 3000),
            ]
            try store.apply(records.map(StoreChange.interrupted)
                            + [.interrupted(InterruptionRecord(room: roomID("team-b"), member: nil, name: nil,
                                                               atMs: 2000))])
            #expect(try store.interruptions(room: Sample.room, from: nil, before: nil) == records)
            #expect(try store.interruptions(room: Sample.room, from: 2000, before: 3000) == Array(records[1...2]))
            #expect(try store.interruptions(room: Sample.room, from: 2001, before: nil) == [records[3]])
        }
    }

    @Test func aBatchWithAFailingChangeLeavesNothing() throws {
        try withStore { (store, _) throws in
            try store.apply([.saveRoom(Sample.roomRecord(seq: 1), passcode: nil)])
            let batch: [StoreChange] = [
                .saveRoom(Sample.roomRecord(seq: 2), passcode: nil),
                .saveMember(Sample.room, Sample.member(1, name: "Ada")),
                .focusCompleted(Sample.session(endedAtMs: 5000, participants: [Sample.participant("m1", "Ada")])),
                .interrupted(InterruptionRecord(room: Sample.room, member: nil, name: nil, atMs: 4000)),
                .saveMember(roomID("no-such-room"), Sample.member(2, name: "Bob")),    // no room row: foreign key
            ]
            let error = #expect(throws: StoreError.self) { try store.apply(batch) }
            #expect(error?.message.contains("FOREIGN KEY") == true)
            #expect(try store.loadRooms() == [StoredRoom(record: Sample.roomRecord(seq: 1), members: [], passcode: nil)])
            #expect(try store.sessions(room: Sample.room, endedFrom: nil, before: nil, limit: nil) == [])
            #expect(try store.interruptions(room: Sample.room, from: nil, before: nil) == [])
            #expect(try store.column(sql: "SELECT count(*) FROM session_member") == ["0"])
        }
    }

    /// The database holds names, tasks and who was where: whatever the umask, a folder the store creates is
    /// 0700 and the file with its `-wal` and `-shm` is 0600.
    @Test func theStoreCreatesItsFolderAndFilesForTheOwnerAlone() throws {
        try withTemporaryFolder { (folder) throws in
            func mode(_ path: String) throws -> Int {
                try #require(FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
            }
            // What the process's umask gives a file or folder made without care: the store must do better.
            let control = folder.appendingPathComponent("control").path
            try FileManager.default.createDirectory(atPath: control, withIntermediateDirectories: false)
            #expect(try mode(control) & 0o077 != 0, "the umask must leave group or other bits for this test to mean anything")

            let path = folder.appendingPathComponent("data/pomodoro.sqlite").path
            let store = try SQLiteRoomStore.open(path: path)
            try store.apply([.saveRoom(Sample.roomRecord(), passcode: nil)])
            #expect(try mode(folder.appendingPathComponent("data").path) == 0o700)
            for file in [path, path + "-wal", path + "-shm"] {
                #expect(try mode(file) == 0o600, "\(file)")
            }
            try store.close()
        }
    }

    @Test func reopeningAfterCloseKeepsEverything() throws {
        try withTemporaryFolder { (folder) throws in
            let path = folder.appendingPathComponent("pomodoro.sqlite").path
            let store = try SQLiteRoomStore.open(path: path)
            let session = Sample.session(endedAtMs: 5000, participants: [Sample.participant("m1", "Ada")])
            let interruption = InterruptionRecord(room: Sample.room, member: nil, name: nil, atMs: 4000)
            let room = StoredRoom(record: Sample.roomRecord(timer: .running(endsAtMs: 9000), phase: .focus),
                                  members: [Sample.member(1, name: "Ada"), Sample.member(2, name: "Bob")], passcode: "p")
            try store.apply([.saveRoom(room.record, passcode: room.passcode)]
                            + room.members.map { .saveMember(Sample.room, $0) }
                            + [.focusCompleted(session), .interrupted(interruption)])
            try store.close()
            #expect(throws: StoreError.self) { try store.loadRooms() }

            let reopened = try SQLiteRoomStore.open(path: path)
            #expect(try reopened.loadRooms() == [room])
            #expect(try reopened.sessions(room: Sample.room, endedFrom: nil, before: nil, limit: nil) == [session])
            #expect(try reopened.interruptions(room: Sample.room, from: nil, before: nil) == [interruption])
        }
    }

    @Test func theFileIsInWALModeWithFullSyncAndForeignKeys() throws {
        try withStore { (store, path) throws in
            #expect(try store.column(sql: "PRAGMA journal_mode") == ["wal"])
            #expect(try store.column(sql: "PRAGMA synchronous") == ["1"])     // 1 is NORMAL
            #expect(try store.column(sql: "PRAGMA foreign_keys") == ["1"])
            try store.apply([.saveRoom(Sample.roomRecord(), passcode: nil)])
            #expect(FileManager.default.fileExists(atPath: path + "-wal"))
        }
    }

    @Test func openingCreatesTheMissingFolders() throws {
        try withTemporaryFolder { (folder) throws in
            let path = folder.appendingPathComponent("data/nested/pomodoro.sqlite").path
            let store = try SQLiteRoomStore.open(path: path)
            try store.apply([.saveRoom(Sample.roomRecord(), passcode: nil)])
            #expect(FileManager.default.fileExists(atPath: path))
        }
    }

    @Test func aPathThatCannotBeADatabaseIsAStoreError() throws {
        try withTemporaryFolder { (folder) throws in
            // The path is a folder.
            let error = #expect(throws: StoreError.self) { try SQLiteRoomStore.open(path: folder.path) }
            #expect(error?.message.contains(folder.path) == true)
            // A file that is not SQLite.
            let junk = folder.appendingPathComponent("junk.sqlite")
            try Data(repeating: 0x41, count: 4096).write(to: junk)
            #expect(throws: StoreError.self) { try SQLiteRoomStore.open(path: junk.path) }
        }
    }

    @Test func aRowThatDoesNotDecodeIsAStoreErrorNotACrash() throws {
        try withStore { (store, _) throws in
            try store.apply([.saveRoom(Sample.roomRecord(), passcode: nil)])
            try store.execute(sql: "UPDATE room SET phase = 'nap'")
            let error = #expect(throws: StoreError.self) { try store.loadRooms() }
            #expect(error?.message.contains("nap") == true)

            try store.execute(sql: "UPDATE room SET phase = 'focus', timer_kind = 'running', timer_ms = NULL")
            #expect(throws: StoreError.self) { try store.loadRooms() }

            try store.execute(sql: "UPDATE room SET timer_kind = 'idle', timer_ms = NULL, cycle = 'three'")
            #expect(throws: StoreError.self) { try store.loadRooms() }
        }
    }
}

/// One room read back for a join, members and lock included.
@Suite struct LoadOneRoomTests {
    @Test func oneRoomComesBackWithItsMembersAndLock() throws {
        try withStore { (store, _) throws in
            let room = Sample.roomRecord()
            try store.apply([.saveRoom(room, passcode: "lock"),
                             .saveMember(room.id, Sample.member(2, name: "Lin")),
                             .saveMember(room.id, Sample.member(1, name: "Ada")),
                             .saveRoom(Sample.roomRecord(roomID("team-b")), passcode: nil)])
            let loaded = try #require(try store.loadRoom(room.id))
            #expect(loaded.record == room)
            #expect(loaded.passcode == "lock")
            #expect(loaded.members.map(\.name) == ["Ada", "Lin"], "in join order")
            #expect(try store.loadRoom(roomID("never-stored")) == nil)
        }
    }
}
