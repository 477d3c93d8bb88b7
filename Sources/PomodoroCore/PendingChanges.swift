/// What a room has not handed to its store yet: whether its own row changed, which members' rows changed
/// or went, and the journal entries made since.
///
/// The invariant it owns: a member is never both saved and removed in one batch (a member who leaves is
/// no longer dirty), and taking the changes forgets them all at once.
struct PendingChanges: Sendable {
    /// A journal entry as the room makes it, on the monotonic clock.
    enum JournalEntry: Sendable {
        case focusCompleted(startedAt: Instant, endedAt: Instant, length: Duration,
                            participants: [(MemberID, name: String, task: String, focus: Duration)])
        case interrupted(MemberID?, name: String?, at: Instant)
    }

    /// The room's row changed: set with every new `seq`.
    private(set) var roomDirty = false
    /// Members whose rows changed.
    private(set) var dirtyMembers: Set<MemberID> = []
    private(set) var removedMembers: [MemberID] = []
    private(set) var journal: [JournalEntry] = []
    /// The room's bans changed (the host removed someone).
    private(set) var bansDirty = false
    /// The room's API tokens changed (made, revoked, or used for the first time in a minute).
    private(set) var apiTokensDirty = false

    /// Whether anything is due: member changes wait for the room's row, which every change to a member
    /// comes with (a new `seq`).
    var isDue: Bool { roomDirty || !journal.isEmpty || apiTokensDirty }

    mutating func roomChanged() { roomDirty = true }

    mutating func memberChanged(_ id: MemberID) { dirtyMembers.insert(id) }

    mutating func memberRemoved(_ id: MemberID) {
        dirtyMembers.remove(id)
        removedMembers.append(id)
    }

    mutating func record(_ entry: JournalEntry) { journal.append(entry) }

    mutating func bansChanged() { bansDirty = true }

    mutating func apiTokensChanged() { apiTokensDirty = true }

    /// Hands over everything pending and forgets it.
    mutating func take() -> PendingChanges {
        let taken = self
        roomDirty = false
        dirtyMembers.removeAll(keepingCapacity: true)
        removedMembers.removeAll()
        journal.removeAll()
        bansDirty = false
        apiTokensDirty = false
        return taken
    }
}
