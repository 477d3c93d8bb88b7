import GRDB
import PomodoroCore
import PomodoroStore

extension SQLiteRoomStore: WebhookStore {
    public func webhooks(room: RoomID?) throws(StoreError) -> [WebhookRecord] {
        let rows = try withStoreError("loading webhooks from \(path)") {
            try pool.read { db in try db.rows(WebhookRows.webhooks(room: room, .sqlite)) }
        }
        var result: [WebhookRecord] = []
        for row in rows { result.append(try WebhookRows.webhook(from: row)) }
        return result
    }

    public func nextDeliveries(limit: Int) throws(StoreError) -> [(WebhookRecord, WebhookDelivery)] {
        let rows = try withStoreError("reading the webhook outbox of \(path)") {
            try pool.read { db in try db.rows(WebhookRows.nextDeliveries(limit: limit, .sqlite)) }
        }
        var result: [(WebhookRecord, WebhookDelivery)] = []
        for row in rows { result.append((try WebhookRows.webhook(from: row), try WebhookRows.delivery(from: row))) }
        return result
    }

    public func recentDeliveries(room: RoomID, webhook: Int, limit: Int) throws(StoreError) -> [WebhookDelivery] {
        let rows = try withStoreError("reading the deliveries of a webhook from \(path)") {
            try pool.read { db in try db.rows(WebhookRows.recentDeliveries(room: room, webhook: webhook, limit: limit, .sqlite)) }
        }
        var result: [WebhookDelivery] = []
        for row in rows { result.append(try WebhookRows.delivery(from: row)) }
        return result
    }
}
