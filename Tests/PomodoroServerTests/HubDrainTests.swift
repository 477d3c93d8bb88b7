import Foundation
import PomodoroCore
import PomodoroProtocol
import PomodoroServer
import PomodoroTestSupport
import Testing

/// A cluster node draining (docs/CLUSTER.md, "Draining a node"): its own rooms go on ticking while its store
/// writes what was queued, their timers stop on the service thread once that is durable (no phase ends, nothing
/// written, from then on), and only then are their leases given back for the hand-off; their members go on
/// hearing their seconds until each room is taken, then hear its next second and are closed with 1012.
struct HubDrainTests {
    /// The drain's flushes, held until the test lets each one end.
    final class HeldFlushes: @unchecked Sendable {
        private let lock = NSLock()
        private var waiting: [@Sendable () -> Void] = []
        private var asked = 0

        /// What the hub is given as its flush: once the test lets it end, the store writes what was queued
        /// when the flush was asked for (as `StoreWriter.flush`), not what came after.
        func flush(_ store: HeldStore) -> @Sendable (@escaping @Sendable () -> Void) -> Void {
            { [self] done in
                let queued = store.pendingCommits
                lock.withLock {
                    asked += 1
                    waiting.append { store.releaseCommits(queued); done() }
                }
            }
        }

        var count: Int { lock.withLock { asked } }
        var pending: Int { lock.withLock { waiting.count } }

        /// Ends the oldest flush still held.
        func end() {
            let first = lock.withLock { waiting.isEmpty ? nil : waiting.removeFirst() }
            first?()
        }
    }

    final class Flag: @unchecked Sendable {
        private let lock = NSLock()
        private var value: Int?
        func set(_ new: Int) { lock.withLock { value = new } }
        var read: Int? { lock.withLock { value } }
    }

