import PomodoroCore
import PomodoroStore

/// Reads pass through to the base store (PostgreSQL's outbox); a node delivers only for the rooms it owns
/// (`epoch(of:)`), and records each result through the fenced `apply`, so a node that has lost a room cannot
/// mark its deliveries done.
extension FencedRoomStore: WebhookStore {
    private var webhookBase: any WebhookStore {
        get throws(StoreError) {
            guard let base = base as? any WebhookStore else { throw StoreError("the cluster's store keeps no webhooks") }
            return base
        }
    }
    public func webhooks(room: RoomID?) throws(StoreError) -> [WebhookRecord] { try webhookBase.webhooks(room: room) }
    public func nextDeliveries(limit: Int) throws(StoreError) -> [(WebhookRecord, WebhookDelivery)] {
        try webhookBase.nextDeliveries(limit: limit).filter { epoch(of: $0.0.room) != nil }
    }
    public func recentDeliveries(room: RoomID, webhook: Int, limit: Int) throws(StoreError) -> [WebhookDelivery] {
        try webhookBase.recentDeliveries(room: room, webhook: webhook, limit: limit)
    }
}
