/// A named API token of a room (the control API, docs/PROTOCOL.md "The control API"): the room keeps the
/// SHA-256 of the token only; the token itself is shown once, to whoever made it.
public struct APITokenRecord: Equatable, Sendable {
    /// `t1`, `t2`, …: numbered within the room, never reused while the room keeps a token of that number.
    public var id: String
    public var name: String
    /// The SHA-256 of the token, 64 lowercase hex digits (`ResumeToken.hash`).
    public var tokenHash: String
    public var createdAtMs: Int64
    /// When the token last carried a command (wall clock, to the minute); nil when never.
    public var lastUsedAtMs: Int64?
    /// The member who made it: removing them (`kick`) revokes it.
    public var createdBy: MemberID?

    public init(id: String, name: String, tokenHash: String, createdAtMs: Int64, lastUsedAtMs: Int64? = nil,
                createdBy: MemberID? = nil) {
        self.createdBy = createdBy
        self.id = id
        self.name = name
        self.tokenHash = tokenHash
        self.createdAtMs = createdAtMs
        self.lastUsedAtMs = lastUsedAtMs
    }
}

/// A room's API tokens, and the rules they keep: at most `limit` of them, names of 1–`nameLimit` characters
/// (`TextRules`), ids never repeated among them, a token found by its hash in time that does not depend on
/// where hashes differ.
struct APITokens: Sendable {
    static let limit = 10
    static let nameLimit = 40
    /// How stale `lastUsedAtMs` may be: a token used again within this is not written again.
    static let lastUseGranularityMs: Int64 = 60_000

    private(set) var records: [APITokenRecord] = []

    init(_ records: [APITokenRecord] = []) { self.records = records }

    mutating func create(name: String, tokenHash: String, atMs: Int64, by member: MemberID?) throws(RoomError)
        -> APITokenRecord {
        let name = try TextRules.clean(name, field: "name", allowEmpty: false, maxLength: Self.nameLimit)
        guard records.count < Self.limit else {
            throw .invalidState("a room keeps at most \(Self.limit) API tokens; revoke one first")
        }
        let number = (records.compactMap { Int($0.id.dropFirst()) }.max() ?? 0) + 1
        let record = APITokenRecord(id: "t\(number)", name: name, tokenHash: tokenHash, createdAtMs: atMs,
                                    createdBy: member)
        records.append(record)
        return record
    }

    mutating func revoke(_ id: String) throws(RoomError) {
        guard let index = records.firstIndex(where: { $0.id == id }) else {
            throw .invalidArgument(field: "id", reason: "this room has no API token \(id)")
        }
        records.remove(at: index)
    }

    /// Revokes every token `member` made; true when there was one.
    mutating func revokeAll(madeBy member: MemberID) -> Bool {
        let before = records.count
        records.removeAll { $0.createdBy == member }
        return records.count != before
    }

    /// The token whose hash is `hash`; every record is compared, so the time taken says nothing.
    func matching(_ hash: String) -> APITokenRecord? {
        var found: APITokenRecord?
        for record in records where ResumeToken.sameHash(record.tokenHash, hash) { found = record }
        return found
    }

    /// Notes a use at `atMs`; true when that is worth writing (the last one written is a minute old or more).
    mutating func used(_ id: String, atMs: Int64) -> Bool {
        guard let index = records.firstIndex(where: { $0.id == id }) else { return false }
        if let last = records[index].lastUsedAtMs, atMs - last < Self.lastUseGranularityMs { return false }
        records[index].lastUsedAtMs = atMs
        return true
    }
}

extension Room {
    /// The room's API tokens, oldest first (hashes only).
    public var apiTokens: [APITokenRecord] { tokens.records }

    /// A member makes a named API token: allowed to whoever may press the controls (anyone in an open room,
    /// the host in a host-only one). `tokenHash` is the new token's SHA-256; the token is the caller's to show.
    public mutating func createAPIToken(name: String, tokenHash: String, by id: MemberID, atMs: Int64)
        throws(RoomError) -> APITokenRecord {
        try mayManageAPITokens(id)
        let record = try tokens.create(name: name, tokenHash: tokenHash, atMs: atMs, by: id)
        pending.apiTokensChanged()
        return record
    }

    /// The first token of a room made over HTTP (`POST /api/rooms`), where nobody is in it to make one; the
    /// room's row is written with it.
    public mutating func createFirstAPIToken(name: String, tokenHash: String, atMs: Int64) throws(RoomError)
        -> APITokenRecord {
        guard roster.count == 0, tokens.records.isEmpty else { throw .forbidden }
        let record = try tokens.create(name: name, tokenHash: tokenHash, atMs: atMs, by: nil)
        pending.roomChanged()
        pending.apiTokensChanged()
        return record
    }

    /// A member revokes one: the same rule as making one. From this moment the token carries nothing.
    public mutating func revokeAPIToken(_ tokenID: String, by id: MemberID) throws(RoomError) {
        try mayManageAPITokens(id)
        try tokens.revoke(tokenID)
        pending.apiTokensChanged()
    }

    /// Throws unless member `id` may list, make and revoke the room's tokens: the rule of the controls.
    public func mayManageAPITokens(_ id: MemberID) throws(RoomError) {
        guard roster[id]?.connected == true else { throw .unknownMember }
        try access.check(.start, from: id)
    }

    /// The host removed `member`: the tokens they made carry nothing from now on.
    mutating func revokeAPITokens(madeBy member: MemberID) {
        if tokens.revokeAll(madeBy: member) { pending.apiTokensChanged() }
    }

    /// The token with this hash, if the room has it now.
    public func apiToken(hash: String) -> APITokenRecord? { tokens.matching(hash) }

    /// The API token `tokenID` carried a request that is not a room command (a schedule's): its last use.
    public mutating func noteAPITokenUse(_ tokenID: String, atMs nowMs: Int64) {
        if tokens.used(tokenID, atMs: nowMs) { pending.apiTokensChanged() }
    }

    /// A command carried by the API token `tokenID` (found by `apiToken(hash:)` at this moment): it speaks
    /// with the word of whoever may press the controls, and its events name it `api:NAME`.
    public mutating func handle(_ command: Command, apiToken tokenID: String, now: Instant, nowMs: Int64)
        throws(RoomError) -> Outcome {
        guard let token = tokens.records.first(where: { $0.id == tokenID }) else { throw .forbidden }
        guard command.isControl else { throw .forbidden }
        if tokens.used(tokenID, atMs: nowMs) { pending.apiTokensChanged() }
        return try carryOut(command, by: MemberID("api:\(token.name)"), now: now)
    }
}

extension StoredRoom {
    /// The stored API token whose hash is `hash`, as `Room.apiToken(hash:)` finds it once the room is back:
    /// for judging a request before the room is taken.
    public func apiToken(hash: String) -> APITokenRecord? { APITokens(apiTokens).matching(hash) }
}
