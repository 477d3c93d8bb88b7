/// Who the host removed from a room, and until when they may not come back.
///
/// The invariant it owns: a removed member is refused by their name (compared case-insensitively) and by
/// their resume token until their ban ends, and a ban that has ended is never held on to. Time comes in as
/// an argument: a ban is a deadline, not a counter.
struct Bans: Sendable {
    struct Ban: Sendable {
        let nameKey: String
        let tokenHash: String
        let until: Instant
    }

    private(set) var bans: [Ban] = []

    var isEmpty: Bool { bans.isEmpty }

    /// The key a name is banned under: the same person retyping their name in other capitals is the same.
    static func key(_ name: String) -> String { name.lowercased() }

    mutating func ban(name: String, tokenHash: String, until: Instant) {
        bans.append(Ban(nameKey: Self.key(name), tokenHash: tokenHash, until: until))
    }

    /// Bans as a store keeps them, on the wall clock.
    func records(wallMs: (Instant) -> Int64) -> [BanRecord] {
        bans.map { BanRecord(nameKey: $0.nameKey, tokenHash: $0.tokenHash, untilMs: wallMs($0.until)) }
    }

    /// The bans a store kept that still run at `now`; `instant` turns their wall-clock ends into this run's.
    init(restoring records: [BanRecord], instant: (Int64) -> Instant, now: Instant) {
        bans = records.map { Ban(nameKey: $0.nameKey, tokenHash: $0.tokenHash, until: instant($0.untilMs)) }
            .filter { now < $0.until }
    }

    init() {}

    /// When the ban that keeps out whoever joins as `name` with `tokenHash` ends, or nil when none does.
    func end(name: String, tokenHash: String?, at now: Instant) -> Instant? {
        let key = Self.key(name)
        return bans.lazy.filter { ban in
            now < ban.until
                && (ban.nameKey == key || tokenHash.map { ResumeToken.sameHash(ban.tokenHash, $0) } == true)
        }.map(\.until).max()
    }

    /// Forgets the bans that ended by `now`.
    mutating func forgetEnded(at now: Instant) {
        bans.removeAll { now >= $0.until }
    }
}
