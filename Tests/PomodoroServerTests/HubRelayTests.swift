import PomodoroCluster
import PomodoroCore
import PomodoroNet
import PomodoroProtocol
import PomodoroServer
import PomodoroTestSupport
import Testing

/// Members of one room on two nodes, in one process: the owner's hub and a relaying node's hub, each on a
/// manual cluster, with what each publishes handed to the other by the test (the bus itself crosses a real
/// Redis in ClusterBusTests; three `pomodoro-server` processes in ClusterRelayProcessTests).
struct HubRelayTests {
    static let team = try! RoomID(validating: "team")

    /// Two nodes: `owner` ("o") runs the room; `relay` ("r") sees its lease held by "o".
    final class Pair {
        let owner: TestHub
        let relay: TestHub
        let ownerCluster: ManualCluster
        let relayCluster: ManualCluster

        init() throws {
            let clock = ManualServerClock()
            // One database, as the nodes of a cluster share one.
            let ownerStore = try HeldStore()
            let relayStore = HeldStore(ownerStore.store)
            ownerCluster = ManualCluster(node: "o", store: ownerStore.store, now: { clock.now().monotonic })
            relayCluster = ManualCluster(node: "r", store: relayStore.store, now: { clock.now().monotonic })
            relayCluster.held(HubRelayTests.team, by: "o")
            let configuration = ServerConfiguration(port: 0, webRoot: nil)
            owner = TestHub(configuration: configuration, clock: clock, store: ownerStore, cluster: ownerCluster)
            relay = TestHub(configuration: configuration, clock: clock, store: relayStore, cluster: relayCluster)
        }

        /// A member who joins "team" on the relaying node, with the join carried to the owner and answered.
        func relayedJoin(_ name: String) -> ConnectionID {
            let connection = relay.connect()
            relay.send(.join(room: "team", name: name, token: nil), from: connection)
            pump()
            return connection
        }

        /// Ticks the owner published for the relaying node's members (none: that node computes them).
        private(set) var ticksPublished = 0

        /// Delivers what each node published to the node it names, until neither has more to say.
        func pump() {
            while true {
                owner.settle()
                relay.settle()
                let fromRelay = relayCluster.published, fromOwner = ownerCluster.published
                relayCluster.clearPublished()
                ownerCluster.clearPublished()
                if fromRelay.isEmpty && fromOwner.isEmpty { return }
                for case (_, .reply(_, _, let frame, _)) in fromOwner where frame.hasPrefix(#"{"type":"tick""#) {
                    ticksPublished += 1
                }
                for (node, message) in fromRelay where node == "o" { owner.router!.heard(.heard(message)) }
                for (node, message) in fromOwner where node == "r" { relay.router!.heard(.heard(message)) }
            }
        }

        /// Moves the nodes' shared clock on by `duration`, firing both nodes' timers in order and delivering
        /// what they publish, as time passing on two machines would (the owner's terms renewed all along).
        func pass(_ duration: Duration) {
            let clock = owner.clock
            let end = clock.now().monotonic + duration
            while let next = [owner.transport.nextDeadline, relay.transport.nextDeadline].compactMap({ $0 }).min(),
                  next <= end {
                let now = clock.now().monotonic
                if next > now { clock.advance(by: next - now) }
                ownerCluster.renewAll()   // the keeper's renewals landing meanwhile
                owner.transport.fireDueTimers()
                relay.transport.fireDueTimers()
                pump()
            }
            let now = clock.now().monotonic
            if end > now { clock.advance(by: end - now) }
            ownerCluster.renewAll()
        }
    }

    static func running(_ message: ServerMessage) -> Bool {
        if case .state(let room) = message { room.status == .running } else { false }
    }

