import Foundation
import Testing
import PomodoroCore
@testable import PomodoroStore
import PomodoroTestSupport

/// The journal as CSV: one row per participant, local times with offsets, RFC 4180 quoting, and no
/// formulas for a spreadsheet to run.
@Suite struct FocusReportCSVTests {
    let header = "room,started_at,ended_at,length_seconds,member_id,member_name,task,focus_seconds\r\n"

    func session(_ room: RoomID = Sample.room, startedAtMs: Int64, participants: [FocusSessionRecord.Participant])
        -> FocusSessionRecord {
        FocusSessionRecord(room: room, startedAtMs: startedAtMs, endedAtMs: startedAtMs + 1_500_000, lengthSeconds: 1500,
                           participants: participants)
    }

    @Test func oneRowPerParticipantWithLocalTimesAndOffsets() {
        let sessions = [session(startedAtMs: utcMs(2026, 11, 21, 8, 30) + 999, participants: [
            Sample.participant("m1", "Ada", task: "proofs", focusMs: 1_500_000),
            Sample.participant("m2", "Bob", task: "", focusMs: 600_999),
        ])]
        let csv = FocusReport.csv(sessions, timeZone: TimeZone(identifier: "Europe/Berlin")!)
        #expect(csv == header
                + "team-a,2026-11-21T09:30:00+01:00,2026-11-21T09:55:00+01:00,1500,m1,Ada,proofs,1500\r\n"
                + "team-a,2026-11-21T09:30:00+01:00,2026-11-21T09:55:00+01:00,1500,m2,Bob,,600\r\n")
    }

    @Test func offsetsFollowTheZoneAndTheSeason() {
        func times(_ startedAtMs: Int64, _ zone: String) -> String {
            let csv = FocusReport.csv([session(startedAtMs: startedAtMs, participants: [])],
                                      timeZone: TimeZone(identifier: zone)!)
            return csv.split(separator: "\r\n")[1].split(separator: ",")[1...2].joined(separator: " ")
        }
        #expect(times(utcMs(2026, 7, 1, 23, 50), "Europe/Berlin") == "2026-07-02T01:50:00+02:00 2026-07-02T02:15:00+02:00")
        #expect(times(utcMs(2026, 1, 1, 3), "America/New_York") == "2025-12-31T22:00:00-05:00 2025-12-31T22:25:00-05:00")
        #expect(times(utcMs(2026, 7, 1, 3), "America/New_York") == "2026-06-30T23:00:00-04:00 2026-06-30T23:25:00-04:00")
        #expect(times(utcMs(2026, 1, 1, 0), "Asia/Kolkata") == "2026-01-01T05:30:00+05:30 2026-01-01T05:55:00+05:30")
        #expect(times(utcMs(2026, 1, 1, 0), "UTC") == "2026-01-01T00:00:00+00:00 2026-01-01T00:25:00+00:00")
        // Across the spring change in Berlin: starts in CET, ends in CEST.
        #expect(times(utcMs(2026, 3, 29, 0, 50), "Europe/Berlin") == "2026-03-29T01:50:00+01:00 2026-03-29T03:15:00+02:00")
    }

    @Test func aSessionWithoutParticipantsHasOneRowWithEmptyMemberFields() {
        let csv = FocusReport.csv([session(startedAtMs: utcMs(2026, 11, 21, 8, 30), participants: [])],
                                  timeZone: TimeZone(identifier: "UTC")!)
        #expect(csv == header + "team-a,2026-11-21T08:30:00+00:00,2026-11-21T08:55:00+00:00,1500,,,,\r\n")
        #expect(FocusReport.csv([], timeZone: TimeZone(identifier: "UTC")!) == header)
    }

    @Test func fieldsAreQuotedPerRFC4180() {
        #expect(FocusReport.csvText("plain text") == "plain text")
        #expect(FocusReport.csvText("Smith, Jane") == "\"Smith, Jane\"")
        #expect(FocusReport.csvText("say \"hi\"") == "\"say \"\"hi\"\"\"")
        #expect(FocusReport.csvText("line one\nline two") == "\"line one\nline two\"")
        #expect(FocusReport.csvText("a\r\nb") == "\"a\r\nb\"")
        #expect(FocusReport.csvText("") == "")
        let csv = FocusReport.csv([session(startedAtMs: 0, participants: [
            Sample.participant("m1", "Smith, Jane", task: "say \"hi\"\r\nthen go", focusMs: 1000),
        ])], timeZone: TimeZone(identifier: "UTC")!)
        #expect(csv.hasSuffix(",m1,\"Smith, Jane\",\"say \"\"hi\"\"\r\nthen go\",1\r\n"))
    }

    @Test func textThatLooksLikeAFormulaIsDefused() {
        #expect(FocusReport.csvText("=SUM(A1:A9)") == "'=SUM(A1:A9)")
        #expect(FocusReport.csvText("+1 555") == "'+1 555")
        #expect(FocusReport.csvText("-2") == "'-2")
        #expect(FocusReport.csvText("@SUM(A1)") == "'@SUM(A1)")
        #expect(FocusReport.csvText("\tindented") == "'\tindented")
        #expect(FocusReport.csvText("\rreturn") == "\"'\rreturn\"")
        #expect(FocusReport.csvText("=HYPERLINK(\"http://x\",\"y\")") == "\"'=HYPERLINK(\"\"http://x\"\",\"\"y\"\")\"")
        #expect(FocusReport.csvText("a=b") == "a=b")
        #expect(FocusReport.csvText("1+1") == "1+1")
        // Every text column is guarded, the room's too (room names may start with '-').
        let csv = FocusReport.csv([session(roomID("-team"), startedAtMs: 0, participants: [
            Sample.participant("@m1", "=Ada", task: "+task", focusMs: 0),
        ])], timeZone: TimeZone(identifier: "UTC")!)
        #expect(csv.hasSuffix("\r\n'-team,1970-01-01T00:00:00+00:00,1970-01-01T00:25:00+00:00,1500,'@m1,'=Ada,'+task,0\r\n"))
    }
}
