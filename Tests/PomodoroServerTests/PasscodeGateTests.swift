import PomodoroCore
import PomodoroNet
@testable import PomodoroServer
import PomodoroTestSupport
import Testing

/// The passcode gate and the wrong-passcode count by hand, on instants the test chooses: the gate orders
/// and bounds an address's checks on a node, the count (`SlidingWindowCount`, behind `AddressLimits`) says
/// whether a started check may run; together the limit holds however many checks arrive at once.
struct PasscodeGateTests {
    let start = Instant(nanoseconds: 5_000_000_017)

    func started(_ admission: PasscodeGate.Admission) -> PasscodeGate.Ticket? {
        if case .start(let ticket) = admission { return ticket }
        return nil
    }

    /// Forty checks at once from one address, each asking the count for its place as the hub does: never
    /// more than five can turn out wrong in a minute.
    @Test func aBurstGetsNoMoreWrongGuessesThanTheLimit() {
        var gate = PasscodeGate(inFlightPerAddress: 2, waitingPerAddress: 64)
        var count = SlidingWindowCount(limit: 5)
        var running = 0, waiting = 0, refused = 0, wrong = 0
        var asking: [PasscodeGate.Ticket] = []
        for _ in 0..<40 {
            switch gate.request(from: "192.0.2.7") {
            case .start(let ticket): asking.append(ticket)
            case .wait: waiting += 1
            case .refuse: refused += 1
            }
        }
        #expect(asking.count == 2 && waiting == 38 && refused == 0)
        // The hub's loop: a started ticket asks for its place; each check that runs is wrong.
        while !asking.isEmpty || running > 0 {
            while let ticket = asking.first {
                asking.removeFirst()
                switch count.reserve("192.0.2.7", at: start) {
                case .granted: running += 1
                case .full: gate.requeue(ticket, from: "192.0.2.7")
                case .limited:
                    refused += 1 + gate.refuseWaiting(from: "192.0.2.7").count
                    asking += gate.finish(from: "192.0.2.7")
                }
            }
            guard running > 0 else { break }
            running -= 1
            wrong += 1
            count.settle("192.0.2.7", counts: true, at: start)
            asking += gate.finish(from: "192.0.2.7")
        }
        #expect(wrong == 5)
        #expect(refused == 35)
        #expect(count.reserve("192.0.2.7", at: start + .seconds(30)) == .limited)
        // Another address is untouched, and a minute later this one may try again.
        #expect(count.reserve("198.51.100.1", at: start) == .granted)
        #expect(count.reserve("192.0.2.7", at: start + .seconds(61)) == .granted)
    }

    /// Checks from one address (a team behind one router) wait their turn in order instead of failing.
    @Test func checksWaitTheirTurn() {
        var gate = PasscodeGate(inFlightPerAddress: 1, waitingPerAddress: 3)
        let first = started(gate.request(from: "a"))
        #expect(first != nil)
        let queued = (0..<3).map { _ in gate.request(from: "a") }
        #expect(queued.allSatisfy { if case .wait = $0 { true } else { false } })
        #expect(gate.request(from: "a") == .refuse, "the waiting line is bounded")
        #expect(started(gate.request(from: "b")) != nil, "another address has its own turn")
        var order: [PasscodeGate.Ticket] = []
        var next = gate.finish(from: "a")
        while let ticket = next.first {
            #expect(next.count == 1)
            order.append(ticket)
            next = gate.finish(from: "a")
        }
        #expect(order == queued.compactMap { if case .wait(let ticket) = $0 { ticket } else { nil } })
    }

    /// A check the count found busy goes back to the head of the line, before the ones that came later.
    @Test func aBusyCheckKeepsItsPlaceInLine() {
        var gate = PasscodeGate(inFlightPerAddress: 1, waitingPerAddress: 8)
        let first = started(gate.request(from: "a"))!
        guard case .wait(let second) = gate.request(from: "a") else { Issue.record("did not wait"); return }
        gate.requeue(first, from: "a")
        #expect(gate.running(from: "a") == 0 && gate.waitingCount(from: "a") == 2)
        #expect(gate.startWaiting(from: "a") == [first])
        #expect(gate.finish(from: "a") == [second])
    }

    /// A check that is still running counts against the limit already; a right one hands its place back.
    @Test func checksInFlightCountBeforeTheyEnd() {
        var count = SlidingWindowCount(limit: 2)
        #expect(count.reserve("a", at: start) == .granted)
        #expect(count.reserve("a", at: start) == .granted)
        #expect(count.reserve("a", at: start) == .full, "a third check beside two running")
        count.settle("a", counts: true, at: start)
        #expect(count.reserve("a", at: start) == .full, "one wrong and one running: still at the limit")
        count.settle("a", counts: false, at: start)
        #expect(count.reserve("a", at: start) == .granted, "the right one handed its place back")
        count.settle("a", counts: true, at: start)
        #expect(count.reserve("a", at: start) == .limited)
    }