    @Test func aJoinerOnAnotherNodeIsRelayedToTheOwnerWhichAnswersItAsItsOwn() throws {
        let pair = try Pair()
        let ada = pair.owner.connect()
        pair.owner.send(.join(room: "team", name: "Ada", token: nil), ref: "a", from: ada)
        pair.owner.settle()

        let bob = pair.relay.connect(peer: "198.51.100.4")
        pair.relay.send(.join(room: "team", name: "Bob", token: nil), ref: "j", from: bob)
        pair.relay.settle()
        // The join goes to the owner untouched, after an `opened` with the member's address.
        let sent = pair.relayCluster.published
        #expect(sent.map(\.node) == ["o", "o"])
        guard case .opened(let remote, let room, let peer) = sent.first?.message,
              case .frame(_, _, let frame) = sent.last?.message else {
            Issue.record("expected opened and frame, got \(sent)")
            return
        }
        #expect(remote == BusMessage.RemoteConnection(node: "r", connection: bob.rawValue))
        #expect(room == "team" && peer == "198.51.100.4")
        #expect(Array(frame.utf8) == WireCodec.encode(ClientFrame(.join(room: "team", name: "Bob", token: nil),
                                                                   ref: .string("j"))))
        #expect(pair.relayCluster.followed == [Self.team: "o"])
        #expect(pair.relay.hub.roomCount == 0)

        pair.pump()
        let welcome = try #require(try pair.relay.messages(to: bob).first)
        guard case .welcome(let you, let snapshot, _, _, let ref) = welcome else {
            Issue.record("expected a welcome, got \(welcome.label)")
            return
        }
        #expect(ref == .string("j") && !you.resumed)
        #expect(snapshot.members.map(\.name).sorted() == ["Ada", "Bob"])
        // Ada, on the owner, hears of Bob as of any member.
        #expect(try pair.owner.messages(to: ada).contains { if case .state(let room) = $0 { room.members.count == 2 } else { false } })

        // A command from Bob takes effect for both, and its `ok` reaches Bob with his ref; one that is
        // refused reaches him as an error with its ref.
        pair.owner.transport.clearSent()
        pair.relay.transport.clearSent()
        pair.relay.send(.start, ref: "s", from: bob)
        pair.relay.send(.resume, ref: "bad", from: bob)   // not paused
        pair.pump()
        let bobHeard = try pair.relay.messages(to: bob)
        #expect(bobHeard.contains { if case .ok("start", _, .string("s")) = $0 { true } else { false } })
        #expect(bobHeard.contains { if case .error(_, _, _, .string("bad"), _) = $0 { true } else { false } })
        #expect(bobHeard.contains(where: Self.running))
        #expect(try pair.owner.messages(to: ada).contains(where: Self.running))

        // Bob hears the ticks Ada hears, byte for byte, at the same instants: his node computes them from the
        // deadline the owner replicated, and the owner publishes none.
        pair.owner.transport.clearSent()
        pair.relay.transport.clearSent()
        pair.ownerCluster.renewAll()
        pair.pass(.seconds(3))
        let adaTicks = pair.owner.transport.sent[ada] ?? []
        let bobTicks = pair.relay.transport.sent[bob] ?? []
        #expect(adaTicks.count == 3 && adaTicks == bobTicks)
        #expect(pair.ticksPublished == 0)
    }

    /// A draining node's members of a room another node runs hear their ticks through the drain, until the
    /// node stops its timers as it closes its connections; then no relayed tick is armed again.
    @Test func aDrainingNodesRelayedMembersHearTheirTicksUntilItCloses() throws {
        let pair = try Pair()
        let ada = pair.owner.connect()
        pair.owner.send(.join(room: "team", name: "Ada", token: nil), from: ada)
        pair.owner.send(.start, from: ada)
        pair.owner.settle()
        let bob = pair.relayedJoin("Bob")
        pair.relay.hub.drainForHandOff(flush: { _ in }, handOff: {})
        pair.relay.transport.clearSent()
        pair.pass(.seconds(3))
        #expect(try pair.relay.messages(to: bob).filter { $0.label == "tick" }.count == 3)
        // The close (`PomodoroServer.shutdown`) stops every timer, the relayed ticks with the rooms'.
        pair.relay.hub.stopTracking()
        #expect(pair.relay.transport.armedTimers == 0)
        pair.relay.transport.clearSent()
        pair.owner.send(.skip, from: ada)
        pair.pass(.seconds(3))
        #expect(try pair.relay.messages(to: bob).filter { $0.label == "tick" }.isEmpty)
        #expect(pair.relay.transport.armedTimers == 0)
    }

    /// Ada on the owner, Bob relayed, and the room's focus started by Bob.
    static func runningRoom() throws -> (Pair, ada: ConnectionID, bob: ConnectionID) {
        let pair = try Pair()
        let ada = pair.owner.connect()
        pair.owner.send(.join(room: "team", name: "Ada", token: nil), from: ada)
        pair.owner.settle()
        let bob = pair.relayedJoin("Bob")
        pair.relay.send(.start, from: bob)
        pair.pump()
        return (pair, ada, bob)
    }

    @Test func aRelayedMembersTicksFollowEveryChangeTheOwnerMakes() throws {
        let (pair, ada, bob) = try Self.runningRoom()
        func ticks(_ hub: TestHub, _ connection: ConnectionID) throws -> [TickPayload] {
            try hub.messages(to: connection).compactMap { if case .tick(let tick) = $0 { tick } else { nil } }
        }
        func heardAlike() throws -> Bool {
            (pair.owner.transport.sent[ada] ?? []).filter { $0.starts(with: Array(#"{"type":"tick""#.utf8)) }
                == (pair.relay.transport.sent[bob] ?? []).filter { $0.starts(with: Array(#"{"type":"tick""#.utf8)) }
        }
        pair.pass(.milliseconds(2_500))
        #expect(try ticks(pair.relay, bob).map(\.remainingMs) == [1_499_000, 1_498_000])

        // Paused on the owner: no more ticks anywhere. Extended and resumed: ticks again, with the new end.
        pair.owner.send(.pause, from: ada)
        pair.pump()
        pair.owner.transport.clearSent()
        pair.relay.transport.clearSent()
        pair.ownerCluster.renewAll()
        pair.pass(.seconds(3))
        #expect(try ticks(pair.relay, bob).isEmpty && ticks(pair.owner, ada).isEmpty)
        pair.relay.send(.extend(seconds: 60), from: bob)
        pair.owner.send(.resume, from: ada)
        pair.pump()
        pair.ownerCluster.renewAll()
        pair.pass(.seconds(2))
        let resumed = try ticks(pair.relay, bob)
        #expect(resumed.count == 2 && resumed.map(\.remainingMs) == [1_557_000, 1_556_000])
        #expect(try heardAlike())
        #expect(pair.ticksPublished == 0)

        // Skipped to a break: the countdown follows the owner's new phase.
        pair.relay.transport.clearSent()
        pair.owner.transport.clearSent()
        pair.owner.send(.skip, from: ada)
        pair.pump()
        pair.owner.send(.start, from: ada)
        pair.pump()
        pair.ownerCluster.renewAll()
        pair.pass(.seconds(1))
        #expect(try ticks(pair.relay, bob).map(\.phase) == [.shortBreak])
        #expect(try heardAlike())
    }

    /// The relaying node's timer wakes late, after the owner answered a command taken just past a boundary:
    /// the owner's member heard that second's tick, then the `state`; the relayed member hears the same, in
    /// the same order, and the late timer adds nothing. (Without it the `state` stood in for the tick.)
    @Test func aStateTakenPastABoundaryTheRelayHasNotTickedComesAfterThatTick() throws {
        let (pair, ada, bob) = try Self.runningRoom()
        pair.pass(.milliseconds(2_500))
        pair.owner.transport.clearSent()
        pair.relay.transport.clearSent()

        // The next boundary is 0.5 s away: 3 ms past it, the owner's timer has fired, the relay's not yet.
        let clock = pair.owner.clock
        clock.advance(by: .milliseconds(503))
        pair.ownerCluster.renewAll()
        pair.owner.transport.fireDueTimers()
        pair.owner.send(.task(text: "write the report"), from: ada)
        pair.pump()
        func timerFrames(_ hub: TestHub, _ connection: ConnectionID) throws -> [String] {
            try hub.messages(to: connection).compactMap {
                switch $0 {
                case .tick(let tick): "tick \(tick.remainingMs)"
                case .state(let room): "state \(room.remainingMs / 1_000 + 1)"
                default: nil
                }
            }
        }
        #expect(try timerFrames(pair.owner, ada) == ["tick 1497000", "state 1497"])
        #expect(try timerFrames(pair.relay, bob) == ["tick 1497000", "state 1497"])
        pair.relay.transport.fireDueTimers()
        pair.pump()
        #expect(try timerFrames(pair.relay, bob) == ["tick 1497000", "state 1497"], "the late timer adds nothing")
        pair.pass(.seconds(1))
        #expect(try timerFrames(pair.relay, bob).last == "tick 1496000")
        #expect(pair.ticksPublished == 0)
    }

    @Test func aRelayedObserverIsBroughtUpToDateAfterTheBusLostMessagesNotClosed() throws {
        let pair = try Pair()
        let ada = pair.owner.connect()
        pair.owner.send(.join(room: "team", name: "Ada", token: nil), from: ada)
        pair.owner.send(.start, from: ada)
        pair.owner.settle()
        let eye = pair.relay.connect()
        pair.relay.send(.observe(room: "team", token: nil, passcode: nil), ref: "o", from: eye)
        pair.pump()
        pair.relayCluster.clearPublished()
        pair.relay.transport.clearSent()

        // The bus lost Redis for a while (nothing delivered either way): the observer's ticks go on from its
        // node's copy of the deadline.
        pair.relay.pass(.seconds(3))
        #expect(try pair.relay.messages(to: eye).filter { $0.label == "tick" }.count == 3)
        pair.ownerCluster.renewAll()   // the owner kept its room on the store's fence
        pair.owner.settle()
        pair.relayCluster.clearPublished()
        pair.ownerCluster.clearPublished()

        // Back: the observer observes again and hears the room as a `state`; no close.
        pair.relay.transport.clearSent()
        pair.owner.router!.heard(.resubscribed)
        pair.relay.router!.heard(.resubscribed)
        pair.pump()
        #expect(pair.relay.transport.closes[eye] == nil)
        let heard = try pair.relay.messages(to: eye)
        #expect(heard.contains { if case .state(let room) = $0 { room.status == .running } else { false } })
        #expect(!heard.contains { $0.label == "observing" })
        pair.ownerCluster.renewAll()
        pair.pass(.seconds(1))
        #expect(try pair.relay.messages(to: eye).contains { $0.label == "tick" })
    }

    @Test func anObserverOnAnotherNodeWatchesTheRoomThroughIt() throws {
        let pair = try Pair()
        let ada = pair.owner.connect()
        pair.owner.send(.join(room: "team", name: "Ada", token: nil), from: ada)
        pair.owner.send(.start, from: ada)
        pair.owner.settle()
        let eye = pair.relay.connect()
        pair.relay.send(.observe(room: "team", token: nil, passcode: nil), ref: "o", from: eye)
        pair.pump()
        let first = try #require(try pair.relay.messages(to: eye).first)
        guard case .observing(let room, _, .string("o")?) = first else {
            Issue.record("expected observing, got \(first.label)")
            return
        }
        #expect(room.status == .running && room.members.map(\.name) == ["Ada"])
        pair.ownerCluster.renewAll()
        pair.pass(.seconds(1))
        #expect(try pair.relay.messages(to: eye).contains { $0.label == "tick" })
        // A room open nowhere is refused here, as on one server.
        let other = pair.relay.connect()
        pair.relay.send(.observe(room: "nowhere", token: nil, passcode: nil), ref: "n", from: other)
        pair.pump()
        #expect(try pair.relay.messages(to: other).first.map { if case .error(.notFound, _, _, .string("n"), _) = $0 { true } else { false } } == true)
    }

    /// The owner hears how the connection ended, as from a member of its own: closed by the client, or lost.
    @Test(arguments: [ConnectionEnd.closed, .lost])
    func aRelayedMemberWhoseConnectionClosesIsDisconnectedOnTheOwner(ended: ConnectionEnd) throws {
        let pair = try Pair()
        let bob = pair.relayedJoin("Bob")
        let ada = pair.owner.connect()
        pair.owner.send(.join(room: "team", name: "Ada", token: nil), from: ada)
        pair.owner.settle()
        pair.owner.transport.clearSent()

        pair.relay.disconnect(bob, ended: ended)
        #expect(pair.relayCluster.followed.isEmpty)
        pair.pump()
        let heard = try pair.owner.messages(to: ada)
        let state = heard.compactMap { if case .state(let room) = $0 { room } else { nil } }.last
        let bobNow = try #require(state?.members.first { $0.name == "Bob" })
        #expect(!bobNow.connected)
        let away = heard.compactMap { if case .event(_, .memberAway(bobNow.id, .disconnected, let how), _) = $0 { how } else { nil } }
        #expect(away == [ended])
    }

    @Test func theOwnerClosesARelayedConnectionThroughItsNode() throws {
        let pair = try Pair()
        let bob = pair.relayedJoin("Bob")
        let token = try pair.relay.messages(to: bob).compactMap { if case .welcome(let you, _, _, _, _) = $0 { you.token } else { nil } }.first
        // The same member joins again on the owner: the newer connection wins, the relayed one is replaced.
        let again = pair.owner.connect()
        pair.owner.send(.join(room: "team", name: "Bob", token: token), from: again)
        pair.pump()
        #expect(pair.relay.transport.closes[bob]?.code == 4001)
    }

    @Test func whatAFormerOwnerStillSendsIsDropped() throws {
        let pair = try Pair()
        let bob = pair.relayedJoin("Bob")
        pair.relay.transport.clearSent()
        let stale = String(decoding: WireCodec.encode(.error(code: .unavailable, message: "gone", field: nil, ref: nil)),
                           as: UTF8.self)
        pair.relay.router!.heard(.heard(.reply(node: "r", connections: [bob.rawValue], frame: stale, from: "x")))
        pair.relay.router!.heard(.heard(.close(BusMessage.RemoteConnection(node: "r", connection: bob.rawValue), code: 4005,
                                           reason: "room moved", from: "x")))
        #expect(try pair.relay.messages(to: bob).isEmpty)
        #expect(pair.relay.transport.closes[bob] == nil)
        pair.relay.router!.heard(.heard(.reply(node: "r", connections: [bob.rawValue], frame: stale, from: "o")))
        #expect(try pair.relay.messages(to: bob).count == 1)
    }

    @Test func afterTheBusLostMessagesRelayedMembersAreBroughtUpToDateAndJoinsAreSentAgain() throws {
        let pair = try Pair()
        let bob = pair.relayedJoin("Bob")
        let cy = pair.relay.connect()
        pair.relay.send(.join(room: "team", name: "Cy", token: nil), ref: "c", from: cy)
        pair.relay.settle()
        pair.relayCluster.clearPublished()   // lost while Redis was away
        pair.relay.transport.clearSent()

        // Both buses lost Redis and subscribed again: nobody is closed for it. Bob is joined again to the owner
        // with his token and hears the room as it is now; Cy's join, lost, is sent again and welcomed.
        pair.owner.router!.heard(.resubscribed)
        pair.relay.router!.heard(.resubscribed)
        pair.relay.settle()
        pair.pump()
        #expect(pair.relay.transport.closes[bob] == nil)
        #expect(pair.relay.transport.closes[cy] == nil)
        #expect(try pair.relay.messages(to: bob).contains { if case .state = $0 { true } else { false } })
        let cyHeard = try pair.relay.messages(to: cy)
        #expect(cyHeard.first.map { if case .welcome(_, _, _, _, .string("c")) = $0 { true } else { false } } == true)

        // The owner kept the connections from before the outage until their node opened them again: past its
        // limit, on its next beat, it closes none of those that were opened again.
        pair.owner.pass(.seconds(6))
        pair.owner.router!.heard(.nodesAlive(["o", "r"]))
        pair.pump()
        #expect(pair.relay.transport.closes[bob] == nil)
        #expect(pair.relay.transport.closes[cy] == nil)
    }

    /// Bob's member as the last `state` Ada heard shows him, or nil.
    static func bob(heardBy ada: ConnectionID, on hub: TestHub) throws -> MemberPayload? {
        try hub.messages(to: ada).compactMap { if case .state(let room) = $0 { room } else { nil } }.last?
            .members.first { $0.name == "Bob" }
    }

    @Test func aRelayedMemberJoinedAgainWithItsTokenAfterTheBusLostRedisNeverShowsAsGone() throws {
        let pair = try Pair()
        let bob = pair.relayedJoin("Bob")
        let ada = pair.owner.connect()
        pair.owner.send(.join(room: "team", name: "Ada", token: nil), from: ada)
        pair.owner.send(.start, from: ada)
        pair.pump()
        pair.owner.transport.clearSent()
        pair.relay.transport.clearSent()

        // The owner's node opens Bob's connection again and joins him with his token: taken back as he was.
        pair.owner.router!.heard(.resubscribed)
        pair.relay.router!.heard(.resubscribed)
        pair.pump()
        pair.pass(.seconds(6))
        pair.owner.router!.heard(.nodesAlive(["o", "r"]))
        pair.pump()
        let adaHeard = try pair.owner.messages(to: ada)
        #expect(!adaHeard.contains { $0.label.hasPrefix("event") }, "Ada heard \(adaHeard.map(\.label))")
        for case .state(let room) in adaHeard {
            #expect(room.members.allSatisfy { $0.connected && $0.stats.interruptions == 0 })
        }
        #expect(try Self.bob(heardBy: ada, on: pair.owner)?.connected == true)
        let bobHeard = try pair.relay.messages(to: bob)
        #expect(!bobHeard.contains { $0.label.hasPrefix("event") || $0.label.hasPrefix("error") }, "Bob heard \(bobHeard.map(\.label))")
        #expect(pair.relay.transport.closes[bob] == nil)
    }

    @Test func aConnectionOpenedAgainThatDoesNotProveItsMemberLeavesItToBeDisconnectedAtTheLimit() throws {
        let pair = try Pair()
        let bob = pair.relayedJoin("Bob")
        let ada = pair.owner.connect()
        pair.owner.send(.join(room: "team", name: "Ada", token: nil), from: ada)
        pair.pump()
        pair.owner.transport.clearSent()

        // After the outage, Bob's connection is opened again with a join that carries no token.
        pair.owner.router!.heard(.resubscribed)
        let remote = BusMessage.RemoteConnection(node: "r", connection: bob.rawValue)
        let join = String(decoding: WireCodec.encode(ClientFrame(.join(room: "team", name: "Bob", token: nil), ref: nil)),
                          as: UTF8.self)
        pair.owner.router!.heard(.heard(.opened(remote, room: "team", peer: "")))
        pair.owner.router!.heard(.heard(.frame(from: remote, room: "team", frame: join)))
        pair.owner.settle()
        // A new member; the Bob from before the outage is not his, and is let go at the owner's limit.
        let members = try pair.owner.messages(to: ada).compactMap { if case .state(let room) = $0 { room } else { nil } }
            .last?.members.filter { $0.name == "Bob" }
        #expect(members?.count == 2 && members?.allSatisfy(\.connected) == true)
        pair.pass(.seconds(6))
        pair.owner.router!.heard(.nodesAlive(["o", "r"]))
        pair.owner.settle()
        let after = try pair.owner.messages(to: ada).compactMap { if case .state(let room) = $0 { room } else { nil } }
            .last?.members.filter { $0.name == "Bob" }
        #expect(after?.filter(\.connected).count == 1, "the Bob from before the outage is disconnected: \(String(describing: after))")
    }

    @Test func membersOfANodeThatWentSilentAreDisconnected() throws {
        let pair = try Pair()
        let bob = pair.relayedJoin("Bob")
        let ada = pair.owner.connect()
        pair.owner.send(.join(room: "team", name: "Ada", token: nil), from: ada)
        pair.owner.settle()
        pair.owner.transport.clearSent()
        pair.owner.router!.heard(.nodesAlive(["o", "r"]))
        pair.owner.settle()
        #expect(try pair.owner.messages(to: ada).isEmpty)
        // Missing from one beat (Redis restarted, the node has not beaten since) is not gone.
        pair.owner.router!.heard(.nodesAlive(["o"]))
        pair.owner.settle()
        #expect(try pair.owner.messages(to: ada).isEmpty)
        pair.owner.transport.clearSent()
        // The registry is read on every beat (Redis is there): the node stays missing from it.
        for _ in 0..<5 {
            pair.ownerCluster.renewAll()
            pair.owner.pass(.seconds(1))
            pair.owner.router!.heard(.nodesAlive(["o"]))
        }
        pair.owner.settle()
        let state = try pair.owner.messages(to: ada).compactMap { if case .state(let room) = $0 { room } else { nil } }.last
        #expect(state?.members.first { $0.name == "Bob" }?.connected == false)
        // A node that was only slow hears that its member's room is gone from under it, and closes Bob with
        // 4005 so that he resumes; without it he would stay connected to a room that sends him nothing.
        pair.pump()
        #expect(pair.relay.transport.closes[bob]?.code == 4005)
    }

    @Test func whenTheOwnerGoesTheRelayingNodeTakesTheRoomAndItsJoinersGoOnThere() throws {
        let pair = try Pair()
        let ada = pair.owner.connect()
        pair.owner.send(.join(room: "team", name: "Ada", token: nil), from: ada)
        pair.owner.send(.start, from: ada)
        pair.owner.settle()
        // Bob was welcomed through the owner; Cy's join is on its way when the owner dies.
        let bob = pair.relayedJoin("Bob")
        let cy = pair.relay.connect()
        pair.relay.send(.join(room: "team", name: "Cy", token: nil), ref: "c", from: cy)
        pair.relay.settle()
        pair.relayCluster.clearPublished()   // lost with the owner

        // The owner's lease lapses; the relaying node's watch reports it, and the room is taken from the store.
        pair.relayCluster.lapse(Self.team)
        pair.relay.router!.heard(.ownerMoved(Self.team))
        pair.relay.settle()
        #expect(pair.relay.hub.roomCount == 1)
        #expect(pair.relayCluster.holding == [Self.team])
        // Bob, welcomed by the old owner, goes on here without reconnecting: he hears the room as it is now
        // (a state, not a second welcome), still himself; Cy's join is answered here as if nothing happened.
        #expect(pair.relay.transport.closes[bob] == nil)
        let bobHeard = try pair.relay.messages(to: bob)
        let bobYou = try #require(bobHeard.compactMap { if case .welcome(let you, _, _, _, _) = $0 { you } else { nil } }.first)
        #expect(bobHeard.filter { $0.label == "welcome" }.count == 1)
        guard case .state(let now)? = bobHeard.last(where: { $0.label == "state" }) else {
            Issue.record("Bob heard no state after the move: \(bobHeard.map(\.label))")
            return
        }
        #expect(now.status == .running && now.members.first { $0.id == bobYou.id }?.connected == true)
        let cyHeard = try pair.relay.messages(to: cy)
        pair.relay.transport.clearSent()
        pair.relay.send(.pause, ref: "p", from: bob)
        #expect(try pair.relay.messages(to: bob).contains { if case .ok("pause", _, .string("p")) = $0 { true } else { false } })
        guard case .welcome(_, let room, _, _, let ref)? = cyHeard.first(where: { $0.label == "welcome" }) else {
            Issue.record("expected a welcome for Cy, got \(cyHeard.map(\.label))")
            return
        }
        #expect(ref == .string("c") && room.status == .running)
        #expect(pair.relayCluster.followed.isEmpty)
    }

    @Test func aRelayedMemberWhoLeavesMayJoinAnotherRoomOnItsOwnNode() throws {
        let pair = try Pair()
        let bob = pair.relayedJoin("Bob")
        pair.relay.send(.leave, ref: "l", from: bob)
        pair.pump()
        #expect(try pair.relay.messages(to: bob).contains { if case .ok("leave", _, .string("l")) = $0 { true } else { false } })
        #expect(pair.relayCluster.followed.isEmpty)
        pair.relay.transport.clearSent()
        pair.relay.send(.join(room: "other", name: "Bob", token: nil), ref: "o", from: bob)
        pair.pump()
        #expect(try pair.relay.messages(to: bob).first.map { if case .welcome(_, let room, _, _, .string("o")) = $0 { room.room == "other" } else { false } } == true)
        #expect(pair.relay.hub.roomCount == 1)
    }

    /// What each node published, as text, of the bus messages carrying a member's frame or an answer to one.
    static func frames(_ published: [(node: String, message: BusMessage)]) -> [String] {
        published.compactMap {
            switch $0.message {
            case .frame(_, _, let frame): "frame " + frame
            case .refused(_, _, let answer): "refused " + answer
            default: nil
            }
        }
    }

    /// Frames the server refuses on any node never reach the bus: the relaying node decodes each frame once and
    /// answers a bad one itself, through the owner, so the member hears every answer in the order of its frames
    /// (bad_json for the NUL frame after the start's ok, before the pause's).
    @Test func aRefusedFrameIsAnsweredInItsTurnAndNeverPublished() throws {
        let pair = try Pair()
        let bob = pair.relayedJoin("Bob")
        pair.relayCluster.clearPublished()
        pair.relay.transport.clearSent()
        pair.relay.send(.start, ref: "s", from: bob)
        let nul = Array(#"{"type":"ping","ref":"m"}"#.utf8) + [0] + Array(repeating: UInt8(ascii: "A"), count: 4_000)
        pair.relay.hub.received(nul, from: bob)
        pair.relay.hub.received(Array(#"{"type":"task","text":"\#u{FFFF}"#.utf8) + [0xC3, 0x28] + Array("\"}".utf8), from: bob)
        pair.relay.send(.pause, ref: "p", from: bob)
        pair.relay.settle()
        let published = Self.frames(pair.relayCluster.published)
        #expect(published.count == 4, "\(published)")
        #expect(!published.contains { $0.contains("AAAA") || $0.utf8.contains(0) || $0.utf8.contains(0xC3) })
        #expect(published.filter { $0.hasPrefix("refused ") }.count == 2)
        pair.pump()
        let answers = try pair.relay.messages(to: bob).compactMap { message -> String? in
            switch message {
            case .ok(let command, _, _): "ok \(command)"
            case .error(let code, _, _, _, _): "error \(code.rawValue)"
            default: nil
            }
        }
        #expect(answers == ["ok start", "error bad_json", "error bad_json", "ok pause"])
    }

    /// The relaying node counts a relayed connection's frames against its rate before publishing them: a burst
    /// beyond the limit is refused (rate_limited) there, and one that goes on is closed with 1008, as on one
    /// server; the owner does not count them a second time.
    @Test func aRelayedConnectionIsRateLimitedBeforeItsFramesArePublished() throws {
        let pair = try Pair()
        let bob = pair.relayedJoin("Bob")
        pair.relayCluster.clearPublished()
        pair.relay.transport.clearSent()
        let limits = ServerConfiguration(port: 0, webRoot: nil).limits
        for index in 0..<(limits.messageBurst + limits.rateLimitStrikes + 5) {
            pair.relay.send(.ping, ref: "f\(index)", from: bob)
        }
        pair.relay.settle()
        let published = Self.frames(pair.relayCluster.published)
        // The join took one token of the burst.
        #expect(published.filter { $0.hasPrefix("frame ") }.count == limits.messageBurst - 1)
        #expect(published.filter { $0.hasPrefix("refused ") && $0.contains("rate_limited") }.count == limits.rateLimitStrikes - 1)
        // Closed through the owner, after the answers still on their way: none is lost to the close.
        #expect(pair.relayCluster.published.contains { if case .closing(_, _, 1008, _) = $0.message { true } else { false } })
        #expect(pair.relay.transport.closes[bob] == nil)
        pair.pump()
        #expect(pair.relay.transport.closes[bob]?.code == 1008)
        // The owner took every frame it was sent: no rate_limited of its own, and every pong and refusal in order.
        let heard = try pair.relay.messages(to: bob).map(\.label)
        #expect(heard.filter { $0 == "pong" }.count == limits.messageBurst - 1)
        #expect(heard.filter { $0 != "pong" }.count == limits.rateLimitStrikes - 1)
        #expect(heard.firstIndex { $0 != "pong" } == limits.messageBurst - 1, "\(heard)")
    }

    /// A `leave` padded past 256 bytes (unknown fields are ignored) ends the relay as a short one does.
    @Test func aLongLeaveEndsTheRelayAsAShortOneDoes() throws {
        let pair = try Pair()
        let bob = pair.relayedJoin("Bob")
        pair.relay.hub.received(Array(#"{"type":"leave","ref":"l","pad":"\#(String(repeating: "y", count: 400))"}"#.utf8), from: bob)
        pair.pump()
        #expect(try pair.relay.messages(to: bob).contains { if case .ok("leave", _, .string("l")) = $0 { true } else { false } })
        #expect(pair.relayCluster.followed.isEmpty)
        pair.relay.transport.clearSent()
        pair.relay.send(.join(room: "other", name: "Bob", token: nil), ref: "o", from: bob)
        pair.pump()
        #expect(pair.relay.hub.roomCount == 1)
    }
}
