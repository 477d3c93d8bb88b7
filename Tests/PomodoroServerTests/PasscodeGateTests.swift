import PomodoroCore
import PomodoroNet
@testable import PomodoroServer
import Testing

/// The passcode gate by hand, on instants the test chooses: the wrong-passcode limit holds however many
/// checks arrive at once.
struct PasscodeGateTests {
    let start = Instant(nanoseconds: 5_000_000_017)

    func started(_ admission: PasscodeGate.Admission) -> PasscodeGate.Ticket? {
        if case .start(let ticket) = admission { return ticket }
        return nil
    }

    /// Forty checks at once from one address: never more than five can turn out wrong in a minute.
    @Test func aBurstGetsNoMoreWrongGuessesThanTheLimit() {
        var gate = PasscodeGate(wrongPerMinute: 5, inFlightPerAddress: 2, waitingPerAddress: 64)
        var running: [PasscodeGate.Ticket] = []
        var waiting = 0, refused = 0, wrong = 0
        for _ in 0..<40 {
            switch gate.request(from: "192.0.2.7", at: start) {
            case .start(let ticket): running.append(ticket)
            case .wait: waiting += 1
            case .refuse: refused += 1
            }
        }
        #expect(running.count == 2 && waiting == 38 && refused == 0)
        // Every check that runs is wrong; each finish lets the next ones start while the limit allows.
        while !running.isEmpty {
            running.removeFirst()
            wrong += 1
            let next = gate.finish(from: "192.0.2.7", wrong: true, at: start)
            running += next.start
            refused += next.refuse.count
        }
        #expect(wrong == 5)
        #expect(refused == 35)
        #expect(gate.request(from: "192.0.2.7", at: start + .seconds(30)) == .refuse)
        // Another address is untouched, and a minute later this one may try again.
        #expect(started(gate.request(from: "198.51.100.1", at: start)) != nil)
        #expect(started(gate.request(from: "192.0.2.7", at: start + .seconds(61))) != nil)
    }

    /// Right passcodes from one address (a team behind one router) wait their turn instead of failing.
    @Test func rightPasscodesWaitTheirTurn() {
        var gate = PasscodeGate(wrongPerMinute: 5, inFlightPerAddress: 1, waitingPerAddress: 3)
        #expect(started(gate.request(from: "a", at: start)) != nil)
        let queued = (0..<3).map { _ in gate.request(from: "a", at: start) }
        #expect(queued.allSatisfy { if case .wait = $0 { true } else { false } })
        #expect(gate.request(from: "a", at: start) == .refuse, "the waiting line is bounded")
        var done = 1
        var next = gate.finish(from: "a", wrong: false, at: start)
        while let ticket = next.start.first {
            _ = ticket
            #expect(next.start.count == 1 && next.refuse.isEmpty)
            done += 1
            next = gate.finish(from: "a", wrong: false, at: start)
        }
        #expect(done == 4)
    }

    /// A check that is still running counts against the limit already.
    @Test func checksInFlightCountBeforeTheyEnd() {
        var gate = PasscodeGate(wrongPerMinute: 2, inFlightPerAddress: 4)
        #expect(started(gate.request(from: "a", at: start)) != nil)
        #expect(started(gate.request(from: "a", at: start)) != nil)
        if case .wait = gate.request(from: "a", at: start) {} else { Issue.record("a third check ran beside two") }
        let next = gate.finish(from: "a", wrong: true, at: start)
        #expect(next.start.isEmpty && next.refuse.isEmpty, "one wrong and one running: still at the limit")
        let last = gate.finish(from: "a", wrong: true, at: start)
        #expect(last.start.isEmpty && last.refuse.count == 1)
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
        ("::1", "0:0:0:0::/64"),
        ("fe80::1%eth0", "fe80:0:0:0::/64"),
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
