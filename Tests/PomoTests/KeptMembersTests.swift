import Foundation
import PomodoroClient
import PomodoroProtocol
import Testing

/// How the commands that act as the member `pomo join` keeps find it (`StateFile.kept`: under the address given,
/// else under the room's other addresses, newest first), and which of those may give the host's commands in the
/// room a look shows (`asHost`).
@Suite struct KeptMembersTests {
    static let here = ServerAddress(host: "127.0.0.1", port: 8081)

    /// A state folder of its own; `files` maps an address to the member kept there and how many seconds ago
    /// its file was written.
    static func folder(room: String = "team", _ files: [(ServerAddress, String, Double)]) throws -> [String: String] {
        let folder = NSTemporaryDirectory() + "pomo-kept-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let environment = ["XDG_STATE_HOME": folder]
        for (address, member, ago) in files {
            let file = try #require(StateFile.location(environment: environment, server: address, room: room))
            try file.save(contents(address, member))
            try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: -ago)],
                                                  ofItemAtPath: file.path)
        }
        return environment
    }

    static func contents(_ address: ServerAddress, _ member: String, name: String = "Hana") -> StateFile.Contents {
        StateFile.Contents(server: address.description, room: "team", name: name, member: member,
                           token: "token-\(member)-\(address.port)")
    }

    static func remove(_ environment: [String: String]) {
        try? FileManager.default.removeItem(atPath: environment["XDG_STATE_HOME"]!)
    }

    @Test func theMemberKeptUnderTheAddressGivenComesAloneThoughOthersAreNewer() throws {
        let proxy = ServerAddress(host: "127.0.0.1", port: 8080), named = ServerAddress(host: "localhost", port: 8081)
        let environment = try Self.folder([(Self.here, "m1", 300), (proxy, "m4", 10), (named, "m2", 60)])
        defer { Self.remove(environment) }
        let kept = StateFile.kept(environment: environment, server: Self.here, room: "team")
        #expect(kept.here == Self.contents(Self.here, "m1"))
        #expect(kept.members == [Self.contents(Self.here, "m1")])
    }

    @Test func withoutOneThereTheRoomsOtherAddressesComeNewestFirst() throws {
        let proxy = ServerAddress(host: "127.0.0.1", port: 8080), named = ServerAddress(host: "localhost", port: 8081)
        let old = ServerAddress(host: "10.0.0.9", port: 9000)
        let environment = try Self.folder([(proxy, "m4", 60), (named, "m2", 10), (old, "m1", 3600)])
        defer { Self.remove(environment) }
        // Another room's file, one whose name only begins like the room's, and a file that is no state file.
        let other = try #require(StateFile.location(environment: environment, server: proxy, room: "team-b"))
        try other.save(Self.contents(proxy, "m7"))
        let folder = environment["XDG_STATE_HOME"]! + "/pomo"
        #expect(FileManager.default.createFile(atPath: folder + "/team@broken_1.json", contents: Data("{".utf8)))

        let kept = StateFile.kept(environment: environment, server: Self.here, room: "team")
        #expect(kept.here == nil)
        #expect(kept.members == [Self.contents(named, "m2"), Self.contents(proxy, "m4"), Self.contents(old, "m1")])
        #expect(StateFile.kept(environment: environment, server: Self.here, room: "tea").members.isEmpty)
    }

    @Test func nothingKeptAnywhereOrNowhereToKeepIt() throws {
        let environment = try Self.folder([])
        defer { Self.remove(environment) }
        #expect(StateFile.kept(environment: environment, server: Self.here, room: "team")
                == StateFile.Kept(here: nil, elsewhere: []))
        #expect(StateFile.kept(environment: [:], server: Self.here, room: "team").members.isEmpty)
    }

    // MARK: - asHost

    static func kept(_ members: [StateFile.Contents]) -> StateFile.Kept { StateFile.Kept(here: nil, elsewhere: members) }

    static func room(host: String?, _ members: [MemberPayload], truncated: Bool = false) -> SnapshotPayload {
        var snapshot = Fixture.snapshot(room: "team", members: members)
        snapshot.host = host
        snapshot.membersTruncated = truncated
        return snapshot
    }

    static let proxy = contents(ServerAddress(host: "127.0.0.1", port: 8080), "m1")
    static let stale = contents(ServerAddress(host: "10.0.0.9", port: 9000), "m1")
    static let guest = contents(ServerAddress(host: "localhost", port: 8081), "m2", name: "Ivo")

    @Test func theKeptMembersWithTheHostsIdAreResumedInTurnWhenTheHostIsAway() {
        let snapshot = Self.room(host: "m1", [Fixture.member("m1", "Hana", connected: false), Fixture.member("m2", "Ivo")])
        // The newest first; the one kept as another member is left out.
        #expect(Self.kept([Self.guest, Self.stale, Self.proxy]).asHost(in: snapshot) == .resume([Self.stale, Self.proxy]))
        #expect(Self.kept([Self.proxy]).asHost(in: snapshot) == .resume([Self.proxy]))
    }

    @Test func aConnectedHostIsNotTakenOver() {
        let snapshot = Self.room(host: "m1", [Fixture.member("m1", "Hana"), Fixture.member("m2", "Ivo")])
        #expect(Self.kept([Self.guest, Self.proxy]).asHost(in: snapshot) == .connected(Self.proxy))
    }

    @Test func keptMembersInTheRoomWhoAreNotItsHost() {
        let snapshot = Self.room(host: "m3", [Fixture.member("m2", "Ivo", connected: false), Fixture.member("m3", "Jun")])
        // The first kept member that is in the room is named, not the newest that is gone.
        #expect(Self.kept([Self.proxy, Self.guest]).asHost(in: snapshot) == .notHost(Self.guest))
    }

    @Test func noKeptMemberInTheRoomMeansTheMembershipEnded() {
        let snapshot = Self.room(host: "m3", [Fixture.member("m3", "Jun")])
        #expect(Self.kept([Self.stale, Self.proxy]).asHost(in: snapshot) == .ended(Self.stale))
        #expect(Self.kept([]).asHost(in: snapshot) == .resume([]))
    }

    @Test func aBigRoomThatDoesNotListTheMemberIsJudgedByItsHostID() {
        let listed = [Fixture.member("m3", "Jun")]
        #expect(Self.kept([Self.guest, Self.proxy]).asHost(in: Self.room(host: "m1", listed, truncated: true))
                == .resume([Self.proxy]))
        #expect(Self.kept([Self.guest, Self.proxy]).asHost(in: Self.room(host: "m3", listed, truncated: true))
                == .notHost(Self.guest))
    }
}
