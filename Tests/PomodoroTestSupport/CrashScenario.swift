import Foundation
import Glibc
import PomodoroCore
import PomodoroNet
import PomodoroProtocol
import Testing

/// The real `pomodoro-server` killed mid-session and started again on the same database: nothing a member
/// was told is lost, and the running phase goes on. One scenario for every kind of database: the SQLite
/// tests (CrashRecoveryTests) and the PostgreSQL ones run it with their own `--db`.
public enum CrashScenario {
    /// One run of the built executable on a free loopback port, on `database`.
    static func serverRun(database: String) async throws -> (process: LaunchedProcess, port: Int) {
        let process = try ProcessLauncher.start(ProcessLauncher.server,
                                                ["--port", "0", "--host", "127.0.0.1", "--web-root", LiveServer.webRoot,
                                                 "--db", database, "--log-level", "warning", "--min-focus", "1"])
        return (process, try await process.serving())
    }

    static func wallMs() -> Int64 { Int64((Date().timeIntervalSince1970 * 1000).rounded(.down)) }

    /// A short focus runs to its end with two members and the break starts; the server dies by `signal`
    /// (SIGKILL or SIGTERM) and starts again on `database` (a `--db` value), where the members, the break
    /// and the journal must all be as they were.
    public static func aRestartLosesNothing(database: String, signal: String) async throws {
        let room = "crash-\(signal.lowercased())"

        // A short focus runs to its end with two members; then the break starts.
        let first = try await serverRun(database: database)
        let client = try WebSocketClient()
        client.start()
        defer { client.stop(); client.waitUntilFinished() }
        let ada = try Peer(client, port: first.port)
        let lin = try Peer(client, port: first.port)
        let (adaYou, _) = try ada.join(room, name: "Ada")
        let (linYou, _) = try lin.join(room, name: "Lin")
        ada.send(.task(text: "write the report"))
        lin.send(.task(text: "review slides"))
        ada.send(.configure(RoomSettings(focus: 2, shortBreak: 600)))
        _ = try ada.expect("configure ok") { if case .ok("configure", _, _) = $0 { true } else { nil } }
        ada.send(.start)
        for peer in [ada, lin] {
            _ = try await peer.awaitMessage("the focus to complete", timeout: 10) {
                if case .event(_, .phaseCompleted(.focus, .shortBreak, _, _), _) = $0 { true } else { nil }
            }
        }
        ada.send(.start)
        let breakEnds = try ada.expect("the break to run") {
            if case .state(let s) = $0, s.phase == .shortBreak, s.status == .running { s.endsAt } else { nil }
        }

        // The server dies.
        if signal == "SIGKILL" { first.process.kill() } else { first.process.terminate() }
        let ended = try await first.process.ended()
        if signal == "SIGTERM" {
            #expect(ended.exited && ended.status == 0)
        }
        _ = try ada.expectClose()
        _ = try lin.expectClose()

        // Started again on the same database: the members come back with their tokens and keep their ids.
        let second = try await serverRun(database: database)
        let ada2 = try Peer(client, port: second.port)
        let lin2 = try Peer(client, port: second.port)
        let (adaBack, snapshot) = try ada2.join(room, name: "Ada", token: adaYou.token)
        let askedAt = Self.wallMs()
        let (linBack, _) = try lin2.join(room, name: "Lin", token: linYou.token)
        #expect(adaBack.id == adaYou.id && adaBack.resumed)
        #expect(linBack.id == linYou.id && linBack.resumed)

        // The break is still running, ending when it always would have.
        #expect(snapshot.phase == .shortBreak)
        #expect(snapshot.status == .running)
        #expect(snapshot.endsAt == breakEnds)
        let expected = breakEnds - askedAt
        #expect(abs(snapshot.remainingMs - expected) <= 1000,
                "remaining \(snapshot.remainingMs) ms, expected about \(expected) ms")
        #expect(snapshot.members.first { $0.id == adaYou.id }?.task == "write the report")

