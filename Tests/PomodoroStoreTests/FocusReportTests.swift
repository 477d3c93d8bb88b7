import Foundation
import Testing
import PomodoroCore
@testable import PomodoroStore
import PomodoroTestSupport

/// Streaks, day windows and members, with days counted in the zone the client names.
@Suite struct FocusReportTests {
    let utc = TimeZone(identifier: "UTC")!

    func zone(_ identifier: String) -> TimeZone { TimeZone(identifier: identifier)! }

    /// Midday UTC of a `yyyy-MM-dd` date.
    func noon(_ date: String) -> Int64 {
        let parts = date.split(separator: "-").map { Int($0)! }
        return utcMs(parts[0], parts[1], parts[2])
    }

    func ended(_ ms: Int64, lengthSeconds: Int = 1500, _ participants: FocusSessionRecord.Participant...)
        -> FocusSessionRecord {
        Sample.session(endedAtMs: ms, lengthSeconds: lengthSeconds, participants: participants)
    }

    func report(_ sessions: [FocusSessionRecord], interruptions: [InterruptionRecord] = [], days: Int = 7,
                zone: TimeZone? = nil, nowMs: Int64) -> FocusReport {
        FocusReport.make(room: Sample.room, sessions: sessions, interruptions: interruptions, days: days,
                         timeZone: zone ?? utc, nowMs: nowMs)
    }

    // MARK: Streaks across month and year ends

    @Test(arguments: [("2026-01-31", "2026-02-01"), ("2026-02-28", "2026-03-01"), ("2025-12-31", "2026-01-01"),
                      ("2024-02-29", "2024-03-01")])
    func aStreakRunsOverTheEndOfAMonth(_ last: String, _ first: String) {
        let r = report([ended(noon(last)), ended(noon(first))], days: 2, nowMs: noon(first) + 3_600_000)
        #expect(r.totals.longestStreak == 2)
        #expect(r.totals.currentStreak == 2)
        #expect(r.days.map(\.date) == [last, first])
        #expect(r.days.map(\.focusSessions) == [1, 1])
    }

    @Test func theTwentyNinthOfFebruaryBreaksAStreakInALeapYear() {
        let r = report([ended(noon("2024-02-28")), ended(noon("2024-03-01"))], days: 3, nowMs: noon("2024-03-01"))
        #expect(r.totals.longestStreak == 1)
        #expect(r.totals.currentStreak == 1)
        #expect(r.days.map(\.date) == ["2024-02-28", "2024-02-29", "2024-03-01"])
        #expect(r.days.map(\.focusSessions) == [1, 0, 1])
    }

    // MARK: Time zones

    @Test func aSessionAtHalfPastElevenUTCCountsOnTheNextDayInTaipeiAndTheSameDayInNewYork() {
        let sessions = [ended(utcMs(2026, 11, 20, 23, 30))]
        let now = utcMs(2026, 11, 21, 12)
        let taipei = report(sessions, days: 2, zone: zone("Asia/Taipei"), nowMs: now)
        #expect(taipei.today == "2026-11-21")
        #expect(taipei.days.map(\.date) == ["2026-11-20", "2026-11-21"])
        #expect(taipei.days.map(\.focusSessions) == [0, 1])
        let newYork = report(sessions, days: 2, zone: zone("America/New_York"), nowMs: now)
        #expect(newYork.today == "2026-11-21")
        #expect(newYork.days.map(\.focusSessions) == [1, 0])
        #expect(newYork.timeZone == "America/New_York")
        let inUTC = report(sessions, days: 2, nowMs: now)
        #expect(inUTC.days.map(\.focusSessions) == [1, 0])
        // The default zone is named as documented, not by Foundation's name for it ("GMT").
        #expect(inUTC.timeZone == "UTC")
        #expect(report(sessions, days: 2, zone: FocusReport.timeZone(named: nil)!, nowMs: now).timeZone == "UTC")
    }