    @Test func aDrainingNodesRoomsTickWhileTheStoreFlushesAndTheirMembersHearTheirSecondsUntilTheRoomIsTaken() throws {
        let (t, cluster) = try HubClusterTests.make()
        let ada = t.connect()
        t.send(.join(room: "team", name: "Ada", token: nil), from: ada)
        t.send(.start, from: ada)
        t.settle()
        let store = try #require(t.store)
        t.transport.clearSent()

        let flushes = HeldFlushes()
        // Timers still armed when the hand-off gives the leases back (nil: not handed off yet).
        let armedAtRelease = Flag()
        let transport = t.transport
        t.hub.drainForHandOff(flush: flushes.flush(store), handOff: {
            armedAtRelease.set(transport.armedTimers)
            cluster.release(HubClusterTests.team)
        })
        #expect(t.hub.isHandingOff)
        #expect(flushes.count == 1)

        // The flush is held for three seconds: the room goes on ticking, nobody is closed, nothing is released.
        for _ in 0..<3 {
            cluster.renewAll()
            t.pass(.seconds(1), commits: false)
        }
        #expect(HubClusterTests.ticks(try t.messages(to: ada)) == 3)
        #expect(t.transport.closes[ada] == nil)
        #expect(cluster.released.isEmpty && armedAtRelease.read == nil)

        // The flush ends: on the service thread the room's timers stop, and what was written meanwhile is
        // flushed in turn before anything is released. Its member still hears its seconds (one timer left:
        // the drain's ticker), and nothing is written for them.
        flushes.end()
        t.settle(commits: false)
        #expect(t.transport.armedTimers == 1)
        #expect(flushes.count == 2 && flushes.pending == 1)
        #expect(cluster.released.isEmpty && armedAtRelease.read == nil)
        // Frozen, the room takes on no change that would be written after the release: a task is refused
        // with shutting_down, nothing queued; a ping is still answered.
        t.transport.clearSent()
        let pending = store.pendingCommits
        t.send(.task(text: "late"), ref: "late", from: ada)
        t.send(.ping, ref: "p", from: ada)
        t.settle(commits: false)
        let answers = try t.messages(to: ada)
        #expect(answers.contains { if case .error(.shuttingDown, _, _, .string("late")?, _) = $0 { true } else { false } }, "\(answers)")
        #expect(answers.contains { if case .pong = $0 { true } else { false } })
        #expect(!answers.contains { if case .ok = $0 { true } else { false } })
        #expect(store.pendingCommits == pending)
        t.transport.clearSent()
        cluster.renewAll()
        t.pass(.seconds(2), commits: false)
        let duringSecondFlush = try t.messages(to: ada)
        #expect(HubClusterTests.ticks(duringSecondFlush) == 2, "\(duringSecondFlush)")
        #expect(store.pendingCommits == pending)

        // That second flush done, the lease is given back with only that ticker armed; Ada hears her seconds
        // until another node takes the room.
        flushes.end()
        #expect(armedAtRelease.read == 1)
        #expect(cluster.released == [HubClusterTests.team])
        t.transport.clearSent()
        t.pass(.seconds(1), commits: false)
        #expect(HubClusterTests.ticks(try t.messages(to: ada)) == 1)
        #expect(t.transport.closes[ada] == nil)

        // Another node took it, half a second before the next second: Ada hears that second, then is closed
        // with 1012, and no timer is left.
        t.pass(.milliseconds(500), commits: false)
        t.transport.clearSent()
        t.hub.lostRoom(HubClusterTests.team)
        #expect(t.transport.closes[ada] == nil)
        t.pass(.milliseconds(400), commits: false)
        #expect(HubClusterTests.ticks(try t.messages(to: ada)) == 0 && t.transport.closes[ada] == nil)
        #expect(!t.hub.sendingBack.isEmpty)
        t.pass(.milliseconds(200), commits: false)
        let heard = try t.messages(to: ada)
        #expect(HubClusterTests.ticks(heard) == 1)
        if case .tick(let tick)? = heard.last { #expect(tick.remainingMs % 1000 == 0) } else { Issue.record("\(heard)") }
        #expect(t.transport.closes[ada]?.code == RoomHub.restartCloseCode)
        #expect(t.hub.sendingBack.isEmpty)
        t.pass(.seconds(3))
        #expect(HubClusterTests.ticks(try t.messages(to: ada)) == 1)
        #expect(t.transport.armedTimers == 0)
    }

    /// A phase that ends while the store flushes is written before the lease is given back: its write is
    /// queued after the first flush was asked for, while the room ticks, and the second flush (asked once the
    /// timers stopped) carries it.
    @Test func aPhaseEndingDuringTheFlushIsWrittenBeforeTheRelease() throws {
        let (t, cluster) = try HubClusterTests.make()
        let ada = t.connect()
        t.send(.join(room: "team", name: "Ada", token: nil), from: ada)
        t.send(.start, from: ada)
        t.settle()
        let store = try #require(t.store)
        let flushes = HeldFlushes()
        let pendingAtRelease = Flag()
        t.hub.drainForHandOff(flush: flushes.flush(store), handOff: {
            pendingAtRelease.set(store.pendingCommits)
            cluster.release(HubClusterTests.team)
        })
        // The focus (25 minutes) ends while the first flush is held; its end is queued, not written (and
        // announced once written).
        for _ in 0..<(25 * 60 + 2) {
            cluster.renewAll()
            t.pass(.seconds(1), commits: false)
        }
        #expect(store.pendingCommits > 0)
        func focusEnded() throws -> Int {
            try t.messages(to: ada).filter {
                if case .event(_, .phaseCompleted(let completed, _, _, _), _) = $0 { completed == .focus } else { false }
            }.count
        }
        #expect(try focusEnded() == 0)
        flushes.end()
        t.settle(commits: false)
        #expect(store.pendingCommits > 0 && pendingAtRelease.read == nil)
        flushes.end()
        t.settle(commits: false)
        #expect(try focusEnded() == 1)
        #expect(pendingAtRelease.read == 0)
        #expect(cluster.released == [HubClusterTests.team])
    }
}
