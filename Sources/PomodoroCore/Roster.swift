/// A room's members in join order, with the counts a room reads on every change.
///
/// The invariant it owns: `connectedCount`, `presentCount` and `disconnected` always describe exactly the
/// members held, and `ids` lists exactly those members in join order. Every write goes through `add`,
/// `update` or `remove`, which keep the counts in step, so reading them never walks the room.
struct Roster: Sendable {
    private var members: [MemberID: Member] = [:]
    /// Join order, for stable member lists.
    private(set) var ids: [MemberID] = []
    /// The number the next new member gets (`m1`, `m2`, …): never reused.
    private(set) var nextMemberNumber = 1
    /// Members with a connection.
    private(set) var connectedCount = 0
    /// Members connected and not away.
    private(set) var presentCount = 0
    /// Members whose connection dropped (their grace period runs), so that time passing looks at them
    /// alone, not at everyone.
    private(set) var disconnected: Set<MemberID> = []

    init(nextMemberNumber: Int = 1) {
        self.nextMemberNumber = nextMemberNumber
    }

    var count: Int { members.count }

    subscript(id: MemberID) -> Member? { members[id] }

    /// The members in join order.
    var inOrder: some Sequence<Member> { ids.lazy.map { members[$0]! } }

    /// The earliest joined member whose resume token hashes to `hash`.
    func member(withTokenHash hash: String) -> MemberID? {
        ids.first { ResumeToken.sameHash(members[$0]!.tokenHash, hash) }
    }

    /// Adds a new member at the end of the join order, with the next member number as id and place in the join order.
    mutating func add(name: String, tokenHash: String, _ setUp: (inout Member) -> Void = { _ in }) -> MemberID {
        let id = MemberID("m\(nextMemberNumber)")
        var member = Member(id: id, name: name, tokenHash: tokenHash)
        member.joinOrder = nextMemberNumber
        setUp(&member)
        nextMemberNumber += 1
        insert(member)
        return id
    }

    /// Puts back a member as a store kept them; rows come in join order (`joinOrder`).
    mutating func restore(_ member: Member) {
        nextMemberNumber = max(nextMemberNumber, member.joinOrder + 1)
        insert(member)
    }

    private mutating func insert(_ member: Member) {
        precondition(members[member.id] == nil, "member \(member.id) is in the room already")
        count(member, 1)
        members[member.id] = member
        ids.append(member.id)
    }

    /// Changes one member; does nothing for a member not in the room.
    mutating func update(_ id: MemberID, _ change: (inout Member) -> Void) {
        guard var member = members[id] else { return }
        count(member, -1)
        change(&member)
        precondition(member.id == id, "a member's id never changes")
        count(member, 1)
        members[id] = member
    }

    /// Takes a member out of the room and the join order.
    @discardableResult
    mutating func remove(_ id: MemberID) -> Member? {
        guard let old = members.removeValue(forKey: id) else { return nil }
        count(old, -1)
        if let index = ids.firstIndex(of: id) { ids.remove(at: index) }
        return old
    }

    private mutating func count(_ member: Member, _ sign: Int) {
        if member.connected { connectedCount += sign }
        if member.isPresent { presentCount += sign }
        if member.disconnectedAt != nil {
            if sign > 0 { disconnected.insert(member.id) } else { disconnected.remove(member.id) }
        }
    }
}
