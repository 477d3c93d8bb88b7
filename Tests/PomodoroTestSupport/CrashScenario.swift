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
    static func serverRun(database: String) throws -> (process: LaunchedProcess, port: Int) {
        let process = try ProcessLauncher.start(ProcessLauncher.server,
                                                ["--port", "0", "--host", "127.0.0.1", "--web-root", LiveServer.webRoot,
                                                 "--db", database, "--log-level", "warning", "--min-focus", "1"])
        return (process, try process.waitUntilServing())
    }

    static func wallMs() -> Int64 { Int64((Date().timeIntervalSince1970 * 1000).rounded(.down)) }

    /// A short focus runs to its end with two members and the break starts; the server dies by `signal`
    /// (SIGKILL or SIGTERM) and starts again on `database` (a `--db` value), where the members, the break
    /// and the journal must all be as they were.
    public static func aRestartLosesNothing(database: String, signal: String) throws {
        let room = "crash-\(signal.lowercased())"

        // A short focus runs to its end with two members; then the break starts.
        let first = try serverRun(database: database)
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
            _ = try peer.expect("the focus to complete", timeout: 10) {
                if case .event(_, .phaseCompleted(.focus, .shortBreak, _, _), _) = $0 { true } else { nil }
            }
        }
        ada.send(.start)
        let breakEnds = try ada.expect("the break to run") {
            if case .state(let s) = $0, s.phase == .shortBreak, s.status == .running { s.endsAt } else { nil }
        }

        // The server dies.
        if signal == "SIGKILL" { first.process.kill() } else { first.process.terminate() }
        let ended = try first.process.wait()
        if signal == "SIGTERM" {
            #expect(ended.exited && ended.status == 0)
        }
        _ = try ada.expectClose()
        _ = try lin.expectClose()

        // Started again on the same database: the members come back with their tokens and keep their ids.
        let second = try serverRun(database: database)
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
        try second.process.wait()
    }
}
