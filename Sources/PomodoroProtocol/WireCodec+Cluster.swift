/// `GET /api/cluster`: this node, the rooms it runs, and the nodes Redis has heard from lately.
public struct ClusterPayload: Equatable, Sendable {
    /// A node as Redis last heard from it.
    public struct Node: Equatable, Sendable {
        public var node: String
        public var roomsOwned: Int
        public var silentForMs: Int64

        public init(node: String, roomsOwned: Int, silentForMs: Int64) {
            self.node = node
            self.roomsOwned = roomsOwned
            self.silentForMs = silentForMs
        }
    }

    public var node: String
    /// Rooms this node holds the lease of, in name order.
    public var rooms: [String]
    /// In node order.
    public var nodes: [Node]

    public init(node: String, rooms: [String], nodes: [Node]) {
        self.node = node
        self.rooms = rooms
        self.nodes = nodes
    }
}

/// `GET /api/cluster/rooms/{room}`: who holds the room's lease now, and under which epoch.
public struct ClusterRoomPayload: Equatable, Sendable {
    public var room: String
    /// Nil when no node holds the lease (nobody runs the room).
    public var owner: String?
    public var epoch: Int64?

    public init(room: String, owner: String?, epoch: Int64?) {
        self.room = room
        self.owner = owner
        self.epoch = epoch
    }
}

extension WireCodec {
    public static func encodeClusterBody(_ payload: ClusterPayload) -> [UInt8] {
        let object = JSONBuilder.object()
        object.set("node", payload.node)
        object.set("rooms", JSONBuilder.strings(payload.rooms))
        let nodes = JSONBuilder.array(capacity: payload.nodes.count)
        for node in payload.nodes {
            let entry = JSONBuilder.object()
            entry.set("node", node.node)
            entry.set("roomsOwned", node.roomsOwned)
            entry.set("silentForMs", node.silentForMs)
            nodes.append(entry)
        }
        object.set("nodes", nodes)
        return object.serialize()
    }

    public static func encodeClusterRoomBody(_ payload: ClusterRoomPayload) -> [UInt8] {
        let object = JSONBuilder.object()
        object.set("room", payload.room)
        object.set("owner", payload.owner.map(JSONBuilder.string))
        object.set("epoch", payload.epoch.map(JSONBuilder.integer))
        return object.serialize()
    }
}
