import Foundation
import PomodoroClient
import PomodoroCore
import PomodoroProtocol
import Testing

/// `m` silences the bell and the notifications and lets them back on; pomo keeps the choice in
/// `preferences.json` beside its state files, so the next run starts as the last one ended.
@Suite struct SilenceTests {
    let phaseEnd = ServerMessage.event(room: "team-alpha",
                                       .phaseCompleted(completed: .focus, next: .shortBreak, autoStarted: false, cycle: 1),
                                       serverTime: Fixture.serverEpoch + 1000)

    @Test func mSilencesAndLetsBackOnAndSaysSo() {
        var d = Fixture.dashboard(Fixture.runningFocus(at: Fixture.serverEpoch))
        #expect(!d.silenced)
        #expect(d.handle(key: .character("m"), at: Fixture.local(0)) == [.silenced(true)])
        #expect(d.silenced)
        #expect(d.notice(at: Fixture.local(10))?.text == "Bell and notifications off (m turns them on)")
        #expect(d.handle(key: .character("M"), at: Fixture.local(20)) == [.silenced(false)])
        #expect(!d.silenced)
        #expect(d.notice(at: Fixture.local(30))?.text == "Bell and notifications on")
    }

    @Test func silencedThePhaseEndNeitherRingsNorNotifiesButIsStillSaid() {
        var d = Fixture.dashboard(Fixture.runningFocus(at: Fixture.serverEpoch), silenced: true)
        #expect(d.handle(.message(phaseEnd, raw: [], receivedAt: Fixture.local(1000))) == [])
        #expect(d.lastEvent?.text == "Focus done · Short break next")
        // Let back on, the next end rings and notifies again.
        _ = d.handle(key: .character("m"), at: Fixture.local(1100))
        var again = d
        let effects = again.handle(.message(phaseEnd, raw: [], receivedAt: Fixture.local(1200)))
        #expect(effects.contains(.bell) && effects.contains { if case .notify = $0 { true } else { false } })
    }

    @Test func mWorksWhileDisconnectedAndNotWhileTyping() {
        var offline = RendererScenes.reconnecting
        #expect(offline.handle(key: .character("m"), at: Fixture.local(0)) == [.silenced(true)])
        var typing = RendererScenes.editingTask
        #expect(typing.handle(key: .character("m"), at: Fixture.local(0)) == [])
        #expect(!typing.silenced)
        if case .editingTask(let editor) = typing.mode {
            #expect(editor.text.contains("m"))
        } else {
            Issue.record("the editor closed on m")
        }
    }

    @Test func theFooterSaysWhatMDoesNow() {
        let frame = { (d: Dashboard) in
            DashboardRenderer.render(d, in: .init(columns: 80, rows: 24, now: Fixture.local(0), utcOffsetSeconds: 0))
        }
        let loud = Fixture.dashboard(Fixture.runningFocus(at: Fixture.serverEpoch))
        let quiet = Fixture.dashboard(Fixture.runningFocus(at: Fixture.serverEpoch), silenced: true)
        #expect(frame(loud).lines.last?.text.contains("m mute") == true)
        #expect(frame(quiet).lines.last?.text.contains("m unmute") == true)
        let korean = Fixture.dashboard(Fixture.runningFocus(at: Fixture.serverEpoch), silenced: true, words: Words(.ko))
        #expect(frame(korean).lines.last?.text.contains("m 소리 켜기") == true)
    }

    @Test func thePreferencesFileKeepsTheSilence() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("pomo-prefs-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let file = try #require(Preferences.file(environment: ["XDG_STATE_HOME": folder]))
        #expect(file.path == folder + "/pomo/preferences.json")
        #expect(file.load() == Preferences(silenced: false), "no file: the defaults")
        try file.save(Preferences(silenced: true))
        #expect(file.load().silenced)
        let mode = try FileManager.default.attributesOfItem(atPath: file.path)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        try file.save(Preferences(silenced: false))
        #expect(!file.load().silenced)
        // A field from a later version is ignored, a broken file reads as the defaults.
        try Data(#"{"silenced":true,"theme":"dark"}"#.utf8).write(to: URL(fileURLWithPath: file.path))
        #expect(file.load().silenced)
        try Data("{not json".utf8).write(to: URL(fileURLWithPath: file.path))
        #expect(file.load() == Preferences())
        #expect(Preferences.file(environment: [:]) == nil)
    }
}