    @Test func aStreakCanBeWholeInOneZoneAndBrokenInAnother() {
        // 23:30 UTC on the 10th, then 01:00 UTC on the 12th: a day apart in Taipei and New York, not in UTC.
        let apart = [ended(utcMs(2026, 1, 10, 23, 30)), ended(utcMs(2026, 1, 12, 1))]
        let now = utcMs(2026, 1, 12, 2)
        let inUTC = report(apart, nowMs: now)
        #expect(inUTC.totals.longestStreak == 1)
        #expect(inUTC.totals.currentStreak == 1)
        for identifier in ["Asia/Taipei", "America/New_York"] {
            let there = report(apart, zone: zone(identifier), nowMs: now)
            #expect(there.totals.longestStreak == 2, "\(identifier)")
            #expect(there.totals.currentStreak == 2, "\(identifier)")
        }
        // 10:00 UTC on the 10th, then 20:00 UTC on the 11th: consecutive in UTC, two days apart in Taipei.
        let consecutive = [ended(utcMs(2026, 1, 10, 10)), ended(utcMs(2026, 1, 11, 20))]
        #expect(report(consecutive, nowMs: utcMs(2026, 1, 11, 21)).totals.longestStreak == 2)
        let taipei = report(consecutive, zone: zone("Asia/Taipei"), nowMs: utcMs(2026, 1, 11, 21))
        #expect(taipei.totals.longestStreak == 1)
        #expect(taipei.days.suffix(3).map(\.focusSessions) == [1, 0, 1])
    }

    @Test func daysFollowBerlinAcrossTheSpringChange() {
        // Clocks go from 02:00 CET to 03:00 CEST on 29 March 2026: that day has 23 hours.
        let sessions = [
            ended(utcMs(2026, 3, 27, 22, 59)),   // 23:59 CET, the 27th
            ended(utcMs(2026, 3, 28, 12)),       // the 28th
            ended(utcMs(2026, 3, 28, 23, 30)),   // 00:30 CET, the 29th
            ended(utcMs(2026, 3, 29, 21, 30)),   // 23:30 CEST, the 29th
            ended(utcMs(2026, 3, 29, 22, 30)),   // 00:30 CEST, the 30th (at +01:00 it would be the 29th)
        ]
        let r = report(sessions, days: 4, zone: zone("Europe/Berlin"), nowMs: utcMs(2026, 3, 30, 10))
        #expect(r.days.map(\.date) == ["2026-03-27", "2026-03-28", "2026-03-29", "2026-03-30"])
        #expect(r.days.map(\.focusSessions) == [1, 1, 2, 1])
        #expect(r.totals.currentStreak == 4)
        #expect(r.totals.longestStreak == 4)
    }

    @Test func daysFollowBerlinAcrossTheAutumnChange() {
        // Clocks go from 03:00 CEST back to 02:00 CET on 25 October 2026: that day has 25 hours.
        let sessions = [
            ended(utcMs(2026, 10, 24, 22, 30)),  // 00:30 CEST, the 25th
            ended(utcMs(2026, 10, 25, 22, 30)),  // 23:30 CET, the 25th (at +02:00 it would be the 26th)
            ended(utcMs(2026, 10, 25, 23, 30)),  // 00:30 CET, the 26th
        ]
        let r = report(sessions, days: 3, zone: zone("Europe/Berlin"), nowMs: utcMs(2026, 10, 26, 12))
        #expect(r.days.map(\.date) == ["2026-10-24", "2026-10-25", "2026-10-26"])
        #expect(r.days.map(\.focusSessions) == [0, 2, 1])
        #expect(r.totals.currentStreak == 2)
    }

    // MARK: The current streak

    @Test func theCurrentStreakIsZeroWhenTheLastSessionWasTwoDaysAgo() {
        let sessions = [ended(noon("2026-01-01")), ended(noon("2026-01-02")), ended(noon("2026-01-03"))]
        let r = report(sessions, nowMs: noon("2026-01-05"))
        #expect(r.totals.currentStreak == 0)
        #expect(r.totals.longestStreak == 3)
        #expect(report(sessions, nowMs: utcMs(2026, 1, 5, 0, 0, 0)).totals.currentStreak == 0)
    }

