import PomodoroCore
import Testing

/// The host role and the two control modes.
@Suite struct AccessTests {
    /// A room in `host` mode with its creator and two more members.
    func hostedRoom() throws -> (TestRoom, host: MemberID, others: [MemberID]) {
        var room = TestRoom()
        let host = try room.add("Hana")
        let others = [try room.add("Ivo"), try room.add("Jun")]
        try room.send(.setControlMode(.host), by: host)
        return (room, host, others)
    }

    @Test func theCreatorHostsAndTheRoomStartsOpenToAnyone() throws {
        var room = TestRoom()
        let creator = try room.join("Hana")
        #expect(creator.outcome.events.contains(.hostChanged(creator.memberID)))
        let other = try room.add("Ivo")
        #expect(room.snapshot.host == creator.memberID)
        #expect(room.snapshot.controlMode == .anyone)
        // In anyone mode, anyone presses the controls.
        try room.send(.start, by: other)
        #expect(room.snapshot.status == .running)
    }

    @Test(arguments: [Room.Command.start, .skip, .reset, .extend(seconds: 60), .configure(.standard),
                      .setControlMode(.anyone), .handOff(to: MemberID("m3"))])
    func inHostModeOthersAreForbiddenEveryControl(_ command: Room.Command) throws {
        var (room, host, others) = try hostedRoom()
        try room.send(.start, by: host)
        if case .reset = command {} else if case .skip = command {} else { try room.send(.pause, by: host) }
        let before = room.snapshot
        #expect(caught { try room.send(command, by: others[0]) } == .forbidden)
        #expect(room.snapshot == before, "a refused command changes nothing")
    }

    @Test func inHostModeTheHostControlsAndEveryoneKeepsTheirOwnTaskAndPresence() throws {
        var (room, host, others) = try hostedRoom()
        try room.send(.start, by: host)
        try room.send(.pause, by: host)
        try room.send(.resume, by: host)
        try room.send(.setTask("write"), by: others[0])
        try room.send(.setAway(true), by: others[1])
        #expect(room.member(others[0])?.task == "write")
        #expect(room.member(others[1])?.present == false)
    }

    @Test func onlyTheHostChangesTheModeOrHandsTheRoleOn() throws {
        var room = TestRoom()
        let host = try room.add("Hana")
        let other = try room.add("Ivo")
        #expect(caught { try room.send(.setControlMode(.host), by: other) } == .forbidden)
        #expect(caught { try room.send(.handOff(to: other), by: other) } == .forbidden)
        let outcome = try room.send(.handOff(to: other), by: host)
        #expect(outcome.events.contains(.hostChanged(other)))
        #expect(room.snapshot.host == other)
        #expect(caught { try room.send(.handOff(to: MemberID("m99")), by: other) }
                == .invalidArgument(field: "member", reason: "is not a member of this room"))
        let mode = try room.send(.setControlMode(.host), by: other)
        #expect(mode.events.contains(.controlModeChanged(.host, by: other)))
        #expect(caught { try room.send(.start, by: host) } == .forbidden, "the old host is an ordinary member now")
    }

    @Test func theHostRoleSurvivesTheHostsReconnection() throws {
        var (room, host, _) = try hostedRoom()
        _ = room.disconnect(host)
        #expect(room.snapshot.host == host)
        let back = try room.join("Hana", token: ResumeToken("token-1"))
        #expect(back.memberID == host && back.resumed)
        try room.send(.start, by: host)
    }

    @Test func aHostWhoLeavesForGoodPassesTheRoleToTheLongestPresentMember() throws {
        var (room, host, others) = try hostedRoom()
        // Ivo (joined first after the host) is disconnected: the role goes to Jun, who is still here.
        _ = room.disconnect(others[0])
        let outcome = room.leave(host)
        #expect(outcome.events.contains(.hostChanged(others[1])))
        #expect(room.snapshot.host == others[1])
        #expect(room.snapshot.controlMode == .host, "the mode stays")
        try room.send(.start, by: others[1])
    }

    @Test func aHostWhoseGraceRunsOutAlsoPassesTheRole() throws {
        var (room, host, others) = try hostedRoom()
        _ = room.disconnect(host)
        let outcome = room.advance(by: RoomPolicy.standard.reconnectGrace)
        #expect(outcome.events.contains(.memberLeft(host, name: "Hana", reason: .expired)))
        #expect(room.snapshot.host == others[0])
    }

    @Test func whenTheLastMemberLeavesTheNextToArriveHosts() throws {
        var room = TestRoom()
        let only = try room.add("Hana")
        let gone = room.leave(only)
        #expect(gone.events.contains(.hostChanged(nil)))
        let next = try room.add("Ivo")
        #expect(room.snapshot.host == next)
    }
}
