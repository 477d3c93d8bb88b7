import PomodoroCore
import PomodoroNet
import PomodoroProtocol
@testable import PomodoroServer
import PomodoroTestSupport
import Testing

/// Address limits that answer when the test says, as a cluster node's do after a Redis round trip.
final class HeldLimits: AddressLimits {
    var connections: [(ConnectionID, (Bool) -> Void)] = []
    var closed: [ConnectionID] = []
    var rooms: [(LimitReservation?) -> Void] = []
    var roomsSettled: [(LimitReservation, kept: Bool)] = []
    var checks: [(CheckAdmission) -> Void] = []
    var checksSettled: [(LimitReservation, wrong: Bool)] = []
    private var serial: UInt64 = 0

    func place(_ address: String = "203.0.113.7") -> LimitReservation {
        serial += 1
        return LimitReservation(address: address, serial: serial, shared: true)
    }

    func admitConnection(_ connection: ConnectionID, from address: String, answer: @escaping (Bool) -> Void) {
        connections.append((connection, answer))
    }
    func connectionClosed(_ connection: ConnectionID) { closed.append(connection) }
    func reserveRoom(for address: String, answer: @escaping (LimitReservation?) -> Void) { rooms.append(answer) }
    func settleRoom(_ reservation: LimitReservation, kept: Bool) { roomsSettled.append((reservation, kept)) }
    func reservePasscodeCheck(for address: String, answer: @escaping (CheckAdmission) -> Void) {
        checks.append(answer)
    }
    func settlePasscodeCheck(_ reservation: LimitReservation, wrong: Bool) { checksSettled.append((reservation, wrong)) }
    /// `/api` requests are each server's own count, answered at once: these tests do not count them.
    func takeAPIRequest(from address: String) -> Bool { true }

    /// Answers the oldest request of `list`.
    static func answer<T>(_ list: inout [(T) -> Void], _ value: T) {
        list.removeFirst()(value)
    }
}

/// The hub with address limits that answer later, on a manual clock: what waits for an answer, and what
/// each answer does.
struct HubAddressLimitsTests {
    let limits = HeldLimits()
    let t: TestHub

    init() {
        t = TestHub(addressLimits: limits)
    }

    func pongs(_ connection: ConnectionID) throws -> Int {
        try t.messages(to: connection).count { if case .pong = $0 { true } else { false } }
    }

    /// A new connection's frames wait for its count; admitted, they are answered in order; refused, the
    /// connection is closed with 1008 and its frames never handled. Every close is told to the limits.
    @Test func framesWaitForTheConnectionsCount() throws {
        let a = t.connect(), b = t.connect()
        t.send(.ping, ref: "1", from: a)
        t.send(.ping, ref: "2", from: a)
        t.send(.ping, ref: "3", from: b)
        #expect(try pongs(a) == 0 && pongs(b) == 0)
        limits.connections.removeFirst().1(true)
        #expect(try pongs(a) == 2)
        limits.connections.removeFirst().1(false)
        #expect(t.transport.closes[b] == FakeTransport.Close(code: 1008, reason: "too many connections from one address"))
        #expect(try pongs(b) == 0)
        t.disconnect(b)
        t.disconnect(a)
        #expect(limits.closed == [b, a])
    }

    /// A join to a room not in memory waits for its place in the rooms-per-minute limit: granted, the room
    /// is made and the place kept; refused, `room_limit`; a join to a room in memory asks nothing.
    @Test func aJoinWaitsForItsRoomsPlace() throws {
        let a = t.connect(), b = t.connect(), c = t.connect()
        for _ in [a, b, c] { limits.connections.removeFirst().1(true) }
        t.send(.join(room: "team", name: "Ada", token: nil), ref: "a", from: a)
        t.send(.ping, ref: "after", from: a)
        #expect(try t.messages(to: a).isEmpty, "nothing before the answer, not even the later ping")
        let place = limits.place()
        HeldLimits.answer(&limits.rooms, place)
        let answers = try t.messages(to: a)
        guard case .welcome = answers.first, case .pong = answers.last else {
            Issue.record("welcome then pong, got \(answers)")
            return
        }
        #expect(limits.roomsSettled.map(\.0) == [place] && limits.roomsSettled.map(\.kept) == [true])
        t.send(.join(room: "other", name: "Bob", token: nil), ref: "b", from: b)
        HeldLimits.answer(&limits.rooms, nil)
        guard case .error(.roomLimit, _, _, _, _)? = try t.messages(to: b).last else {
            Issue.record("not refused: \(try t.messages(to: b))")
            return
        }
        t.send(.join(room: "team", name: "Cy", token: nil), ref: "c", from: c)
        #expect(limits.rooms.isEmpty, "a room in memory takes no place")
        guard case .welcome? = try t.messages(to: c).first else { Issue.record("Cy not welcomed"); return }
    }

    /// A join that went away before its place was answered, and one that made no room, hand their place back.
    @Test func aPlaceNotUsedIsHandedBack() throws {
        let a = t.connect(), b = t.connect()
        for _ in [a, b] { limits.connections.removeFirst().1(true) }
        t.send(.join(room: "gone", name: "Ada", token: nil), ref: "a", from: a)
        t.disconnect(a)
        let first = limits.place()
        HeldLimits.answer(&limits.rooms, first)
        t.send(.join(room: "bad name!", name: "Bob", token: nil), ref: "b", from: b)
        t.send(.join(room: "locked", name: "Bob", token: nil, passcode: "abc"), ref: "b2", from: b)
        let second = limits.place()
        HeldLimits.answer(&limits.rooms, second)
        #expect(limits.roomsSettled.map(\.0) == [first, second])
        #expect(limits.roomsSettled.map(\.kept) == [false, false])
    }

    /// A passcode check whose limit is busy with other nodes' checks waits and asks again on a timer; once
    /// granted it runs, and a wrong passcode settles its place as wrong. Limited, the join is refused.
    @Test func aBusyCheckAsksAgainLater() throws {
        let owner = t.connect(), guest = t.connect(), late = t.connect()
        for _ in [owner, guest, late] { limits.connections.removeFirst().1(true) }
        t.send(.join(room: "vault", name: "Owner", token: nil, passcode: "open sesame"), ref: "o", from: owner)
        HeldLimits.answer(&limits.rooms, limits.place())
        HeldLimits.answer(&limits.checks, .granted(limits.place()))
        t.settle()
        guard case .welcome? = try t.messages(to: owner).first else { Issue.record("no welcome"); return }

        t.send(.join(room: "vault", name: "Eve", token: nil, passcode: "guess"), ref: "e", from: guest)
        HeldLimits.answer(&limits.checks, .full)
        #expect(limits.checks.isEmpty && t.work.pending == 0, "nothing checked while busy")
        t.pass(.milliseconds(250))
        #expect(limits.checks.count == 1, "asked again")
        let place = limits.place()
        HeldLimits.answer(&limits.checks, .granted(place))
        t.settle()
        guard case .error(.badPasscode, _, _, _, _)? = try t.messages(to: guest).last else {
            Issue.record("not refused as wrong: \(try t.messages(to: guest))")
            return
        }
        #expect(limits.checksSettled.last.map { $0.0 == place && $0.wrong } == true)

        t.send(.join(room: "vault", name: "Mal", token: nil, passcode: "guess2"), ref: "m", from: late)
        HeldLimits.answer(&limits.checks, .limited)
        guard case .error(.rateLimited, _, _, _, _)? = try t.messages(to: late).last else {
            Issue.record("not rate limited: \(try t.messages(to: late))")
            return
        }
    }
}
