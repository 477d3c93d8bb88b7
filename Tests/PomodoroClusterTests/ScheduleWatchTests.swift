import Foundation
import PomodoroCluster
import PomodoroTestSupport
import Testing

/// The schedules' notices and the lease reads of `ScheduleWatch`, against a real `redis-server` started by
/// the test on loopback: a notice one node announces reaches every node, the sender too; a (re)subscription
/// asks for a full reread; the rooms nobody holds are told apart from the held ones.
@Suite(.onOwnThreads, .timeLimit(.minutes(TestTime.minutes(1))))
final class ScheduleWatchTests {
    let redis: RedisTestServer
    let address: RedisAddress

    init() throws {
        redis = try RedisTestServer()
        address = try RedisAddress(parsing: redis.url)
    }

    deinit { redis.stop() }

    /// A started watch and what it has heard so far.
    func makeWatch() -> (ScheduleWatch, Locked<[ScheduleWatch.Event]>) {
        let watch = ScheduleWatch(address: address)
        let heard = Locked<[ScheduleWatch.Event]>([])
        watch.onEvent { event in heard.update { $0.append(event) } }
        watch.start()
        return (watch, heard)
    }

    /// Waits (bounded) until `heard` holds `event`.
    func expect(_ event: ScheduleWatch.Event, in heard: Locked<[ScheduleWatch.Event]>, seconds: Double = 5) {
        let deadline = TestTime.deadline(seconds)
        while !heard.current.contains(event) {
            guard Date() < deadline else { Issue.record("no \(event) within \(seconds) s: \(heard.current)"); return }
            usleep(10_000)
        }
    }

    @Test func aNoticeReachesEveryNodeAndASubscriptionAsksForAFullReread() {
        let (a, heardByA) = makeWatch()
        defer { a.stop() }
        let (b, heardByB) = makeWatch()
        defer { b.stop() }
        // Subscribed: whatever was announced before may have been missed.
        expect(.rereadAll, in: heardByA)
        expect(.rereadAll, in: heardByB)
        a.announce("team-a")
        expect(.changed(room: "team-a"), in: heardByA)
        expect(.changed(room: "team-a"), in: heardByB)
        // Other messages on the channel are not notices.
        _ = try? RedisLeases(address: address).command(["PUBLISH", BusMessage.schedulesChannel, "hello"])
        b.announce("team-b")
        expect(.changed(room: "team-b"), in: heardByA)
        #expect(heardByA.current.filter { if case .changed = $0 { true } else { false } }
            == [.changed(room: "team-a"), .changed(room: "team-b")])
    }

    @Test func aReadThatFailedIsMadeUpForByAFullRereadASecondLaterUntilOneSucceeds() {
        let (watch, heard) = makeWatch()
        defer { watch.stop() }
        expect(.rereadAll, in: heard)
        let rereads = { heard.current.filter { $0 == .rereadAll }.count }
        let before = rereads()
        // The first failure since a success is the one to log; a second one is not.
        #expect(watch.readFailed())
        #expect(!watch.readFailed())
        // Each failure asks for a full reread of its own, well before the periodic one (30 s).
        let deadline = TestTime.deadline(5)
        while rereads() < before + 2 && Date() < deadline { usleep(10_000) }
        #expect(rereads() == before + 2)
        watch.readSucceeded()
        #expect(watch.readFailed())
    }

    @Test func theRoomsNobodyHoldsAreToldApart() throws {
        let (watch, _) = makeWatch()
        defer { watch.stop() }
        #expect(try RedisLeases(address: address).acquire(room: "held", node: "b") == .granted(epoch: 1))
        let answer = Locked<Result<[String], RedisError>?>(nil)
        let done = DispatchSemaphore(value: 0)
        watch.unheld(["free", "held", "also-free"]) { result in
            answer.update { $0 = result }
            done.signal()
        }
        #expect(done.wait(timeout: .now() + 5) == .success)
        #expect(try answer.current?.get() == ["free", "also-free"])
    }
}
