import PomodoroCore
import PomodoroStore

extension PostgresRoomStore: WebhookStore {
    public func webhooks(room: RoomID?) throws(StoreError) -> [WebhookRecord] {
        let rows = try withReader("loading webhooks") { connection throws(PostgresError) in
            try connection.query(WebhookRows.webhooks(room: room, .postgres))
        }
        var result: [WebhookRecord] = []
        for row in rows.rows { result.append(try WebhookRows.webhook(from: row)) }
        return result
    }

    public func nextDeliveries(limit: Int) throws(StoreError) -> [(WebhookRecord, WebhookDelivery)] {
        let rows = try withReader("reading the webhook outbox") { connection throws(PostgresError) in
            try connection.query(WebhookRows.nextDeliveries(limit: limit, .postgres))
        }
        var result: [(WebhookRecord, WebhookDelivery)] = []
        for row in rows.rows { result.append((try WebhookRows.webhook(from: row), try WebhookRows.delivery(from: row))) }
        return result
    }

    public func recentDeliveries(room: RoomID, webhook: Int, limit: Int) throws(StoreError) -> [WebhookDelivery] {
        let rows = try withReader("reading the deliveries of a webhook") { connection throws(PostgresError) in
            try connection.query(WebhookRows.recentDeliveries(room: room, webhook: webhook, limit: limit, .postgres))
        }
        var result: [WebhookDelivery] = []
        for row in rows.rows { result.append(try WebhookRows.delivery(from: row)) }
        return result
    }
}