    /// The limit is a sliding minute: one wrong guess, four just before the minute is out, and at the
    /// minute's edge only the first has left the window, so one more check starts, not five (a counter of
    /// fixed minutes let about ten through around the edge). Through `LocalAddressLimits` on a manual clock.
    @Test func theLimitSlidesOverTheMinutesEdge() {
        let clock = ManualServerClock(monotonic: start)
        let limits = LocalAddressLimits(maxConnections: 0, roomsPerMinute: 0, wrongPasscodesPerMinute: 5, clock: clock)
        func guess() -> Bool {
            guard case .granted(let place) = limits.takePasscodeCheck(for: "a") else { return false }
            limits.settlePasscodeCheck(place, wrong: true)
            return true
        }
        #expect(guess())
        clock.advance(by: .seconds(59))
        for _ in 0..<4 { #expect(guess()) }
        #expect(!guess())
        clock.advance(by: .milliseconds(1_500))   // 60.5 s after the first
        let through = (0..<5).filter { _ in guess() }.count
        #expect(through == 1, "at the minute's edge the four of second 59 still count")
        clock.advance(by: .milliseconds(57_500))  // 118 s
        #expect(!guess())
        clock.advance(by: .milliseconds(1_500))   // 119.5 s: a minute after the four
        #expect(guess(), "a minute after the four, they have left the window")
    }

    /// Rooms made per address slide the same way; a join that made no room hands its place back.
    @Test func roomsMadeSlideAndUnusedPlacesReturn() {
        let clock = ManualServerClock(monotonic: start)
        let limits = LocalAddressLimits(maxConnections: 0, roomsPerMinute: 2, wrongPasscodesPerMinute: 5, clock: clock)
        let first = limits.takeRoom(for: "a")!
        limits.settleRoom(first, kept: true)
        clock.advance(by: .seconds(59))
        let unused = limits.takeRoom(for: "a")!
        limits.settleRoom(unused, kept: false)
        limits.settleRoom(limits.takeRoom(for: "a")!, kept: true)
        #expect(limits.takeRoom(for: "a") == nil)
        clock.advance(by: .seconds(2))
        #expect(limits.takeRoom(for: "a") != nil, "the first has left the window")
        #expect(limits.takeRoom(for: "a") == nil, "the second has not")
    }

    /// Connections per address: admitted up to the limit, a place freed by a close, and a close of one never
    /// admitted frees nothing.
    @Test func connectionsPerAddress() {
        let limits = LocalAddressLimits(maxConnections: 2, roomsPerMinute: 0, wrongPasscodesPerMinute: 5,
                                        clock: ManualServerClock(monotonic: start))
        func admit(_ raw: UInt64, _ address: String = "a") -> Bool {
            var admitted: Bool?
            limits.admitConnection(ConnectionID(rawValue: raw), from: address) { admitted = $0 }
            return admitted!
        }
        #expect(admit(1) && admit(2))
        #expect(!admit(3))
        #expect(admit(4, "b"))
        limits.connectionClosed(ConnectionID(rawValue: 3))
        #expect(!admit(5), "the refused one held no place")
        limits.connectionClosed(ConnectionID(rawValue: 1))
        #expect(admit(6))
    }

    /// `/api` requests per address: a burst, then one per second as the bucket refills; each address has its
    /// own bucket; a rate of 0 counts nothing.
    @Test func apiRequestsTakeFromTheirAddresssBucket() {
        let clock = ManualServerClock(monotonic: start)
        let limits = LocalAddressLimits(maxConnections: 0, roomsPerMinute: 0, wrongPasscodesPerMinute: 5,
                                        apiRequestsPerSecond: 1, apiBurst: 3, clock: clock)
        #expect((0..<5).filter { _ in limits.takeAPIRequest(from: "a") }.count == 3)
        #expect(limits.takeAPIRequest(from: "b"), "another address has its own bucket")
        clock.advance(by: .milliseconds(500))
        #expect(!limits.takeAPIRequest(from: "a"))
        clock.advance(by: .milliseconds(500))
        #expect(limits.takeAPIRequest(from: "a"), "a second refills one")
        #expect(!limits.takeAPIRequest(from: "a"))
        let unlimited = LocalAddressLimits(maxConnections: 0, roomsPerMinute: 0, wrongPasscodesPerMinute: 5,
                                           apiRequestsPerSecond: 0, apiBurst: 1, clock: clock)
        #expect((0..<100).allSatisfy { _ in unlimited.takeAPIRequest(from: "a") })
    }
}

/// Per-address limits count IPv6 clients by their /64.
struct AddressKeyTests {
    @Test(arguments: [
        ("192.0.2.7", "192.0.2.7"),
        ("2001:db8:1:2:aaaa:bbbb:cccc:dddd", "2001:db8:1:2::/64"),
        ("2001:db8:1:2::1", "2001:db8:1:2::/64"),
        ("[2001:db8:1:2::1]", "2001:db8:1:2::/64"),
        ("::ffff:127.0.0.1", "127.0.0.1"),
        ("::1", "::/64"),
        ("fe80::1%eth0", "fe80::/64"),
        ("?", "?"),
        ("not:an:address", "not:an:address"),
    ])
    func keys(address: String, key: String) {
        #expect(AddressKey.of(address) == key)
    }

    @Test func oneNetworkIsOneKey() {
        #expect(AddressKey.of("2001:db8::1") == AddressKey.of("2001:db8::ffff:1"))
        #expect(AddressKey.of("2001:db8::1") != AddressKey.of("2001:db8:0:1::1"))
    }
}
