/// Why the core refused a command. Each case maps to one stable error code on the wire.
public enum RoomError: Error, Equatable, Sendable {
    /// A field's value is out of bounds or malformed.
    case invalidArgument(field: String, reason: String)
    /// The command makes no sense in the room's current state (pause while paused, extend while idle, ...).
    case invalidState(String)
    /// The room has no place for another member.
    case roomFull
    /// The member is not (or no longer) in the room.
    case unknownMember
    /// In `host` control mode, a member who is not the host pressed a control.
    case forbidden
    /// The host removed this member (by name or resume token), and they may not join again for `remaining`.
    case banned(remaining: Duration)
}
