import PomodoroClient
import PomodoroCore
import PomodoroProtocol
import Testing

/// The host's keys in `pomo join`: p (passcode), k (remove), c (controls), h (hand the role on), and `?`.
@Suite struct DashboardHostKeyTests {
    let t0 = Fixture.local(0)

    func press(_ keys: [Key], on dashboard: inout Dashboard) -> [Dashboard.Effect] {
        keys.flatMap { dashboard.handle(key: $0, at: t0) }
    }

    func type(_ text: String) -> [Key] { text.map(Key.character) + [.enter] }

    func sent(_ effects: [Dashboard.Effect]) -> [ClientMessage] {
        effects.compactMap { if case let .send(message, _) = $0 { return message }; return nil }
    }

    /// Ada (m1) with Lin (m2) and Bo (m3); Ada hosts unless `host` says otherwise.
    func room(host: String? = "m1", locked: Bool = false, control: ControlMode = .anyone,
              members: [MemberPayload] = RendererScenes.members) -> Dashboard {
        var snapshot = Fixture.snapshot(members: members)
        snapshot.host = host
        snapshot.locked = locked
        snapshot.control = control
        return Fixture.dashboard(snapshot)
    }

    @Test func pLocksTheRoomWithANewPasscodeAndAnEmptyOneUnlocksIt() {
        var d = room(locked: true)
        #expect(press([.character("p")], on: &d) == [])
        guard case .editingPasscode = d.mode else { Issue.record("p opens the passcode prompt"); return }
        #expect(sent(press(type("new soup"), on: &d)) == [.passcode("new soup")])
        #expect(d.mode == .normal)
        #expect(sent(press([.character("p"), .enter], on: &d)) == [.passcode(nil)])
    }

    @Test func thePasscodePromptChecksWhatItCanBeforeSending() {
        var open = room(locked: false)
        #expect(sent(press([.character("p"), .character(" "), .enter], on: &open)) == [])
        #expect(open.flash?.text == "The room has no passcode to remove")
        #expect(sent(press([.character("p")] + type("abc"), on: &open)) == [])
        #expect(open.flash?.text == "A passcode has 4–64 characters")
        #expect(open.flash?.kind == .error)
        // Esc drops what was typed.
        #expect(sent(press([.character("p"), .character("x"), .escape], on: &open)) == [])
        #expect(open.mode == .normal)
    }

    @Test func kRemovesTheMemberPickedByNumberNameOrID() {
        var d = room()
        #expect(d.pickable.map(\.id) == ["m2", "m3"])
        #expect(press([.character("k")], on: &d) == [])
        #expect(d.mode == .pickingMember(.remove, LineEditor("", limit: 64)))
        #expect(sent(press(type("2"), on: &d)) == [.kick(member: "m3")])
        #expect(sent(press([.character("k")] + type("LIN"), on: &d)) == [.kick(member: "m2")])
        #expect(sent(press([.character("k")] + type("m3"), on: &d)) == [.kick(member: "m3")])
        // Nobody by that number or name: nothing is sent, and the flash says how to pick.
        for wrong in ["3", "0", "Zed", "Ada", "m1"] {
            #expect(sent(press([.character("k")] + type(wrong), on: &d)) == [], "\(wrong)")
            #expect(d.flash?.text == "Nobody here is \(wrong): give a number from the list, or a name")
        }
    }

    @Test func hHandsTheRoleOnAndCSwitchesTheControls() {
        var d = room()
        #expect(sent(press([.character("h")] + type("1"), on: &d)) == [.handOff(member: "m2")])
        #expect(sent(press([.character("c")], on: &d)) == [.control(mode: .host)])
        var hostOnly = room(control: .host)
        #expect(sent(press([.character("C")], on: &hostOnly)) == [.control(mode: .anyone)])
    }

    @Test func aHostAloneHasNobodyToPick() {
        var d = room(members: [Fixture.member("m1", "Ada")])
        #expect(sent(press([.character("k"), .character("h")], on: &d)) == [])
        #expect(d.mode == .normal)
        #expect(d.flash?.text == "Nobody else is in the room")
    }

    @Test func someoneWhoIsNotTheHostIsToldSoAndNothingIsSent() {
        var d = room(host: "m2")
        for key in ["p", "k", "c", "h"] {
            d.flash = nil
            #expect(press([.character(Character(key))], on: &d) == [], "\(key)")
            #expect(d.mode == .normal)
            #expect(d.flash?.kind == .error)
            #expect(d.flash?.text.hasSuffix("refused: only the host may do that in this room") == true, "\(d.flash?.text ?? "")")
        }
        var korean = Fixture.dashboard({ var s = Fixture.snapshot(members: RendererScenes.members); s.host = "m2"; return s }(),
                                       words: Words(.ko))
        _ = press([.character("c")], on: &korean)
        #expect(korean.flash?.text == "조작 거절됨: 이 방에서는 호스트만 할 수 있어요")
    }

    @Test func theServersRefusalIsShownWithTheCommandsName() {
        var d = room()
        guard case let .send(.kick, ref)? = press([.character("k")] + type("Lin"), on: &d).first else {
            Issue.record("k then Lin should remove Lin")
            return
        }
        // The role moved on before the request arrived.
        _ = d.handle(.message(.error(code: .forbidden, message: "only the host can do that in this room", field: nil,
                                     ref: ref), raw: [], receivedAt: Fixture.local(5)))
        #expect(d.notice(at: Fixture.local(5))?.text == "Remove refused: only the host can do that in this room")
    }

    @Test func questionMarkListsTheKeysUntilAnyKey() {
        var d = room()
        #expect(press([.character("?")], on: &d) == [])
        #expect(d.mode == .help)
        // The key that closes the list does nothing else.
        #expect(press([.character(" ")], on: &d) == [])
        #expect(d.mode == .normal)
        #expect(sent(press([.character(" ")], on: &d)) == [.start])
    }

    @Test func theHostsToolsWaitForTheConnection() {
        var d = room()
        _ = d.handle(.reconnecting(attempt: 1, retryAt: Fixture.local(1000), reason: "closed"))
        #expect(sent(press([.character("c"), .character("p"), .character("k")], on: &d)) == [])
        #expect(d.mode == .normal)
    }
}
