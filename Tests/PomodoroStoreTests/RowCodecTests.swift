import Testing
import PomodoroCore
@testable import PomodoroStore
import PomodoroTestSupport

/// The codec both SQL stores share, without a database: every table's values line up with its columns,
/// each column is read as the kind it is written, and a record read back from its own values is the record.
@Suite struct RowCodecTests {
    /// A row made of a table's columns and the values the codec gave for them. A read of the wrong kind
    /// throws, so a value written in another column's place is caught.
    struct ValuesRow: StoreRow {
        let values: [String: ColumnValue]

        init(_ columns: [String], _ values: [ColumnValue]) throws {
            try #require(columns.count == values.count)
            self.values = Dictionary(uniqueKeysWithValues: zip(columns, values))
        }

        private func value(_ column: String) throws(StoreError) -> ColumnValue {
            guard let value = values[column] else { throw StoreError("no column \(column)") }
            return value
        }

        func text(_ column: String) throws(StoreError) -> String? {
            guard case .text(let text) = try value(column) else { throw StoreError("\(column) is not text") }
            return text
        }

        func integer(_ column: String) throws(StoreError) -> Int64? {
            guard case .integer(let number) = try value(column) else { throw StoreError("\(column) is not an integer") }
            return number
        }

        func boolean(_ column: String) throws(StoreError) -> Bool? {
            guard case .boolean(let flag) = try value(column) else { throw StoreError("\(column) is not a boolean") }
            return flag
        }
    }

    static func rooms() throws -> [RoomRecord] {
        let berlin = try ZoneName("Europe/Berlin")
        var aligned = Sample.roomRecord(roomID("aligned"), timer: .running(endsAtMs: 1_795_001_800_000), phase: .focus,
                                        pending: RoomSettings(focus: 3000, shortBreak: 600, aligned: try ZoneName("Asia/Kolkata")),
                                        host: nil, seq: .max)
        aligned.settings.aligned = berlin
        var run = Sample.roomRecord(roomID("run-own"), timer: .paused(remainingMs: 12_000), phase: .shortBreak)
        run.scheduledRun = ScheduledRun(schedule: ScheduleID(3), name: "Writing block", focusSessionsLeft: 2,
                                        focusSessionsDone: 2, roomSettings: RoomSettings(focus: 1500, shortBreak: 300,
                                                                                         aligned: berlin))
        return [Sample.roomRecord(), aligned, run]
    }

    @Test func roomsComeBackFromTheirValues() throws {
        for record in try Self.rooms() {
            let row = try ValuesRow(StoreSchema.roomColumns, RowCodec.values(of: record, passcode: "verifier"))
            let stored = try RowCodec.storedRoom(from: row, members: [], bans: [])
            #expect(stored.record == record)
            #expect(stored.passcode == "verifier")
        }
        #expect(StoreSchema.roomColumns.count == Set(StoreSchema.roomColumns).count)
    }

    @Test func membersBansAndSchedulesComeBackFromTheirValues() throws {
        var member = Sample.member(2, name: "Bob", away: true, connected: false)
        member.creditedSinceMs = 1_795_000_000_000
        let memberRow = try ValuesRow(StoreSchema.memberColumns, RowCodec.values(of: member, in: Sample.room))
        #expect(try RowCodec.member(from: memberRow) == member)
        #expect(try memberRow.string("room_id") == Sample.room.rawValue)

        let ban = BanRecord(nameKey: "bob", tokenHash: String(repeating: "ab", count: 32), untilMs: 1_795_000_000_000)
        #expect(try RowCodec.ban(from: ValuesRow(StoreSchema.banColumns, RowCodec.values(of: ban, at: 3, in: Sample.room)))
                == ban)

