import Foundation
import PomodoroClient
import PomodoroCore
import PomodoroProtocol
import Testing

/// `--format` expansion, the state file's location and contents, server URLs, durations, raw keys.
@Suite struct ScriptingTests {
    func view(_ snapshot: SnapshotPayload, me: String = "m9") -> RoomView {
        var view = RoomView()
        view.apply(Fixture.welcome(snapshot, id: me), receivedAt: Fixture.local(0))
        return view
    }

    @Test func formatSpecifiersExpand() throws {
        let members = [Fixture.member("m1", "Ada"), Fixture.member("m2", "Lin", present: false),
                       Fixture.member("m9", "pomo-cli")]
        let start = Fixture.serverEpoch - 700_300
        let v = view(Fixture.runningFocus(startedAt: start, at: Fixture.serverEpoch, cycle: 3, members: members))
        func expand(_ format: String, at ms: Int64 = 0) throws -> String {
            try StatusFormat(format).expand(v, now: Fixture.local(ms), utcOffsetSeconds: 3600)
        }
        #expect(try expand(StatusFormat.default) == "Focus 13:20")
        #expect(try expand("%p|%P|%r|%R|%c|%n|%s|%i") == "Focus|focus|13:20|800|3|4|running|▶")
        // Members leave out pomo's own visit (m9).
        #expect(try expand("%m/%M in %o") == "1/2 in team-alpha")
        #expect(try expand("ends %e · 100%%") == "ends 01:13 · 100%")
        #expect(try expand("[%b]") == "[████▋░░░░░]")
        #expect(try expand("%r", at: 800_000) == "00:00")
        let idle = view(Fixture.snapshot())
        #expect(try StatusFormat("%p %r %s %i%e").expand(idle, now: Fixture.local(0), utcOffsetSeconds: 0)
                == "Idle 00:00 idle ■")
        let long = view(Fixture.snapshot(phase: .longBreak, status: .paused, remainingMs: 3_723_000,
                                         phaseLengthMs: 4_000_000))
        #expect(try StatusFormat("%p %r %i").expand(long, now: Fixture.local(0), utcOffsetSeconds: 0)
                == "Long break 1:02:03 ⏸")
    }

    @Test func aLostConnectionIsShownNotCountedDown() throws {
        let start = Fixture.serverEpoch - 700_300
        let v = view(Fixture.runningFocus(startedAt: start, at: Fixture.serverEpoch, cycle: 3))
        let format = try StatusFormat("%i %r %s|%R|%e|%b|%p %c/%n %o")
        #expect(format.expand(v, now: Fixture.local(0), utcOffsetSeconds: 0)
                == "▶ 13:20 running|800|00:13|████▋░░░░░|Focus 3/4 team-alpha")
        // Offline, the timer's fields say so whatever the clock does; the room keeps its last known place.
        for ms: Int64 in [0, 900_000] {
            #expect(format.expand(v, now: Fixture.local(ms), utcOffsetSeconds: 0, offline: true)
                    == "↻ --:-- offline|||░░░░░░░░░░|Focus 3/4 team-alpha")
        }
    }

    @Test func aRefusalReadsAsASentence() {
        // A reason that goes on from the field keeps it in front; a sentence of its own names it after.
        #expect(Labels.refusal("seconds must be a non-zero number of seconds within ±3600", field: "seconds")
                == "seconds must be a non-zero number of seconds within ±3600")
        #expect(Labels.refusal("member is not a member of this room", field: "member") == "member is not a member of this room")
        #expect(Labels.refusal("id this room has no API token t99", field: "id") == "this room has no API token t99 (id)")
        #expect(Labels.refusal("id no schedule s3 in this room", field: "id") == "no schedule s3 in this room (id)")
        #expect(Labels.refusal("only the host may do that in this room", field: nil) == "only the host may do that in this room")
        #expect(Labels.refusal("aligned focus plus short break must divide an hour", field: "aligned")
                == "focus plus short break must divide an hour (aligned)")
    }

    @Test func theNextScheduledSessionExpandsInLocalTime() throws {
        var room = Fixture.snapshot()
        let idle = view(room)
        #expect(try StatusFormat("next focus %N|%T").expand(idle, now: Fixture.local(0), utcOffsetSeconds: 0)
                == "next focus |")
        // 08:30 UTC is 09:30 an hour east.
        room.nextSession = NextSessionPayload(schedule: "s1", name: "Standup", startsAt: 1_796_027_400_000)
        #expect(try StatusFormat("next focus %N · %T").expand(view(room), now: Fixture.local(0), utcOffsetSeconds: 3600)
                == "next focus 09:30 · Standup")
    }

    @Test func theSetPositionIsTheScheduledSetsWhileOneRuns() throws {
        var room = Fixture.runningFocus(startedAt: Fixture.serverEpoch - 1000, at: Fixture.serverEpoch, cycle: 3)
        #expect(try StatusFormat("%c/%n").expand(view(room), now: Fixture.local(0), utcOffsetSeconds: 0) == "3/4")
        room.scheduledRun = ScheduledRunPayload(schedule: "s1", name: "Writing block", focusSessions: 2, focusDone: 1)
        #expect(try StatusFormat("%c/%n").expand(view(room), now: Fixture.local(0), utcOffsetSeconds: 0) == "2/2")
        room.scheduledRun = ScheduledRunPayload(schedule: "s1", name: "Open", focusSessions: nil, focusDone: 4)
        #expect(try StatusFormat("[%c/%n]").expand(view(room), now: Fixture.local(0), utcOffsetSeconds: 0) == "[5/]")
    }

    @Test func aBigRoomIsCountedWholeNotByItsList() throws {
        var room = Fixture.snapshot(members: [Fixture.member("m1", "Ada"), Fixture.member("m2", "Lin", present: false)])
        room.memberCount = 5000
        room.presentCount = 4321
        room.membersTruncated = true
        // pomo's own visit (m9) is beyond the list but still one of the 5000, and present.
        #expect(try StatusFormat("%m/%M").expand(view(room), now: Fixture.local(0), utcOffsetSeconds: 0)
                == "4320/4999")
    }

    @Test func badFormatsAreRefusedWithAReason() {
        #expect(throws: StatusFormat.Invalid.self) { try StatusFormat("%q") }
        #expect(throws: StatusFormat.Invalid.self) { try StatusFormat("50%") }
        #expect((try? StatusFormat("plain text")) != nil)
        do {
            _ = try StatusFormat("%p %z")
        } catch {
            #expect(error.description.contains("'%z'"))
        }
    }

    @Test func theStateFileFollowsXDG() {
        let server = ServerAddress(host: "127.0.0.1", port: 8080)
        let xdg = StateFile.location(environment: ["XDG_STATE_HOME": "/x/state/", "HOME": "/home/ada"],
                                     server: server, room: "team-alpha")
        #expect(xdg?.path == "/x/state/pomo/team-alpha@127.0.0.1_8080.json")
        // Unset, empty or relative XDG_STATE_HOME: ~/.local/state.
        for environment in [["HOME": "/home/ada"], ["XDG_STATE_HOME": "", "HOME": "/home/ada"],
                            ["XDG_STATE_HOME": "rel/state", "HOME": "/home/ada/"]] {
            #expect(StateFile.location(environment: environment, server: server, room: "team-alpha")?.path
                    == "/home/ada/.local/state/pomo/team-alpha@127.0.0.1_8080.json")
        }
        #expect(StateFile.location(environment: [:], server: server, room: "r") == nil)
        // Another server or room, another file.
        let v6 = StateFile.location(environment: ["HOME": "/h"], server: ServerAddress(host: "::1", port: 9000),
                                    room: "r")
        #expect(v6?.path == "/h/.local/state/pomo/r@::1_9000.json")
    }

    @Test func theStateFileKeepsItsTokenPrivate() throws {
        let folder = NSTemporaryDirectory() + "pomo-state-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let file = try #require(StateFile.location(environment: ["XDG_STATE_HOME": folder],
                                                   server: ServerAddress(host: "h", port: 1), room: "r"))
        #expect(file.load() == nil)
        let contents = StateFile.Contents(server: "ws://h:1", room: "r", name: "Ada", member: "m3", token: "secret")
        try file.save(contents)
        #expect(file.load() == contents)
        let attributes = try FileManager.default.attributesOfItem(atPath: file.path)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        let folderAttributes = try FileManager.default.attributesOfItem(atPath: folder + "/pomo")
        #expect((folderAttributes[.posixPermissions] as? Int) == 0o700)
        file.remove()
        #expect(file.load() == nil)
    }

    @Test func serverURLs() throws {
        #expect(try ServerAddress(parsing: "ws://127.0.0.1:8080") == ServerAddress(host: "127.0.0.1", port: 8080))
        #expect(try ServerAddress(parsing: "ws://example.org") == ServerAddress(host: "example.org", port: 80))
        #expect(try ServerAddress(parsing: "localhost:9000") == ServerAddress(host: "localhost", port: 9000))
        #expect(try ServerAddress(parsing: "http://h:1/") == ServerAddress(host: "h", port: 1))
        #expect(try ServerAddress(parsing: "ws://h:1/pomo/ws") == ServerAddress(host: "h", port: 1, path: "/pomo/ws"))
        #expect(try ServerAddress(parsing: "ws://[::1]:8080") == ServerAddress(host: "::1", port: 8080))
        #expect(try ServerAddress(parsing: "ws://[::1]:8080").description == "ws://[::1]:8080")
        for bad in ["wss://h:1", "ftp://h", "ws://:80", "ws://h:0", "ws://h:x", "ws://[::1"] {
            #expect(throws: ServerAddress.Invalid.self, "\(bad)") { try ServerAddress(parsing: bad) }
        }
    }

    @Test func durationsAsTyped() {
        #expect(DurationText.seconds("5") == 300)
        #expect(DurationText.seconds("-1") == -60)
        #expect(DurationText.seconds("90s") == 90)
        #expect(DurationText.seconds("+2m") == 120)
        #expect(DurationText.seconds("-1m30s") == -90)
        #expect(DurationText.seconds("1h") == 3600)
        #expect(DurationText.seconds("1H5M") == 3900)
        for bad in ["", "-", "m", "5x", "1m1m", "1.5m", "5m3"] {
            #expect(DurationText.seconds(bad) == nil, "\(bad)")
        }
    }

    @Test func rawKeysDecode() {
        var decoder = KeyDecoder()
        #expect(decoder.decode(Array(" sq".utf8)) == [.character(" "), .character("s"), .character("q")])
        #expect(decoder.decode([0x03, 0x0D, 0x7F, 0x1A]) == [.control("c"), .enter, .backspace, .control("z")])
        #expect(decoder.decode([0x1B, 0x5B, 0x44, 0x1B, 0x5B, 0x33, 0x7E, 0x1B, 0x4F, 0x48])
                == [.left, .delete, .home])
        #expect(decoder.decode([0x1B]) == [.escape])
        // A character split across two reads.
        let snowman = Array("é☃".utf8)
        #expect(decoder.decode(Array(snowman[0..<3])) == [.character("é")])
        #expect(decoder.decode(Array(snowman[3...])) == [.character("☃")])
    }

    @Test func plainLinesTellTheStory() {
        var lines = EventLines(roomName: "team-alpha", serverLabel: "ws://h:1", utcOffsetSeconds: 0)
        let members = [Fixture.member("m1", "Ada"), Fixture.member("m2", "Lin")]
        var out = lines.lines(for: .message(Fixture.welcome(Fixture.snapshot(members: members)), raw: [],
                                            receivedAt: Fixture.local(0)))
        #expect(out == ["00:00:00 Joined team-alpha as Ada (m1) · Focus 25m · Short 5m · Long 15m after 4 · auto-start off",
                        "00:00:00 Idle 1 of 4 · idle"])
        out = lines.lines(for: .message(.event(room: "team-alpha", .control(action: .start, by: "m2", seconds: nil),
                                               serverTime: Fixture.serverEpoch + 5000),
                                        raw: [], receivedAt: Fixture.local(5000)))
        #expect(out == ["00:00:05 Lin started Focus"])
        out = lines.lines(for: .message(.state(Fixture.runningFocus(startedAt: Fixture.serverEpoch + 5000,
                                                                    at: Fixture.serverEpoch + 5000, members: members)),
                                        raw: [], receivedAt: Fixture.local(5000)))
        #expect(out == ["00:00:05 Focus 1 of 4 · running · 25:00 left"])
        // Ticks add nothing.
        #expect(lines.lines(for: .message(Fixture.tick(remainingMs: 1_499_000, endsAt: Fixture.serverEpoch + 1_505_000,
                                                       seq: 5), raw: [], receivedAt: Fixture.local(6000))) == [])
    }
}

