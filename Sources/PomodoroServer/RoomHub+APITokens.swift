import PomodoroCore
import PomodoroNet
import PomodoroProtocol

// A room's API tokens over the wire (`apiToken`: list, create, revoke; docs/PROTOCOL.md "API tokens"): for
// whoever may press the room's controls, a member or a watch speaking for one (`pressingMember`). A new token is
// shown once, to its maker, after the store has it.

extension RoomHub {
    func apiTokenRequest(_ request: APITokenRequest, ref: Ref?, from connection: ConnectionID, at now: ClockReading) {
        guard let (entry, member) = pressingMember(of: connection, for: .apiTokens, ref: ref) else { return }
        let room = entry.room.id.rawValue
        do throws(RoomError) {
            switch request {
            case .list:
                try entry.room.mayManageAPITokens(member)
                reply(.apiTokens(APITokensPayload(room: room, tokens: entry.room.apiTokens.map(APITokenPayload.init)),
                                 ref: ref), to: connection)
            case .create(let name):
                // 256 random bits; the room keeps their SHA-256 only.
                let token = "pomo_" + tokens.make().rawValue + tokens.make().rawValue
                let record = try entry.room.createAPIToken(name: name, tokenHash: ResumeToken(token).hash, by: member,
                                                           atMs: now.wallMs)
                logger.info("API token made", metadata: ["room": "\(room)", "token": "\(record.id)"])
                publish(Outcome(), in: entry, at: now)
                let payload = APITokensPayload(room: room, tokens: entry.room.apiTokens.map(APITokenPayload.init),
                                               created: .init(id: record.id, token: token))
                entry.announce { [self] in reply(.apiTokens(payload, ref: ref), to: connection) }
            case .revoke(let id):
                try entry.room.revokeAPIToken(id, by: member)
                logger.info("API token revoked", metadata: ["room": "\(room)", "token": "\(id)"])
                publish(Outcome(), in: entry, at: now)
                reply(.apiTokens(APITokensPayload(room: room, tokens: entry.room.apiTokens.map(APITokenPayload.init)),
                                 ref: ref), to: connection)
            }
        } catch .unknownMember where sessions[connection]?.observing != nil {
            reply(.error(memberGoneRefusal(member, ref: ref)), to: connection)
        } catch {
            refuse(error, ref: ref, to: connection)
        }
    }
}