        let schedule = Schedule(id: ScheduleID(7), name: "Launch day", time: try LocalTime(parsing: "02:30"),
                                zone: try ZoneName("America/New_York"), recurrence: .weekly([.monday, .friday]),
                                settings: RoomSettings(focus: 3000, shortBreak: 600), length: .focusSessions(4),
                                warningMinutes: 5, enabled: false, since: WallTime(seconds: 1_795_608_000))
        let scheduleRow = try ValuesRow(StoreSchema.scheduleColumns, RowCodec.values(of: schedule, in: Sample.room))
        #expect(try RowCodec.schedule(from: scheduleRow, room: Sample.room) == schedule)
        #expect(try RowCodec.scheduleRoom(from: scheduleRow) == Sample.room)
    }

    @Test func journalRowsComeBackFromTheirValues() throws {
        let session = Sample.session(endedAtMs: 1_795_000_000_000, participants: [Sample.participant("m1", "Ada")])
        let sessionRow = try ValuesRow(["id"] + StoreSchema.sessionColumns,
                                       [.integer(Int64(9))] + RowCodec.values(of: session))
        var participantValues = RowCodec.values(of: session.participants[0], at: 0, session: 9)
        #expect(participantValues[0] == .integer(Int64(9)))
        participantValues.removeFirst(2)    // session_id and ord: the join reads neither
        let joined = try ValuesRow(["id"] + StoreSchema.sessionColumns + ["member_id", "name", "task", "focus_ms"],
                                   [.integer(Int64(9))] + RowCodec.values(of: session) + participantValues)
        #expect(try SessionRows.all([joined], room: Sample.room) == [session])
        #expect(try RowCodec.session(from: sessionRow, room: Sample.room).endedAtMs == session.endedAtMs)

        let interruption = InterruptionRecord(room: Sample.room, member: nil, name: nil, atMs: 1_795_000_000_000)
        let interruptionRow = try ValuesRow(StoreSchema.interruptionColumns, RowCodec.values(of: interruption))
        #expect(try RowCodec.interruption(from: interruptionRow, room: Sample.room) == interruption)
    }

    /// A delta's values are the bucket `JournalTotals` makes of it, before 1970 too (floored).
    @Test func totalsValuesAreTheBucketsOfTheirDelta() throws {
        let delta = JournalTotals.Delta(name: "Ada", atMs: -1, sessions: 1, focusMs: 60_000, interruptions: 0)
        for table in StoreSchema.totalsTables {
            var values = RowCodec.values(of: delta, in: Sample.room, length: table.length, ends: table.ends)
            var columns = StoreSchema.totalsColumns(bucket: "bucket", ends: table.ends)
            if !table.ends {
                columns += ["first_end_ms", "last_end_ms"]
                values += [.integer(Int64?.none), .integer(Int64?.none)]
            }
            let bucket = try RowCodec.bucket(from: ValuesRow(columns, values))
            #expect(bucket.index == -1)
            #expect(bucket.name == "Ada")
            #expect(bucket.firstEndMs == (table.ends ? -1 : nil))
            if table.ends { #expect(bucket == delta.bucket(of: table.length)) }
        }
    }

    /// A row a store cannot read is an error naming the room or the column, never a crash.
    @Test func unreadableRowsAreErrors() throws {
        func room(with column: String, _ value: ColumnValue) throws -> RoomRecord {
            var values = RowCodec.values(of: Sample.roomRecord(), passcode: nil)
            values[try #require(StoreSchema.roomColumns.firstIndex(of: column))] = value
            return try RowCodec.room(from: ValuesRow(StoreSchema.roomColumns, values))
        }
        #expect(throws: StoreError("room team-a: unknown phase \"lunch\"")) { try room(with: "phase", .text("lunch")) }
        #expect(throws: StoreError("column cycle is NULL")) { try room(with: "cycle", .integer(Int64?.none)) }
        #expect(throws: StoreError("room team-a: timer \"idle\" with timer_ms 5")) {
            try room(with: "timer_ms", .integer(Int64(5)))
        }
    }
}
