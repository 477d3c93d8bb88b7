import PomodoroCore
import PomodoroNet

/// Who may see a room: the one rule every path that shows a room applies (join, `observe`, the live
/// snapshot, its event stream, `stats`, history, schedules and the calendar), and the ledger that lets an
/// answer that waited (a store read, the passcode gate, a hash) be judged again when it is delivered.
///
/// The rule is `verdict`: an open room is seen by anyone; a locked room by its members (their connection or
/// resume token) and by whoever has opened *the lock it has now* with its passcode. A check opened the lock
/// the room had when the check started; the hub asks `verdict` again on the service thread when the answer
/// goes out, against the room as it is then, so a lock, a new passcode or a removal during the wait is never
/// missed. Watchers keep their `Grant`, which is weighed again whenever the lock changes or a member is
/// removed (`RoomHub+Access.swift`).
///
/// ```swift
/// RoomAccess.verdict(lock: nil, isMember: false, opened: nil, passcode: nil)          // .allowed
/// RoomAccess.verdict(lock: lock, isMember: false, opened: nil, passcode: "soup")      // .check("soup", against: lock)
/// RoomAccess.verdict(lock: lock, isMember: false, opened: lock.encoded, passcode: nil) // .allowed
/// ```
struct RoomAccess {
    /// Why someone was let see a room, kept with a watcher (an observer, an event stream) and carried through
    /// a wait: what they showed that still counts once the room changes.
    struct Grant: Equatable {
        /// The member whose resume token (or connection) they showed; it counts while that member is in the room.
        var member: MemberID?
        /// The lock (its stored form) their passcode opened; it counts while the room has that lock.
        var opened: String?

        init(member: MemberID? = nil, opened: String? = nil) {
            self.member = member
            self.opened = opened
        }
    }

    /// What someone who asks to see a room shows: their connection (a member's own `stats`), a resume token,
    /// a passcode. Over HTTP the one Bearer credential is both token and passcode.
    struct Visitor {
        var connection: ConnectionID?
        var token: String?
        var passcode: String?

        init(connection: ConnectionID? = nil, token: String? = nil, passcode: String? = nil) {
            self.connection = connection
            self.token = token
            self.passcode = passcode
        }
    }

    enum Verdict: Equatable {
        case allowed
        /// Check `passcode` against `lock` (off the service thread, in the address's turn at the passcode gate),
        /// then ask again with the lock it opened.
        case check(String, against: PasscodeVerifier)
        /// Locked, and nothing shown opens it.
        case refused
    }

    /// The rule. `lock` is the room's lock now (nil: open); `isMember`, whether the visitor is one of its
    /// members now; `opened`, the lock an earlier check of theirs opened; `passcode`, one not yet checked
    /// against `lock`.
    static func verdict(lock: PasscodeVerifier?, isMember: Bool, opened: String?, passcode: String?) -> Verdict {
        guard let lock else { return .allowed }
        if isMember { return .allowed }
        if let opened, opened == lock.encoded { return .allowed }
        guard let passcode else { return .refused }
        return .check(passcode, against: lock)
    }

    /// The control API's part of the rule (`HTTPAPI+Control.swift`): a command with a Bearer token goes through
    /// when the room holds that token now, whatever its lock (a token is a member's word, as a resume token
    /// is). A token revoked, or made by a member the host removed, is no longer held: asked on the service
    /// thread in the turn that carries the command out, so neither is ever missed.
    static func commandVerdict(tokenHeld: Bool) -> Verdict { tokenHeld ? .allowed : .refused }

    /// What a watch may do as the member whose resume token it showed: press a room command, or list, make
    /// and revoke the room's API tokens (`apiToken`, which asks what the controls ask).
    enum Press {
        case command(Room.Command)
        case apiTokens
    }

    /// An observer's part of the rule: a watch that showed a member's resume token presses the room's controls
    /// (`Room.Command.isControl`) and manages its API tokens as that member, and nothing else; nil: it speaks
    /// for nobody (`observer`). The room then judges the press as that member's own, when it is carried out
    /// (`Room.handle`, `Room.mayManageAPITokens`: the member still in the room and connected, host-only
    /// controls), so a member who left or was removed since, or lost the host role, presses nothing through it.
    static func pressingMember(of grant: Grant, for press: Press) -> MemberID? {
        mayPress(press) ? grant.member : nil
    }

    /// Whether a watch that showed a member's token may press this at all.
    static func mayPress(_ press: Press) -> Bool {
        switch press {
        case .command(let command): command.isControl
        case .apiTokens: true
        }
    }

    // MARK: Waits on rooms not in memory

    /// A decision about a room that waits off the service thread (`begin`), to be told at its end whether the
    /// room's lock changed meanwhile (`end`). Only needed for a room judged by its stored lock: one in memory
    /// is judged by the lock it has when the answer goes out.
    struct Wait: Equatable {
        let room: RoomID
        fileprivate let changes: UInt64
    }

    /// For each room with decisions waiting: how many wait, and how many lock changes they have seen.
    private var waiting: [RoomID: (count: Int, changes: UInt64)] = [:]

    mutating func begin(_ room: RoomID) -> Wait {
        let held = waiting[room] ?? (0, 0)
        waiting[room] = (held.count + 1, held.changes)
        return Wait(room: room, changes: held.changes)
    }

    /// Whether the room's lock stayed as it was for the whole wait.
    mutating func end(_ wait: Wait) -> Bool {
        guard let held = waiting[wait.room] else { return false }
        waiting[wait.room] = held.count > 1 ? (held.count - 1, held.changes) : nil
        return held.changes == wait.changes
    }

    /// The room was locked, unlocked or given a new passcode: every decision waiting on it must be made again.
    mutating func lockChanged(_ room: RoomID) {
        guard let held = waiting[room] else { return }
        waiting[room] = (held.count, held.changes + 1)
    }

    /// Decisions waiting now (for tests).
    var waitCount: Int { waiting.values.reduce(0) { $0 + $1.count } }
}
