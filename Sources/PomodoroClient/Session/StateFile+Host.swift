import PomodoroProtocol

extension StateFile.Kept {
    /// What a look at the room says of giving the host's commands as one of the kept members.
    public enum AsHost: Equatable, Sendable {
        /// The kept members that are the room's host and not connected, to resume in turn: all share the
        /// host's id, and the first whose token the server gave is the host (another server's token with the
        /// same id is not recognised). Empty when nothing is kept.
        case resume([StateFile.Contents])
        /// No kept member is in the room: the server let the membership go (this is the newest kept).
        case ended(StateFile.Contents)
        /// This kept member is in the room, and none of them is its host.
        case notHost(StateFile.Contents)
        /// The host's `pomo join` is connected now: resuming the host would take its place.
        case connected(StateFile.Contents)
    }

    /// Which kept members may act as the host in the room `snapshot` shows (a visitor's look before anything
    /// is resumed). A big room that does not list a member may still have it: only its host id tells then.
    public func asHost(in snapshot: SnapshotPayload) -> AsHost {
        guard let newest = members.first else { return .resume([]) }
        let listed = members.filter { kept in
            snapshot.membersTruncated || snapshot.members.contains { $0.id == kept.member }
        }
        guard let first = listed.first else { return .ended(newest) }
        let hosts = listed.filter { $0.member == snapshot.host }
        guard let host = hosts.first else { return .notHost(first) }
        if snapshot.members.first(where: { $0.id == host.member })?.connected == true { return .connected(host) }
        return .resume(hosts)
    }
}
