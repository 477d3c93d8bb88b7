import PomodoroNet
import PomodoroServer

/// Other nodes' connections to rooms this node owns, each under a connection number of this node's hub
/// (`ConnectionID.isRemote`). Service thread only.
final class RemoteConnections {
    private var ids: [BusMessage.RemoteConnection: ConnectionID] = [:]
    private var remotes: [ConnectionID: BusMessage.RemoteConnection] = [:]
    private var next = ConnectionID.firstRemote

    /// The hub's number for `remote`, and whether it was given just now.
    func id(for remote: BusMessage.RemoteConnection) -> (ConnectionID, isNew: Bool) {
        if let id = ids[remote] { return (id, false) }
        let id = ConnectionID(rawValue: next)
        next += 1
        ids[remote] = id
        remotes[id] = remote
        return (id, true)
    }

    func existing(_ remote: BusMessage.RemoteConnection) -> ConnectionID? { ids[remote] }

    func remote(_ id: ConnectionID) -> BusMessage.RemoteConnection? { remotes[id] }

    func forget(_ id: ConnectionID) {
        guard let remote = remotes.removeValue(forKey: id) else { return }
        ids[remote] = nil
    }

    var count: Int { remotes.count }
    var all: [ConnectionID] { remotes.keys.sorted { $0.rawValue < $1.rawValue } }
}

/// The hub's transport on a cluster node: a frame or close for another node's connection goes over the
/// bus to that node (`BusMessage.reply`, `.close`), everything else to the node's own transport. So the
/// hub answers a remote member by the same code as a local one.
final class RelayingTransport: HubTransport {
    let base: any HubTransport
    let cluster: any HubCluster
    /// What it keeps, on the service thread only.
    private final class State {
        let remotes = RemoteConnections()
        /// Bus messages published.
        var published = 0
    }
    private let state: LoopBound<State>
    /// Publishes on the service loop itself (`RedisLoopClient`), in order; nil (a test's cluster): through
    /// `cluster.publish`, off the service thread.
    private let publisher: LoopBound<RedisLoopClient>?

    init(base: any HubTransport, cluster: any HubCluster, publisher: LoopBound<RedisLoopClient>? = nil) {
        self.base = base
        self.cluster = cluster
        self.publisher = publisher
        state = LoopBound(State(), loop: base.loop)
    }

    /// Other nodes' connections in this node's rooms.
    var remotes: RemoteConnections { state.value.remotes }
    /// Bus messages published.
    var published: Int { state.value.published }

    package func refuseUpgrades() { base.refuseUpgrades() }

    @discardableResult
    package func send(_ frame: OutboundFrame, to connection: ConnectionID) -> Bool {
        guard connection.isRemote else { return base.send(frame, to: connection) }
        guard let remote = remotes.remote(connection) else { return false }
        publish(.reply(node: remote.node, connections: [remote.connection], frame: Self.text(frame), from: cluster.node),
                to: remote.node)
        return true
    }

    /// One frame for many connections: one message per node that holds any of them (the same bytes for all
    /// of a node's connections). Returns how many connections it was queued or published for. A tick goes to
    /// this node's connections only: each node computes its relayed members' ticks itself from the room's
    /// replicated deadline (`ReplicatedTimer`), so no tick crosses Redis.
    package func send(_ frame: OutboundFrame, toAll connections: [ConnectionID]) -> Int {
        var byNode: [String: [UInt64]] = [:]
        var local = [ConnectionID]()
        local.reserveCapacity(connections.count)
        var sent = 0
        let relayed = !Self.isTick(frame)
        for connection in connections {
            if !connection.isRemote {
                local.append(connection)
            } else if relayed, let remote = remotes.remote(connection) {
                byNode[remote.node, default: []].append(remote.connection)
                sent += 1
            }
        }
        // This node's own members in one call: a big room's are written over two threads.
        if !local.isEmpty { sent += base.send(frame, toAll: local) }
        guard !byNode.isEmpty else { return sent }
        let text = Self.text(frame)
        for (node, numbers) in byNode {
            publish(.reply(node: node, connections: numbers, frame: text, from: cluster.node), to: node)
        }
        return sent
    }

    package func close(_ connection: ConnectionID, code: UInt16, reason: String) {
        guard connection.isRemote else { return base.close(connection, code: code, reason: reason) }
        guard let remote = remotes.remote(connection) else { return }
        publish(.close(remote, code: code, reason: reason, from: cluster.node), to: remote.node)
    }

    func publish(_ message: BusMessage, to node: String) {
        state.value.published += 1
        if let publisher {
            publisher.value.publish(message.encoded, on: BusMessage.nodeChannel(node))
        } else {
            cluster.publish(message, to: node)
        }
    }

    package func post(_ work: @escaping @Sendable () -> Void) { base.post(work) }
    package func timer(firing fire: @escaping () -> Void) -> any HubTimer { base.timer(firing: fire) }
    package var loop: any LoopThread { base.loop }
    package var connectionCount: Int { base.connectionCount }
    package var droppedSlowClients: Int { base.droppedSlowClients }

    static func text(_ frame: OutboundFrame) -> String { String(decoding: frame.payload, as: UTF8.self) }

    private static let tickPrefix = Array(#"{"type":"tick","#.utf8)

    /// Whether the frame is a tick (`WireCodec` writes `type` first).
    static func isTick(_ frame: OutboundFrame) -> Bool { frame.payload.starts(with: tickPrefix) }
}