    @Test func theCurrentStreakRunsThroughYesterdayWhileTodayHasNoneYet() {
        let sessions = [ended(noon("2026-01-01")), ended(noon("2026-01-02")), ended(noon("2026-01-03"))]
        #expect(report(sessions, nowMs: noon("2026-01-04")).totals.currentStreak == 3)
        #expect(report(sessions, nowMs: utcMs(2026, 1, 5, 0) - 1).totals.currentStreak == 3, "the 4th's last ms")
        #expect(report(sessions + [ended(noon("2026-01-04"))], nowMs: noon("2026-01-04") + 1).totals.currentStreak == 4)
        #expect(report(sessions, nowMs: noon("2026-01-03")).totals.currentStreak == 3, "today counts")
    }

    @Test func theLongestStreakIsTheLongestRunNotTheLatest() {
        let sessions = ["2026-02-01", "2026-02-02", "2026-02-03", "2026-02-04", "2026-02-10", "2026-02-11"]
            .map { ended(noon($0)) }
        let r = report(sessions + [ended(noon("2026-02-02") + 60_000)], nowMs: noon("2026-02-11"))
        #expect(r.totals.longestStreak == 4)
        #expect(r.totals.currentStreak == 2)
        #expect(report([], nowMs: noon("2026-02-11")).totals
                == FocusReport.Totals(focusSessions: 0, focusSeconds: 0, interruptions: 0, currentStreak: 0,
                                      longestStreak: 0))
    }

    // MARK: Windows and totals

    @Test func theWindowHasEveryDayWithZerosAndTotalsAreAllTime() {
        let sessions = [ended(noon("2026-11-01"), lengthSeconds: 1500), ended(noon("2026-11-16"), lengthSeconds: 1500),
                        ended(noon("2026-11-21"), lengthSeconds: 1200)]
        let r = report(sessions, days: 7, nowMs: noon("2026-11-21"))
        #expect(r.today == "2026-11-21")
        #expect(r.timeZone == "UTC")
        #expect(r.room == Sample.room)
        #expect(r.days == [
            .init(date: "2026-11-15", focusSessions: 0, focusSeconds: 0, interruptions: 0),
            .init(date: "2026-11-16", focusSessions: 1, focusSeconds: 1500, interruptions: 0),
            .init(date: "2026-11-17", focusSessions: 0, focusSeconds: 0, interruptions: 0),
            .init(date: "2026-11-18", focusSessions: 0, focusSeconds: 0, interruptions: 0),
            .init(date: "2026-11-19", focusSessions: 0, focusSeconds: 0, interruptions: 0),
            .init(date: "2026-11-20", focusSessions: 0, focusSeconds: 0, interruptions: 0),
            .init(date: "2026-11-21", focusSessions: 1, focusSeconds: 1200, interruptions: 0),
        ])
        #expect(r.totals.focusSessions == 3)
        #expect(r.totals.focusSeconds == 4200)
    }

    @Test func theWindowLengthIsKeptWithinItsRange() {
        #expect(FocusReport.dayRange == 1...366)
        let now = noon("2026-11-21")
        #expect(report([], days: 1, nowMs: now).days.map(\.date) == ["2026-11-21"])
        #expect(report([], days: 0, nowMs: now).days.count == 1)
        let year = report([], days: 1000, nowMs: now).days
        #expect(year.count == 366)
        #expect(year.first?.date == "2025-11-21")
    }

    @Test func theRoomCountsSessionLengthsAndMembersTheirOwnTime() {
        let sessions = [
            // Ada under two ids in one session (she joined twice): one session for her, the time added up.
            ended(noon("2026-11-20"), lengthSeconds: 1500, Sample.participant("m1", "Ada", focusMs: 999),
                  Sample.participant("m3", "Ada", focusMs: 1)),
            ended(noon("2026-11-21"), lengthSeconds: 1500, Sample.participant("m1", "Ada", focusMs: 1_499_999)),
        ]
        let r = report(sessions, days: 2, nowMs: noon("2026-11-21"))
        #expect(r.totals.focusSessions == 2)
        #expect(r.totals.focusSeconds == 3000)
        let ada = try! #require(r.members.first)
        #expect(r.members.count == 1)
        #expect(ada.totals.focusSessions == 2)
        #expect(ada.totals.focusSeconds == 1500, "milliseconds are added up before they become seconds")
        #expect(ada.perDay.map(\.focusSeconds) == [1, 1499])
    }

    @Test func membersAreCountedByNameAcrossMemberIDs() {
        let sessions = [
            ended(noon("2026-11-01"), Sample.participant("m1", "Cy", focusMs: 3_000_000)),
            ended(noon("2026-11-19"), Sample.participant("m1", "Ada", focusMs: 1_500_000)),
            ended(noon("2026-11-20"), Sample.participant("m7", "Ada", focusMs: 1_400_000),
                  Sample.participant("m2", "Bob", focusMs: 1_500_000)),
        ]
        let interruptions = [InterruptionRecord(room: Sample.room, member: MemberID("m9"), name: "Dee",
                                                atMs: noon("2026-10-01"))]
        let r = report(sessions, interruptions: interruptions, days: 3, nowMs: noon("2026-11-21"))
        #expect(r.members.map(\.name) == ["Ada", "Bob", "Cy", "Dee"], "by focus in the window, then by name")
        let ada = r.members[0]
        #expect(ada.totals == FocusReport.Totals(focusSessions: 2, focusSeconds: 2900, interruptions: 0,
                                                 currentStreak: 2, longestStreak: 2))
        #expect(ada.perDay.map(\.date) == ["2026-11-19", "2026-11-20", "2026-11-21"])
        #expect(ada.perDay.map(\.focusSeconds) == [1500, 1400, 0])
        #expect(r.members[1].totals.currentStreak == 1)
        #expect(r.members[2].totals == FocusReport.Totals(focusSessions: 1, focusSeconds: 3000, interruptions: 0,
                                                          currentStreak: 0, longestStreak: 1))
        #expect(r.members[2].perDay.map(\.focusSeconds) == [0, 0, 0])
        #expect(r.members[3].totals.interruptions == 1)
        #expect(r.members[3].totals.focusSessions == 0)
    }

    @Test func interruptionsCountForTheRoomOrForTheMemberByName() {
        let day = noon("2026-11-21")
        let interruptions = [
            InterruptionRecord(room: Sample.room, member: nil, name: nil, atMs: day),
            InterruptionRecord(room: Sample.room, member: nil, name: nil, atMs: noon("2026-11-20")),
            InterruptionRecord(room: Sample.room, member: MemberID("m1"), name: "Ada", atMs: day),
            InterruptionRecord(room: Sample.room, member: MemberID("m5"), name: "Ada", atMs: day + 1),
        ]
        let r = report([ended(day, Sample.participant("m1", "Ada"))], interruptions: interruptions, days: 2, nowMs: day)
        #expect(r.totals.interruptions == 2)
        #expect(r.days.map(\.interruptions) == [1, 1])
        #expect(r.members.map(\.name) == ["Ada"])
        #expect(r.members[0].totals.interruptions == 2)
        #expect(r.members[0].perDay.map(\.interruptions) == [0, 2])
        // Interruptions alone make no streak.
        #expect(r.members[0].totals.longestStreak == 1)
    }

    // MARK: Time zone names

    @Test func timeZoneNamesAreCheckedAndDefaultToUTC() {
        #expect(FocusReport.timeZone(named: nil) == TimeZone(identifier: "UTC"))
        #expect(FocusReport.timeZone(named: "Asia/Taipei")?.identifier == "Asia/Taipei")
        #expect(FocusReport.timeZone(named: "Europe/Berlin") != nil)
        #expect(FocusReport.timeZone(named: "Mars/Olympus_Mons") == nil)
        #expect(FocusReport.timeZone(named: "") == nil)
        #expect(FocusReport.timeZone(named: "../../etc/passwd") == nil)
    }
}
