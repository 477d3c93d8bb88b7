/// Who may press a room's controls, and who hosts it.
///
/// The invariants it owns: in `host` mode only the host gives timer and settings commands; the control
/// mode and the host role change only at the host's word; and when the host leaves for good the role
/// passes on at once (the room says to whom), so a room with members is never left without a host.
struct HostRules: Sendable {
    var mode: ControlMode
    /// The creator until they hand the role on or leave for good; nil only while nobody is in the room.
    private(set) var host: MemberID?

    init(mode: ControlMode, host: MemberID? = nil) {
        self.mode = mode
        self.host = host
    }

    /// Throws `forbidden` when `id` may not give `command` in this room.
    func check(_ command: Room.Command, from id: MemberID) throws(RoomError) {
        let hostOnly: Bool = switch command {
        case .setControlMode, .handOff: true
        default: command.needsHost && mode == .host
        }
        if hostOnly && host != id { throw .forbidden }
    }

    /// Throws `forbidden` unless `id` holds the host role (for the host's tools: removing, the lock).
    func checkHost(_ id: MemberID) throws(RoomError) {
        if host != id { throw .forbidden }
    }

    /// A member arrived: the first of an empty room hosts it. Returns whether the host changed.
    mutating func memberJoined(_ id: MemberID) -> Bool {
        guard host == nil else { return false }
        host = id
        return true
    }

    /// A member left for good: a leaving host hands the role to `successor` (the room's choice, nil when
    /// nobody is left). Returns whether the host changed.
    mutating func memberLeft(_ id: MemberID, successor: () -> MemberID?) -> Bool {
        guard host == id else { return false }
        host = successor()
        return true
    }

    /// The host hands the role to `target`, a member of the room.
    mutating func handOff(to target: MemberID) {
        host = target
    }
}
