import Foundation
@testable import PomodoroCluster
import PomodoroCore
import PomodoroNet
import PomodoroProtocol
@testable import PomodoroServer
import PomodoroTestSupport
import Testing

/// `GET /api/rooms/<room>/events` on a node that does not run the room (`HubRelayTests.Pair`: the owner "o"
/// runs it, "r" relays; the test hands the bus across): the owner judges the credential and writes the stream,
/// which "r" writes to its reader piece by piece; the owner's withdrawal ends it; a stream whose owner goes
/// unheard of, or that lived through the bus losing Redis, ends so that the reader reconnects; a reader "r"
/// drops is forgotten by the owner. Three real processes: `ClusterEventStreamTests`.
struct HubClusterEventStreamTests {
    static func open(_ pair: HubRelayTests.Pair, _ path: String = "/api/rooms/team/events",
                     bearer: String? = nil) -> RecordedResponse {
        let response = HubClusterControlAPITests.get(pair.relay, path, bearer: bearer)
        pair.pump()
        return response
    }

    /// Two nodes, and Ada in "team" on the owner.
    static func pairWithAda(passcode: String? = nil) throws -> (HubRelayTests.Pair, ConnectionID) {
        let pair = try HubRelayTests.Pair()
        let ada = pair.owner.connect()
        pair.owner.send(.join(room: "team", name: "Ada", token: nil, passcode: passcode), from: ada)
        pair.owner.settle()
        return (pair, ada)
    }

    static func ownerStreams(_ pair: HubRelayTests.Pair) -> Int {
        pair.owner.hub.rooms[HubRelayTests.team]?.streams.count ?? 0
    }

    @Test func theOwnerJudgesAndWritesTheStreamAndItsWithdrawalEndsIt() throws {
        let (pair, ada) = try Self.pairWithAda(passcode: "open sesame")

        // Refused on the owner, as there: the same status and error.
        let locked = Self.open(pair)
        #expect(locked.response?.status == 401 && locked.streamed == nil)
        #expect(HubClusterControlAPITests.text(locked.response).contains(#""code":"bad_passcode""#))
        let wrong = Self.open(pair, bearer: "not it")
        #expect(wrong.response?.status == 401 && HubClusterControlAPITests.text(wrong.response).contains("wrong passcode"))
        #expect(Self.open(pair, "/api/rooms/nowhere/events").response?.status == 404)
        #expect(pair.relayCluster.followed.isEmpty && pair.relay.router!.eventStreams.readers.isEmpty,
                "a refused reader leaves nothing followed or waiting")

        let opened = Self.open(pair, bearer: "open sesame")
        #expect(opened.response?.status == 200 && opened.response?.contentType == "text/event-stream; charset=utf-8")
        let stream = try #require(opened.streamed)
        #expect(stream.pieces.first == "retry: 3000\n\n")
        #expect(stream.events.dropFirst().first == "state")
        #expect(stream.pieces[1].contains(#""name":"Ada""#))
        #expect(Self.ownerStreams(pair) == 1 && !pair.relayCluster.holding.contains(HubRelayTests.team), "read, not taken")

        // Ada's start on the owner: its event, its state and the ticks after it, with the owner's rising ids.
        pair.owner.send(.start, from: ada)
        pair.pump()
        pair.pass(.seconds(2))
        #expect(stream.pieces.contains { $0.hasPrefix("event: event\n") && $0.contains(#""kind":"control""#) })
        #expect(stream.pieces.contains { $0.hasPrefix("event: state\n") && $0.contains(#""status":"running""#) })
        let ids = stream.pieces.dropFirst().compactMap { piece in
            piece.split(separator: "\n").first { $0.hasPrefix("id: ") }.flatMap { Int($0.dropFirst(4)) }
        }
        #expect(stream.events.filter { $0 == "tick" }.count >= 2)
        #expect(ids.count == stream.pieces.count - 1 && ids == ids.sorted() && Set(ids).count == ids.count)