/// `pomo schedule`'s list, with the next start in the reader's zone.
@Suite struct ScheduleLinesTests {
    @Test func eachScheduleIsOneLineWithItsNextStartInTheReadersZone() throws {
        let payload = SchedulesPayload(room: "team-alpha", schedules: [
            SchedulePayload(id: "s1", fields: ScheduleFields(name: "Standup", time: "09:30", zone: "Europe/Berlin",
                                                             days: ["mon", "tue", "wed", "thu", "fri"], sessions: 2,
                                                             warning: 5, enabled: true),
                            missed: 0, next: 1_796_027_400_000),  // Monday 30 Nov 2026, 08:30 UTC
            SchedulePayload(id: "s2", fields: ScheduleFields(name: "Launch", time: "14:00", zone: "America/New_York",
                                                             date: "2026-12-03",
                                                             settings: RoomSettings(focus: 3000, shortBreak: 600),
                                                             warning: 0, enabled: false),
                            missed: 1, next: nil),
        ])
        let newYork = try #require(TimeZone(identifier: "America/New_York"))
        #expect(ScheduleLines.lines(payload, viewer: newYork) == [
            "s1  on   Standup · weekdays at 09:30 Europe/Berlin · 2 focus sessions · next Mon 30 Nov 03:30 here",
            "s2  off  Launch · on 2026-12-03 at 14:00 America/New_York · until stopped · 50/10 min · missed 1",
        ])
        #expect(ScheduleLines.lines(SchedulesPayload(room: "empty", schedules: []), viewer: newYork)
                == ["empty: no schedules"])
    }

    @Test func lengthsUnderAMinuteAreShownToTheSecond() {
        #expect(ScheduleLines.lengths(3000, 600) == "50/10 min")
        #expect(ScheduleLines.lengths(30, 30) == "30s/30s")
        #expect(ScheduleLines.lengths(90, 300) == "1m30s/5m")
    }
}
