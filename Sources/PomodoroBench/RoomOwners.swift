/// Which node runs each room, as the nodes themselves said (`GET /api/cluster` on each, read during the
/// window by `Tests/bench/cluster.sh`), so that members are counted on the owner or relayed by fact rather
/// than by the plan: on a loaded machine a room's second member may reach its node before the first
/// member's take has finished, and that node then runs the room.
public enum RoomOwners {
    /// Parses lines of `NODE ROOM` (NODE a 0-based index into the servers given, ROOM a room's name) into
    /// node by room index; rooms not of this plan and malformed lines are skipped.
    public static func parse(_ text: String, plan: BenchPlan) -> [Int: Int] {
        var owners: [Int: Int] = [:]
        let prefix = plan.roomPrefix + "-"
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: " ")
            guard parts.count == 2, let node = Int(parts[0]), (0..<plan.nodes).contains(node),
                  parts[1].hasPrefix(prefix), let room = Int(parts[1].dropFirst(prefix.count)),
                  (0..<plan.rooms).contains(room) else { continue }
            owners[room] = node
        }
        return owners
    }
}
