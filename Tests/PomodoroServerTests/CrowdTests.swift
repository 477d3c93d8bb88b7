import Foundation
import PomodoroCore
import PomodoroNet
import PomodoroProtocol
import PomodoroServer
import PomodoroTestSupport
import Testing

/// A room above its member-list limit (3 here): no events about single members, member-only states at most
/// once a second and list-capped, counts that still cover everyone; below the limit nothing changes.
@Suite(.onOwnThreads, .timeLimit(.minutes(TestTime.minutes(1))))
struct CrowdTests {
    let server: LiveServer
    let client: WebSocketClient

    init() throws {
        server = try LiveServer { $0.roomPolicy.memberListLimit = 3 }
        client = try WebSocketClient()
        client.start()
    }

    func shutDown() {
        server.stop()
        client.stop()
        client.waitUntilFinished()
    }

    /// Every message `peer` receives within `seconds`, with when it arrived.
    func drain(_ peer: Peer, for seconds: Double) throws -> [(message: ServerMessage, arrived: Date)] {
        let deadline = TestTime.deadline(seconds)
        var received: [(ServerMessage, Date)] = []
        while let (event, arrived) = peer.inbox.nextWithArrival(timeout: max(0, deadline.timeIntervalSinceNow)) {
            if case .text(let bytes) = event { received.append((try WireCodec.decodeServerMessage(bytes), arrived)) }
        }
        return received
    }

    func states(_ messages: [(message: ServerMessage, arrived: Date)]) -> [(state: SnapshotPayload, arrived: Date)] {
        messages.compactMap { if case .state(let s) = $0.message { (s, $0.arrived) } else { nil } }
    }

    func memberEvents(_ messages: [(message: ServerMessage, arrived: Date)]) -> [EventPayload] {
        messages.compactMap {
            guard case .event(_, let event, _) = $0.message else { return nil }
            switch event {
            case .memberJoined, .memberReturned, .memberAway, .memberBack, .memberLeft: return event
            default: return nil
            }
        }
    }

    @Test func aCrowdHearsCountsNotEachMember() throws {
        defer { shutDown() }
        let ana = try Peer(client, port: server.port)
        let (_, first) = try ana.join("crowd", name: "Ana")
        #expect(first.memberCount == 1 && first.presentCount == 1 && !first.membersTruncated)

        // Up to the limit, a small room: every join is an event and a full state at once.
        var peers: [Peer] = []
        for name in ["Bo", "Cy"] {
            let peer = try Peer(client, port: server.port)
            _ = try peer.join("crowd", name: name)
            peers.append(peer)
        }
        let small = try drain(ana, for: 0.3)
        #expect(memberEvents(small).count == 3, "Ana's own join, Bo's and Cy's")
        #expect(states(small).count == 2)
        #expect(states(small).last?.state.members.map(\.name) == ["Ana", "Bo", "Cy"])
        #expect(states(small).last?.state.membersTruncated == false)

        // Four more: the room is a crowd from the fourth member on.
        var welcomes: [SnapshotPayload] = []
        for name in ["Di", "Eve", "Fay", "Gus"] {
            let peer = try Peer(client, port: server.port)
            welcomes.append(try peer.join("crowd", name: name).room)
            peers.append(peer)
        }
        #expect(welcomes.map(\.memberCount) == [4, 5, 6, 7])
        #expect(welcomes.allSatisfy { $0.members.map(\.name) == ["Ana", "Bo", "Cy"] && $0.membersTruncated })
        let crowd = try drain(ana, for: 1.6)
        #expect(memberEvents(crowd).isEmpty, "no member events above the limit")
        let crowdStates = states(crowd)
        #expect((1...2).contains(crowdStates.count), "coalesced: \(crowdStates.count) states for 4 joins")
        let last = try #require(crowdStates.last?.state)
        #expect(last.memberCount == 7)
        #expect(last.presentCount == 7)
        #expect(last.members.count == 3)
        #expect(last.membersTruncated)
        if crowdStates.count == 2 {
            // By the server's clock, which each state carries: when they arrive depends on the machine's load.
            #expect(crowdStates[1].state.serverTime - crowdStates[0].state.serverTime >= 1000,
                    "at most one member-only state a second")
        }

        // A control still goes out at once, with its event.
        peers[5].send(.presence(away: true))
        _ = try peers[5].expect("presence ok") { if case .ok("presence", _, _) = $0 { true } else { nil } }
        ana.send(.start)
        let started = try ana.expect("the start's state", timeout: 0.8) { message -> SnapshotPayload? in
            if case .state(let s) = message, s.status == .running { return s }
            return nil
        }
        #expect(started.presentCount == 6, "Gus stepped away just before")

        // Back at the limit, a leave is news again.
        for peer in peers.suffix(4) { peer.send(.leave) }
        _ = try drain(ana, for: 1.3)
        peers[1].send(.leave)
        let left = try drain(ana, for: 0.4)
        #expect(memberEvents(left).count == 1)
        let after = try #require(states(left).last?.state)
        #expect(after.memberCount == 2 && after.members.map(\.name) == ["Ana", "Bo"] && !after.membersTruncated)
    }
}
