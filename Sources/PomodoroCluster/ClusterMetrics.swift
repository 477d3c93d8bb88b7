import PomodoroServer

/// A cluster node's own lines of `/metrics` (`pomodoro_cluster_*`, PROTOCOL.md §12), made in the server's
/// registry when the router is attached to the hub. Service thread only, like the router that owns them.
final class ClusterMetrics {
    let leasesTaken: MetricCounter
    let leasesLost: MetricCounter
    let forwardedCommands: MetricCounter
    let busReceived: MetricCounter
    let busReconnects: MetricCounter
    let relayedTicks: MetricCounter
    private let busSent: MetricCounter
    private let relayedMembers: MetricGauge
    private let remoteMembers: MetricGauge
    /// The router's count of messages published when last scraped: the counter follows it by the difference.
    private var busSentSeen = 0

    init(_ metrics: ServerMetrics) {
        leasesTaken = metrics.counter("cluster_leases_taken", help: "Rooms this cluster node took the lease of (0 on a single server).")
        leasesLost = metrics.counter("cluster_leases_lost", help: "Rooms whose lease this cluster node lost while it ran them.")
        forwardedCommands = metrics.counter(
            "cluster_forwarded_commands",
            help: "Frames of this node's members relayed to the node that runs their room (joins included).")
        relayedMembers = metrics.gauge("cluster_relayed_members", help: "Connections of this node whose room another node runs.")
        remoteMembers = metrics.gauge("cluster_remote_members", help: "Connections of other nodes in rooms this node runs.")
        busSent = metrics.counter("cluster_bus_messages_sent", help: "Messages this node published to other nodes.")
        busReceived = metrics.counter("cluster_bus_messages_received", help: "Messages this node received from other nodes.")
        busReconnects = metrics.counter(
            "cluster_bus_reconnects",
            help: "Times this node's bus subscribed again after losing Redis (messages meanwhile were lost).")
        relayedTicks = metrics.counter(
            "cluster_relayed_ticks",
            help: "Ticks this node computed for its relayed members' rooms from the deadline their owner replicated.")
    }

    /// The router's levels, read at a scrape.
    func read(_ levels: RouterLevels) {
        relayedMembers.set(levels.relayedMembers)
        remoteMembers.set(levels.remoteMembers)
        if levels.busPublished > busSentSeen {
            busSent.increment(by: levels.busPublished - busSentSeen)
            busSentSeen = levels.busPublished
        }
    }
}
