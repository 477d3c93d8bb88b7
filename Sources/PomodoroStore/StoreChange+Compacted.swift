import PomodoroCore

extension Array where Element == StoreChange {
    /// The same changes for a store that applies them in one transaction, with rows written over and over
    /// written once: each room's and each member's last row (or a member's removal) takes the place of its
    /// first, and journal rows stay as they are, in order. A join storm saves a room's row once per join;
    /// a group commit of them then writes each room once.
    ///
    /// Keeping the first place keeps what depends on a row after the row (a member after its room, a
    /// journal row after both).
    public func compacted() -> [StoreChange] {
        func key(_ change: StoreChange) -> RowKey? {
            switch change {
            case .saveRoom(let record, _): .room(record.id)
            case .saveMember(let room, let member): .member(room, member.id)
            case .removeMember(let room, let member): .member(room, member)
            case .saveSchedules(let room, _): .schedules(room)
            case .saveBans(let room, _): .bans(room)
            case .saveAPITokens(let room, _): .apiTokens(room)
            case .focusCompleted, .interrupted, .webhook: nil
            }
        }
        var last: [RowKey: StoreChange] = [:]
        for change in self { if let key = key(change) { last[key] = change } }
        guard last.count < filter({ key($0) != nil }).count else { return self }
        var written: Set<RowKey> = []
        return compactMap { change in
            guard let key = key(change) else { return change }
            return written.insert(key).inserted ? last[key] : nil
        }
    }
}

/// The rows a change writes over: a room's, a member's, a room's schedules, or a room's bans.
private enum RowKey: Hashable {
    case room(RoomID)
    case member(RoomID, MemberID)
    case schedules(RoomID)
    case bans(RoomID)
    case apiTokens(RoomID)
}
