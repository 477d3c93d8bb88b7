import Foundation
import PomodoroCore
import PomodoroNet
import PomodoroProtocol
import PomodoroTestSupport
import Testing

/// A member a big room's list leaves out, relayed through another node than the room's owner, hears
/// themselves (`you`, docs/PROTOCOL.md "Big rooms") as a member on the owner does: after the welcome, and
/// after their own task and presence, carried over Redis by the owner to that member alone.
@Suite(.onOwnThreads, .timeLimit(.minutes(TestTime.minutes(2))))
struct ClusterUnlistedMemberTests {
    let client: WebSocketClient

    init() throws {
        client = try WebSocketClient()
        client.start()
    }

    @Test func aRelayedMemberTheListLeavesOutHearsThemselves() async throws {
        defer {
            client.stop()
            client.waitUntilFinished()
        }
        let redis = try RedisTestServer()
        defer { redis.stop() }
        let database = try await PostgresTestServer.makeDatabase()
        let open = ["--max-connections-per-address", "0", "--members-per-address-per-room", "0"]
        let (a, aPort) = try ClusterProcessTests.node("a", redis: redis.url, database: database, open)
        defer { _ = a.stop() }
        let (b, bPort) = try ClusterProcessTests.node("b", redis: redis.url, database: database, open)
        defer { _ = b.stop() }

        // The room on a, with its first 100 members there (the list's limit) and one more.
        let room = "big-relayed"
        var crowd: [Peer] = []
        for i in 0...100 {
            let peer = try Peer(client, port: aPort)
            _ = try peer.join(room, name: "Member \(i)")
            crowd.append(peer)
        }
        let listed = crowd[0]
        let other = crowd[100]

        // Cy joins through b: the welcome's list leaves her out, and her `you` follows it.
        let cy = try Peer(client, port: bPort)
        cy.send(.join(room: room, name: "Cy", token: nil))
        let welcome = try cy.next()
        let me = try #require(welcome.you)
        #expect(welcome.snapshot?.membersTruncated == true)
        #expect(welcome.snapshot?.members.contains { $0.id == me.id } == false)
        let first = try cy.expect("her you") { $0.yourself }
        #expect(first.id == me.id && first.name == "Cy" && first.present && first.task.isEmpty)

        cy.send(.task(text: "relayed task"), ref: .string("t"))
        let tasked = try cy.expect("her you with the task") { $0.yourself?.task == "relayed task" ? $0.yourself : nil }
        #expect(tasked.id == me.id)
        cy.send(.presence(away: true), ref: .string("p"))
        let away = try cy.expect("her you, away") { $0.yourself.flatMap { $0.present ? nil : $0 } }
        #expect(away.connected && away.task == "relayed task")

        // Nobody else heard hers: a listed member on the owner and the 101st, each up to a ping's answer.
        for peer in [listed, other] {
            peer.send(.ping, ref: .string("last"))
            var heard: [ServerMessage] = []
            _ = try peer.expect("the ping's answer") { message -> Bool? in
                heard.append(message)
                if case .pong = message { return true } else { return nil }
            }
            #expect(!heard.contains { $0.yourself?.id == me.id })
        }
    }
}