        // The completed focus is in the journal and the stats, for both members.
        ada2.send(.stats(room: nil, days: 1, tz: "UTC", passcode: nil), ref: .string("s"))
        let report = try ada2.expect("stats") { if case .stats(let report, _) = $0 { report } else { nil } }
        #expect(report.totals.focusSessions == 1)
        #expect(report.totals.focusSeconds == 2)
        #expect(report.perDay.last?.focusSessions == 1)
        #expect(Set(report.members.map(\.name)) == ["Ada", "Lin"])
        #expect(report.members.allSatisfy { $0.totals.focusSessions == 1 && $0.totals.currentStreak == 1 })

        let history = try httpGet(port: second.port, path: "/api/rooms/\(room)/history")
        #expect(history.status == 200)
        let journal = try WireCodec.decodeHistory(Array(history.body.utf8))
        #expect(journal.sessions.count == 1)
        #expect(Set(journal.sessions.first?.members.map(\.task) ?? []) == ["write the report", "review slides"])
        second.process.terminate()
        try await second.process.ended()
    }

    /// A schedule starts a set of three 8-second focus sessions (2-second breaks); the server dies by SIGKILL
    /// in the second focus and starts again on `database`: the set carries on by itself, counting the first
    /// focus, and ends after the third. Schedules are to the minute, so this waits for the next one.
    public static func aScheduledSetCarriesOnAcrossARestart(database: String) async throws {
        let room = "set-\(UInt32.random(in: 0...UInt32.max))"
        let first = try await serverRun(database: database)
        let client = try WebSocketClient()
        client.start()
        defer { client.stop(); client.waitUntilFinished() }
        let ada = try Peer(client, port: first.port)
        let (adaYou, _) = try ada.join(room, name: "Ada")

        // The next minute at least three seconds ahead, in UTC.
        let now = Date().timeIntervalSince1970
        var target = (Int64(now) / 60 + 1) * 60
        if Double(target) - now < 3 { target += 60 }
        let zone = try ZoneName("UTC")
        let when = WallTime(seconds: target)
        let intoDay = zone.secondsIntoDay(of: when)
        let time = String(format: "%02d:%02d", intoDay / 3600, intoDay / 60 % 60)
        ada.send(.schedule(.add(ScheduleFields(
            name: "Sprint", time: time, zone: "UTC", days: [zone.date(of: when).weekday.code],
            settings: RoomSettings(focus: 8, shortBreak: 2, longBreak: 2, longBreakEvery: 4), sessions: 3, warning: 0))),
            ref: .number(1))
        _ = try ada.expect("ok addSchedule") { if case .ok("addSchedule", _, .number(1)?) = $0 { true } else { nil } }

        // The set starts at its minute; the server dies once the second focus is under way.
        let asleep = Double(target) - Date().timeIntervalSince1970 - 1
        if asleep > 0 { try await Task.sleep(for: .milliseconds(Int64(asleep * 1000))) }
        _ = try await ada.awaitMessage("the scheduled start", timeout: 8) {
            if case .event(_, .schedule(.started), _) = $0 { true } else { nil }
        }
        _ = try await ada.awaitMessage("the second focus", timeout: 20) {
            if case .event(_, .phaseCompleted(.shortBreak, .focus, true, _), _) = $0 { true } else { nil }
        }
        first.process.kill()
        _ = try await first.process.ended()
        _ = try ada.expectClose()

        // Back on the same database: still the set, one focus done, and it ends after the third.
        let second = try await serverRun(database: database)
        defer { second.process.terminate() }
        let again = try Peer(client, port: second.port)
        let (back, snapshot) = try again.join(room, name: "Ada", token: adaYou.token)
        #expect(back.resumed)
        // The second focus lasts 8 s, so that a restart on a loaded machine still finds it under way.
        #expect(snapshot.settings.focus == 8, "the set's own settings, not the room's")
        // `scheduleEnded`, then the stopped room's `state` (events go out before the state they lead to).
        var ended: Int?
        let idle = try again.expect("the end of the set, and the room stopped", timeout: 40) { message -> SnapshotPayload? in
            if case .event(_, .schedule(.ended(_, "Sprint", let count)), _) = message { ended = count }
            if case .state(let s) = message, s.status == .idle, ended != nil { return s }
            return nil
        }
        #expect(ended == 3, "the focus before the restart counts")
        #expect(idle.settings == RoomSettings.standard, "the room's own settings back")
        #expect(idle.stats.focusCompleted == 3)
    }
}
