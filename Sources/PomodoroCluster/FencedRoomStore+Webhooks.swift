import PomodoroCore
import PomodoroStore

/// Reads pass through; a node delivers only for the rooms it owns (`epoch(of:)`), and records each result
/// through the fenced `apply`, so a node that has lost a room cannot mark its deliveries done.
extension FencedRoomStore: WebhookStore {
    public func webhooks(room: RoomID?) throws(StoreError) -> [WebhookRecord] { try base.webhooks(room: room) }
    public func nextDeliveries(limit: Int) throws(StoreError) -> [(WebhookRecord, WebhookDelivery)] {
        try base.nextDeliveries(limit: limit).filter { epoch(of: $0.0.room) != nil }
    }
    public func recentDeliveries(room: RoomID, webhook: Int, limit: Int) throws(StoreError) -> [WebhookDelivery] {
        try base.recentDeliveries(room: room, webhook: webhook, limit: limit)
    }
}