        // A new passcode on the owner withdraws the reader there: its last event, then the end, here too.
        pair.owner.send(.passcode("closed now"), from: ada)
        pair.owner.settle()
        pair.pass(.seconds(1))
        #expect(stream.events.last == "error" && stream.pieces.last?.contains(#""code":"bad_passcode""#) == true)
        #expect(stream.finished && Self.ownerStreams(pair) == 0)
        #expect(pair.relay.router!.eventStreams.readers.isEmpty && pair.owner.router!.eventStreams.watchers.isEmpty)
    }

    @Test func aStreamEndsWhenItsOwnerIsUnheardOfOrTheBusLostRedis() throws {
        let (pair, _) = try Self.pairWithAda()

        // The owner missing from the registry: ended only once it has been missing for `silentNodeLimit`.
        let first = try #require(Self.open(pair).streamed)
        // (The node's beats come every second: a longer gap is forgiven as a registry it could not read.)
        pair.relay.router!.heard(.nodesAlive(["r"]))
        for second in 1...3 {
            pair.pass(.seconds(1))
            pair.relay.router!.heard(.nodesAlive(["r"]))
            #expect(!first.finished, "after \(second) s")
        }
        pair.pass(.seconds(1))
        pair.relay.router!.heard(.nodesAlive(["r"]))
        #expect(first.finished)
        // The owner (only slow, as it turns out) is told, and lets the reader go: its next heartbeat drops it.
        pair.relay.router!.heard(.nodesAlive(["o", "r"]))
        pair.pump()
        #expect(pair.owner.router!.eventStreams.watchers.isEmpty)
        pair.pass(.seconds(16))
        #expect(Self.ownerStreams(pair) == 0)

        // The bus back after losing Redis: what was published meanwhile is lost, so the stream ends.
        let second = try #require(Self.open(pair).streamed)
        #expect(Self.ownerStreams(pair) == 1)
        pair.relay.router!.heard(.resubscribed)
        pair.pump()
        #expect(second.finished)
        pair.pass(.seconds(16))
        #expect(Self.ownerStreams(pair) == 0, "the owner dropped it at its next heartbeat")

        // A stream its owner no longer writes to (a node of the same name that knows nothing of it) ends once it
        // has been silent for two of the owner's keep-alives and more; the owner's keep-alives keep one open.
        let third = try #require(Self.open(pair).streamed)
        for _ in 1...34 {
            pair.pass(.seconds(1))
            pair.relay.router!.heard(.nodesAlive(["o", "r"]))
        }
        #expect(!third.finished && third.events.filter { $0 == ":" }.count >= 2)
        pair.owner.router!.eventStreams.watchers.values.forEach { $0.drop() }   // forgotten, as by a restart
        for _ in 1...34 {
            pair.pass(.seconds(1))
            pair.relay.router!.heard(.nodesAlive(["o", "r"]))
            if third.finished { break }
        }
        #expect(third.finished)
    }

    @Test func aStreamEndsWhenTheRoomsLeaseLeavesItsOwner() throws {
        let (pair, _) = try Self.pairWithAda()
        let stream = try #require(Self.open(pair).streamed)
        #expect(pair.relayCluster.followed[HubRelayTests.team] == "o")
        pair.relay.router!.heard(.ownerMoved(HubRelayTests.team))
        pair.pump()
        #expect(stream.finished && pair.relay.router!.eventStreams.readers.isEmpty)
        #expect(pair.relayCluster.followed[HubRelayTests.team] == nil, "nothing left to follow")
        #expect(pair.owner.router!.eventStreams.watchers.isEmpty, "the owner was told")

        // One still waiting for the owner's answer stays followed; the move, reported again once it is open,
        // ends it.
        let waiting = HubClusterControlAPITests.get(pair.relay, "/api/rooms/team/events")
        pair.relay.router!.heard(.ownerMoved(HubRelayTests.team))
        #expect(pair.relayCluster.followed[HubRelayTests.team] == "o" && waiting.response == nil)
        pair.pump()
        let late = try #require(waiting.streamed)
        pair.relay.router!.heard(.ownerMoved(HubRelayTests.team))
        #expect(late.finished && pair.relayCluster.followed[HubRelayTests.team] == nil)
    }

    @Test func aReaderThatStopsReadingIsDroppedHereAndForgottenByTheOwner() throws {
        let (pair, ada) = try Self.pairWithAda()
        pair.owner.send(.start, from: ada)
        pair.owner.settle()
        let slow = try #require(Self.open(pair).streamed)
        let steady = try #require(Self.open(pair).streamed)
        slow.reading = false
        pair.pass(.seconds(12))
        #expect(slow.unread == slow.capacity)
        #expect(Self.ownerStreams(pair) == 1 && pair.owner.router!.eventStreams.watchers.count == 1)
        #expect(steady.events.filter { $0 == "tick" }.count >= 12 && !steady.finished)
    }
}
