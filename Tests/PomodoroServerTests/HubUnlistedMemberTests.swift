@testable import PomodoroServer
import PomodoroCore
import PomodoroNet
import PomodoroProtocol
import PomodoroTestSupport
import Testing

/// A big room lists its first members only (docs/PROTOCOL.md, "Big rooms"): a member it leaves out hears how
/// the room sees them in a `you` of their own, after their welcome, their task or presence, and a focus they
/// earned; a listed member, or anyone else, hears none.
@Suite struct HubUnlistedMemberTests {
    static func join(_ name: String, token: String? = nil) -> ClientMessage {
        .join(room: "team", name: name, token: token)
    }

    /// A crowd hub (its list: the first two) with Ada and Bo listed and Cy left out.
    static func bigRoom() throws -> (TestHub, ada: ConnectionID, bo: ConnectionID, cy: ConnectionID) {
        let t = HubFanoutTests.crowdHub()
        let ada = t.connect(), bo = t.connect(), cy = t.connect()
        t.send(join("Ada"), from: ada)
        t.send(join("Bo"), from: bo)
        t.send(join("Cy"), ref: "j", from: cy)
        t.settle()
        return (t, ada, bo, cy)
    }

    static func yous(_ messages: [ServerMessage]) -> [MemberPayload] { messages.compactMap(\.yourself) }

