import PomodoroCore

/// One page of a room's journal for the history endpoint: newest first, ended early once its rows reach
/// `maxBytes`, so an answer's size (and what is held to make it) is bounded by bytes as well as by count.
public struct HistoryPage: Equatable, Sendable {
    /// Newest first.
    public var sessions: [FocusSessionRecord]
    /// Whether older sessions remain (past the count asked for, or left for the next page by the byte cap).
    public var more: Bool

    public init(sessions: [FocusSessionRecord], more: Bool) {
        self.sessions = sessions
        self.more = more
    }

    /// The `before` of the next page, when there is one.
    public var nextBefore: Int64? { more ? sessions.last?.endedAtMs : nil }

    /// The bytes of history one answer carries at most, about: a page ends at the first session that
    /// takes it past this (one session alone may be larger: its room's members, their names and tasks,
    /// are bounded by the room's own limits).
    public static let maxBytes = 1 << 20

    /// A generous estimate of what a session takes in the JSON or CSV answer: the fixed fields, and per
    /// member their id, name, task and the line or object around them.
    public static func estimatedBytes(of session: FocusSessionRecord) -> Int {
        session.participants.reduce(160 + session.room.rawValue.utf8.count) { total, participant in
            total + 160 + session.room.rawValue.utf8.count + participant.member.rawValue.utf8.count
                + participant.name.utf8.count + participant.task.utf8.count
        }
    }

    /// A page from sessions given newest first: up to `limit`, ending after the first that takes the page to
    /// `maxBytes`.
    public static func cut<S: Sequence<FocusSessionRecord>>(_ newestFirst: S, limit: Int, maxBytes: Int) -> HistoryPage {
        var page: [FocusSessionRecord] = []
        var bytes = 0
        for session in newestFirst {
            if page.count == limit || bytes >= maxBytes { return HistoryPage(sessions: page, more: true) }
            page.append(session)
            bytes += estimatedBytes(of: session)
        }
        return HistoryPage(sessions: page, more: false)
    }
}

extension RoomStore {
    /// A history page from `sessions(room:endedFrom:before:limit:)`: bounded in what it returns, not in
    /// what it reads. The SQL stores read no further than the page (`SessionRows`).
    public func historyPage(room: RoomID, before: Int64?, limit: Int, maxBytes: Int) throws(StoreError) -> HistoryPage {
        HistoryPage.cut(try sessions(room: room, endedFrom: nil, before: before, limit: limit + 1).reversed(),
                        limit: limit, maxBytes: maxBytes)
    }
}