    @Test func aMemberTheListLeavesOutHearsThemselvesRightAfterTheirWelcome() throws {
        let (t, ada, bo, cy) = try Self.bigRoom()
        let heard = try t.messages(to: cy)
        #expect(heard.prefix(2).map(\.label) == ["welcome", "you"])
        let welcome = try #require(heard.first?.snapshot)
        #expect(welcome.members.map(\.name) == ["Ada", "Bo"] && welcome.membersTruncated)
        let me = try #require(heard.first?.you)
        #expect(Self.yous(heard).map(\.id) == [me.id])
        #expect(Self.yous(heard).first?.name == "Cy" && Self.yous(heard).first?.present == true)
        if case .you(let room, _) = heard[1] { #expect(room == "team") }
        // Listed when they joined: nobody else hears a `you`.
        #expect(Self.yous(try t.messages(to: ada) + t.messages(to: bo)).isEmpty)
    }

    @Test func anUnlistedMembersTaskAndPresenceComeBackToThemAlone() throws {
        let (t, ada, bo, cy) = try Self.bigRoom()
        t.transport.clearSent()
        t.send(.task(text: "write the report"), ref: "t", from: cy)
        t.settle()
        var heard = try t.messages(to: cy)
        #expect(heard.map(\.label).filter { $0 != "state" } == ["ok task", "you"])
        #expect(Self.yous(heard).map(\.task) == ["write the report"])

        t.transport.clearSent()
        t.send(.presence(away: true), ref: "p", from: cy)
        t.settle()
        heard = try t.messages(to: cy)
        let away = try #require(Self.yous(heard).last)
        #expect(!away.present && away.connected && away.task == "write the report")

        // A listed member's own change is in the room's list: no `you` for anyone.
        t.transport.clearSent()
        t.send(.task(text: "review"), from: bo)
        t.settle()
        t.pass(.seconds(2))
        #expect(Self.yous(try t.messages(to: ada) + t.messages(to: bo) + t.messages(to: cy)).isEmpty)
    }

    @Test func aCompletedFocusReachesTheUnlistedMembersWhoEarnedIt() throws {
        let (t, ada, _, cy) = try Self.bigRoom()
        let dee = t.connect()
        t.send(Self.join("Dee"), from: dee)
        t.send(.presence(away: true), from: dee)
        t.send(.start, from: ada)
        t.settle()
        t.pass(.seconds(1_499))
        t.transport.clearSent()

        t.pass(.seconds(2))
        let earned = try #require(Self.yous(try t.messages(to: cy)).last)
        #expect(earned.stats.focusCompleted == 1 && earned.stats.focusSeconds == 1_500)
        // Dee was away, so earned nothing and hears nothing; Ada is listed and reads it in the `state`.
        #expect(Self.yous(try t.messages(to: dee)).isEmpty)
        #expect(Self.yous(try t.messages(to: ada)).isEmpty)
    }

    @Test func aFocusStoppedEarlyReachesTheUnlistedMembersItInterrupted() throws {
        let (t, ada, _, cy) = try Self.bigRoom()
        t.send(.start, from: ada)
        t.settle()
        t.pass(.seconds(30))
        t.transport.clearSent()
        t.send(.pause, from: ada)
        t.settle()
        let heard = try t.messages(to: cy)
        #expect(Self.yous(heard).map(\.stats.interruptions) == [1])
        let you = try #require(heard.map(\.label).firstIndex(of: "you"))
        let state = try #require(heard.map(\.label).firstIndex(of: "state"))
        #expect(you > state, "after the room's state of the pause")
        #expect(Self.yous(try t.messages(to: ada)).isEmpty)
    }

    @Test func anUnlistedMemberWhoComesBackHearsTheirTaskAgain() throws {
        let (t, _, _, cy) = try Self.bigRoom()
        let token = try #require(try t.messages(to: cy).first?.you?.token)
        t.send(.task(text: "write the report"), from: cy)
        t.settle()
        t.disconnect(cy)
        t.settle()

        let again = t.connect()
        t.send(Self.join("Cy", token: token), from: again)
        t.settle()
        let heard = try t.messages(to: again)
        #expect(heard.prefix(2).map(\.label) == ["welcome", "you"])
        #expect(heard.first?.you?.resumed == true)
        #expect(Self.yous(heard).first?.task == "write the report")
    }

    /// A `you` held behind its commit goes to the member's connection as it is when it goes out: a member
    /// removed while their task was being committed hears that they were removed, and nothing after it.
    @Test func aMemberRemovedWhileTheirChangeCommitsHearsNoYouAfterIt() throws {
        var configuration = ServerConfiguration(port: 0, webRoot: nil)
        configuration.roomPolicy.memberListLimit = 2
        configuration.limits.membersPerAddressPerRoom = 0
        let store = try HeldStore()
        let t = TestHub(configuration: configuration, store: store)
        let ada = t.connect(), bo = t.connect(), cy = t.connect()
        t.send(Self.join("Ada"), from: ada)
        t.settle()
        t.send(Self.join("Bo"), from: bo)
        t.send(Self.join("Cy"), from: cy)
        t.settle()
        let cyID = try #require(try t.messages(to: cy).first?.you).id
        #expect(try t.messages(to: ada).first?.snapshot?.host == (try t.messages(to: ada).first?.you?.id))
        t.transport.clearSent()

        t.send(.task(text: "write the report"), ref: "t", from: cy)
        t.settle(commits: false)
        #expect(store.pendingCommits == 1, "the task's commit held")
        t.send(.kick(member: cyID), ref: "k", from: ada)
        t.settle()
        let heard = try t.messages(to: cy)
        #expect(Self.yous(heard).isEmpty, "\(heard.map(\.label))")
        #expect(heard.last?.label == "error removed")
        #expect(t.transport.closes[cy]?.code == 4002)
        #expect(try t.messages(to: ada).contains { $0.label == "ok kick" })
        #expect(Self.yous(try t.messages(to: ada) + t.messages(to: bo)).isEmpty)
    }

    @Test func aRoomAtItsListsLimitSendsNoYou() throws {
        let t = HubFanoutTests.crowdHub()
        let ada = t.connect(), bo = t.connect()
        t.send(Self.join("Ada"), from: ada)
        t.send(Self.join("Bo"), from: bo)
        t.send(.task(text: "review"), from: bo)
        t.settle()
        #expect(Self.yous(try t.messages(to: ada) + t.messages(to: bo)).isEmpty)
    }
}
